package machine

import (
	"slices"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// CheckResult is the outcome of a preparation check (installation disk
// speed, container image availability) as the host machine sees it.
type CheckResult string

// Check results. The zero value is CheckUnknown: not run or not reported yet.
const (
	CheckUnknown   CheckResult = ""
	CheckSucceeded CheckResult = "succeeded"
	CheckFailed    CheckResult = "failed"
)

// Disk names the installation disk in status_info texts.
type Disk struct {
	Name   string // e.g. "sda"
	ID     string // the device identifier assisted shows: by-id path, else by-path, else /dev name
	Model  string
	Serial string
}

// Logs is the log-collection state of an error or cancelled host or cluster.
type Logs struct {
	State       wire.LogsState
	StartedAt   time.Time
	CollectedAt time.Time
}

// HostFacts is everything the host machine may read. The caller fills the
// fields the trigger needs; the rest may stay zero.
type HostFacts struct {
	Now      time.Time
	Timeouts Timeouts // zero fields mean defaults

	// Validations holds host validation outcomes (wire.HostValidationID keys);
	// FailingMessages the messages of the validations whose status is
	// failure, as assisted lists them in status_info (sorted, " ; ").
	Validations     Validations
	FailingMessages []string

	ClusterStatus wire.ClusterStatus
	// ClusterWouldSucceedWithoutHost is HasEnoughMastersAndWorkers over the
	// cluster's hosts with status installed.
	ClusterWouldSucceedWithoutHost bool
	SNO                            bool // control plane count 1

	Role      wire.HostRole
	Bootstrap bool
	Kind      wire.HostKind // AddToExistingClusterHost = day-2

	Stage           wire.HostStage // progress.current_stage
	StageUpdatedAt  time.Time      // progress.stage_updated_at
	StatusUpdatedAt time.Time
	StatusInfo      string // the stored status_info

	// DiskSpeed and ImageAvailability are the preparation checks. A disk
	// speed check counts as succeeded when it is skipped (installing to the
	// existing root, saved partitions); the validation package must report
	// sufficient-installation-disk-speed and container-images-available
	// from the same results.
	DiskSpeed         CheckResult
	ImageAvailability CheckResult

	InstallationDisk Disk
	Logs             Logs

	// Reason is the caller's text for CancelInstallation and
	// HostInstallationFailed (e.g. "Installation was cancelled by user",
	// "installation command failed").
	Reason string
	// ProgressInfo is the progress_info of a HostProgressChanged report.
	ProgressInfo string
}

func (f HostFacts) day2() bool { return f.Kind == wire.HostKindAddToExistingClusterHost }

func (f HostFacts) since(t time.Time) time.Duration { return f.Now.Sub(t) }

// Fact predicates of the host machine, named after assisted's Go names for
// its conditions (internal/host/conditions.go) and transition-handler
// methods (internal/host/transition.go).
var (
	isDay2Host     = Pred("isDay2Host", HostFacts.day2)
	isHostInReboot = Pred("isHostInReboot", func(f HostFacts) bool { return f.Stage == wire.HostStageRebooting })
	isHostInDone   = Pred("isHostInDone", func(f HostFacts) bool { return f.Stage == wire.HostStageDone })
	hasNoStage     = Pred("hasNoStage", func(f HostFacts) bool { return f.Stage == "" })
	isHostFailed   = Pred("isHostInFailed", func(f HostFacts) bool { return f.Stage == wire.HostStageFailed })

	clusterPreparing = Pred("clusterPreparingForInstallation", func(f HostFacts) bool {
		return f.ClusterStatus == wire.ClusterStatusPreparingForInstallation
	})
	clusterInstalling = Pred("clusterInstalling", func(f HostFacts) bool {
		return f.ClusterStatus == wire.ClusterStatusInstalling
	})
	clusterInError = Pred("clusterInError", func(f HostFacts) bool {
		return f.ClusterStatus == wire.ClusterStatusError
	})
	clusterPendingUserAction = Pred("clusterPendingUserAction", func(f HostFacts) bool {
		return f.ClusterStatus == wire.ClusterStatusInstallingPendingUserAction
	})
	isClusterPostInstallation = Pred("isClusterPostInstallation", func(f HostFacts) bool {
		return f.ClusterStatus == wire.ClusterStatusInstalled || f.ClusterStatus == wire.ClusterStatusAddingHosts
	})
	clusterWouldSucceedWithoutHost = Pred("clusterWouldSucceedWithoutHost", func(f HostFacts) bool {
		return f.ClusterWouldSucceedWithoutHost
	})
	validRoleForInstallation = Pred("validRoleForInstallation", func(f HostFacts) bool {
		return f.Role == wire.HostRoleMaster || f.Role == wire.HostRoleArbiter || f.Role == wire.HostRoleWorker
	})
	stageInWrongBootStages = Pred("stageInWrongBootStages", func(f HostFacts) bool {
		return slices.Contains(WrongBootOrderIgnoreTimeoutStages, f.Stage)
	})

	// The preparation checks: "successful" is assisted's condition, "or
	// unknown" its validation of the same check.
	diskSpeedCheckSuccessful = Pred("installationDiskSpeedCheckSuccessful", func(f HostFacts) bool {
		return f.DiskSpeed == CheckSucceeded
	})
	diskSpeedSufficientOrUnknown = Pred("diskSpeedSufficientOrUnknown", func(f HostFacts) bool {
		return f.DiskSpeed != CheckFailed
	})
	imagesAvailable = Pred("successfulContainerImageAvailability", func(f HostFacts) bool {
		return f.ImageAvailability == CheckSucceeded
	})
	imagesAvailableOrUnknown = Pred("imagesAvailableOrUnknown", func(f HostFacts) bool {
		return f.ImageAvailability != CheckFailed
	})

	// softTimeoutsEnabled keeps the shape of assisted's hard-timeout rules;
	// nodezero has no soft-timeout mode, so it never holds.
	softTimeoutsEnabled = Pred("softTimeoutsEnabled", func(HostFacts) bool { return false })

	isPreparingTimedOut = Pred("isPreparingTimedOut", func(f HostFacts) bool {
		return f.since(f.StatusUpdatedAt) > or(f.Timeouts.HostPreparation, defaults.HostPreparation)
	})
	installationTimedOut = Pred("hasStatusTimedOut(InstallationTimeout)", func(f HostFacts) bool {
		return f.since(f.StatusUpdatedAt) > or(f.Timeouts.HostInstalling, defaults.HostInstalling)
	})
	hasInstallationInProgressTimedOut = Pred("hasInstallationInProgressTimedOut", func(f HostFacts) bool {
		return f.since(f.StageUpdatedAt) > f.stageLimit()
	})
	hasPendingUserActionTimedOut = Pred("hasPendingUserActionTimedOut", func(f HostFacts) bool {
		return f.since(f.StatusUpdatedAt) > or(f.Timeouts.HostPendingUserAction, defaults.HostPendingUserAction)
	})
	isLogCollectionTimedOut = Pred("isLogCollectionTimedOut", func(f HostFacts) bool {
		pending := or(f.Timeouts.HostLogPending, defaults.HostLogPending)
		collection := or(f.Timeouts.HostLogCollection, defaults.HostLogCollection)
		// A host's "collecting" state times out after the pending limit.
		return logsTimedOut(f.Logs, f.Now, f.StatusUpdatedAt, pending, collection, pending)
	})
)

func inStages(stages ...wire.HostStage) Condition[HostFacts] {
	name := "isInStages("
	for i, s := range stages {
		if i > 0 {
			name += ", "
		}
		name += string(s)
	}
	return Pred(name+")", func(f HostFacts) bool { return slices.Contains(stages, f.Stage) })
}

// stageLimit is the current stage's limit; Rebooting on a single-node
// cluster gets the longer SNO limit.
func (f HostFacts) stageLimit() time.Duration {
	if f.Stage == wire.HostStageRebooting && f.SNO {
		return or(f.Timeouts.SNORebooting, defaults.SNORebooting)
	}
	return f.Timeouts.HostStage(f.Stage)
}

// logsTimedOut is assisted's IsLogCollectionTimedOut for hosts and clusters.
func logsTimedOut(l Logs, now, statusUpdatedAt time.Time, pending, collection, collecting time.Duration) bool {
	switch {
	case l.State == wire.LogsStateEmpty && l.StartedAt.IsZero():
		// entered the status before logs were asked for
		return now.Sub(statusUpdatedAt) > pending
	case l.State == wire.LogsStateRequested && l.CollectedAt.IsZero():
		return now.Sub(l.StartedAt) > collection
	case l.State == wire.LogsStateRequested:
		return now.Sub(l.CollectedAt) > collection
	case l.State == wire.LogsStateCollecting:
		return now.Sub(l.CollectedAt) > collecting
	}
	return false
}

// WrongBootOrderIgnoreTimeoutStages are the stages whose timeout is ignored
// while the cluster waits for a user to fix a boot order
// (internal/host/host.go WrongBootOrderIgnoreTimeoutStages).
var WrongBootOrderIgnoreTimeoutStages = []wire.HostStage{
	wire.HostStageWaitingForControlPlane,
	wire.HostStageWaitingForController,
	wire.HostStageWaitingForBootkube,
	wire.HostStageRebooting,
}
