package installer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
)

// coreos-installer is tried this many times, this far apart
// (assisted-installer §5.8).
const (
	coreosAttempts     = 3
	coreosAttemptDelay = time.Second
)

// outputTail is how much of a command's output its error carries.
const outputTail = 4 << 10

// waitDelay bounds how long a killed command's output may stay open.
const waitDelay = 5 * time.Second

// percentRE finds the progress coreos-installer prints while it writes,
// as in "> Read disk 1.2 GiB/3.5 GiB (35%)".
var percentRE = regexp.MustCompile(`\((\d{1,3})%\)`)

// lookTool resolves a tool setting: "-" is never, "" is a lookup of name in
// PATH (not found is not an error, just no tool), anything else a path
// that must be executable.
func lookTool(setting, name string) (string, error) {
	switch setting {
	case "-":
		return "", nil
	case "":
		p, err := exec.LookPath(name)
		if err != nil {
			return "", nil
		}
		return p, nil
	}
	p, err := exec.LookPath(setting)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// coreosInstall writes the image with coreos-installer:
//
//	coreos-installer install --insecure -i <ignition> [installer args...] <device>
//
// with no image URL (the image of the live environment) and no signature
// check, up to coreosAttempts times. progress gets each percentage the
// command prints.
func coreosInstall(ctx context.Context, bin, ignition string, args []string, device string, progress func(int), log *slog.Logger) error {
	argv := append([]string{"install", "--insecure", "-i", ignition}, args...)
	argv = append(argv, device)
	var err error
	for attempt := 1; attempt <= coreosAttempts; attempt++ {
		if attempt > 1 && !backoff.Sleep(ctx, coreosAttemptDelay) {
			return fmt.Errorf("coreos-installer: %w", ctx.Err())
		}
		log.Info("running coreos-installer", slog.Any(keyArgv, argv), slog.Int(keyAttempt, attempt))
		if err = runParsing(ctx, bin, argv, progress); err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("coreos-installer: %w", ctx.Err())
		}
		log.Warn("coreos-installer failed", slog.Any(keyErr, err), slog.Int(keyAttempt, attempt))
	}
	return fmt.Errorf("coreos-installer failed %d times, last: %w", coreosAttempts, err)
}

// runParsing runs bin with argv, feeds every percentage its output shows to
// progress, and returns an error holding the tail of the output when the
// command fails.
func runParsing(ctx context.Context, bin string, argv []string, progress func(int)) error {
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.WaitDelay = waitDelay
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	tail := &tailBuffer{max: outputTail}
	parsed := make(chan struct{})
	go func() {
		defer close(parsed)
		parseProgress(io.TeeReader(pr, tail), progress)
	}()
	err := cmd.Run()
	pw.Close()
	<-parsed
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(argv, " "), err, bytes.TrimSpace(tail.Bytes()))
	}
	return nil
}

// parseProgress reads r to its end, splitting at both \n and \r (progress
// lines rewrite themselves with \r on a terminal), and calls progress for
// each line that shows a percentage.
func parseProgress(r io.Reader, progress func(int)) {
	sc := bufio.NewScanner(r)
	sc.Split(splitLines)
	for sc.Scan() {
		m := percentRE.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		if p, err := strconv.Atoi(string(m[1])); err == nil && p <= 100 {
			progress(p)
		}
	}
	// A line too long to scan ends the parsing, not the command: drain.
	_, _ = io.Copy(io.Discard, r)
}

// splitLines is bufio.ScanLines with \r as a line end too.
func splitLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte { return t.buf }

// BootEntry is the UEFI boot entry for a written disk: the ESP's
// partition number, the loader's path on it and the entry's label. A zero
// field is what assisted-installer gives efibootmgr for RHCOS: partition 2,
// the shim, "Red Hat Enterprise Linux".
type BootEntry struct {
	Partition int
	Loader    string
	Label     string
}

func (e BootEntry) withDefaults() BootEntry {
	if e.Partition == 0 {
		e.Partition = 2
	}
	if e.Loader == "" {
		e.Loader = efiLoader()
	}
	if e.Label == "" {
		e.Label = "Red Hat Enterprise Linux"
	}
	return e
}

// efiLoader is the shim on the ESP of an RHCOS disk for this architecture.
func efiLoader() string {
	if runtime.GOARCH == "arm64" {
		return `\EFI\redhat\shimaa64.efi`
	}
	return `\EFI\redhat\shimx64.efi`
}

// setBootOrder adds a UEFI boot entry for the written disk, which
// efibootmgr puts first in the boot order; for RHCOS:
//
//	efibootmgr -v -d <device> -p 2 -c -L "Red Hat Enterprise Linux" -l \EFI\redhat\shimx64.efi
//
// Best effort, as in assisted-installer: firmware that boots the disk
// anyway is the common case, so a failure is logged and the install goes
// on. Nothing runs on a BIOS host (no efiDir) or without efibootmgr.
func setBootOrder(ctx context.Context, bin, efiDir, device string, entry BootEntry, log *slog.Logger) {
	if bin == "" {
		log.Info("no efibootmgr; boot order left as it is")
		return
	}
	if _, err := os.Stat(efiDir); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			log.Warn("cannot tell whether the host boots UEFI; boot order left as it is", slog.Any(keyErr, err))
		}
		return
	}
	e := entry.withDefaults()
	argv := []string{"-v", "-d", device, "-p", strconv.Itoa(e.Partition), "-c", "-L", e.Label, "-l", e.Loader}
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.WaitDelay = waitDelay
	out, err := cmd.CombinedOutput()
	if err != nil {
		log.Warn("efibootmgr failed; boot order left as it is", slog.Any(keyErr, err), slog.Any(keyArgv, argv), slog.String(keyOutput, lastBytes(out, outputTail)))
		return
	}
	log.Info("boot entry added", slog.Any(keyArgv, argv))
}

func lastBytes(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}
