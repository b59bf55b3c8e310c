package procstat

import (
	"os"
	"testing"
	"time"
)

func TestProcStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := []byte("4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 70 0 0 20 0 9 0 1000 1 1 18446744073709551615")
	cpu, err := statCPU(stat)
	if err != nil || cpu != 3200*time.Millisecond {
		t.Errorf("statCPU = %v, %v; want 3.2s (320 ticks)", cpu, err)
	}
	status := []byte("Name:\tx\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n")
	if rss, err := statusKB(status, "VmRSS:"); err != nil || rss != 1<<20 {
		t.Errorf("statusKB(VmRSS) = %d, %v; want 1 MiB", rss, err)
	}
	if _, err := statusKB(status, "VmSwap:"); err == nil {
		t.Error("statusKB of a missing key succeeded")
	}
	self, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.RSS <= 0 || self.HWM < self.RSS {
		t.Errorf("Read(self) = RSS %d, HWM %d; want 0 < RSS <= HWM", self.RSS, self.HWM)
	}
	if m, err := MachineCPU(); err != nil || m <= 0 {
		t.Errorf("MachineCPU = %v, %v; want busy time", m, err)
	}
}
