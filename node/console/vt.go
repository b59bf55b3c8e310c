package console

import (
	"io"
	"os"
	"regexp"
	"strconv"

	"golang.org/x/sys/unix"
)

// The Linux VT ioctls chvt uses.
const (
	vtActivate   = 0x5606
	vtWaitActive = 0x5607
)

var vtRE = regexp.MustCompile(`^/dev/tty([0-9]+)$`)

// switchToOwnVT brings the virtual terminal on stdin to the front, as ABI's
// console unit does with `chvt 15`, and returns a function that switches
// back to tty1 for the login prompt. On a serial line or a pseudo-terminal
// it does nothing.
func switchToOwnVT() (restore func()) {
	tty, err := os.Readlink("/proc/self/fd/0")
	if err != nil {
		return func() {}
	}
	m := vtRE.FindStringSubmatch(tty)
	if m == nil {
		return func() {}
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n == 0 {
		return func() {}
	}
	fd := int(os.Stdin.Fd())
	if unix.IoctlSetInt(fd, vtActivate, n) != nil {
		return func() {}
	}
	_ = unix.IoctlSetInt(fd, vtWaitActive, n)
	return func() {
		if unix.IoctlSetInt(fd, vtActivate, 1) == nil {
			_ = unix.IoctlSetInt(fd, vtWaitActive, 1)
		}
	}
}

// IsTerminal tells whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
