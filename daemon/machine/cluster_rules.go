package machine

import (
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// The cluster machine, in assisted-service's rule order
// (internal/cluster/statemachine.go NewClusterStateMachine). Left out: the
// SaaS-only AMS subscription rule, the soft-timeout-only "Timed out while
// installing" rule, and the unmonitored status (disconnected-ISO clusters).

const (
	cInsufficient = wire.ClusterStatusInsufficient
	cReady        = wire.ClusterStatusReady
	cPendingInput = wire.ClusterStatusPendingForInput
	cPreparing    = wire.ClusterStatusPreparingForInstallation
	cInstalling   = wire.ClusterStatusInstalling
	cPendingUser  = wire.ClusterStatusInstallingPendingUserAction
	cFinalizing   = wire.ClusterStatusFinalizing
	cInstalled    = wire.ClusterStatusInstalled
	cError        = wire.ClusterStatusError
	cCancelled    = wire.ClusterStatusCancelled
	cAddingHosts  = wire.ClusterStatusAddingHosts
)

var (
	requiredInputFieldsExistNonDhcp = Named("requiredInputFieldsExistNonDhcp", And(vipsDefined, pendingConditions))
	isSufficientForInstallDhcp      = Named("isSufficientForInstallDhcp", And(requiredForInstall, vipsDefined))
	allRefreshStatusConditions      = Named("allRefreshStatusConditions", And(pendingConditions, vipsDefined, requiredForInstall))
	discoveryStatuses               = []wire.ClusterStatus{cPendingInput, cReady, cInsufficient}
)

func clusterReason(f ClusterFacts) string { return f.Reason }

func finalizingStageInfo(tmpl string) func(ClusterFacts) string {
	return func(f ClusterFacts) string {
		return fmt.Sprintf(tmpl, f.FinalizingStage, int64(f.finalizingStageLimit().Minutes()))
	}
}

// completionInfo is createClusterCompletionStatusInfo: degraded when an OLM
// operator failed, else a note when fewer workers than assigned installed.
func completionInfo(f ClusterFacts) string {
	var failed []string
	for _, o := range f.Operators {
		if o.OperatorType == wire.OperatorTypeOLM && o.Status == wire.OperatorStatusFailed {
			failed = append(failed, o.Name)
		}
	}
	if len(failed) > 0 {
		return infoClusterDegraded + ". Failed OLM operators: " + strings.Join(failed, ", ")
	}
	var workers, installed int
	for _, h := range f.Hosts {
		if h.EffectiveRole() == wire.HostRoleWorker {
			workers++
			if h.Status == wire.HostStatusInstalled {
				installed++
			}
		}
	}
	if installed < workers {
		return infoClusterNotAllWorkersInstalled
	}
	return infoClusterInstalled
}

var clusterRules = []ClusterRule{
	{Name: "Cancel installation of installing cluster", Trigger: TriggerClusterCancelInstallation,
		From: []wire.ClusterStatus{cInstalling, cPendingUser, cError, cFinalizing}, To: cCancelled, Info: clusterReason,
		Doc: "The user cancels the installation."},
	{Name: "Cancel installation of preparing cluster", Trigger: TriggerClusterCancelInstallation,
		From: []wire.ClusterStatus{cPreparing}, To: cReady, Info: clusterReason,
		Doc: "Cancelling preparation only cancels the preparation."},
	{Name: "Reset installation", Trigger: TriggerResetCluster,
		From: []wire.ClusterStatus{cPreparing, cInstalling, cPendingUser, cError, cCancelled, cFinalizing}, To: cInsufficient,
		Info: clusterReason,
		Doc:  "Reset the cluster so it can be installed again; hosts go resetting-pending-user-action."},
	{Name: "Start installation", Trigger: TriggerPrepareForInstallation,
		From: []wire.ClusterStatus{cReady}, To: cPreparing, Info: text[ClusterFacts](infoClusterPreparing),
		Doc: "The user starts the installation; the writer sets install_started_at and starts the asynchronous preparation."},

	// Discovery: non-DHCP VIPs, then DHCP VIPs, then ready.
	{Name: "Refresh discovering cluster - detect required input", Trigger: TriggerRefreshStatus,
		From: discoveryStatuses, To: cPendingInput,
		Cond: And(Not(vipDHCPAllocationSet), Not(requiredInputFieldsExistNonDhcp)),
		Info: text[ClusterFacts](infoClusterPendingForInput),
		Doc:  "Networks, DNS domain, pull secret or VIPs are missing."},
	{Name: "Refresh discovering cluster - detect insufficient", Trigger: TriggerRefreshStatus,
		From: discoveryStatuses, To: cInsufficient,
		Cond: And(Not(vipDHCPAllocationSet), requiredInputFieldsExistNonDhcp, Not(requiredForInstall)),
		Info: text[ClusterFacts](infoClusterInsufficient),
		Doc:  "Input is complete but a validation of requiredForInstall fails."},
	{Name: "Refresh discovering cluster with DHCP VIPs - detect required input", Trigger: TriggerRefreshStatus,
		From: discoveryStatuses, To: cPendingInput,
		Cond: And(vipDHCPAllocationSet, Not(pendingConditions)),
		Info: text[ClusterFacts](infoClusterPendingForInput),
		Doc:  "DHCP VIP allocation: input other than the VIPs is missing."},
	{Name: "Refresh discovering cluster with DHCP VIPs - detect insufficient", Trigger: TriggerRefreshStatus,
		From: discoveryStatuses, To: cInsufficient,
		Cond: And(vipDHCPAllocationSet, pendingConditions, Not(isSufficientForInstallDhcp)),
		Info: text[ClusterFacts](infoClusterInsufficient),
		Doc:  "DHCP VIP allocation: VIPs not allocated yet or a required validation fails."},
	{Name: "Refresh discovering cluster - detect ready", Trigger: TriggerRefreshStatus,
		From: discoveryStatuses, To: cReady, Cond: allRefreshStatusConditions,
		Info: text[ClusterFacts](infoClusterReady),
		Doc:  "Every gating validation passes."},

	// Preparation.
	{Name: "Refresh preparing cluster - detect timeout", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPreparing}, To: cReady,
		Cond: And(isClusterPreparingTimedOut, Not(failedPreparingHostsExist)),
		Info: text[ClusterFacts](infoClusterPreparingTimeout),
		Doc:  "Preparation did not finish in time (service restart, crashed generator); the writer marks last_installation_preparation failed."},
	{Name: "Refresh preparing cluster - done preparing", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPreparing}, To: cInstalling,
		Cond: And(allHostsPreparedSuccessfully, clusterPreparationSucceeded),
		Info: text[ClusterFacts](infoClusterInstalling),
		Doc:  "Ignition is ready and every host prepared successfully."},
	{Name: "Refresh preparing cluster - insufficient", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPreparing}, To: cInsufficient, Cond: unpreparingHostsExist,
		Info: text[ClusterFacts](infoClusterUnpreparingHostExists),
		Doc:  "A host left preparation (insufficient, disconnected...)."},
	{Name: "Refresh preparing cluster - failed", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPreparing}, To: cReady,
		Cond: Or(failedPreparingHostsExist, And(Not(unpreparingHostsExist), clusterPreparationFailed)),
		Info: text[ClusterFacts](infoClusterFailedToPrepare),
		Doc:  "A host failed to prepare, or generating the install files failed."},

	// Installation.
	{Name: "Pending user action cluster without enough installing hosts goes error", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPendingUser}, To: cError, Cond: Not(Or(isInstalling, isFinalizing)),
		Info: text[ClusterFacts](infoClusterError),
		Doc:  "Too many hosts failed while waiting for the user."},
	{Name: "Timed out while waiting for user", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPendingUser}, To: cError, Cond: isInstallationTimedOut,
		Info: text[ClusterFacts](infoClusterPendingUserTimeout),
		Doc:  "The installation timeout passed while a host waited for its boot order to be fixed."},
	{Name: "Timed out while finalizing", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cFinalizing}, To: cError, Cond: And(isFinalizingTimedOut, Not(clusterSoftTimeoutsEnabled)),
		Info: text[ClusterFacts](infoClusterFinalizingTimeout),
		Doc:  "Finalizing took longer than the finalizing timeout."},
	{Name: "Finalizing stage timed out.  Move to error", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cFinalizing}, To: cError,
		Cond: And(Not(clusterSoftTimeoutsEnabled), isFinalizingStageTimedOut, Not(inNonFailingFinalizingStages)),
		Info: finalizingStageInfo(infoClusterFinalizingStageTimeout),
		Doc:  "A failing finalizing stage exceeded its limit."},
	{Name: "Finalizing stage is taking too long.  Emit an appropriate event", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cFinalizing},
		Cond: And(Not(finalizingStageTimeoutTriggered), Or(clusterSoftTimeoutsEnabled, inNonFailingFinalizingStages), isFinalizingStageTimedOut),
		Info: finalizingStageInfo(infoClusterFinalizingStageSlow),
		Doc:  "An OLM stage is slow: warn once (the writer sets finalizing_stage_timed_out and sends the event) and go on."},
	{Name: "Pending user action cluster stays", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPendingUser},
		Cond: And(isInstallingPendingUserAction, Or(isInstalling, isFinalizing)),
		Doc:  "A host still waits for the user."},
	{Name: "Pending user action cluster back to installing", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPendingUser}, To: cInstalling,
		Cond: And(Not(isInstallingPendingUserAction), isInstalling, Not(isFinalizing)),
		Info: text[ClusterFacts](infoClusterInstalling),
		Doc:  "The user fixed the boot order."},
	{Name: "Pending user action cluster to finalizing", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPendingUser}, To: cFinalizing,
		Cond: And(Not(isInstallingPendingUserAction), isFinalizing),
		Info: text[ClusterFacts](infoClusterFinalizing),
		Doc:  "The user fixed the boot order and enough hosts are installed."},
	{Name: "Installing cluster has hosts pending user action", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cInstalling, cFinalizing}, To: cPendingUser,
		Cond: And(Or(isInstalling, isFinalizing), isInstallingPendingUserAction),
		Info: text[ClusterFacts](infoClusterPendingUserAction),
		Doc:  "A host booted the wrong disk."},
	{Name: "Move to finalizing", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cInstalling}, To: cFinalizing,
		Cond: And(isFinalizing, Not(isInstallingPendingUserAction)),
		Info: text[ClusterFacts](infoClusterFinalizing),
		Doc:  "Enough masters and workers are installed."},
	{Name: "Stay in installing", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cInstalling},
		Cond: And(Not(isFinalizing), Not(isInstallingPendingUserAction), isInstalling),
		Info: text[ClusterFacts](infoClusterInstalling),
		Doc:  "Enough hosts are still installing."},
	{Name: "Finalizing complete", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cFinalizing}, To: cInstalled, Cond: And(areAllHostsDone, hasClusterCompleteInstallation),
		Info: completionInfo,
		Doc:  "Every host installed or failed, the kubeconfig exists and the monitored operators are done."},
	{Name: "Installation error", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cInstalling}, To: cError, Cond: And(Not(isFinalizing), Not(isInstalling)),
		Info: text[ClusterFacts](infoClusterError),
		Doc:  "Too many hosts failed."},

	// Terminal statuses.
	{Name: "Log collection timeout", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cError, cCancelled}, Cond: isClusterLogCollectionTimedOut,
		Doc: "The writer sets logs_info to timeout."},
	{Name: "Maintain state", Trigger: TriggerRefreshStatus,
		From: []wire.ClusterStatus{cPreparing, cFinalizing, cInstalled, cError, cCancelled, cAddingHosts},
		Doc:  "Nothing to do (assisted declares one such rule per status)."},
}
