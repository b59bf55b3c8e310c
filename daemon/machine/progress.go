package machine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nodezero/nodezero/wire"
)

// Stage errors. Callers map both to 409 Conflict, as assisted does.
var (
	// ErrStageBackwards: the reported stage comes before the current one.
	ErrStageBackwards = errors.New("stage goes backwards")
	// ErrStageUnknown: the reported stage is not in the host's stage list.
	ErrStageUnknown = errors.New("stage not in the host's stage list")
)

// Per-role ordered stage lists (internal/host/common.go;
// docs/reference/assisted-service.md §7.3).
var (
	bootstrapStages = []wire.HostStage{
		wire.HostStageStartingInstallation, wire.HostStageInstalling,
		wire.HostStageWritingImageToDisk, wire.HostStageCopyingRegistryDataToDisk,
		wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube,
		wire.HostStageWaitingForController, wire.HostStageRebooting,
		wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone,
	}
	// masterStages serve masters and arbiters alike.
	masterStages = []wire.HostStage{
		wire.HostStageStartingInstallation, wire.HostStageInstalling,
		wire.HostStageWritingImageToDisk, wire.HostStageCopyingRegistryDataToDisk,
		wire.HostStageRebooting, wire.HostStageConfiguring, wire.HostStageJoined,
		wire.HostStageDone,
	}
	workerStages = []wire.HostStage{
		wire.HostStageStartingInstallation, wire.HostStageInstalling,
		wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting,
		wire.HostStageWaitingForIgnition, wire.HostStageConfiguring,
		wire.HostStageJoined, wire.HostStageDone,
	}
	snoStages = []wire.HostStage{
		wire.HostStageStartingInstallation, wire.HostStageInstalling,
		wire.HostStageWaitingForBootkube, wire.HostStageWritingImageToDisk,
		wire.HostStageCopyingRegistryDataToDisk, wire.HostStageRebooting,
		wire.HostStageJoined, wire.HostStageDone,
	}
	allHostStages = []wire.HostStage{
		wire.HostStageStartingInstallation, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube,
		wire.HostStageWaitingForController, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageCopyingRegistryDataToDisk, wire.HostStageRebooting, wire.HostStageWaitingForIgnition,
		wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone, wire.HostStageFailed,
	}
)

// StageKey selects a host's stage list.
type StageKey struct {
	Role      wire.HostRole
	Bootstrap bool
	SNO       bool
	// Day2: a host added to an installed cluster; its list ends at
	// Rebooting, the last stage the service can observe.
	Day2 bool
}

// Stages returns the ordered install stages of a host (a fresh slice):
// the bootstrap list (the SNO list on a single node), the master list for
// masters and arbiters, the worker list, nothing for other roles
// (host.FindMatchingStages, Manager.GetStagesByRole).
func Stages(k StageKey) []wire.HostStage {
	var s []wire.HostStage
	switch {
	case k.Bootstrap || k.Role == wire.HostRoleBootstrap:
		s = bootstrapStages
		if k.SNO {
			s = snoStages
		}
	case k.Role == wire.HostRoleMaster || k.Role == wire.HostRoleArbiter:
		s = masterStages
	case k.Role == wire.HostRoleWorker:
		s = workerStages
	}
	if k.Day2 {
		if i := slices.Index(s, wire.HostStageRebooting); i >= 0 {
			s = s[:i+1]
		}
	}
	return slices.Clone(s)
}

// CheckStage checks a progress report moving a host from stage current to
// next over its stage list: Failed is always accepted, the first report
// (current empty) too; otherwise next must be in the list and not before
// current. Repeating the current stage is fine (progress_info updates).
func CheckStage(stages []wire.HostStage, current, next wire.HostStage) error {
	if next == wire.HostStageFailed || current == "" {
		return nil
	}
	i := slices.Index(stages, next)
	if i < 0 {
		return fmt.Errorf("stage %q: %w", next, ErrStageUnknown)
	}
	if i < slices.Index(stages, current) {
		return fmt.Errorf("can't assign lower stage %q after host has been in stage %q: %w", next, current, ErrStageBackwards)
	}
	return nil
}

// InstallationPercentage is a host's installation_percentage at stage:
// (index+1)/len(stages)·100, truncated; 0 for a stage not in the list.
func InstallationPercentage(stages []wire.HostStage, stage wire.HostStage) int64 {
	if len(stages) == 0 {
		return 0
	}
	i := slices.Index(stages, stage)
	return int64(float64(i+1) / float64(len(stages)) * 100)
}

// Weights of the cluster progress phases (internal/common/db.go). They sum
// to 0.95; an installed cluster is forced to 100.
const (
	weightPreparing  = 0.10
	weightInstalling = 0.70
	weightFinalizing = 0.15
)

// InstallingPercentage is the cluster's installing-stage percentage:
// Σ(stage index+1) / Σ len(stage list) over its hosts, ·100, truncated. A
// host without a stage counts 0 done stages; a host whose role has no list
// counts nothing. Day-2 clusters have no progress in assisted.
func InstallingPercentage(hosts []HostState, sno bool) int64 {
	var done, total int
	for _, h := range hosts {
		stages := Stages(StageKey{Role: h.Role, Bootstrap: h.Bootstrap, SNO: sno})
		done += slices.Index(stages, h.Stage) + 1
		total += len(stages)
	}
	if total == 0 {
		return 0
	}
	return int64(float64(done) / float64(total) * 100)
}

// FinalizingPercentage is done/monitored operators ·100, truncated, where
// done is a builtin operator available or an OLM operator available or
// failed. No monitored operators gives 0.
func FinalizingPercentage(ops []wire.MonitoredOperator) int64 {
	if len(ops) == 0 {
		return 0
	}
	var done int
	for _, o := range ops {
		switch {
		case o.OperatorType == wire.OperatorTypeBuiltin && o.Status == wire.OperatorStatusAvailable,
			o.OperatorType == wire.OperatorTypeOLM && (o.Status == wire.OperatorStatusAvailable || o.Status == wire.OperatorStatusFailed):
			done++
		}
	}
	return int64(float64(done) / float64(len(ops)) * 100)
}

// TotalPercentage is the cluster's progress.total_percentage:
// 0.10·preparing + 0.70·installing + 0.15·finalizing, truncated the way
// assisted truncates it, and 100 once the cluster is installed. Callers
// keep the total from decreasing on finalizing updates, as assisted does.
func TotalPercentage(status wire.ClusterStatus, preparing, installing, finalizing int64) int64 {
	if status == wire.ClusterStatusInstalled {
		return 100
	}
	return int64(weightInstalling*float64(installing)) +
		int64(weightPreparing*float64(preparing)+weightFinalizing*float64(finalizing))
}
