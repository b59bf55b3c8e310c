package installer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

func TestBootstrapTimeout(t *testing.T) {
	tests := []struct {
		name     string
		hosts    func(int) ([]*v2.Host, error)
		wantInfo string
	}{
		{
			name: "none joined",
			hosts: func(int) ([]*v2.Host, error) {
				return []*v2.Host{
					host(selfBootstrap, "master-0", v2.HostRoleBootstrap, v2.HostStageWaitingForControlPlane),
					host(master2, "master-2", v2.HostRoleMaster, v2.HostStageConfiguring),
					host(master1, "master-1", v2.HostRoleMaster, v2.HostStageRebooting),
					host(worker1, "worker-1", v2.HostRoleWorker, v2.HostStageWaitingForControlPlane),
				}, nil
			},
			wantInfo: "control plane hosts master-1, master-2 did not join within 20ms; not rebooting the bootstrap host",
		},
		{
			name: "one of two joined",
			hosts: func(int) ([]*v2.Host, error) {
				return []*v2.Host{
					host(master1, "master-1", v2.HostRoleMaster, v2.HostStageJoined),
					host(master2, "", v2.HostRoleMaster, v2.HostStageConfiguring),
				}, nil
			},
			wantInfo: "control plane hosts " + master2 + " did not join within 20ms; not rebooting the bootstrap host",
		},
		{
			name:     "service never listed the hosts",
			hosts:    func(int) ([]*v2.Host, error) { return nil, errors.New("connection refused") },
			wantInfo: "could not list the cluster's hosts within 20ms (connection refused); not rebooting the bootstrap host",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{hosts: tt.hosts}
			rb := &fakeRebooter{}
			cfg := testConfig(t, testRequest(v2.HostRoleBootstrap, 3), svc, &fakeWriter{}, rb)
			cfg.ControlPlaneTimeout = 20 * time.Millisecond
			err := Run(context.Background(), cfg)
			if !errors.Is(err, ErrNotJoined) {
				t.Fatalf("Run = %v, want ErrNotJoined", err)
			}
			if calls := rb.Calls(); len(calls) != 0 {
				t.Errorf("Reboot called %v, want no reboot", calls)
			}
			want := []v2.HostStage{v2.HostStageStartingInstallation, v2.HostStageInstalling, v2.HostStageWritingImageToDisk,
				v2.HostStageWaitingForControlPlane, v2.HostStageFailed}
			if diff := cmp.Diff(want, svc.Stages()); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
			if got := svc.last(t); got.Info != tt.wantInfo {
				t.Errorf("Failed info = %q, want %q", got.Info, tt.wantInfo)
			}
		})
	}
}

func TestWorkerWaitsForMasters(t *testing.T) {
	const doneAfter = 3
	svc := &fakeService{hosts: func(n int) ([]*v2.Host, error) {
		stage := v2.HostStageConfiguring
		if n >= doneAfter {
			stage = v2.HostStageDone
		}
		return []*v2.Host{
			host(master1, "master-1", v2.HostRoleMaster, stage),
			host(master2, "master-2", v2.HostRoleMaster, v2.HostStageDone),
			host(testHostID, "worker-1", v2.HostRoleWorker, v2.HostStageWaitingForControlPlane),
		}, nil
	}}
	rb := &fakeRebooter{}
	cfg := testConfig(t, testRequest(v2.HostRoleWorker, 0), svc, &fakeWriter{}, rb)
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if svc.hostsCalls != doneAfter+1 {
		t.Errorf("ClusterHosts called %d times, want %d (until both masters are done)", svc.hostsCalls, doneAfter+1)
	}
	if len(rb.Calls()) != 1 {
		t.Errorf("Reboot calls = %v, want one", rb.Calls())
	}
}

// TestBootstrapWaitsForWorkers: node zero serves the API the workers report
// to, so the bootstrap host reboots only once every worker is past
// "Waiting for control plane"; a worker in error does not hold it.
func TestBootstrapWaitsForWorkers(t *testing.T) {
	const movesAfter = 4
	var rebootedAt int
	svc := &fakeService{}
	svc.hosts = func(n int) ([]*v2.Host, error) {
		boot := host(testHostID, "master-0", v2.HostRoleMaster, v2.HostStageWaitingForControlPlane)
		boot.Bootstrap = true
		stage := v2.HostStageWaitingForControlPlane
		if n >= movesAfter {
			stage = v2.HostStageRebooting
		}
		broken := host("w2", "worker-2", v2.HostRoleWorker, v2.HostStageWritingImageToDisk)
		broken.Status = v2.HostStatusError
		return []*v2.Host{boot,
			host(master1, "master-1", v2.HostRoleMaster, v2.HostStageJoined),
			host(master2, "master-2", v2.HostRoleMaster, v2.HostStageJoined),
			host(worker1, "worker-1", v2.HostRoleWorker, stage),
			broken,
		}, nil
	}
	rb := &fakeRebooter{onReboot: func() { rebootedAt = svc.calls() }}
	cfg := testConfig(t, testRequest(v2.HostRoleBootstrap, 3), svc, &fakeWriter{}, rb)
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if rebootedAt != movesAfter+1 {
		t.Errorf("rebooted after %d host listings, want %d (once worker-1 is rebooting)", rebootedAt, movesAfter+1)
	}
}

func TestMastersInstalled(t *testing.T) {
	installed := host(master2, "master-2", v2.HostRoleMaster, v2.HostStageRebooting)
	installed.Status = v2.HostStatusInstalled
	day2 := host(testHostID, "worker-9", v2.HostRoleWorker, "")
	day2.Kind = v2.HostKindAddToExistingClusterHost
	tests := []struct {
		name  string
		hosts []*v2.Host
		want  bool
	}{
		{"two done", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageDone), host(master2, "", v2.HostRoleMaster, v2.HostStageDone), host("m3", "", v2.HostRoleMaster, v2.HostStageJoined)}, true},
		{"one done of three", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageDone), host(master2, "", v2.HostRoleMaster, v2.HostStageJoined), host("m3", "", v2.HostRoleMaster, v2.HostStageJoined)}, false},
		{"installed status counts", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageDone), installed}, true},
		{"joined is not done", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageJoined), host(master2, "", v2.HostRoleMaster, v2.HostStageJoined)}, false},
		{"single master done", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageDone)}, true},
		{"single master not done", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageRebooting)}, false},
		{"workers do not count", []*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageDone), host(master2, "", v2.HostRoleMaster, v2.HostStageJoined), host(worker1, "", v2.HostRoleWorker, v2.HostStageDone)}, false},
		{"day 2 host", []*v2.Host{day2}, true},
	}
	if mastersInstalled([]*v2.Host{host(master1, "", v2.HostRoleMaster, v2.HostStageDone)}, testHostID) {
		t.Error("mastersInstalled of a list without this host = true, want false")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts := tt.hosts // and this worker, as the service lists it
			if !slices.ContainsFunc(hosts, func(h *v2.Host) bool { return h.ID == testHostID }) {
				hosts = append(slices.Clip(hosts), host(testHostID, "worker-0", v2.HostRoleWorker, v2.HostStageWaitingForControlPlane))
			}
			if got := mastersInstalled(hosts, testHostID); got != tt.want {
				t.Errorf("mastersInstalled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMastersJoined(t *testing.T) {
	installed := host(master2, "master-2", v2.HostRoleMaster, v2.HostStageRebooting)
	installed.Status = v2.HostStatusInstalled
	self := host(selfBootstrap, "master-0", v2.HostRoleMaster, v2.HostStageDone)
	self.Bootstrap = true
	tests := []struct {
		name  string
		hosts []*v2.Host
		count int64
		want  joinState
	}{
		{"two of two", []*v2.Host{self, host(master1, "master-1", v2.HostRoleMaster, v2.HostStageJoined), host(master2, "master-2", v2.HostRoleMaster, v2.HostStageDone)}, 3, joinState{need: 2, joined: 2}},
		{"installed counts", []*v2.Host{self, host(master1, "master-1", v2.HostRoleMaster, v2.HostStageJoined), installed}, 3, joinState{need: 2, joined: 2}},
		{"self does not count", []*v2.Host{self, host(master1, "master-1", v2.HostRoleMaster, v2.HostStageConfiguring)}, 3, joinState{need: 2, missing: []string{"master-1"}}},
		{"five masters need two", []*v2.Host{host(master1, "a", v2.HostRoleMaster, v2.HostStageJoined), host(master2, "b", v2.HostRoleMaster, v2.HostStageJoined), host("m3", "c", v2.HostRoleMaster, v2.HostStageRebooting)}, 5, joinState{need: 2, joined: 2, missing: []string{"c"}}},
		{"two-node needs one", []*v2.Host{host(master1, "a", v2.HostRoleMaster, v2.HostStageJoined)}, 2, joinState{need: 1, joined: 1}},
		{"workers ignored", []*v2.Host{host(worker1, "w", v2.HostRoleWorker, v2.HostStageJoined)}, 3, joinState{need: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mastersJoined(tt.hosts, selfBootstrap, tt.count)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(joinState{})); diff != "" {
				t.Errorf("mastersJoined (-want +got):\n%s", diff)
			}
		})
	}
}
