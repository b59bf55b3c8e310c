package testbed

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
)

// nsPrefix starts the name of every namespace a bed makes.
const nsPrefix = "nzb"

// bedNSRE matches a bed's namespace name and captures the creator's PID and
// the bed ID: nzb<pid>x<rand>-<host or sw>.
var bedNSRE = regexp.MustCompile(`^nzb(([0-9]+)x[0-9a-z]+)-[A-Za-z0-9_-]+$`)

// newID returns a bed ID: this process's PID, "x", and three random base-36
// characters. With a PID below 10^7 the ID has at most 11 characters, so the
// veth name v<id>h<index> stays within the kernel's 15.
func newID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return strconv.Itoa(os.Getpid()) + "x" + string(b[:])
}

// alive reports whether process pid exists (a zombie counts as gone).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may hold
	// spaces and parentheses itself: take the last ')'.
	for i := len(stat) - 1; i >= 0; i-- {
		if stat[i] == ')' {
			return i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
		}
	}
	return true
}

// bedDirRE matches a directory New made with os.MkdirTemp.
var bedDirRE = regexp.MustCompile(`^nzb([0-9]+)x[0-9a-z]+-[0-9]+$`)

// Reap deletes what stale beds left: a bed is stale when the process named
// in it (nzb<pid>x...) no longer runs, as after a test killed before its
// Close. It kills the processes left inside a stale bed's namespaces,
// deletes their links and the namespaces, and removes the bed's directory
// under os.TempDir (a directory the caller chose in Config.Dir is left
// alone). New calls it first; it returns what it removed.
func Reap(ctx context.Context) ([]string, error) {
	names, err := listNetns(ctx)
	if err != nil {
		return nil, fmt.Errorf("reap stale test beds: %w", err)
	}
	var reaped []string
	var errs []error
	for _, ns := range names {
		m := bedNSRE.FindStringSubmatch(ns)
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[2])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		// Only the listed pids: a process group could reach outside the
		// namespace, and nothing here started those processes.
		err = errors.Join(killNetns(ctx, ns, false), deleteNetns(ctx, ns))
		switch {
		case !nsExists(ns):
			// Gone, whatever the errors said: another process may
			// have been reaping the same bed at the same time.
			reaped = append(reaped, ns)
		case err != nil:
			errs = append(errs, err)
		}
	}
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range entries {
		m := bedDirRE.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		if pid, err := strconv.Atoi(m[1]); err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		reaped = append(reaped, dir)
	}
	if err := errors.Join(errs...); err != nil {
		return reaped, fmt.Errorf("reap stale test beds: %w", err)
	}
	return reaped, nil
}
