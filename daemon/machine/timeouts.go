package machine

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// Timeouts are the time limits the machines apply. A zero field (or a stage
// missing from a map) means assisted's default, so the zero Timeouts is the
// default set. Only hard timeouts exist here: assisted's soft-timeout mode
// (ENABLE_SOFT_TIMEOUTS, off by default) is not implemented.
//
// Defaults and environment names: docs/reference/assisted-service.md §2.5, §3.3
// (internal/host/config.go, internal/host/host.go,
// internal/cluster/cluster.go, internal/cluster/finalizing_stages.go).
type Timeouts struct {
	// HostDisconnection: no agent check-in for this long fails the
	// connected validation (bootstrap host +2m). Read by the validation
	// package, not by the machine. HOST_MAX_DISCONNECTION_TIME, 3m.
	HostDisconnection time.Duration
	// HostPreparation: a host preparing for installation with a check
	// still unknown goes preparing-failed. PREPARE_FOR_INSTALLATION_HOST_TIMEOUT, 8m.
	HostPreparation time.Duration
	// HostInstalling: a host in status installing whose install step never
	// started goes error. Hard-coded InstallationTimeout, 20m.
	HostInstalling time.Duration
	// HostPendingUserAction: installing-pending-user-action for this long
	// goes error when the cluster can do without the host.
	// HOST_INSTALLING_PENDING_USER_ACTION_TIMEOUT, 60m.
	HostPendingUserAction time.Duration
	// HostLogCollection / HostLogPending: log upload limits of error and
	// cancelled hosts. HOST_LOG_COLLECTION_TIMEOUT 10m, HOST_LOG_PENDING_TIMEOUT 2m.
	HostLogCollection time.Duration
	HostLogPending    time.Duration
	// HostStages: per-stage limits measured from the stage's last update
	// (HOST_STAGE_<STAGE_UPPER_SNAKE>_TIMEOUT). Stages missing here use
	// DefaultTimeouts' table, then HostStageDefault.
	HostStages       map[wire.HostStage]time.Duration
	HostStageDefault time.Duration // any other stage, 60m
	// SNORebooting replaces the Rebooting stage limit on single-node
	// clusters. Hard-coded singleNodeRebootTimeout, 80m.
	SNORebooting time.Duration

	// ClusterPreparation: PREPARE_FOR_INSTALLATION_TIMEOUT, 10m.
	ClusterPreparation time.Duration
	// ClusterInstallation: since install start; applies to
	// installing-pending-user-action in hard mode. INSTALLATION_TIMEOUT, 24h.
	ClusterInstallation time.Duration
	// ClusterFinalizing: since entering finalizing. FINALIZING_TIMEOUT, 5h.
	ClusterFinalizing time.Duration
	// ClusterLogCollection / ClusterLogPending: controller log upload limits.
	// LOG_COLLECTION_TIMEOUT 60m, LOG_PENDING_TIMEOUT 10m.
	ClusterLogCollection time.Duration
	ClusterLogPending    time.Duration
	// FinalizingStages: hard-mode limits per finalizing stage
	// (FINALIZING_STAGE_<STAGE_UPPER_SNAKE>_TIMEOUT); the OLM stages are
	// extended to the largest OLM operator timeout.
	FinalizingStages map[wire.FinalizingStage]time.Duration
}

// DefaultTimeouts returns the defaults nodezero runs with: assisted's, with
// ABI's override of the "Waiting for control plane" stage to 90m
// (HOST_STAGE_WAITING_FOR_CONTROL_PLANE_TIMEOUT=90m in openshift/installer's
// assisted-service.env.template; assisted's own default is 60m).
func DefaultTimeouts() Timeouts {
	return Timeouts{
		HostDisconnection:     3 * time.Minute,
		HostPreparation:       8 * time.Minute,
		HostInstalling:        20 * time.Minute,
		HostPendingUserAction: 60 * time.Minute,
		HostLogCollection:     10 * time.Minute,
		HostLogPending:        2 * time.Minute,
		HostStages: map[wire.HostStage]time.Duration{
			wire.HostStageStartingInstallation:      30 * time.Minute,
			wire.HostStageWaitingForControlPlane:    90 * time.Minute, // ABI; assisted 60m
			wire.HostStageWaitingForController:      60 * time.Minute,
			wire.HostStageWaitingForBootkube:        60 * time.Minute,
			wire.HostStageInstalling:                60 * time.Minute,
			wire.HostStageJoined:                    60 * time.Minute,
			wire.HostStageWritingImageToDisk:        30 * time.Minute,
			wire.HostStageCopyingRegistryDataToDisk: 90 * time.Minute,
			wire.HostStageRebooting:                 40 * time.Minute,
			wire.HostStageConfiguring:               60 * time.Minute,
			wire.HostStageWaitingForIgnition:        24 * time.Hour,
		},
		HostStageDefault:     60 * time.Minute,
		SNORebooting:         80 * time.Minute,
		ClusterPreparation:   10 * time.Minute,
		ClusterInstallation:  24 * time.Hour,
		ClusterFinalizing:    5 * time.Hour,
		ClusterLogCollection: 60 * time.Minute,
		ClusterLogPending:    10 * time.Minute,
		FinalizingStages: map[wire.FinalizingStage]time.Duration{
			wire.FinalizingStageWaitingForClusterOperators:              10 * time.Hour,
			wire.FinalizingStageAddingRouterCA:                          70 * time.Minute,
			wire.FinalizingStageApplyingOLMManifests:                    10 * time.Minute,
			wire.FinalizingStageWaitingForOLMOperatorsCsv:               70 * time.Minute,
			wire.FinalizingStageWaitingForOLMOperatorsCsvInitialization: 70 * time.Minute,
			wire.FinalizingStageWaitingForOLMOperatorSetupJobs:          10 * time.Minute,
			wire.FinalizingStageDone:                                    70 * time.Minute,
		},
	}
}

var defaults = DefaultTimeouts()

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// HostStage returns the limit of a host install stage.
func (t Timeouts) HostStage(stage wire.HostStage) time.Duration {
	if d := t.HostStages[stage]; d > 0 {
		return d
	}
	if d := defaults.HostStages[stage]; d > 0 {
		return d
	}
	return or(t.HostStageDefault, defaults.HostStageDefault)
}

// finalizingStages in the order the controller reports them.
var finalizingStages = []wire.FinalizingStage{
	wire.FinalizingStageWaitingForClusterOperators,
	wire.FinalizingStageAddingRouterCA,
	wire.FinalizingStageApplyingOLMManifests,
	wire.FinalizingStageWaitingForOLMOperatorsCsvInitialization,
	wire.FinalizingStageWaitingForOLMOperatorsCsv,
	wire.FinalizingStageWaitingForOLMOperatorSetupJobs,
	wire.FinalizingStageDone,
}

// olmFinalizingStages are extended to the largest OLM operator timeout.
var olmFinalizingStages = []wire.FinalizingStage{
	wire.FinalizingStageWaitingForOLMOperatorsCsvInitialization,
	wire.FinalizingStageWaitingForOLMOperatorsCsv,
	wire.FinalizingStageWaitingForOLMOperatorSetupJobs,
}

// FinalizingStage returns the hard-mode limit of a finalizing stage; olm is
// the largest OLM operator timeout, which extends the OLM stages.
func (t Timeouts) FinalizingStage(stage wire.FinalizingStage, olm time.Duration) time.Duration {
	d := t.FinalizingStages[stage]
	if d <= 0 {
		d = defaults.FinalizingStages[stage]
	}
	if d <= 0 {
		d = 70 * time.Minute // assisted's generalWaitTimeout for unknown stages
	}
	for _, s := range olmFinalizingStages {
		if s == stage && olm > d {
			d = olm
		}
	}
	return d
}

// StageEnvName returns the environment variable that overrides a host
// stage's limit: HOST_STAGE_<STAGE_UPPER_SNAKE>_TIMEOUT.
func StageEnvName(stage wire.HostStage) string {
	return "HOST_STAGE_" + upperSnake(string(stage)) + "_TIMEOUT"
}

// FinalizingStageEnvName returns FINALIZING_STAGE_<STAGE_UPPER_SNAKE>_TIMEOUT.
func FinalizingStageEnvName(stage wire.FinalizingStage) string {
	return "FINALIZING_STAGE_" + upperSnake(string(stage)) + "_TIMEOUT"
}

func upperSnake(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, " ", "_"))
}

// TimeoutsFromEnv returns DefaultTimeouts overridden by the environment
// variables assisted-service reads (values in time.ParseDuration form).
// lookup is os.LookupEnv or a test's map. Every malformed value is reported.
func TimeoutsFromEnv(lookup func(string) (string, bool)) (Timeouts, error) {
	t := DefaultTimeouts()
	var errs []error
	set := func(name string, dst *time.Duration) {
		v, ok := lookup(name)
		if !ok {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("parse %s: %w", name, err))
			return
		}
		*dst = d
	}
	set("HOST_MAX_DISCONNECTION_TIME", &t.HostDisconnection)
	set("PREPARE_FOR_INSTALLATION_HOST_TIMEOUT", &t.HostPreparation)
	set("HOST_INSTALLING_PENDING_USER_ACTION_TIMEOUT", &t.HostPendingUserAction)
	set("HOST_LOG_COLLECTION_TIMEOUT", &t.HostLogCollection)
	set("HOST_LOG_PENDING_TIMEOUT", &t.HostLogPending)
	set("PREPARE_FOR_INSTALLATION_TIMEOUT", &t.ClusterPreparation)
	set("INSTALLATION_TIMEOUT", &t.ClusterInstallation)
	set("FINALIZING_TIMEOUT", &t.ClusterFinalizing)
	set("LOG_COLLECTION_TIMEOUT", &t.ClusterLogCollection)
	set("LOG_PENDING_TIMEOUT", &t.ClusterLogPending)

	stages := maps.Clone(t.HostStages)
	for _, s := range allHostStages {
		if s == wire.HostStageDone || s == wire.HostStageFailed {
			continue // assisted has no timeout entry for these
		}
		d := t.HostStage(s)
		set(StageEnvName(s), &d)
		stages[s] = d
	}
	t.HostStages = stages

	fin := maps.Clone(t.FinalizingStages)
	for _, s := range finalizingStages {
		d := fin[s]
		set(FinalizingStageEnvName(s), &d)
		fin[s] = d
	}
	t.FinalizingStages = fin
	return t, errors.Join(errs...)
}
