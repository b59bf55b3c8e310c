// Package diskwrite is nodezero's built-in OS image writer. It installs the
// factory image's payload (payload.json and its OS disk image) on a disk:
// the image is read, decompressed on the fly (gzip, xz, zstd or raw, told
// apart by their first bytes), hashed and written in one pass, one writer
// per disk, with O_DIRECT where the disk accepts it; the payload's sha256
// is checked before the Ignition config is placed in the image's ignition
// partition. A disk written with a bad image is wiped so it cannot boot.
// Verify is the other end: the installed host checks its disk and reads
// its Ignition config back.
//
// The images this package writes are the payload's own generated GPT
// images (BuildImage), which carry an empty raw partition for Ignition.
// Real RHCOS images keep Ignition in a file on their boot filesystem;
// coreos-installer writes those, and the installer uses it when present.
//
// diskwrite imports no other nodezero package.
package diskwrite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Options say what to write where.
type Options struct {
	// Device is the disk: a block device or a pre-sized regular file.
	Device string
	// Payload names the image; LoadPayload reads it.
	Payload *Payload
	// Ignition is the config placed in the image's ignition partition
	// once the image is written and its digest checked. It may not
	// contain a NUL byte: Verify reads it back up to the first NUL.
	Ignition []byte
	// Progress, when set, is called as bytes reach the disk: at most
	// about every 1%, and once at 100%. Calls come from one goroutine, one
	// at a time; a slow Progress slows the write.
	Progress func(written, total int64)
}

// Result describes a finished write.
type Result struct {
	Bytes   int64         // image bytes written
	Elapsed time.Duration // from the call to the final fsync
	SHA256  string        // hex sha256 of the bytes written, as the payload says
	Direct  bool          // the image went to the disk with O_DIRECT
}

// The pipeline's buffers: eight of 4 MiB (32 MiB in all), so that
// decompression, hashing and writing each work on their own, with slack
// for a stage that stalls a moment, while the disk sees large sequential
// writes, as with dd bs=4M.
const (
	chunkSize = 4 << 20
	nChunks   = 8
)

// wipeSize is how much is zeroed at the head and at the ends of a disk
// whose write failed: the MBR, both GPTs, and any boot loader stage
// placed after them.
const wipeSize = 1 << 20

// Write installs opts.Payload's OS image on opts.Device and places
// opts.Ignition into its ignition partition. Errors are *Error; test the
// cause with errors.Is against ErrBusy, ErrDiskInUse, ErrDiskTooSmall,
// ErrDigestMismatch, ErrBadImage, ErrPartitionNotFound and
// ErrIgnitionTooLarge. Nothing is written when the disk is busy, in use or
// too small, or when the image's first 4 MiB show its partition table has
// no room for the Ignition config. Once writing has begun, any failure
// leaves the disk wiped: the first and last 1 MiB of the image and of the
// disk are zeroed.
func Write(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	fail := func(op string, err error, hint string) error {
		return &Error{Op: op, Device: opts.Device, Err: err, Hint: hint}
	}
	if err := opts.check(); err != nil {
		return nil, fail("write", err, "")
	}
	img := opts.Payload.OS
	want, _ := hex.DecodeString(img.SHA256) // checked above
	d, err := openDisk(ctx, "write", opts.Device, true)
	if err != nil {
		return nil, err
	}
	defer d.close()
	if d.size < img.Size {
		return nil, fail("write", fmt.Errorf("%w: %s is %s, the image needs %s", ErrDiskTooSmall, opts.Device, humanize(d.size), humanize(img.Size)),
			"choose a disk at least as large as the image")
	}
	src, err := openImage(opts.Payload.ImagePath())
	if err != nil {
		return nil, fail("open image", err, "")
	}
	defer src.close()

	p := &pipeline{disk: d, size: img.Size, progress: opts.Progress}
	p.precheck = func(head []byte) error {
		return checkIgnitionFits(prefixReader(head), img, len(opts.Ignition))
	}
	if f, err := openDirect(d.path); err == nil {
		p.direct = f
		defer func() {
			if p.direct != nil {
				p.direct.Close()
			}
		}()
	} // else the filesystem or device refuses O_DIRECT: buffered writes

	sum, err := p.run(ctx, src)
	if err == nil && !bytes.Equal(sum, want) {
		err = fmt.Errorf("%w: wrote sha256 %x, payload says %s", ErrDigestMismatch, sum, img.SHA256)
	}
	if err == nil {
		if err = placeIgnition(d.f, img, opts.Ignition); err != nil {
			err = fmt.Errorf("place ignition: %w", err)
		}
	}
	if err == nil {
		if err = d.f.Sync(); err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
	}
	if err != nil {
		hint := ""
		if p.wrote {
			hint = "the disk was wiped so it cannot boot a partial or wrong image"
			if werr := wipe(d.f, img.Size, d.size); werr != nil {
				err = errors.Join(err, fmt.Errorf("wipe after failure: %w", werr))
				hint = "the disk could not be wiped and may hold a partial image"
			}
		}
		return nil, fail("write", err, hint)
	}
	return &Result{
		Bytes:   img.Size,
		Elapsed: time.Since(start),
		SHA256:  hex.EncodeToString(sum),
		Direct:  p.direct != nil,
	}, nil
}

// check validates the options before anything is opened.
func (o Options) check() error {
	if o.Payload == nil {
		return errors.New("no payload given")
	}
	if ps := o.Payload.OS.problems(); len(ps) > 0 {
		errs := make([]error, len(ps))
		for i, p := range ps {
			errs[i] = errors.New("payload: " + p)
		}
		return errors.Join(errs...)
	}
	for i, b := range o.Ignition {
		if b == 0 {
			return fmt.Errorf("ignition config has a NUL byte at offset %d; the installed host reads it only up to the first NUL", i)
		}
	}
	return nil
}

// pipeline streams an image to a disk in three goroutines: read (and
// decompress), hash, write. Buffers circle through free → hash → write →
// free, so each stage works while the others do.
type pipeline struct {
	disk     *disk
	direct   *os.File // nil: buffered writes to disk.f
	size     int64
	progress func(written, total int64)
	precheck func(head []byte) error // on the first chunk, before it is written
	wrote    bool                    // a write was attempted; read after run returns
}

type chunk struct {
	buf []byte // chunkSize, aligned for O_DIRECT
	off int64
	n   int
}

// run streams src to the disk and returns the sha256 of what it wrote.
func (p *pipeline) run(ctx context.Context, src io.Reader) ([]byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	free := make(chan *chunk, nChunks)
	toHash := make(chan *chunk, nChunks)
	toWrite := make(chan *chunk, nChunks)
	for range nChunks {
		free <- &chunk{buf: alignedBuffer(chunkSize)}
	}
	h := sha256.New()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(toHash)
		if err := p.read(ctx, src, free, toHash); err != nil {
			cancel(err)
		}
	})
	wg.Go(func() {
		defer close(toWrite)
		for c := range toHash {
			h.Write(c.buf[:c.n])
			select {
			case toWrite <- c:
			case <-ctx.Done():
				return
			}
		}
	})
	wg.Go(func() {
		if err := p.write(ctx, toWrite, free); err != nil {
			cancel(err)
		}
	})
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// read fills chunks with exactly p.size bytes of src, then checks src ends.
func (p *pipeline) read(ctx context.Context, src io.Reader, free <-chan *chunk, out chan<- *chunk) error {
	for off := int64(0); off < p.size; {
		var c *chunk
		select {
		case c = <-free:
		case <-ctx.Done():
			return nil
		}
		want := int(min(chunkSize, p.size-off))
		n, err := io.ReadFull(src, c.buf[:want])
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return fmt.Errorf("%w: image ended after %d bytes, payload says size %d", ErrBadImage, off+int64(n), p.size)
		case err != nil:
			return fmt.Errorf("%w: read image at byte %d: %w", ErrBadImage, off+int64(n), err)
		}
		if off == 0 && p.precheck != nil {
			if err := p.precheck(c.buf[:n]); err != nil {
				return err
			}
		}
		c.off, c.n = off, n
		off += int64(n)
		select {
		case out <- c:
		case <-ctx.Done():
			return nil
		}
	}
	// Read to the end: a decompressor checks its trailer (gzip CRC32, xz
	// and zstd checksums) only there.
	var one [1]byte
	switch n, err := io.ReadFull(src, one[:]); {
	case n > 0:
		return fmt.Errorf("%w: image is longer than the payload's size %d", ErrBadImage, p.size)
	case err != io.EOF:
		return fmt.Errorf("%w: read image end: %w", ErrBadImage, err)
	}
	return nil
}

// write writes each chunk at its offset, O_DIRECT for the aligned part
// when it can, and reports progress.
func (p *pipeline) write(ctx context.Context, in <-chan *chunk, free chan<- *chunk) error {
	var written, reported int64
	step := max(p.size/100, 1)
	for c := range in {
		if ctx.Err() != nil {
			return nil
		}
		p.wrote = true
		if err := p.writeChunk(c.buf[:c.n], c.off); err != nil {
			return fmt.Errorf("write at byte %d: %w", c.off, err)
		}
		written += int64(c.n)
		free <- c // never blocks: free holds every chunk
		if p.progress != nil && (written == p.size || written-reported >= step) {
			p.progress(written, p.size)
			reported = written
		}
	}
	return nil
}

func (p *pipeline) writeChunk(b []byte, off int64) error {
	if p.direct != nil {
		n := len(b) &^ (directAlign - 1)
		if n > 0 {
			_, err := p.direct.WriteAt(b[:n], off)
			switch {
			case errors.Is(err, unix.EINVAL):
				// Opened with O_DIRECT, yet the filesystem refuses the
				// write: buffered writes are always correct.
				p.direct.Close()
				p.direct = nil
			case err != nil:
				return err
			default:
				b, off = b[n:], off+int64(n)
			}
		}
	}
	// The tail of an image whose size is not a multiple of 4096, or every
	// chunk when the disk refuses O_DIRECT: through the page cache, flushed
	// by the final fsync.
	if len(b) > 0 {
		if _, err := p.disk.f.WriteAt(b, off); err != nil {
			return err
		}
	}
	return nil
}

// wipe zeroes the first and last wipeSize bytes of the image's extent and
// of the disk, where firmware looks for a partition table and a boot
// loader, and fsyncs.
func wipe(f *os.File, imageSize, diskSize int64) error {
	ranges := [][2]int64{
		{0, wipeSize},
		{imageSize - wipeSize, imageSize},
		{diskSize - wipeSize, diskSize},
	}
	for _, r := range ranges {
		s, e := max(r[0], 0), min(r[1], diskSize)
		if err := zeroRange(f, s, e); err != nil {
			return err
		}
	}
	return f.Sync()
}
