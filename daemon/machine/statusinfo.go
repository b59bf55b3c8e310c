package machine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Host status_info texts, worded as assisted-service words them
// (internal/host/common.go statusInfo*, internal/host/transition.go).
const (
	infoHostMediaDisconnected           = "Unable to read from the discovery media. It was either disconnected or poor network conditions prevented it from being read. Try using the minimal ISO option and be sure to keep the media connected until the installation is completed"
	infoHostDisconnected                = "Host has stopped communicating with the installation service"
	infoHostDiscovering                 = "Waiting for host to send hardware details"
	infoHostInsufficientHardware        = "Host does not meet the minimum hardware requirements: $FAILING_VALIDATIONS"
	infoHostPendingForInput             = "Waiting for user input: $FAILING_VALIDATIONS"
	infoHostNotReadyForInstall          = "Host cannot be installed due to following failing validation(s): $FAILING_VALIDATIONS"
	infoHostPreparationTimeout          = "The host has encountered a preparation timeout, the following conditions failed: $FAILING_CONDITIONS"
	infoHostPreparationTimeoutDiskSpeed = "the installation disk speed check did not complete within the timeout."
	infoHostPreparationTimeoutImages    = "container availability was not determined within the timeout."
	infoHostKnown                       = "Host is ready to be installed"
	infoHostInstalling                  = "Installation is in progress"
	infoHostResettingPendingUserAction  = "Host requires booting into the discovery image to complete resetting the installation"
	infoHostPreparationSuccessful       = "Host finished successfully to prepare for installation"
	infoHostPreparationFailure          = "Host failed to prepare for installation due to following failing validation(s): $FAILING_VALIDATIONS"
	infoHostAbortingDueClusterErrors    = "Host is part of a cluster that failed to install"
	infoHostInstallationTimedOut        = "Host failed to install due to timeout while starting installation"
	infoHostConnectionTimedOutInstall   = "Host failed to install due to timeout while connecting to host during the installation phase."
	infoHostConnectionTimedOutPreparing = "Host failed to install due to timeout while connecting to host during the preparation phase."
	infoHostStageTimedOut               = "Host failed to install because its installation stage $STAGE took longer than expected $MAX_TIME"
	infoHostStageNoProgress             = "Host failed to install because its installation stage $STAGE did not sufficiently progress in the last $MAX_TIME."
	infoHostRebootTimeout               = "Host timed out when pulling the configuration files. Verify in the host console that the host boots from the OpenShift installation disk $INSTALLATION_DISK and has network access to the cluster API. The installation will resume after the host successfully boots and can access the cluster API"
	infoHostPendingUserActionTimeout    = "Host failed to boot from the installation disk within the expected time."
	infoHostRebootingDay2               = "Host has rebooted and no further updates will be posted. Please check console for progress and to possibly approve pending CSRs"
	infoHostRestartedDuringInstall      = "The host unexpectedly restarted during the installation"
	infoHostWrongBootOrder              = "Expected the host to boot from disk, but it booted the installation image - please reboot and fix boot order to boot from disk"
)

// Cluster status_info texts (internal/cluster/common.go).
const (
	infoClusterReady                  = "Cluster ready to be installed"
	infoClusterInsufficient           = "Cluster is not ready for install"
	infoClusterInstalling             = "Installation in progress"
	infoClusterFinalizing             = "Finalizing cluster installation"
	infoClusterInstalled              = "Cluster is installed"
	infoClusterDegraded               = "Cluster is installed but degraded"
	infoClusterNotAllWorkersInstalled = "Cluster is installed but some workers did not join"
	infoClusterPreparing              = "Preparing cluster for installation"
	infoClusterPreparingTimeout       = "Preparing cluster for installation timeout"
	infoClusterFinalizingTimeout      = "Cluster installation timeout while finalizing"
	infoClusterFinalizingStageTimeout = "Cluster finalizing stage '%s' has been timed out after timeout duration of %d minutes"
	infoClusterFinalizingStageSlow    = "Cluster finalizing stage '%s' is taking longer than the expected duration (%d minutes). To troubleshoot use kubeconfig or connect to any node using ssh"
	infoClusterPendingForInput        = "User input required"
	infoClusterError                  = "cluster has hosts in error"
	infoClusterPendingUserTimeout     = "cluster installation timed out while pending user action (a manual booting from installation disk)"
	infoClusterPendingUserAction      = "Cluster has hosts pending user action"
	infoClusterUnpreparingHostExists  = "At least one host has stopped preparing for installation"
	infoClusterFailedToPrepare        = "Cluster failed to prepare for installation"
)

func text[F any](s string) func(F) string { return func(F) string { return s } }

func hostReason(f HostFacts) string { return f.Reason }

// withFailing fills $FAILING_VALIDATIONS with the failing validation
// messages, sorted and joined by " ; " (transitionHandler.replaceMacros).
func withFailing(tmpl string) func(HostFacts) string {
	return func(f HostFacts) string {
		msgs := slices.Clone(f.FailingMessages)
		slices.Sort(msgs)
		return strings.Replace(tmpl, "$FAILING_VALIDATIONS", strings.Join(msgs, " ; "), 1)
	}
}

// withStage fills $STAGE and $MAX_TIME; MAX_TIME is the configured stage
// limit in Go duration form ("1h30m0s"), as assisted prints it.
func withStage(tmpl string) func(HostFacts) string {
	return func(f HostFacts) string {
		s := strings.Replace(tmpl, "$STAGE", string(f.Stage), 1)
		return strings.Replace(s, "$MAX_TIME", f.Timeouts.HostStage(f.Stage).String(), 1)
	}
}

func (d Disk) ref() string {
	if d.Name == "" {
		return ""
	}
	return fmt.Sprintf("(%s, %s)", d.Name, d.ID)
}

func rebootTimeoutInfo(f HostFacts) string {
	return strings.Replace(infoHostRebootTimeout, "$INSTALLATION_DISK", f.InstallationDisk.ref(), 1)
}

// wrongBootOrderInfo is PostRegisterDuringReboot's message: the fixed text,
// then the disk's model, serial and "(name, id)" where known.
func wrongBootOrderInfo(f HostFacts) string {
	parts := []string{infoHostWrongBootOrder}
	d := f.InstallationDisk
	for _, p := range []string{d.Model, d.Serial, d.ref()} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

func preparationTimeoutInfo(f HostFacts) string {
	var failed []string
	if f.DiskSpeed != CheckSucceeded {
		failed = append(failed, infoHostPreparationTimeoutDiskSpeed)
	}
	if f.ImageAvailability != CheckSucceeded {
		failed = append(failed, infoHostPreparationTimeoutImages)
	}
	return strings.Replace(infoHostPreparationTimeout, "$FAILING_CONDITIONS", strings.Join(failed, "\n"), 1)
}

// progressInfo is the stage name; a day-2 host reaching Done gets the
// "no further updates" text (assisted's non-kube mode).
func progressInfo(f HostFacts) string {
	if f.Stage == wire.HostStageDone && f.day2() {
		return infoHostRebootingDay2
	}
	return string(f.Stage)
}

// failedStageInfo is "Failed" or "Failed - <progress_info>".
func failedStageInfo(f HostFacts) string {
	if f.ProgressInfo == "" {
		return string(wire.HostStageFailed)
	}
	return string(wire.HostStageFailed) + " - " + f.ProgressInfo
}

// mediaDisconnectedErrorInfo adds assisted's media diagnosis to an error
// host's existing status_info (PostHostMediaDisconnected).
func mediaDisconnectedErrorInfo(f HostFacts) string {
	reason := string(wire.HostStageFailed) + " - " + infoHostMediaDisconnected
	switch {
	case f.StatusInfo == "":
		return reason
	case strings.Contains(f.StatusInfo, reason):
		return f.StatusInfo
	default:
		return reason + ". " + f.StatusInfo
	}
}
