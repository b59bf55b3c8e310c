package installer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

const (
	testHostID = "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
	// testDevice is a device no machine has, so that nothing real is
	// written even by mistake; resolveDevice leaves it as it is.
	testDevice = "/dev/nodezero-test-disk"
)

// report is one UpdateProgress call.
type report struct {
	Stage wire.HostStage
	Info  string
}

// fakeService is an in-memory Service: it records progress reports in
// order, serves one ignition, and answers ClusterHosts from a script.
type fakeService struct {
	ignition []byte
	// hosts returns the host list of the n-th ClusterHosts call (from 0).
	hosts func(n int) ([]*wire.Host, error)
	// progressErr, when set, answers an UpdateProgress call; the call is
	// recorded either way.
	progressErr func(r report, n int) error

	mu         sync.Mutex
	reports    []report
	hostsCalls int
}

func (f *fakeService) UpdateProgress(_ context.Context, stage wire.HostStage, info string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := report{stage, info}
	f.reports = append(f.reports, r)
	if f.progressErr != nil {
		return f.progressErr(r, len(f.reports)-1)
	}
	return nil
}

func (f *fakeService) HostIgnition(context.Context) ([]byte, error) {
	return f.ignition, nil
}

func (f *fakeService) ClusterHosts(context.Context, wire.HostRole) ([]*wire.Host, error) {
	f.mu.Lock()
	n := f.hostsCalls
	f.hostsCalls++
	f.mu.Unlock()
	if f.hosts == nil {
		return nil, nil
	}
	return f.hosts(n)
}

// calls is how many times ClusterHosts was called.
func (f *fakeService) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hostsCalls
}

func (f *fakeService) Reports() []report {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]report(nil), f.reports...)
}

// Stages returns the reported stages with consecutive repeats (the write
// progress) folded.
func (f *fakeService) Stages() []wire.HostStage {
	var out []wire.HostStage
	for _, r := range f.Reports() {
		if len(out) == 0 || out[len(out)-1] != r.Stage {
			out = append(out, r.Stage)
		}
	}
	return out
}

// last returns the last report.
func (f *fakeService) last(t *testing.T) report {
	t.Helper()
	rs := f.Reports()
	if len(rs) == 0 {
		t.Fatal("no progress reported")
	}
	return rs[len(rs)-1]
}

// rebootCall is one Reboot call.
type rebootCall struct {
	Delay   time.Duration
	Message string
}

type fakeRebooter struct {
	mu    sync.Mutex
	calls []rebootCall
	err   error
	// onReboot, when set, runs at each Reboot call.
	onReboot func()
}

func (r *fakeRebooter) Reboot(_ context.Context, delay time.Duration, message string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.onReboot != nil {
		r.onReboot()
	}
	r.calls = append(r.calls, rebootCall{delay, message})
	return r.err
}

func (r *fakeRebooter) Calls() []rebootCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rebootCall(nil), r.calls...)
}

// fakeWriter is a built-in writer that reports a scripted progress.
type fakeWriter struct {
	progress []int
	err      error

	mu       sync.Mutex
	calls    int
	device   string
	ignition []byte
}

func (w *fakeWriter) Write(_ context.Context, device string, ignition []byte, progress func(int)) error {
	w.mu.Lock()
	w.calls++
	w.device, w.ignition = device, append([]byte(nil), ignition...)
	w.mu.Unlock()
	for _, p := range w.progress {
		progress(p)
	}
	return w.err
}

func (w *fakeWriter) Calls() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls
}

// testIgnition is a minimal host ignition as the service serves it.
const testIgnition = `{"ignition":{"version":"3.2.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAA test"]}]}}`

func testRequest(role wire.HostRole, controlPlaneCount int64) wire.InstallCmdRequest {
	return wire.InstallCmdRequest{
		ClusterID:         "c0ffee00-0000-4000-8000-000000000001",
		InfraEnvID:        "c0ffee00-0000-4000-8000-000000000002",
		HostID:            testHostID,
		Role:              role,
		BootDevice:        testDevice,
		ControlPlaneCount: controlPlaneCount,
	}
}

// testConfig is a Config that touches nothing of the machine: no
// coreos-installer or efibootmgr from PATH, a temp root, fakes at the
// service, writer and reboot, and short intervals.
func testConfig(t *testing.T, req wire.InstallCmdRequest, svc *fakeService, w *fakeWriter, rb *fakeRebooter) Config {
	t.Helper()
	if svc.ignition == nil {
		svc.ignition = []byte(testIgnition)
	}
	return Config{
		Request:             req,
		Service:             svc,
		Write:               w.Write,
		CoreOSInstaller:     "-",
		Efibootmgr:          "-",
		EFIDir:              filepath.Join(t.TempDir(), "no-efi"),
		Root:                t.TempDir(),
		Reboot:              rb,
		Poll:                time.Millisecond,
		ControlPlaneTimeout: time.Hour,
		ReportRetry:         time.Second,
	}
}

// host builds a cluster host.
func host(id, name string, role wire.HostRole, stage wire.HostStage) *wire.Host {
	h := &wire.Host{ID: id, RequestedHostname: name, Role: role, Status: wire.HostStatusInstallingInProgress}
	if stage != "" {
		h.Progress = &wire.HostProgressInfo{CurrentStage: stage}
	}
	return h
}

// standIn writes an executable shell script into dir and returns its path.
func standIn(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordArgs is the stand-in line that appends its argv to file, one arg
// per line, each call ended by a line "--end--".
func recordArgs(file string) string {
	return `for a in "$@"; do printf '%s\n' "$a"; done >> '` + file + "'\necho --end-- >> '" + file + "'\n"
}

// recordedCalls reads what recordArgs wrote.
func recordedCalls(t *testing.T, file string) [][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	var cur []string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "--end--" {
			calls = append(calls, cur)
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return calls
}
