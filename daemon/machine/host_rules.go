package machine

import (
	"slices"

	"github.com/nodezero/nodezero/wire"
)

// The host machine, in assisted-service's rule order
// (internal/host/statemachine.go NewHostStateMachine). Order only matters
// among rules of one trigger. Left out: the pool/late-binding machine and
// the BindHost, UnbindHost, ReclaimHost, RebootingForReclaim and
// ReclaimHostFailed triggers with their statuses (binding, unbinding*,
// reclaiming*, *-unbound), soft-timeout rules, and rules no input can reach
// (see docs/state-machines/README.md).

const (
	hDiscovering   = wire.HostStatusDiscovering
	hKnown         = wire.HostStatusKnown
	hDisconnected  = wire.HostStatusDisconnected
	hInsufficient  = wire.HostStatusInsufficient
	hPendingInput  = wire.HostStatusPendingForInput
	hPreparing     = wire.HostStatusPreparingForInstallation
	hPrepared      = wire.HostStatusPreparingSuccessful
	hPrepFailed    = wire.HostStatusPreparingFailed
	hInstalling    = wire.HostStatusInstalling
	hInProgress    = wire.HostStatusInstallingInProgress
	hPendingUser   = wire.HostStatusInstallingPendingUserAction
	hResetPending  = wire.HostStatusResettingPendingUserAction
	hInstalled     = wire.HostStatusInstalled
	hError         = wire.HostStatusError
	hCancelled     = wire.HostStatusCancelled
	hResetting     = wire.HostStatusResetting
	hAddedExisting = wire.HostStatusAddedToExistingCluster
	hNew           = wire.HostStatus("") // no row yet
)

var (
	connected      = IfHost(wire.HostValidationIDConnected)
	mediaConnected = IfHost(wire.HostValidationIDMediaConnected)
	online         = And(connected, mediaConnected)
	offline        = Or(Not(connected), Not(mediaConnected))
	vsphereUUID    = IfHost(wire.HostValidationIDVsphereDiskUUIDEnabled)

	diskSpeedUnknown = And(Not(diskSpeedCheckSuccessful), diskSpeedSufficientOrUnknown)
	imagesUnknown    = And(Not(imagesAvailable), imagesAvailableOrUnknown)
	// allConditionsSuccessful and friends are assisted's names for the
	// combinations of the two preparation checks.
	allConditionsSuccessful          = Named("allConditionsSuccessful", And(diskSpeedCheckSuccessful, imagesAvailable))
	allConditionsSuccessfulOrUnknown = Named("allConditionsSuccessfulOrUnknown", And(diskSpeedSufficientOrUnknown, imagesAvailableOrUnknown))
	atLeastOneConditionUnknown       = Named("atLeastOneConditionUnknown", And(Or(diskSpeedUnknown, imagesUnknown), allConditionsSuccessfulOrUnknown))

	shouldIgnoreInstallationProgressTimeout = Named("shouldIgnoreInstallationProgressTimeout",
		And(stageInWrongBootStages, clusterPendingUserAction))
)

// hostRules is the whole machine: event rules, then refresh rules.
var hostRules = slices.Concat(hostEventRules, hostRefreshRules)

// hostEventRules answer registration, progress and user actions.
var hostEventRules = []HostRule{
	{Name: "Initial registration", Trigger: TriggerRegisterHost, From: []wire.HostStatus{hNew}, To: hDiscovering,
		Info: text[HostFacts](infoHostDiscovering),
		Doc:  "A host registers for the first time."},

	// HostProgressChanged. The stage in the facts is the newly reported one.
	{Name: "Host progress reports failure", Trigger: TriggerHostProgressChanged,
		From: []wire.HostStatus{hInstalling, hInProgress, hPendingUser}, To: hError, Cond: isHostFailed, Info: failedStageInfo,
		Doc: "Stage Failed moves the host to error with \"Failed - <progress_info>\". Assisted writes this status directly in UpdateInstallProgress; here it is a rule so that one writer applies every status change."},
	{Name: "host progress installing-in-progress on rebooting in kube-api mode", Trigger: TriggerHostProgressChanged,
		From: []wire.HostStatus{hInProgress, hInstalling}, To: hInProgress, Cond: And(isHostInReboot, isDay2Host), Info: progressInfo,
		Doc: "A day-2 host reporting Rebooting. Outside kube-api mode assisted rewrites a day-2 Rebooting report to Done before it reaches the machine."},
	{Name: "host progress changed to added-to-existing-cluster for day2 host", Trigger: TriggerHostProgressChanged,
		From: []wire.HostStatus{hInProgress, hInstalling, hPendingUser}, To: hAddedExisting, Cond: And(isHostInDone, isDay2Host), Info: progressInfo,
		Doc: "A day-2 host reached Done: the end of the flow for hosts added to an existing cluster."},
	{Name: "host progress changed to installed", Trigger: TriggerHostProgressChanged,
		From: []wire.HostStatus{hInProgress, hInstalling}, To: hInstalled, Cond: isHostInDone, Info: progressInfo,
		Doc: "The host reached stage Done."},
	{Name: "default host progress changed", Trigger: TriggerHostProgressChanged,
		From: []wire.HostStatus{hInProgress, hInstalling, hPendingUser}, To: hInProgress, Info: progressInfo,
		Doc: "Any other stage keeps the host installing-in-progress; status_info is the stage name. Must stay last among the moving progress rules. (It also shadows assisted's no-op fallback for installing-pending-user-action, which is therefore left out.)"},
	{Name: "Host progress change outside installation stays", Trigger: TriggerHostProgressChanged,
		From: []wire.HostStatus{hInstalled, hResetPending},
		Doc:  "Late progress reports for installed or resetting hosts change nothing."},

	// RegisterHost.
	{Name: "Re-registration during preparation", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hPreparing, hPrepared}, To: hKnown, Info: text[HostFacts](infoHostKnown),
		Doc: "The host keeps its inventory and bootstrap flag and goes back to known; the writer also resets the cluster's last_installation_preparation so preparation is evaluated again."},
	{Name: "Re-registration", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hDiscovering, hKnown, hDisconnected, hInsufficient, hResetPending, hPendingInput}, To: hDiscovering,
		Info: text[HostFacts](infoHostDiscovering),
		Doc:  "A host registering again before installation is treated as new hardware: the writer clears inventory, progress, logs and bootstrap."},
	{Name: "Ignore register while rebooting host in resetting", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hResetting}, Cond: isHostInReboot,
		Doc: "The cluster monitor moves the host to resetting-pending-user-action (OCPBUGSM-13597)."},
	{Name: "Register non-rebooting host in resetting", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hResetting}, To: hDiscovering, Cond: Not(isHostInReboot), Info: text[HostFacts](infoHostDiscovering),
		Doc: "The opposite of the rule above."},
	{Name: "Wrong boot order detection", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hInProgress, hPendingUser, hAddedExisting}, To: hPendingUser,
		Cond: Or(isHostInReboot, And(isDay2Host, isHostInDone)), Info: wrongBootOrderInfo,
		Doc: "The host booted the discovery ISO again after writing its disk. From installing-pending-user-action assisted answers the registration 403 \"Host is required to be booted from disk\" and writes nothing."},
	{Name: "Re-registration before the installer started", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hInstalling}, Cond: hasNoStage,
		Doc: "nodezero: the host is installing but reported no stage, so nothing of it is written yet; the agent restarted before its installer began (on node zero the agent shares the daemon's process, and a crash of the daemon restarts both). The host stays installing and is handed the install step again. Assisted's agent runs apart from its service and never meets this; any registration once a stage was reported is still an unexpected restart (next rule)."},
	{Name: "Register during installation", Trigger: TriggerRegisterHost,
		From: []wire.HostStatus{hInstalling, hInProgress}, To: hError, Info: text[HostFacts](infoHostRestartedDuringInstall),
		Doc: "Any other registration during installation is an unexpected restart."},
	{Name: "Register during error", Trigger: TriggerRegisterHost, From: []wire.HostStatus{hError},
		Doc: "Accepted without change, so a manually rebooted failed host does not loop on errors."},
	{Name: "Register post-installation", Trigger: TriggerRegisterHost, From: []wire.HostStatus{hInstalled},
		Doc: "Status unchanged; the API answers 409 and tells the agent to go away (the host booted the ISO after the cluster was installed)."},

	{Name: "Installation failed while host is installing", Trigger: TriggerHostInstallationFailed,
		From: []wire.HostStatus{hInstalling, hInProgress}, To: hError, Info: hostReason,
		Doc: "The install step failed; status_info is the caller's reason."},

	{Name: "Installation canceled while host is installing", Trigger: TriggerHostCancelInstallation,
		From: []wire.HostStatus{hPendingUser, hInstalling, hInProgress, hInstalled, hError}, To: hCancelled, Info: hostReason,
		Doc: "The user cancelled the installation."},
	{Name: "Cancel while preparing", Trigger: TriggerHostCancelInstallation,
		From: []wire.HostStatus{hPreparing, hPrepared}, To: hKnown, Info: hostReason,
		Doc: "Cancelling preparation returns the host to known."},
	{Name: "Cancel while known", Trigger: TriggerHostCancelInstallation, From: []wire.HostStatus{hKnown},
		Doc: "Nothing to cancel."},

	{Name: "Install known host", Trigger: TriggerInstallHost, From: []wire.HostStatus{hKnown}, To: hInstalling,
		Cond: isDay2Host, Info: text[HostFacts](infoHostInstalling),
		Doc: "Day-2 hosts are installed one by one."},

	{Name: "Reset pending user action all states", Trigger: TriggerResettingPendingUserAction,
		From: []wire.HostStatus{hResetting, hDiscovering, hKnown, hPendingUser, hInstalling, hPreparing, hPrepared, hPrepFailed,
			hPendingInput, hResetPending, hInProgress, hInstalled, hError, hCancelled, hAddedExisting},
		To: hResetPending, Info: text[HostFacts](infoHostResettingPendingUserAction),
		Doc: "Cluster reset: the user must boot the host into the discovery image again."},
}
