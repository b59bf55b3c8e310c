package machine

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

func TestStages(t *testing.T) {
	const (
		start   = v2.HostStageStartingInstallation
		inst    = v2.HostStageInstalling
		write   = v2.HostStageWritingImageToDisk
		copyReg = v2.HostStageCopyingRegistryDataToDisk
		wcp     = v2.HostStageWaitingForControlPlane
		bootkub = v2.HostStageWaitingForBootkube
		wctl    = v2.HostStageWaitingForController
		reboot  = v2.HostStageRebooting
		wign    = v2.HostStageWaitingForIgnition
		conf    = v2.HostStageConfiguring
		joined  = v2.HostStageJoined
		done    = v2.HostStageDone
	)
	tests := []struct {
		name string
		key  StageKey
		want []v2.HostStage
	}{
		{"bootstrap master", StageKey{Role: v2.HostRoleMaster, Bootstrap: true},
			[]v2.HostStage{start, inst, write, copyReg, wcp, bootkub, wctl, reboot, conf, joined, done}},
		{"master", StageKey{Role: v2.HostRoleMaster},
			[]v2.HostStage{start, inst, write, copyReg, reboot, conf, joined, done}},
		{"arbiter", StageKey{Role: v2.HostRoleArbiter},
			[]v2.HostStage{start, inst, write, copyReg, reboot, conf, joined, done}},
		{"worker", StageKey{Role: v2.HostRoleWorker},
			[]v2.HostStage{start, inst, write, wcp, reboot, wign, conf, joined, done}},
		{"single node", StageKey{Role: v2.HostRoleMaster, Bootstrap: true, SNO: true},
			[]v2.HostStage{start, inst, bootkub, write, copyReg, reboot, joined, done}},
		{"day-2 worker ends at Rebooting", StageKey{Role: v2.HostRoleWorker, Day2: true},
			[]v2.HostStage{start, inst, write, wcp, reboot}},
		{"auto-assign has no stages", StageKey{Role: v2.HostRoleAutoAssign}, nil},
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
	s := Stages(StageKey{Role: v2.HostRoleWorker})
	s[0] = v2.HostStageFailed
	if got := Stages(StageKey{Role: v2.HostRoleWorker})[0]; got != start {
		t.Errorf("Stages returned shared storage: first stage now %q", got)
	}
}

func TestCheckStage(t *testing.T) {
	worker := Stages(StageKey{Role: v2.HostRoleWorker})
	tests := []struct {
		name          string
		current, next v2.HostStage
		want          error
	}{
		{"first report", "", v2.HostStageStartingInstallation, nil},
		{"forward", v2.HostStageInstalling, v2.HostStageRebooting, nil},
		{"same stage again", v2.HostStageWritingImageToDisk, v2.HostStageWritingImageToDisk, nil},
		{"backwards", v2.HostStageRebooting, v2.HostStageWritingImageToDisk, ErrStageBackwards},
		{"not a worker stage", v2.HostStageInstalling, v2.HostStageWaitingForBootkube, ErrStageUnknown},
		{"failed always accepted", v2.HostStageJoined, v2.HostStageFailed, nil},
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
		stage v2.HostStage
		want  int64
	}{
		{"bootstrap first stage", StageKey{Role: v2.HostRoleMaster, Bootstrap: true}, v2.HostStageStartingInstallation, 9},
		{"master installing", StageKey{Role: v2.HostRoleMaster}, v2.HostStageInstalling, 25},
		{"worker joined", StageKey{Role: v2.HostRoleWorker}, v2.HostStageJoined, 88},
		{"day-2 worker writing", StageKey{Role: v2.HostRoleWorker, Day2: true}, v2.HostStageWritingImageToDisk, 60},
		{"done", StageKey{Role: v2.HostRoleMaster, Bootstrap: true}, v2.HostStageDone, 100},
		{"unknown stage", StageKey{Role: v2.HostRoleMaster}, v2.HostStageWaitingForIgnition, 0},
		{"no stages", StageKey{Role: v2.HostRoleAutoAssign}, v2.HostStageDone, 0},
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
		{Role: v2.HostRoleMaster, Bootstrap: true, Stage: v2.HostStageRebooting},
		{Role: v2.HostRoleMaster, Stage: v2.HostStageDone},
		{Role: v2.HostRoleMaster, Stage: v2.HostStageDone},
		{Role: v2.HostRoleWorker, Stage: v2.HostStageWritingImageToDisk},
		{Role: v2.HostRoleWorker, Stage: v2.HostStageWritingImageToDisk},
		{Role: v2.HostRoleAutoAssign},
	}
	installing := InstallingPercentage(hs, false)
	if installing != 66 {
		t.Fatalf("InstallingPercentage = %d, want 66", installing)
	}
	if got := InstallingPercentage([]HostState{{Role: v2.HostRoleMaster, Bootstrap: true}}, true); got != 0 {
		t.Errorf("InstallingPercentage(no stage yet) = %d, want 0", got)
	}
	if got := InstallingPercentage(nil, false); got != 0 {
		t.Errorf("InstallingPercentage(no hosts) = %d, want 0", got)
	}
	sno := []HostState{{Role: v2.HostRoleMaster, Bootstrap: true, Stage: v2.HostStageWaitingForBootkube}}
	if got := InstallingPercentage(sno, true); got != 37 {
		t.Errorf("InstallingPercentage(SNO at bootkube) = %d, want 37", got)
	}

	tests := []struct {
		name                              string
		status                            v2.ClusterStatus
		preparing, installing, finalizing int64
		want                              int64
	}{
		{"preparing", v2.ClusterStatusPreparingForInstallation, 0, 0, 0, 0},
		{"installing", v2.ClusterStatusInstalling, 100, installing, 0, 56}, // 46 + 10
		{"finalizing", v2.ClusterStatusFinalizing, 100, 100, 50, 87},       // 70 + 17
		{"all phases done, not yet installed", v2.ClusterStatusFinalizing, 100, 100, 100, 95},
		{"installed is 100", v2.ClusterStatusInstalled, 100, 90, 10, 100},
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
	ops := []v2.MonitoredOperator{
		{Name: "console", OperatorType: v2.OperatorTypeBuiltin, Status: v2.OperatorStatusAvailable},
		{Name: "cvo", OperatorType: v2.OperatorTypeBuiltin, Status: v2.OperatorStatusProgressing},
		{Name: "lvms", OperatorType: v2.OperatorTypeOLM, Status: v2.OperatorStatusFailed},
		{Name: "odf", OperatorType: v2.OperatorTypeOLM, Status: v2.OperatorStatusAvailable},
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
	ops[1].Status = v2.OperatorStatusAvailable
	if !OperatorsComplete(ops) {
		t.Errorf("OperatorsComplete with builtins available and OLM done = false, want true")
	}
	if !OperatorsComplete(nil) {
		t.Errorf("OperatorsComplete(nil) = false, want true")
	}
}

func TestHasEnoughMastersAndWorkers(t *testing.T) {
	installed := v2.HostStatusInstalled
	arb := v2.HostRoleArbiter
	tests := []struct {
		name  string
		top   Topology
		hosts []HostState
		want  bool
	}{
		{"SNO one master", Topology{ControlPlaneCount: 1}, hosts(m, installed, 1), true},
		{"SNO master not installed", Topology{ControlPlaneCount: 1}, hosts(m, v2.HostStatusInstallingInProgress, 1), false},
		{"SNO with a worker", Topology{ControlPlaneCount: 1}, concat(hosts(m, installed, 1), hosts(w, installed, 1)), false},
		{"HA three masters, no workers", Topology{ControlPlaneCount: 3}, hosts(m, installed, 3), true},
		{"HA two of three masters", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 2), hosts(m, v2.HostStatusError, 1)), false},
		{"HA one worker expected, none installed", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 3), hosts(w, v2.HostStatusError, 1)), true},
		{"HA three workers expected, two installed", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 3), hosts(w, installed, 2), hosts(w, v2.HostStatusError, 1)), true},
		{"HA two workers expected, one installed", Topology{ControlPlaneCount: 3},
			concat(hosts(m, installed, 3), hosts(w, installed, 1), hosts(w, v2.HostStatusInstallingInProgress, 1)), false},
		{"HA only two masters assigned", Topology{ControlPlaneCount: 3}, hosts(m, installed, 2), false},
		{"arbiter installed", Topology{ControlPlaneCount: 2},
			concat(hosts(m, installed, 2), hosts(arb, installed, 1)), true},
		{"arbiter not installed", Topology{ControlPlaneCount: 2},
			concat(hosts(m, installed, 2), hosts(arb, v2.HostStatusError, 1)), false},
		{"two nodes with fencing", Topology{ControlPlaneCount: 2, TwoNodesWithFencing: true}, hosts(m, installed, 2), true},
		{"two masters without fencing", Topology{ControlPlaneCount: 2}, hosts(m, installed, 2), false},
		{"auto-assign host counts by its suggested role", Topology{ControlPlaneCount: 1},
			[]HostState{{Role: v2.HostRoleAutoAssign, SuggestedRole: m, Status: installed}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasEnoughMastersAndWorkers(tc.top, tc.hosts, installed); got != tc.want {
				t.Errorf("HasEnoughMastersAndWorkers(%+v, %d hosts) = %v, want %v", tc.top, len(tc.hosts), got, tc.want)
			}
		})
	}
}
