package machine

import (
	"slices"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// HostState is what the cluster machine and the progress functions read of
// one host of the cluster.
type HostState struct {
	Role          wire.HostRole
	SuggestedRole wire.HostRole // used when Role is auto-assign
	Status        wire.HostStatus
	Bootstrap     bool
	Stage         wire.HostStage
}

// EffectiveRole is the suggested role of an auto-assign host, else its role
// (common.GetEffectiveRole).
func (h HostState) EffectiveRole() wire.HostRole {
	if h.Role == wire.HostRoleAutoAssign && h.SuggestedRole != "" {
		return h.SuggestedRole
	}
	return h.Role
}

// Topology is the cluster shape HasEnoughMastersAndWorkers needs.
type Topology struct {
	ControlPlaneCount int // 1 = single node (SNO)
	// TwoNodesWithFencing: control plane count 2, no arbiter host, exactly
	// two masters and all of them with fencing credentials
	// (common.IsClusterTopologyTwoNodesWithFencing).
	TwoNodesWithFencing bool
}

// ClusterFacts is everything the cluster machine may read.
type ClusterFacts struct {
	Now      time.Time
	Timeouts Timeouts // zero fields mean defaults

	// Validations holds cluster validation outcomes (wire.ClusterValidationID
	// keys). Assisted computes them only in insufficient, ready,
	// pending-for-input and preparing-for-installation.
	Validations       Validations
	VIPDHCPAllocation bool

	Topology
	Hosts []HostState

	// Preparation is the outcome of the asynchronous install preparation
	// (install-config, manifests, ignition): last_installation_preparation.status.
	Preparation      wire.LastInstallationPreparationStatus
	StatusUpdatedAt  time.Time
	InstallStartedAt time.Time

	FinalizingStage          wire.FinalizingStage
	FinalizingStageStartedAt time.Time
	// FinalizingStageTimedOut is progress.finalizing_stage_timed_out, set
	// once the slow-stage warning was given.
	FinalizingStageTimedOut bool
	// Operators are the monitored operators reported by the controller.
	Operators []wire.MonitoredOperator
	// KubeconfigPresent: the final kubeconfig (with the ingress CA) exists.
	KubeconfigPresent bool

	Logs Logs
	// Reason is the caller's text for CancelInstallation and ResetCluster
	// ("Installation was cancelled by user", "cluster was reset by user").
	Reason string
}

func (f ClusterFacts) since(t time.Time) time.Duration { return f.Now.Sub(t) }

func (f ClusterFacts) anyHost(statuses ...wire.HostStatus) bool {
	for _, h := range f.Hosts {
		if slices.Contains(statuses, h.Status) {
			return true
		}
	}
	return false
}

func (f ClusterFacts) allHosts(statuses ...wire.HostStatus) bool {
	for _, h := range f.Hosts {
		if !slices.Contains(statuses, h.Status) {
			return false
		}
	}
	return true
}

// olmTimeout is the largest OLM operator timeout.
func (f ClusterFacts) olmTimeout() time.Duration {
	var d time.Duration
	for _, o := range f.Operators {
		if o.OperatorType == wire.OperatorTypeOLM {
			d = max(d, time.Duration(o.TimeoutSeconds)*time.Second)
		}
	}
	return d
}

func (f ClusterFacts) finalizingStageLimit() time.Duration {
	return f.Timeouts.FinalizingStage(f.FinalizingStage, f.olmTimeout())
}

// OperatorsComplete reports whether finalizing may end: no monitored
// operators, or every builtin operator available and every OLM operator
// available or failed (a failed OLM operator makes the cluster degraded).
func OperatorsComplete(ops []wire.MonitoredOperator) bool {
	for _, o := range ops {
		switch o.OperatorType {
		case wire.OperatorTypeBuiltin:
			if o.Status != wire.OperatorStatusAvailable {
				return false
			}
		case wire.OperatorTypeOLM:
			if o.Status != wire.OperatorStatusAvailable && o.Status != wire.OperatorStatusFailed {
				return false
			}
		}
	}
	return true
}

// nonFailingFinalizingStages only warn when they time out.
var nonFailingFinalizingStages = []wire.FinalizingStage{
	wire.FinalizingStageApplyingOLMManifests,
	wire.FinalizingStageWaitingForOLMOperatorsCsvInitialization,
	wire.FinalizingStageWaitingForOLMOperatorsCsv,
}

// Host statuses that count as "still installing" for the cluster.
var installingHostStatuses = []wire.HostStatus{
	wire.HostStatusInstalling, wire.HostStatusInstallingInProgress, wire.HostStatusInstalled,
	wire.HostStatusInstallingPendingUserAction, wire.HostStatusPreparingSuccessful,
}

// Fact predicates of the cluster machine, named after assisted's Go names
// for its conditions (internal/cluster/conditions.go) and transition-handler
// methods (internal/cluster/transition.go).
var (
	vipDHCPAllocationSet = Pred("vipDhcpAllocationSet", func(f ClusterFacts) bool { return f.VIPDHCPAllocation })

	allHostsPreparedSuccessfully = Pred("allHostsPreparedSuccessfully", func(f ClusterFacts) bool {
		return f.allHosts(wire.HostStatusPreparingSuccessful)
	})
	unpreparingHostsExist = Pred("unPreparingHostsExist", func(f ClusterFacts) bool {
		return !f.allHosts(wire.HostStatusPreparingForInstallation, wire.HostStatusPreparingSuccessful,
			wire.HostStatusPreparingFailed, wire.HostStatusKnown)
	})
	failedPreparingHostsExist = Pred("failedPreparingHostsExist", func(f ClusterFacts) bool {
		return f.anyHost(wire.HostStatusPreparingFailed)
	})
	clusterPreparationSucceeded = Pred("clusterPreparationSucceeded", func(f ClusterFacts) bool {
		return f.Preparation == wire.LastInstallationPreparationStatusSuccess
	})
	clusterPreparationFailed = Pred("clusterPreparationFailed", func(f ClusterFacts) bool {
		return f.Preparation == wire.LastInstallationPreparationStatusFailed
	})

	isClusterPreparingTimedOut = Pred("isPreparingTimedOut", func(f ClusterFacts) bool {
		return f.since(f.StatusUpdatedAt) > or(f.Timeouts.ClusterPreparation, defaults.ClusterPreparation)
	})
	isInstallationTimedOut = Pred("isInstallationTimedOut", func(f ClusterFacts) bool {
		return f.since(f.InstallStartedAt) > or(f.Timeouts.ClusterInstallation, defaults.ClusterInstallation)
	})
	isFinalizingTimedOut = Pred("isFinalizingTimedOut", func(f ClusterFacts) bool {
		return f.since(f.StatusUpdatedAt) > or(f.Timeouts.ClusterFinalizing, defaults.ClusterFinalizing)
	})
	isFinalizingStageTimedOut = Pred("isFinalizingStageTimedOut", func(f ClusterFacts) bool {
		return f.FinalizingStage != "" && f.since(f.FinalizingStageStartedAt) > f.finalizingStageLimit()
	})
	finalizingStageTimeoutTriggered = Pred("finalizingStageTimeoutTriggered", func(f ClusterFacts) bool {
		return f.FinalizingStageTimedOut
	})
	inNonFailingFinalizingStages = Pred("isInFinalizingStages(nonFailingFinalizingStages)", func(f ClusterFacts) bool {
		return slices.Contains(nonFailingFinalizingStages, f.FinalizingStage)
	})
	clusterSoftTimeoutsEnabled = Pred("softTimeoutsEnabled", func(ClusterFacts) bool { return false })

	isInstalling = Pred("isInstalling", func(f ClusterFacts) bool {
		return HasEnoughMastersAndWorkers(f.Topology, f.Hosts, installingHostStatuses...)
	})
	isFinalizing = Pred("isFinalizing", func(f ClusterFacts) bool {
		return HasEnoughMastersAndWorkers(f.Topology, f.Hosts, wire.HostStatusInstalled)
	})
	isInstallingPendingUserAction = Pred("isInstallingPendingUserAction", func(f ClusterFacts) bool {
		return f.anyHost(wire.HostStatusInstallingPendingUserAction)
	})
	areAllHostsDone = Pred("areAllHostsDone", func(f ClusterFacts) bool {
		return f.allHosts(wire.HostStatusInstalled, wire.HostStatusError)
	})
	hasClusterCompleteInstallation = Pred("hasClusterCompleteInstallation", func(f ClusterFacts) bool {
		return f.KubeconfigPresent && OperatorsComplete(f.Operators)
	})
	isClusterLogCollectionTimedOut = Pred("isLogCollectionTimedOut", func(f ClusterFacts) bool {
		pending := or(f.Timeouts.ClusterLogPending, defaults.ClusterLogPending)
		collection := or(f.Timeouts.ClusterLogCollection, defaults.ClusterLogCollection)
		return logsTimedOut(f.Logs, f.Now, f.StatusUpdatedAt, pending, collection, collection)
	})
)

// HasEnoughMastersAndWorkers reports whether the cluster has enough hosts in
// one of statuses to count as installed (common.HasEnoughMastersAndWorkers):
//   - single node: exactly one master and no worker in those statuses;
//   - otherwise every expected master (at least 3; 2 with an arbiter, which
//     must then have one arbiter in those statuses, or with two nodes and
//     fencing) and, when at least two workers are expected, at least two
//     workers.
//
// Counts in statuses use the effective role; expected counts use the
// assigned role, as assisted does.
func HasEnoughMastersAndWorkers(t Topology, hosts []HostState, statuses ...wire.HostStatus) bool {
	var masters, arbiters, workers int             // in statuses
	var wantMasters, wantArbiters, wantWorkers int // assigned
	for _, h := range hosts {
		if slices.Contains(statuses, h.Status) {
			switch h.EffectiveRole() {
			case wire.HostRoleMaster, wire.HostRoleBootstrap:
				masters++
			case wire.HostRoleArbiter:
				arbiters++
			case wire.HostRoleWorker:
				workers++
			}
		}
		switch h.Role {
		case wire.HostRoleMaster, wire.HostRoleBootstrap:
			wantMasters++
		case wire.HostRoleArbiter:
			wantArbiters++
		case wire.HostRoleWorker:
			wantWorkers++
		}
	}
	if t.ControlPlaneCount == 1 {
		return masters == 1 && workers == 0
	}
	minMasters := 3
	if wantArbiters != 0 {
		minMasters = 2
		if arbiters == 0 {
			return false
		}
	}
	if t.TwoNodesWithFencing {
		minMasters = 2
	}
	if wantMasters < minMasters || masters < wantMasters {
		return false
	}
	const minWorkers = 2 // fewer expected workers: masters are schedulable
	return wantWorkers < minWorkers || workers >= minWorkers
}
