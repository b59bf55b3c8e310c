package machine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestStages(t *testing.T) {
	const (
		start   = wire.HostStageStartingInstallation
		inst    = wire.HostStageInstalling
		write   = wire.HostStageWritingImageToDisk
		copyReg = wire.HostStageCopyingRegistryDataToDisk
		wcp     = wire.HostStageWaitingForControlPlane
		bootkub = wire.HostStageWaitingForBootkube
		wctl    = wire.HostStageWaitingForController
		reboot  = wire.HostStageRebooting
		wign    = wire.HostStageWaitingForIgnition
		conf    = wire.HostStageConfiguring
		joined  = wire.HostStageJoined
		done    = wire.HostStageDone
	)
	tests := []struct {
		name string
		key  StageKey
		want []wire.HostStage
	}{
		{"bootstrap master", StageKey{Role: wire.HostRoleMaster, Bootstrap: true},
			[]wire.HostStage{start, inst, write, copyReg, wcp, bootkub, wctl, reboot, conf, joined, done}},
		{"master", StageKey{Role: wire.HostRoleMaster},
			[]wire.HostStage{start, inst, write, copyReg, reboot, conf, joined, done}},
		{"arbiter", StageKey{Role: wire.HostRoleArbiter},
			[]wire.HostStage{start, inst, write, copyReg, reboot, conf, joined, done}},
		{"worker", StageKey{Role: wire.HostRoleWorker},
			[]wire.HostStage{start, inst, write, wcp, reboot, wign, conf, joined, done}},
		{"single node", StageKey{Role: wire.HostRoleMaster, Bootstrap: true, SNO: true},
			[]wire.HostStage{start, inst, bootkub, write, copyReg, reboot, joined, done}},
		{"day-2 worker ends at Rebooting", StageKey{Role: wire.HostRoleWorker, Day2: true},
			[]wire.HostStage{start, inst, write, wcp, reboot}},
		{"auto-assign has no stages", StageKey{Role: wire.HostRoleAutoAssign}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Stages(tc.key)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Stages(%+v) mismatch (-want +got):\n%s", tc.key, diff)
			}
		})
	}
	// The result is a copy: editing it must not change the table.
	s := Stages(StageKey{Role: wire.HostRoleWorker})
	s[0] = wire.HostStageFailed
	if got := Stages(StageKey{Role: wire.HostRoleWorker})[0]; got != start {
		t.Errorf("Stages returned shared storage: first stage now %q", got)
	}
}

func TestCheckStage(t *testing.T) {
	worker := Stages(StageKey{Role: wire.HostRoleWorker})
	tests := []struct {
		name          string
		current, next wire.HostStage
		want          error
	}{
		{"first report", "", wire.HostStageStartingInstallation, nil},
		{"forward", wire.HostStageInstalling, wire.HostStageRebooting, nil},
		{"same stage again", wire.HostStageWritingImageToDisk, wire.HostStageWritingImageToDisk, nil},
		{"backwards", wire.HostStageRebooting, wire.HostStageWritingImageToDisk, ErrStageBackwards},
		{"not a worker stage", wire.HostStageInstalling, wire.HostStageWaitingForBootkube, ErrStageUnknown},
		{"failed always accepted", wire.HostStageJoined, wire.HostStageFailed, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckStage(worker, tc.current, tc.next)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("CheckStage(%q -> %q) = %v, want %v", tc.current, tc.next, err, tc.want)
			}
		})
	}
}

func TestInstallationPercentage(t *testing.T) {
	tests := []struct {
		name  string
		key   StageKey
		stage wire.HostStage
		want  int64
	}{
		{"bootstrap first stage", StageKey{Role: wire.HostRoleMaster, Bootstrap: true}, wire.HostStageStartingInstallation, 9},
		{"master installing", StageKey{Role: wire.HostRoleMaster}, wire.HostStageInstalling, 25},
		{"worker joined", StageKey{Role: wire.HostRoleWorker}, wire.HostStageJoined, 88},
		{"day-2 worker writing", StageKey{Role: wire.HostRoleWorker, Day2: true}, wire.HostStageWritingImageToDisk, 60},
		{"done", StageKey{Role: wire.HostRoleMaster, Bootstrap: true}, wire.HostStageDone, 100},
		{"unknown stage", StageKey{Role: wire.HostRoleMaster}, wire.HostStageWaitingForIgnition, 0},
		{"no stages", StageKey{Role: wire.HostRoleAutoAssign}, wire.HostStageDone, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := InstallationPercentage(Stages(tc.key), tc.stage); got != tc.want {
				t.Errorf("InstallationPercentage(%+v, %q) = %d, want %d", tc.key, tc.stage, got, tc.want)
			}
		})
	}
}

func TestClusterProgress(t *testing.T) {
	// bootstrap at Rebooting (8 of 11), two masters done (8 of 8 each), two
	// workers writing (3 of 9 each), one auto-assign host (no list): 30/45.
	hs := []HostState{
		{Role: wire.HostRoleMaster, Bootstrap: true, Stage: wire.HostStageRebooting},
		{Role: wire.HostRoleMaster, Stage: wire.HostStageDone},
		{Role: wire.HostRoleMaster, Stage: wire.HostStageDone},
		{Role: wire.HostRoleWorker, Stage: wire.HostStageWritingImageToDisk},
		{Role: wire.HostRoleWorker, Stage: wire.HostStageWritingImageToDisk},
		{Role: wire.HostRoleAutoAssign},
	}
	installing := InstallingPercentage(hs, false)
	if installing != 66 {
		t.Fatalf("InstallingPercentage = %d, want 66", installing)
	}
	if got := InstallingPercentage([]HostState{{Role: wire.HostRoleMaster, Bootstrap: true}}, true); got != 0 {
		t.Errorf("InstallingPercentage(no stage yet) = %d, want 0", got)
	}
	if got := InstallingPercentage(nil, false); got != 0 {
		t.Errorf("InstallingPercentage(no hosts) = %d, want 0", got)
	}
	sno := []HostState{{Role: wire.HostRoleMaster, Bootstrap: true, Stage: wire.HostStageWaitingForBootkube}}
	if got := InstallingPercentage(sno, true); got != 37 {
		t.Errorf("InstallingPercentage(SNO at bootkube) = %d, want 37", got)
	}

	tests := []struct {
		name                              string
		status                            wire.ClusterStatus
		preparing, installing, finalizing int64
		want                              int64
	}{
		{"preparing", wire.ClusterStatusPreparingForInstallation, 0, 0, 0, 0},
		{"installing", wire.ClusterStatusInstalling, 100, installing, 0, 56}, // 46 + 10
		{"finalizing", wire.ClusterStatusFinalizing, 100, 100, 50, 87},       // 70 + 17
		{"all phases done, not yet installed", wire.ClusterStatusFinalizing, 100, 100, 100, 95},
		{"installed is 100", wire.ClusterStatusInstalled, 100, 90, 10, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := TotalPercentage(tc.status, tc.preparing, tc.installing, tc.finalizing); got != tc.want {
				t.Errorf("TotalPercentage(%s, %d, %d, %d) = %d, want %d", tc.status, tc.preparing, tc.installing, tc.finalizing, got, tc.want)
			}
		})
	}
}

func TestFinalizingPercentage(t *testing.T) {
	ops := []wire.MonitoredOperator{
		{Name: "console", OperatorType: wire.OperatorTypeBuiltin, Status: wire.OperatorStatusAvailable},
		{Name: "cvo", OperatorType: wire.OperatorTypeBuiltin, Status: wire.OperatorStatusProgressing},
		{Name: "lvms", OperatorType: wire.OperatorTypeOLM, Status: wire.OperatorStatusFailed},
		{Name: "odf", OperatorType: wire.OperatorTypeOLM, Status: wire.OperatorStatusAvailable},
	}
	if got := FinalizingPercentage(ops); got != 75 {
		t.Errorf("FinalizingPercentage = %d, want 75", got)
	}
	if got := FinalizingPercentage(nil); got != 0 {
		t.Errorf("FinalizingPercentage(nil) = %d, want 0", got)
	}
	if OperatorsComplete(ops) {
		t.Errorf("OperatorsComplete with a progressing builtin operator = true, want false")
	}
	ops[1].Status = wire.OperatorStatusAvailable
	if !OperatorsComplete(ops) {
		t.Errorf("OperatorsComplete with builtins available and OLM done = false, want true")
	}
	if !OperatorsComplete(nil) {
		t.Errorf("OperatorsComplete(nil) = false, want true")
	}
}

func TestHasEnoughMastersAndWorkers(t *testing.T) {
	installed := wire.HostStatusInstalled
	arb := wire.HostRoleArbiter
	tests := []struct {
		name  string
		top   Topology
		hosts []HostState
		want  bool
	}{
		{"SNO one master", Topology{ControlPlaneCount: 1}, hosts(m, installed, 1), true},
		{"SNO master not installed", Topology{ControlPlaneCount: 1}, hosts(m, wire.HostStatusInstallingInProgress, 1), false},
		{"SNO with a worker", Topology{ControlPlaneCount: 1}, concat(hosts(m, installed, 1), hosts(w, installed, 1)), false},
		{"HA three masters, no workers", Topology{ControlPlaneCount: 3}, hosts(m, installed, 3), true},
		{"HA two of three masters", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 2), hosts(m, wire.HostStatusError, 1)), false},
		{"HA one worker expected, none installed", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 3), hosts(w, wire.HostStatusError, 1)), true},
		{"HA three workers expected, two installed", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 3), hosts(w, installed, 2), hosts(w, wire.HostStatusError, 1)), true},
		{"HA two workers expected, one installed", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 3), hosts(w, installed, 1), hosts(w, wire.HostStatusInstallingInProgress, 1)), false},
		{"HA only two masters assigned", Topology{ControlPlaneCount: 3}, hosts(m, installed, 2), false},
		{"arbiter installed", Topology{ControlPlaneCount: 2},
			concat(hosts(m, installed, 2), hosts(arb, installed, 1)), true},
		{"arbiter not installed", Topology{ControlPlaneCount: 2},
			concat(hosts(m, installed, 2), hosts(arb, wire.HostStatusError, 1)), false},
		{"two nodes with fencing", Topology{ControlPlaneCount: 2, TwoNodesWithFencing: true}, hosts(m, installed, 2), true},
		{"two masters without fencing", Topology{ControlPlaneCount: 2}, hosts(m, installed, 2), false},
		{"auto-assign host counts by its suggested role", Topology{ControlPlaneCount: 1},
			[]HostState{{Role: wire.HostRoleAutoAssign, SuggestedRole: m, Status: installed}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasEnoughMastersAndWorkers(tc.top, tc.hosts, installed); got != tc.want {
				t.Errorf("HasEnoughMastersAndWorkers(%+v, %d hosts) = %v, want %v", tc.top, len(tc.hosts), got, tc.want)
			}
		})
	}
}
