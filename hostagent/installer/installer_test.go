package installer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

const (
	selfBootstrap = testHostID
	master1       = "00000000-0000-4000-8000-0000000000a1"
	master2       = "00000000-0000-4000-8000-0000000000a2"
	worker1       = "00000000-0000-4000-8000-0000000000b1"
)

// joinedCluster is a three-master cluster whose two other masters joined
// and whose worker has written its disk and rebooted.
func joinedCluster(int) ([]*wire.Host, error) {
	boot := host(selfBootstrap, "master-0", wire.HostRoleMaster, wire.HostStageWaitingForControlPlane)
	boot.Bootstrap = true
	return []*wire.Host{
		boot,
		host(master1, "master-1", wire.HostRoleMaster, wire.HostStageJoined),
		host(master2, "master-2", wire.HostRoleMaster, wire.HostStageDone),
		host(worker1, "worker-1", wire.HostRoleWorker, wire.HostStageRebooting),
	}, nil
}

// installedMasters is a cluster whose masters are done.
func installedMasters(int) ([]*wire.Host, error) {
	return []*wire.Host{
		host(master1, "master-1", wire.HostRoleMaster, wire.HostStageDone),
		host(master2, "master-2", wire.HostRoleMaster, wire.HostStageDone),
		host(testHostID, "worker-1", wire.HostRoleWorker, wire.HostStageWaitingForControlPlane),
	}, nil
}

func TestRunStagesPerRole(t *testing.T) {
	tests := []struct {
		name       string
		req        wire.InstallCmdRequest
		hosts      func(int) ([]*wire.Host, error)
		wantStages []wire.HostStage
		wantDelay  time.Duration
		wantFile   string
	}{
		{
			name: "master",
			req:  testRequest(wire.HostRoleMaster, 3),
			wantStages: []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling,
				wire.HostStageWritingImageToDisk, wire.HostStageRebooting},
			wantDelay: time.Minute,
			wantFile:  "master-" + testHostID + ".ign",
		},
		{
			name: "arbiter",
			req:  testRequest(wire.HostRoleArbiter, 2),
			wantStages: []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling,
				wire.HostStageWritingImageToDisk, wire.HostStageRebooting},
			wantDelay: time.Minute,
			wantFile:  "arbiter-" + testHostID + ".ign",
		},
		{
			name:  "worker",
			req:   testRequest(wire.HostRoleWorker, 0),
			hosts: installedMasters,
			wantStages: []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling,
				wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting},
			wantDelay: time.Minute,
			wantFile:  "worker-" + testHostID + ".ign",
		},
		{
			name:  "bootstrap",
			req:   testRequest(wire.HostRoleBootstrap, 3),
			hosts: joinedCluster,
			wantStages: []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling,
				wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube,
				wire.HostStageWaitingForController, wire.HostStageRebooting},
			wantDelay: time.Minute,
			wantFile:  "master-" + testHostID + ".ign",
		},
		{
			name: "single node",
			req:  testRequest(wire.HostRoleBootstrap, 1),
			wantStages: []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling,
				wire.HostStageWaitingForBootkube, wire.HostStageWritingImageToDisk, wire.HostStageRebooting},
			wantDelay: 0,
			wantFile:  "master-" + testHostID + ".ign",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{hosts: tt.hosts}
			w := &fakeWriter{progress: []int{0, 50, 100}}
			rb := &fakeRebooter{}
			cfg := testConfig(t, tt.req, svc, w, rb)
			if err := Run(context.Background(), cfg); err != nil {
				t.Fatalf("Run = %v, want nil", err)
			}
			if diff := cmp.Diff(tt.wantStages, svc.Stages()); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]rebootCall{{tt.wantDelay, RebootMessage}}, rb.Calls()); diff != "" {
				t.Errorf("reboots (-want +got):\n%s", diff)
			}
			if w.device != testDevice || string(w.ignition) != testIgnition {
				t.Errorf("writer got device %q ignition %s, want %q and the service's ignition", w.device, w.ignition, testDevice)
			}
			saved, err := os.ReadFile(filepath.Join(cfg.Root, "opt", "install-dir", tt.wantFile))
			if err != nil {
				t.Fatalf("saved ignition: %v", err)
			}
			if string(saved) != testIgnition {
				t.Errorf("saved ignition = %s, want %s", saved, testIgnition)
			}
		})
	}
}

func TestRunReportsInfos(t *testing.T) {
	svc := &fakeService{}
	w := &fakeWriter{progress: []int{0, 3, 5, 7, 12, 16, 17, 50, 99, 100, 100}}
	rb := &fakeRebooter{}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, w, rb)
	cfg.RebootDelay = 2 * time.Minute
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v", err)
	}
	want := []report{
		{wire.HostStageStartingInstallation, "master"},
		{wire.HostStageInstalling, "master"},
		{wire.HostStageWritingImageToDisk, ""},
		{wire.HostStageWritingImageToDisk, "5%"},
		{wire.HostStageWritingImageToDisk, "12%"},
		{wire.HostStageWritingImageToDisk, "17%"},
		{wire.HostStageWritingImageToDisk, "50%"},
		{wire.HostStageWritingImageToDisk, "99%"},
		{wire.HostStageWritingImageToDisk, "100%"},
		{wire.HostStageRebooting, "rebooting in 2m0s"},
	}
	if diff := cmp.Diff(want, svc.Reports()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]rebootCall{{2 * time.Minute, RebootMessage}}, rb.Calls()); diff != "" {
		t.Errorf("reboots (-want +got):\n%s", diff)
	}
}

func TestRunWriterFailure(t *testing.T) {
	svc := &fakeService{}
	rb := &fakeRebooter{}
	w := &fakeWriter{progress: []int{10}, err: errors.New("short write on /dev/nodezero-test-disk")}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, w, rb)
	err := Run(context.Background(), cfg)
	if !errors.Is(err, w.err) {
		t.Fatalf("Run = %v, want the writer's error", err)
	}
	last := svc.last(t)
	if last.Stage != wire.HostStageFailed || last.Info != err.Error() {
		t.Errorf("last report = %+v, want Failed with %q", last, err.Error())
	}
	if len(rb.Calls()) != 0 {
		t.Errorf("Reboot called %v after a failed write", rb.Calls())
	}
}

func TestRunRebootFailure(t *testing.T) {
	svc := &fakeService{}
	rb := &fakeRebooter{err: errors.New("no system bus")}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, &fakeWriter{}, rb)
	if err := Run(context.Background(), cfg); !errors.Is(err, rb.err) {
		t.Fatalf("Run = %v, want the rebooter's error", err)
	}
	want := []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageRebooting, wire.HostStageFailed}
	if diff := cmp.Diff(want, svc.Stages()); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

func TestRunInvalidRequestReportsNothing(t *testing.T) {
	svc := &fakeService{}
	rb := &fakeRebooter{}
	req := testRequest(wire.HostRoleMaster, 3)
	req.BootDevice = "sda"
	err := Run(context.Background(), testConfig(t, req, svc, &fakeWriter{}, rb))
	if !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("Run = %v, want ErrInvalidRequest", err)
	}
	if got := svc.Reports(); len(got) != 0 {
		t.Errorf("reports = %v, want none", got)
	}
}

func TestRunStoppedWhileWriting(t *testing.T) {
	svc := &fakeService{}
	rb := &fakeRebooter{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, &fakeWriter{}, rb)
	cfg.Write = func(ctx context.Context, _ string, _ []byte, _ func(int)) error {
		cancel() // stop-installation arrives mid-write
		<-ctx.Done()
		return errors.New("write interrupted")
	}
	err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	for _, r := range svc.Reports() {
		if r.Stage == wire.HostStageFailed {
			t.Errorf("reported %v after a stop; want no Failed", r)
		}
	}
	if len(rb.Calls()) != 0 {
		t.Errorf("Reboot called %v after a stop", rb.Calls())
	}
}

func TestRunStoppedWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc := &fakeService{hosts: func(n int) ([]*wire.Host, error) {
		if n == 2 {
			cancel()
		}
		return nil, errors.New("service unreachable")
	}}
	rb := &fakeRebooter{}
	cfg := testConfig(t, testRequest(wire.HostRoleBootstrap, 3), svc, &fakeWriter{}, rb)
	err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotJoined) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if got := svc.last(t); got.Stage != wire.HostStageWaitingForControlPlane {
		t.Errorf("last report = %v, want the wait's stage and no Failed", got)
	}
}

func TestRunBuiltinFoldsArgsIntoIgnition(t *testing.T) {
	svc := &fakeService{}
	w := &fakeWriter{}
	rb := &fakeRebooter{}
	req := testRequest(wire.HostRoleMaster, 3)
	req.InstallerArgs = `["--append-karg","rd.multipath=default","-n","--delete-karg","quiet"]`
	cfg := testConfig(t, req, svc, w, rb)
	writeKeyfile(t, cfg.Root, "eth0.nmconnection", "[connection]\nid=eth0\n")
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v", err)
	}
	got := parseIgnition(t, w.ignition)
	if diff := cmp.Diff([]string{"rd.multipath=default"}, kargStrings(got.KernelArguments.ShouldExist)); diff != "" {
		t.Errorf("shouldExist (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"quiet"}, kargStrings(got.KernelArguments.ShouldNotExist)); diff != "" {
		t.Errorf("shouldNotExist (-want +got):\n%s", diff)
	}
	if len(got.Storage.Files) != 1 || got.Storage.Files[0].Path != "/etc/NetworkManager/system-connections/eth0.nmconnection" {
		t.Errorf("storage files = %+v, want the keyfile", got.Storage.Files)
	}
	saved, err := os.ReadFile(filepath.Join(cfg.Root, "opt", "install-dir", "master-"+testHostID+".ign"))
	if err != nil || string(saved) != string(w.ignition) {
		t.Errorf("saved ignition = %s (%v), want what the writer got", saved, err)
	}
}

func TestRunBuiltinRefusesArgsItCannotHonour(t *testing.T) {
	svc := &fakeService{}
	w := &fakeWriter{}
	rb := &fakeRebooter{}
	req := testRequest(wire.HostRoleMaster, 3)
	req.InstallerArgs = `["--save-partlabel","data*","--append-karg","a=b","--image-url","http://10.0.0.1/rhcos.raw.gz","--save-partlabel","x"]`
	err := Run(context.Background(), testConfig(t, req, svc, w, rb))
	if err == nil || errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("Run = %v, want a failure (the request itself is valid)", err)
	}
	got := svc.Reports()
	if len(got) != 1 || got[0].Stage != wire.HostStageFailed {
		t.Fatalf("reports = %v, want only Failed", got)
	}
	// Each flag named once, in the order the args use them.
	if !strings.Contains(got[0].Info, "installer args --save-partlabel, --image-url (") {
		t.Errorf("Failed info %q does not name --save-partlabel, --image-url", got[0].Info)
	}
	if w.Calls() != 0 {
		t.Errorf("writer called %d times", w.Calls())
	}
}

func TestRunNeedsAWriter(t *testing.T) {
	svc := &fakeService{}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, &fakeWriter{}, &fakeRebooter{})
	cfg.Write = nil
	if err := Run(context.Background(), cfg); err == nil {
		t.Fatal("Run with neither coreos-installer nor a writer = nil, want an error")
	}
	if got := svc.last(t); got.Stage != wire.HostStageFailed {
		t.Errorf("last report = %v, want Failed", got)
	}
}

// TestRunConsole: a live host's console gets every stage as a line, and
// the bootstrap host says which control-plane hosts joined before it says
// it reboots (the order a person at node zero's console needs).
func TestRunConsole(t *testing.T) {
	svc := &fakeService{hosts: joinedCluster}
	cfg := testConfig(t, testRequest(wire.HostRoleBootstrap, 3), svc, &fakeWriter{progress: []int{0, 100}}, &fakeRebooter{})
	var lines []string
	cfg.Console = func(l string) { lines = append(lines, l) }
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	joined := slices.IndexFunc(lines, func(l string) bool {
		return l == "install: the control plane joined: master-1, master-2; the bootstrap host reboots next"
	})
	reboot := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "install: Rebooting") })
	writing := slices.Index(lines, "install: Writing image to disk")
	if joined < 0 || reboot < 0 || writing < 0 || !(writing < joined && joined < reboot) {
		t.Fatalf("console lines:\n%s\nwant Writing image to disk, then the control plane joined (master-1, master-2), then Rebooting", strings.Join(lines, "\n"))
	}
}
