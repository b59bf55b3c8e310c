package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/simagent"
)

// TestLoadtestSim runs the load program against a freshly built binary:
// it tests the program (every host known, every figure filled in), not the
// service's speed.
func TestLoadtestSim(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a service")
	}
	bin := filepath.Join(t.TempDir(), "nodezero")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	// A short ?wait= keeps the agents asking during the one-second idle
	// window, so it has requests and CPU to measure.
	args := []string{"--agents", "sim", "--hosts", "20", "--idle", "1s", "--wait", "100ms", "--startups", "2",
		"--bin", bin, "--dir", t.TempDir(), "--json"}
	if err := runLoadtest(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("loadtest %v: %v\n%s", args, err, stderr.String())
	}
	var rep ltReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	if rep.Mode != "sim" || rep.Hosts != 20 || len(rep.Runs) != 1 || len(rep.StartupSamplesMs) != 3 || rep.StartupMedianMs <= 0 {
		t.Fatalf("report = mode %q, %d hosts, %d runs, startup samples %v (median %v); want sim, 20, 1, 3 samples",
			rep.Mode, rep.Hosts, len(rep.Runs), rep.StartupSamplesMs, rep.StartupMedianMs)
	}
	run := rep.Runs[0]
	// Every figure but OtherCores, which is 0 on a quiet machine.
	v := reflect.ValueOf(run)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Name == "OtherCores" || f.Name == "Requests" {
			continue
		}
		if v.Field(i).IsZero() {
			t.Errorf("run figure %s is zero in %+v", f.Name, run)
		}
	}
	if run.ClusterReadyS < run.AllKnownS {
		t.Errorf("cluster ready at %v s, before every host was known at %v s", run.ClusterReadyS, run.AllKnownS)
	}
	var kinds []string
	for _, q := range run.Requests {
		kinds = append(kinds, q.Kind)
		if q.Count == 0 || q.Errors != 0 || q.P50Ms <= 0 || q.P99Ms < q.P50Ms || q.MaxMs < q.P99Ms {
			t.Errorf("requests %+v: want some, no errors, 0 < p50 <= p99 <= max", q)
		}
	}
	want := []string{simagent.KindRegister, simagent.KindNextSteps, simagent.KindNextStepsHeld, simagent.KindStepReply, ltKindPoll}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("request kinds (-want +got):\n%s", diff)
	}
	if got := rep.Runs[0].Requests[0].Count; got < 20 {
		t.Errorf("%d registrations, want at least one per host (20)", got)
	}
}

func TestLoadtestFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown agents", []string{"--agents", "vm"}},
		{"too many real hosts", []string{"--agents", "real", "--hosts", "6"}},
		{"no hardware trees", []string{"--agents", "real", "--hosts", "2", "--hw", "/nonexistent"}},
		{"no hosts", []string{"--hosts", "0"}},
		{"no runs", []string{"--runs", "0"}},
		{"pprof off loopback", []string{"--service-pprof", "0.0.0.0:6060"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runLoadtest(context.Background(), tt.args, &out, &out); err == nil {
				t.Errorf("loadtest %v succeeded, want a flag error", tt.args)
			}
		})
	}
}

func TestListenWatcher(t *testing.T) {
	w := &ltListenWatcher{found: make(chan string, 1)}
	chunks := []string{"nodezero service: made a key pair\nnodezero serv", "ice: listening on http://127.0.0.1:4",
		"1234/api/assisted-install/v2\n", "more output\n"}
	for _, c := range chunks {
		if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", c, n, err)
		}
	}
	select {
	case got := <-w.found:
		if got != "http://127.0.0.1:41234" {
			t.Errorf("found %q, want http://127.0.0.1:41234", got)
		}
	default:
		t.Fatal("no URL found")
	}
}

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
	self, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.rss <= 0 || self.hwm < self.rss {
		t.Errorf("readProc(self) = RSS %d, HWM %d; want 0 < RSS <= HWM", self.rss, self.hwm)
	}
	if m, err := readMachineCPU(); err != nil || m <= 0 {
		t.Errorf("readMachineCPU = %v, %v; want busy time", m, err)
	}
}

func TestLtMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := ltMedian(tt.xs); got != tt.want {
			t.Errorf("ltMedian(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}
