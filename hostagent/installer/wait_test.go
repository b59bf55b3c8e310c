package installer

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestBootstrapTimeout(t *testing.T) {
	tests := []struct {
		name     string
		hosts    func(int) ([]*wire.Host, error)
		wantInfo string
	}{
		{
			name: "none joined",
			hosts: func(int) ([]*wire.Host, error) {
				return []*wire.Host{
					host(selfBootstrap, "master-0", wire.HostRoleBootstrap, wire.HostStageWaitingForControlPlane),
					host(master2, "master-2", wire.HostRoleMaster, wire.HostStageConfiguring),
					host(master1, "master-1", wire.HostRoleMaster, wire.HostStageRebooting),
					host(worker1, "worker-1", wire.HostRoleWorker, wire.HostStageWaitingForControlPlane),
				}, nil
			},
			wantInfo: "control plane hosts master-1, master-2 did not join within 20ms; not rebooting the bootstrap host",
		},
		{
			name: "one of two joined",
			hosts: func(int) ([]*wire.Host, error) {
				return []*wire.Host{
					host(master1, "master-1", wire.HostRoleMaster, wire.HostStageJoined),
					host(master2, "", wire.HostRoleMaster, wire.HostStageConfiguring),
				}, nil
			},
			wantInfo: "control plane hosts " + master2 + " did not join within 20ms; not rebooting the bootstrap host",
		},
		{
			name:     "service never listed the hosts",
			hosts:    func(int) ([]*wire.Host, error) { return nil, errors.New("connection refused") },
			wantInfo: "could not list the cluster's hosts within 20ms (connection refused); not rebooting the bootstrap host",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{hosts: tt.hosts}
			rb := &fakeRebooter{}
			cfg := testConfig(t, testRequest(wire.HostRoleBootstrap, 3), svc, &fakeWriter{}, rb)
			cfg.ControlPlaneTimeout = 20 * time.Millisecond
			err := Run(context.Background(), cfg)
			if !errors.Is(err, ErrNotJoined) {
				t.Fatalf("Run = %v, want ErrNotJoined", err)
			}
			if calls := rb.Calls(); len(calls) != 0 {
				t.Errorf("Reboot called %v, want no reboot", calls)
			}
			want := []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
				wire.HostStageWaitingForControlPlane, wire.HostStageFailed}
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
	svc := &fakeService{hosts: func(n int) ([]*wire.Host, error) {
		stage := wire.HostStageConfiguring
		if n >= doneAfter {
			stage = wire.HostStageDone
		}
		return []*wire.Host{
			host(master1, "master-1", wire.HostRoleMaster, stage),
			host(master2, "master-2", wire.HostRoleMaster, wire.HostStageDone),
			host(testHostID, "worker-1", wire.HostRoleWorker, wire.HostStageWaitingForControlPlane),
		}, nil
	}}
	rb := &fakeRebooter{}
	cfg := testConfig(t, testRequest(wire.HostRoleWorker, 0), svc, &fakeWriter{}, rb)
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
	svc.hosts = func(n int) ([]*wire.Host, error) {
		boot := host(testHostID, "master-0", wire.HostRoleMaster, wire.HostStageWaitingForControlPlane)
		boot.Bootstrap = true
		stage := wire.HostStageWaitingForControlPlane
		if n >= movesAfter {
			stage = wire.HostStageRebooting
		}
		broken := host("w2", "worker-2", wire.HostRoleWorker, wire.HostStageWritingImageToDisk)
		broken.Status = wire.HostStatusError
		return []*wire.Host{boot,
			host(master1, "master-1", wire.HostRoleMaster, wire.HostStageJoined),
			host(master2, "master-2", wire.HostRoleMaster, wire.HostStageJoined),
			host(worker1, "worker-1", wire.HostRoleWorker, stage),
			broken,
		}, nil
	}
	rb := &fakeRebooter{onReboot: func() { rebootedAt = svc.calls() }}
	cfg := testConfig(t, testRequest(wire.HostRoleBootstrap, 3), svc, &fakeWriter{}, rb)
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if rebootedAt != movesAfter+1 {
		t.Errorf("rebooted after %d host listings, want %d (once worker-1 is rebooting)", rebootedAt, movesAfter+1)
	}
}

func TestMastersInstalled(t *testing.T) {
	installed := host(master2, "master-2", wire.HostRoleMaster, wire.HostStageRebooting)
	installed.Status = wire.HostStatusInstalled
	day2 := host(testHostID, "worker-9", wire.HostRoleWorker, "")
	day2.Kind = wire.HostKindAddToExistingClusterHost
	tests := []struct {
		name  string
		hosts []*wire.Host
		want  bool
	}{
		{"two done", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageDone), host(master2, "", wire.HostRoleMaster, wire.HostStageDone), host("m3", "", wire.HostRoleMaster, wire.HostStageJoined)}, true},
		{"one done of three", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageDone), host(master2, "", wire.HostRoleMaster, wire.HostStageJoined), host("m3", "", wire.HostRoleMaster, wire.HostStageJoined)}, false},
		{"installed status counts", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageDone), installed}, true},
		{"joined is not done", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageJoined), host(master2, "", wire.HostRoleMaster, wire.HostStageJoined)}, false},
		{"single master done", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageDone)}, true},
		{"single master not done", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageRebooting)}, false},
		{"workers do not count", []*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageDone), host(master2, "", wire.HostRoleMaster, wire.HostStageJoined), host(worker1, "", wire.HostRoleWorker, wire.HostStageDone)}, false},
		{"day 2 host", []*wire.Host{day2}, true},
	}
	if mastersInstalled([]*wire.Host{host(master1, "", wire.HostRoleMaster, wire.HostStageDone)}, testHostID) {
		t.Error("mastersInstalled of a list without this host = true, want false")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts := tt.hosts // and this worker, as the service lists it
			if !slices.ContainsFunc(hosts, func(h *wire.Host) bool { return h.ID == testHostID }) {
				hosts = append(slices.Clip(hosts), host(testHostID, "worker-0", wire.HostRoleWorker, wire.HostStageWaitingForControlPlane))
			}
			if got := mastersInstalled(hosts, testHostID); got != tt.want {
				t.Errorf("mastersInstalled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMastersJoined(t *testing.T) {
	installed := host(master2, "master-2", wire.HostRoleMaster, wire.HostStageRebooting)
	installed.Status = wire.HostStatusInstalled
	self := host(selfBootstrap, "master-0", wire.HostRoleMaster, wire.HostStageDone)
	self.Bootstrap = true
	tests := []struct {
		name  string
		hosts []*wire.Host
		count int64
		want  joinState
	}{
		{"two of two", []*wire.Host{self, host(master1, "master-1", wire.HostRoleMaster, wire.HostStageJoined), host(master2, "master-2", wire.HostRoleMaster, wire.HostStageDone)}, 3, joinState{need: 2, joined: 2, names: []string{"master-1", "master-2"}}},
		{"installed counts", []*wire.Host{self, host(master1, "master-1", wire.HostRoleMaster, wire.HostStageJoined), installed}, 3, joinState{need: 2, joined: 2, names: []string{"master-1", "master-2"}}},
		{"self does not count", []*wire.Host{self, host(master1, "master-1", wire.HostRoleMaster, wire.HostStageConfiguring)}, 3, joinState{need: 2, missing: []string{"master-1"}}},
		{"five masters need two", []*wire.Host{host(master1, "a", wire.HostRoleMaster, wire.HostStageJoined), host(master2, "b", wire.HostRoleMaster, wire.HostStageJoined), host("m3", "c", wire.HostRoleMaster, wire.HostStageRebooting)}, 5, joinState{need: 2, joined: 2, missing: []string{"c"}, names: []string{"a", "b"}}},
		{"two-node needs one", []*wire.Host{host(master1, "a", wire.HostRoleMaster, wire.HostStageJoined)}, 2, joinState{need: 1, joined: 1, names: []string{"a"}}},
		{"workers ignored", []*wire.Host{host(worker1, "w", wire.HostRoleWorker, wire.HostStageJoined)}, 3, joinState{need: 2}},
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
