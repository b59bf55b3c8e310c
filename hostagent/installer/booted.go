package installer

import "github.com/nodezero/nodezero/wire"

// After the reboot, OpenShift's in-cluster controller reports a host's last
// stages. A sandbox or load-test host has no OpenShift: once it has booted
// its installed disk and checked it, it reports those stages itself
// (cmd/nodezero's installed mode, sim/simagent), with these infos: what
// the stage means, then "(simulated)", so that "Done: the node is Ready
// (simulated)" reads as a sentence and still says no OpenShift ran.
const (
	BootedInfoIgnition    = "Ignition read from the installed disk (simulated machine-config server)"
	BootedInfoConfiguring = "the node applies its machine config (simulated)"
	BootedInfoJoined      = "the node joined the cluster (simulated)"
	BootedInfoDone        = "the node is Ready (simulated)"
)

// BootedStep is one stage a host reports after booting its installed disk.
// Settle marks the stages a real node stays in for a while (applying its
// machine config, becoming Ready).
type BootedStep struct {
	Stage  wire.HostStage
	Info   string
	Settle bool
}

// BootedSteps are the stages, in order, a host of role reports after
// booting its installed disk: a worker first reads its Ignition from the
// machine-config server; a single node has no Configuring.
func BootedSteps(role wire.HostRole, controlPlaneCount int64) []BootedStep {
	var steps []BootedStep
	if role == wire.HostRoleWorker {
		steps = append(steps, BootedStep{wire.HostStageWaitingForIgnition, BootedInfoIgnition, false})
	}
	if controlPlaneCount != 1 {
		steps = append(steps, BootedStep{wire.HostStageConfiguring, BootedInfoConfiguring, true})
	}
	return append(steps, BootedStep{wire.HostStageJoined, BootedInfoJoined, true},
		BootedStep{wire.HostStageDone, BootedInfoDone, false})
}
