package testbed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"time"
)

// The serial console (ttyS0): QEMU appends everything the guest writes to
// one log file over all power-ons. A wait follows the file, reading what is
// new at each tick, and matches it line by line.

// serialPoll is how often a wait reads what the serial log gained.
const serialPoll = 100 * time.Millisecond

// SerialLog is the path of the VM's serial console log.
func (v *VM) SerialLog() string { return v.plan.serial }

// BootOffset is the serial log's size when the current power-on started:
// WaitSerialFrom(ctx, v.BootOffset(), re) looks at this boot only.
func (v *VM) BootOffset() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.bootOffset
}

// SerialOffset is the serial log's size now: a later WaitSerialFrom with it
// sees only what the guest writes from here on (after a reboot, say).
func (v *VM) SerialOffset() (int64, error) {
	fi, err := os.Stat(v.plan.serial)
	if err != nil {
		return 0, fmt.Errorf("vm %s: serial log: %w", v.Name, err)
	}
	return fi.Size(), nil
}

// WaitSerial returns the first line of the serial log, from its start,
// that re matches. See WaitSerialFrom.
func (v *VM) WaitSerial(ctx context.Context, re *regexp.Regexp) (string, error) {
	line, _, err := v.WaitSerialFrom(ctx, 0, re)
	return line, err
}

// WaitSerialFrom returns the first line at or after byte offset from that
// re matches, and the offset just past that line, waiting for the guest to
// write it. Lines are matched as a person reads them: terminal escape
// sequences and carriage returns removed. The last line is matched before
// its newline is written, as "login: " prompts never get one: so a pattern
// that captures should end in something that follows the capture
// ("marker=(\S+) " rather than "marker=(\S+)"). It fails when ctx ends, or
// when the VM is off and the log holds no such line.
func (v *VM) WaitSerialFrom(ctx context.Context, from int64, re *regexp.Regexp) (line string, next int64, err error) {
	f, err := os.Open(v.plan.serial)
	if err != nil {
		return "", 0, fmt.Errorf("vm %s: serial log: %w", v.Name, err)
	}
	defer f.Close()
	s := serialScanner{off: from}
	tick := time.NewTicker(serialPoll)
	defer tick.Stop()
	for {
		// Whether the VM was off before the read: then the read saw all
		// it will ever write.
		off := !v.Running()
		if err := s.readFrom(f); err != nil {
			return "", 0, fmt.Errorf("vm %s: serial log: %w", v.Name, err)
		}
		if line, next, ok := s.match(re); ok {
			return line, next, nil
		}
		if off {
			return "", 0, fmt.Errorf("vm %s: serial log has no line matching %q: %w", v.Name, re, ErrVMNotRunning)
		}
		select {
		case <-ctx.Done():
			return "", 0, fmt.Errorf("vm %s: wait for serial line matching %q: %w", v.Name, re, ctx.Err())
		case <-tick.C:
		}
	}
}

// serialScanner matches the lines of a growing log.
type serialScanner struct {
	off     int64  // where buf starts in the file
	buf     []byte // the unmatched tail: at most one partial line after match
	scanned int    // complete lines in buf[:scanned] did not match
}

// readFrom appends what the file holds past the buffer.
func (s *serialScanner) readFrom(f *os.File) error {
	chunk := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(chunk, s.off+int64(len(s.buf)))
		s.buf = append(s.buf, chunk[:n]...)
		if err == io.EOF || (err == nil && n < len(chunk)) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// match looks for re in the complete lines not yet scanned, then in the
// partial last line; it drops the complete lines that did not match.
func (s *serialScanner) match(re *regexp.Regexp) (string, int64, bool) {
	for {
		i := bytes.IndexByte(s.buf[s.scanned:], '\n')
		if i < 0 {
			break
		}
		end := s.scanned + i + 1
		if line := cleanLine(s.buf[s.scanned:end]); re.MatchString(line) {
			return line, s.off + int64(end), true
		}
		s.scanned = end
	}
	// Keep the partial line only.
	s.off += int64(s.scanned)
	s.buf = append(s.buf[:0], s.buf[s.scanned:]...)
	s.scanned = 0
	if len(s.buf) > 0 {
		if line := cleanLine(s.buf); re.MatchString(line) {
			return line, s.off + int64(len(s.buf)), true
		}
	}
	return "", 0, false
}

// escapeRE matches terminal escape sequences: CSI (ESC [ ... final byte),
// and the two-byte ones (ESC and one character), which firmware and
// consoles write around their text.
var escapeRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]|\x1b[()][0-9A-Za-z]`)

// cleanLine is a log line as read on a terminal: no escapes, no CR, no LF.
func cleanLine(b []byte) string {
	b = escapeRE.ReplaceAll(b, nil)
	b = bytes.ReplaceAll(b, []byte("\r"), nil)
	return string(bytes.TrimSuffix(b, []byte("\n")))
}
