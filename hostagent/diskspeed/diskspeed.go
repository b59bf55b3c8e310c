// Package diskspeed runs the installation-disk-speed-check step
// (docs/reference/agent-and-installer.md §2.9) in Go, in place of the agent's two fio
// runs: it writes small blocks over the start of the disk, fdatasync after
// each, and reports the 99th percentile of the fdatasync durations in
// milliseconds, the worst of two concurrent runs. The write is destructive
// for the region it covers, as fio's is.
//
// diskspeed imports only the wire package.
package diskspeed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// The agent's fio job: --size=22m -bs=2300 --fdatasync=1, two jobs at once.
const (
	DefaultSize      = 22 << 20
	DefaultBlockSize = 2300
	runs             = 2
)

// Options configure the measurement. The zero value is the agent's job.
type Options struct {
	// Size is how many bytes from the start of the path are written; 0
	// means DefaultSize. A block device smaller than that is an error.
	Size int64
	// BlockSize is the bytes written before each fdatasync; 0 means
	// DefaultBlockSize.
	BlockSize int
	// Device maps the path the service asks to measure to the path
	// written; nil writes the path itself. Hosts read from a hardware tree
	// map their disks to files standing in for them.
	Device func(path string) (string, error)
}

func (o Options) withDefaults() Options {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	return o
}

// Args are the step's decoded args.
type Args struct {
	Path    string
	Timeout time.Duration // 0: none
}

// DecodeArgs decodes the step's two args: the request JSON and a timeout in
// seconds (what the agent passes to timeout(1)).
func DecodeArgs(args []string) (Args, error) {
	if len(args) != 2 {
		return Args{}, fmt.Errorf("disk performance cmd accepts 2 params in args, given args %v", args)
	}
	var req wire.DiskSpeedCheckRequest
	if err := wire.DecodeEmbedded(args[0], &req); err != nil {
		return Args{}, fmt.Errorf("disk performance args: %w", err)
	}
	if req.Path == "" {
		return Args{}, errors.New("path in body is required")
	}
	secs, err := strconv.ParseFloat(args[1], 64)
	if err != nil {
		return Args{}, fmt.Errorf("disk performance timeout: %w", err)
	}
	if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) || secs > math.MaxInt64/float64(time.Second) {
		return Args{}, fmt.Errorf("disk performance timeout: %q out of range", args[1])
	}
	return Args{Path: req.Path, Timeout: time.Duration(secs * float64(time.Second))}, nil
}

// Step returns the installation-disk-speed-check step function, shaped as
// step.Func. Invalid args answer -1; when both runs fail it answers
// the path alone, the last error and -1, as the agent does.
func Step(opts Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	return func(ctx context.Context, args []string) (string, string, int) {
		a, err := DecodeArgs(args)
		if err != nil {
			return step.NotRun(err)
		}
		if a.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, a.Timeout)
			defer cancel()
		}
		target := a.Path
		if opts.Device != nil {
			target, err = opts.Device(a.Path)
		}
		var p99 time.Duration
		if err == nil {
			p99, err = Check(ctx, target, opts)
		}
		resp := wire.DiskSpeedCheckResponse{Path: a.Path}
		code := 0
		if err != nil {
			code = step.ExitNotRun
		} else {
			resp.IOSyncDuration = p99.Milliseconds()
		}
		out, encErr := wire.EncodeEmbedded(resp)
		if encErr != nil {
			return "", encErr.Error(), 1
		}
		if err != nil {
			return out, err.Error(), code
		}
		return out, "", 0
	}
}

// Check runs two measurements of path at once and returns the worse 99th
// percentile; it fails only when both fail.
func Check(ctx context.Context, path string, opts Options) (time.Duration, error) {
	opts = opts.withDefaults()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		worst = time.Duration(-1)
		errs  []error
	)
	for range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p99, err := Measure(ctx, path, opts)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			worst = max(worst, p99)
		}()
	}
	wg.Wait()
	if worst < 0 {
		return 0, errors.Join(errs...)
	}
	return worst, nil
}

// Measure writes opts.Size bytes from the start of path in opts.BlockSize
// blocks, fdatasync after each, and returns the 99th percentile of the
// fdatasync durations. path must exist: a block device or a regular file.
func Measure(ctx context.Context, path string, opts Options) (time.Duration, error) {
	opts = opts.withDefaults()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("disk speed check %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("disk speed check %s: %w", path, err)
	}
	switch {
	case fi.Mode().IsRegular():
	case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
		end, err := f.Seek(0, 2)
		if err != nil {
			return 0, fmt.Errorf("disk speed check %s: size: %w", path, err)
		}
		if end < opts.Size {
			return 0, fmt.Errorf("disk speed check %s: device has %d bytes, the check writes %d", path, end, opts.Size)
		}
	default:
		return 0, fmt.Errorf("disk speed check %s: not a block device or regular file (%v)", path, fi.Mode().Type())
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("disk speed check %s: %w", path, err)
	}
	block := make([]byte, opts.BlockSize)
	for i := range block {
		block[i] = byte(i%255 + 1) // never zero: nothing can skip the write
	}
	n := int((opts.Size + int64(opts.BlockSize) - 1) / int64(opts.BlockSize))
	lat := make([]time.Duration, 0, n)
	for off := int64(0); off < opts.Size; off += int64(opts.BlockSize) {
		if err := ctx.Err(); err != nil {
			return 0, fmt.Errorf("disk speed check %s: %w", path, err)
		}
		b := block[:min(int64(len(block)), opts.Size-off)]
		if _, err := f.WriteAt(b, off); err != nil {
			return 0, fmt.Errorf("disk speed check %s: write at %d: %w", path, off, err)
		}
		var syncErr error
		start := time.Now()
		if err := rc.Control(func(fd uintptr) { syncErr = syscall.Fdatasync(int(fd)) }); err != nil {
			return 0, fmt.Errorf("disk speed check %s: fdatasync: %w", path, err)
		}
		lat = append(lat, time.Since(start))
		if syncErr != nil {
			return 0, fmt.Errorf("disk speed check %s: fdatasync: %w", path, syncErr)
		}
	}
	return Percentile(lat, 99), nil
}

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds by the
// nearest-rank method: the smallest value at least p percent of the values
// are less than or equal to. It returns 0 for no values. ds is not
// modified.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p * float64(len(s)) / 100)) // p*n first: 99*100/100 is exact, 0.99*100 is not
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}
