// Package procstat reads a process's memory and CPU, and the machine's
// busy CPU time, from Linux's /proc: what the load program and the
// console's benchmark measure the service and the console with. It imports
// nothing of the project.
package procstat

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat. It is 100 on every architecture Go builds for; reading
// sysconf(_SC_CLK_TCK) would need cgo.
const clockTick = 10 * time.Millisecond

// Sample is one reading of a process's memory and CPU.
type Sample struct {
	At  time.Time
	RSS int64         // VmRSS, bytes
	HWM int64         // VmHWM (peak RSS since start), bytes
	CPU time.Duration // utime + stime, whole process, all threads
}

// Read samples /proc/<pid>/status and /proc/<pid>/stat.
func Read(pid int) (Sample, error) {
	s := Sample{At: time.Now()}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("read process status: %w", err)
	}
	if s.RSS, err = statusKB(status, "VmRSS:"); err != nil {
		return s, err
	}
	if s.HWM, err = statusKB(status, "VmHWM:"); err != nil {
		return s, err
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("read process stat: %w", err)
	}
	s.CPU, err = statCPU(stat)
	return s, err
}

// statusKB returns the value of a "Key:   123 kB" line of /proc/<pid>/status, in bytes.
func statusKB(status []byte, key string) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte(key))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("process status: %s %q: want \"<n> kB\"", key, rest)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process status: %s: %w", key, err)
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("process status: no %s line", key)
}

// statCPU returns utime+stime of a /proc/<pid>/stat line. The command name
// (field 2) may hold spaces and parentheses, so fields are counted after
// the last ')': utime and stime are fields 14 and 15 of the line.
func statCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("process stat: no command name in %q", stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("process stat: %d fields after the name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process stat: utime/stime %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// MachineCPU returns the CPU time every CPU of the machine spent busy
// (the first line of /proc/stat: all but idle and iowait), so a run can say
// how much of the machine other processes took.
func MachineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("read machine cpu: %w", err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("read machine cpu: unexpected first line %q", line)
	}
	var ticks int64
	// user nice system idle iowait irq softirq steal: guest time is in user.
	for i, s := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("read machine cpu: %q: %w", s, err)
		}
		if i != 3 && i != 4 {
			ticks += n
		}
	}
	return time.Duration(ticks) * clockTick, nil
}
