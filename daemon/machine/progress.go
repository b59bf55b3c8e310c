package machine

import (
	"errors"
	"fmt"
	"slices"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// Stage errors. Callers map both to 409 Conflict, as assisted does.
var (
	// ErrStageBackwards: the reported stage comes before the current one.
	ErrStageBackwards = errors.New("stage goes backwards")
	// ErrStageUnknown: the reported stage is not in the host's stage list.
	ErrStageUnknown = errors.New("stage not in the host's stage list")
)

// Per-role ordered stage lists (internal/host/common.go;
// reference/assisted-service.md §7.3).
var (
	bootstrapStages = []v2.HostStage{
		v2.HostStageStartingInstallation, v2.HostStageInstalling,
		v2.HostStageWritingImageToDisk, v2.HostStageCopyingRegistryDataToDisk,
		v2.HostStageWaitingForControlPlane, v2.HostStageWaitingForBootkube,
		v2.HostStageWaitingForController, v2.HostStageRebooting,
		v2.HostStageConfiguring, v2.HostStageJoined, v2.HostStageDone,
	}
	// masterStages serve masters and arbiters alike.
	masterStages = []v2.HostStage{
		v2.HostStageStartingInstallation, v2.HostStageInstalling,
		v2.HostStageWritingImageToDisk, v2.HostStageCopyingRegistryDataToDisk,
		v2.HostStageRebooting, v2.HostStageConfiguring, v2.HostStageJoined,
		v2.HostStageDone,
	}
	workerStages = []v2.HostStage{
		v2.HostStageStartingInstallation, v2.HostStageInstalling,
		v2.HostStageWritingImageToDisk, v2.HostStageWaitingForControlPlane, v2.HostStageRebooting,
		v2.HostStageWaitingForIgnition, v2.HostStageConfiguring,
		v2.HostStageJoined, v2.HostStageDone,
	}
	snoStages = []v2.HostStage{
		v2.HostStageStartingInstallation, v2.HostStageInstalling,
		v2.HostStageWaitingForBootkube, v2.HostStageWritingImageToDisk,
		v2.HostStageCopyingRegistryDataToDisk, v2.HostStageRebooting,
		v2.HostStageJoined, v2.HostStageDone,
	}
	allHostStages = []v2.HostStage{
		v2.HostStageStartingInstallation, v2.HostStageWaitingForControlPlane, v2.HostStageWaitingForBootkube,
		v2.HostStageWaitingForController, v2.HostStageInstalling, v2.HostStageWritingImageToDisk,
		v2.HostStageCopyingRegistryDataToDisk, v2.HostStageRebooting, v2.HostStageWaitingForIgnition,
		v2.HostStageConfiguring, v2.HostStageJoined, v2.HostStageDone, v2.HostStageFailed,
	}
)

// StageKey selects a host's stage list.
type StageKey struct {
	Role      v2.HostRole
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
func Stages(k StageKey) []v2.HostStage {
	var s []v2.HostStage
	switch {
	case k.Bootstrap || k.Role == v2.HostRoleBootstrap:
		s = bootstrapStages
		if k.SNO {
			s = snoStages
		}
	case k.Role == v2.HostRoleMaster || k.Role == v2.HostRoleArbiter:
		s = masterStages
	case k.Role == v2.HostRoleWorker:
		s = workerStages
	}
	if k.Day2 {
		if i := slices.Index(s, v2.HostStageRebooting); i >= 0 {
			s = s[:i+1]
		}
	}
	return slices.Clone(s)
}

// CheckStage checks a progress report moving a host from stage current to
// next over its stage list: Failed is always accepted, the first report
// (current empty) too; otherwise next must be in the list and not before
// current. Repeating the current stage is fine (progress_info updates).
func CheckStage(stages []v2.HostStage, current, next v2.HostStage) error {
	if next == v2.HostStageFailed || current == "" {
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
func InstallationPercentage(stages []v2.HostStage, stage v2.HostStage) int64 {
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
func FinalizingPercentage(ops []v2.MonitoredOperator) int64 {
	if len(ops) == 0 {
		return 0
	}
	var done int
	for _, o := range ops {
		switch {
		case o.OperatorType == v2.OperatorTypeBuiltin && o.Status == v2.OperatorStatusAvailable,
			o.OperatorType == v2.OperatorTypeOLM && (o.Status == v2.OperatorStatusAvailable || o.Status == v2.OperatorStatusFailed):
			done++
		}
	}
	return int64(float64(done) / float64(len(ops)) * 100)
}

// TotalPercentage is the cluster's progress.total_percentage:
// 0.10·preparing + 0.70·installing + 0.15·finalizing, truncated the way
// assisted truncates it, and 100 once the cluster is installed. Callers
// keep the total from decreasing on finalizing updates, as assisted does.
func TotalPercentage(status v2.ClusterStatus, preparing, installing, finalizing int64) int64 {
	if status == v2.ClusterStatusInstalled {
		return 100
	}
	return int64(weightInstalling*float64(installing)) +
		int64(weightPreparing*float64(preparing)+weightFinalizing*float64(finalizing))
}
