package machine

import (
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

type hostCase struct {
	rule    string // the rule that must fire
	from    wire.HostStatus
	trigger HostTrigger
	facts   func(*HostFacts)
	to      wire.HostStatus
	info    string
}

var testDisk = Disk{Name: "sda", ID: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3", Model: "PERC H740", Serial: "S3Z1NX0K"}

// hostCases hold one case per rule of the host machine, each built so that
// its rule, and no earlier one, fires.
var hostCases = []hostCase{
	{rule: "Initial registration", from: hNew, trigger: TriggerRegisterHost,
		to: hDiscovering, info: infoHostDiscovering},

	{rule: "Host progress reports failure", from: hInProgress, trigger: TriggerHostProgressChanged,
		facts: func(f *HostFacts) { f.Stage, f.ProgressInfo = wire.HostStageFailed, "coreos-installer exited 1" },
		to:    hError, info: "Failed - coreos-installer exited 1"},
	{rule: "host progress installing-in-progress on rebooting in kube-api mode", from: hInstalling, trigger: TriggerHostProgressChanged,
		facts: func(f *HostFacts) {
			f.Stage, f.Kind, f.Role = wire.HostStageRebooting, wire.HostKindAddToExistingClusterHost, wire.HostRoleWorker
		},
		to: hInProgress, info: "Rebooting"},
	{rule: "host progress changed to added-to-existing-cluster for day2 host", from: hPendingUser, trigger: TriggerHostProgressChanged,
		facts: func(f *HostFacts) { f.Stage, f.Kind = wire.HostStageDone, wire.HostKindAddToExistingClusterHost },
		to:    hAddedExisting, info: infoHostRebootingDay2},
	{rule: "host progress changed to installed", from: hInProgress, trigger: TriggerHostProgressChanged,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageDone },
		to:    hInstalled, info: "Done"},
	{rule: "default host progress changed", from: hInProgress, trigger: TriggerHostProgressChanged,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageJoined },
		to:    hInProgress, info: "Joined"},
	{rule: "Host progress change outside installation stays", from: hInstalled, trigger: TriggerHostProgressChanged,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageDone },
		to:    hInstalled},

	{rule: "Re-registration during preparation", from: hPreparing, trigger: TriggerRegisterHost,
		to: hKnown, info: infoHostKnown},
	{rule: "Re-registration", from: hKnown, trigger: TriggerRegisterHost,
		to: hDiscovering, info: infoHostDiscovering},
	{rule: "Ignore register while rebooting host in resetting", from: hResetting, trigger: TriggerRegisterHost,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageRebooting },
		to:    hResetting},
	{rule: "Register non-rebooting host in resetting", from: hResetting, trigger: TriggerRegisterHost,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageConfiguring },
		to:    hDiscovering, info: infoHostDiscovering},
	{rule: "Wrong boot order detection", from: hInProgress, trigger: TriggerRegisterHost,
		facts: func(f *HostFacts) { f.Stage, f.InstallationDisk = wire.HostStageRebooting, testDisk },
		to:    hPendingUser,
		info:  infoHostWrongBootOrder + " PERC H740 S3Z1NX0K (sda, /dev/disk/by-id/wwn-0x5000c500a0b1c2d3)"},
	{rule: "Re-registration before the installer started", from: hInstalling, trigger: TriggerRegisterHost,
		to: hInstalling},
	{rule: "Register during installation", from: hInstalling, trigger: TriggerRegisterHost,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageStartingInstallation },
		to:    hError, info: "The host unexpectedly restarted during the installation"},
	{rule: "Register during installation", from: hInProgress, trigger: TriggerRegisterHost,
		facts: func(f *HostFacts) { f.Stage = wire.HostStageWritingImageToDisk },
		to:    hError, info: "The host unexpectedly restarted during the installation"},
	{rule: "Register during error", from: hError, trigger: TriggerRegisterHost, to: hError},
	{rule: "Register post-installation", from: hInstalled, trigger: TriggerRegisterHost, to: hInstalled},

	{rule: "Installation failed while host is installing", from: hInstalling, trigger: TriggerHostInstallationFailed,
		facts: func(f *HostFacts) { f.Reason = "installation command failed" },
		to:    hError, info: "installation command failed"},
	{rule: "Installation canceled while host is installing", from: hInstalled, trigger: TriggerHostCancelInstallation,
		facts: func(f *HostFacts) { f.Reason = "Installation was cancelled by user" },
		to:    hCancelled, info: "Installation was cancelled by user"},
	{rule: "Cancel while preparing", from: hPrepared, trigger: TriggerHostCancelInstallation,
		facts: func(f *HostFacts) { f.Reason = "Installation was cancelled by user" },
		to:    hKnown, info: "Installation was cancelled by user"},
	{rule: "Cancel while known", from: hKnown, trigger: TriggerHostCancelInstallation, to: hKnown},
	{rule: "Install known host", from: hKnown, trigger: TriggerInstallHost,
		facts: func(f *HostFacts) { f.Kind = wire.HostKindAddToExistingClusterHost },
		to:    hInstalling, info: "Installation is in progress"},
	{rule: "Reset pending user action all states", from: hAddedExisting, trigger: TriggerResettingPendingUserAction,
		to: hResetPending, info: "Host requires booting into the discovery image to complete resetting the installation"},

	// Preparation.
	{rule: "Refresh known host in preparing cluster", from: hKnown, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusPreparingForInstallation },
		to:    hPreparing, info: infoHostPreparationSuccessful},
	{rule: "Refresh successfully preparing host", from: hPreparing, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus = wire.ClusterStatusPreparingForInstallation
			f.DiskSpeed, f.ImageAvailability = CheckSucceeded, CheckSucceeded
		},
		to: hPrepared, info: "Host finished successfully to prepare for installation"},
	{rule: "Stay in preparing successful", from: hPrepared, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusPreparingForInstallation },
		to:    hPrepared},
	{rule: "Move successfully prepared host to installing", from: hPrepared, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusInstalling },
		to:    hInstalling, info: infoHostInstalling},
	{rule: "Move preparing host to known when cluster stops preparing", from: hPreparing, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusReady },
		to:    hKnown, info: infoHostKnown},
	{rule: "Preparing failed disk speed host move to insufficient", from: hPrepFailed, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus = wire.ClusterStatusPreparingForInstallation
			f.DiskSpeed = CheckFailed
			f.FailingMessages = []string{"zz last", "The installation disk speed is too slow"}
		},
		to:   hInsufficient,
		info: "Host cannot be installed due to following failing validation(s): The installation disk speed is too slow ; zz last"},
	{rule: "Preparing timed out host move to known", from: hPreparing, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus = wire.ClusterStatusPreparingForInstallation
			f.DiskSpeed = CheckSucceeded
			f.StatusUpdatedAt = ago(8*time.Minute + time.Second)
		},
		to:   hPrepFailed,
		info: "The host has encountered a preparation timeout, the following conditions failed: container availability was not determined within the timeout."},
	{rule: "Preparing failed image pull host move to preparing failed", from: hPreparing, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus = wire.ClusterStatusPreparingForInstallation
			f.ImageAvailability = CheckFailed
			f.FailingMessages = []string{"Failed to fetch container images needed for installation from quay.io/x"}
		},
		to:   hPrepFailed,
		info: "Host failed to prepare for installation due to following failing validation(s): Failed to fetch container images needed for installation from quay.io/x"},
	{rule: "Stay in preparing for installation", from: hPreparing, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusPreparingForInstallation },
		to:    hPreparing},
	{rule: "Failed preparing to known when cluster is no longer preparing", from: hPrepFailed, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusReady },
		to:    hKnown, info: infoHostKnown},
	{rule: "Successful preparing to known when cluster is no longer preparing", from: hPrepared, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusReady },
		to:    hKnown, info: infoHostKnown},

	// Disconnection.
	{rule: "Move host to disconnected when connected times out", from: hKnown, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { failHost(f, wire.HostValidationIDConnected) },
		to:    hDisconnected, info: "Host has stopped communicating with the installation service"},
	{rule: "Move to disconnected when virtual media disconnects pre-installation", from: hKnown, trigger: TriggerMediaDisconnect,
		to: hDisconnected, info: infoHostMediaDisconnected},
	{rule: "Move to error when virtual media disconnects post-installation", from: hInstalling, trigger: TriggerMediaDisconnect,
		to: hError, info: infoHostMediaDisconnected},
	{rule: "Media disconnect on error host", from: hError, trigger: TriggerMediaDisconnect,
		facts: func(f *HostFacts) { f.StatusInfo = "installation command failed" },
		to:    hError, info: "Failed - " + infoHostMediaDisconnected + ". installation command failed"},

	// Installation.
	{rule: "Move host to error when cluster is in error", from: hInstalled, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus = wire.ClusterStatusError },
		to:    hError, info: "Host is part of a cluster that failed to install"},
	{rule: "Move host to error when installation times out", from: hInstalling, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus = wire.ClusterStatusInstalling
			f.StatusUpdatedAt = ago(20*time.Minute + time.Second)
		},
		to: hError, info: "Host failed to install due to timeout while starting installation"},
	{rule: "Move preparing host to disconnected when connection times out", from: hPrepared, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus = wire.ClusterStatusPreparingForInstallation
			failHost(f, wire.HostValidationIDMediaConnected)
		},
		to: hDisconnected, info: "Host failed to install due to timeout while connecting to host during the preparation phase."},
	{rule: "Move installing host to error when connection times out", from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Stage = wire.ClusterStatusInstalling, wire.HostStageInstalling
			failHost(f, wire.HostValidationIDConnected)
		},
		to: hError, info: "Host failed to install due to timeout while connecting to host during the installation phase."},
	{rule: "Ignore timeout if host is in particular installation in progress stages", from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Stage = wire.ClusterStatusInstallingPendingUserAction, wire.HostStageWaitingForControlPlane
			f.StageUpdatedAt = ago(3 * time.Hour)
		},
		to: hInProgress},
	{rule: "Move to error on timeout if host is in particular installation in progress stages other than [writing-image-to-disk, copying-registry-data-to-disk, rebooting]",
		from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Stage = wire.ClusterStatusInstalling, wire.HostStageInstalling
			f.StageUpdatedAt = ago(60*time.Minute + time.Second)
		},
		to: hError, info: "Host failed to install because its installation stage Installing took longer than expected 1h0m0s"},
	{rule: "Move to error on timeout if host is in particular installation in progress stage writing-image-to-disk",
		from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Stage = wire.ClusterStatusInstalling, wire.HostStageWritingImageToDisk
			f.StageUpdatedAt = ago(30*time.Minute + time.Second)
		},
		to: hError, info: "Host failed to install because its installation stage Writing image to disk did not sufficiently progress in the last 30m0s."},
	{rule: "Move to error on timeout if host is in particular installation in progress stage copying-registry-data-to-disk",
		from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Stage = wire.ClusterStatusInstalling, wire.HostStageCopyingRegistryDataToDisk
			f.StageUpdatedAt = ago(90*time.Minute + time.Second)
		},
		to: hError, info: "Host failed to install because its installation stage Copying registry data to disk did not sufficiently progress in the last 1h30m0s."},
	{rule: "Tell user about boot order wen reboot takes too long", from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Stage, f.InstallationDisk = wire.ClusterStatusInstalling, wire.HostStageRebooting, testDisk
			f.StageUpdatedAt = ago(40*time.Minute + time.Second)
		},
		to:   hPendingUser,
		info: strings.Replace(infoHostRebootTimeout, "$INSTALLATION_DISK", "(sda, /dev/disk/by-id/wwn-0x5000c500a0b1c2d3)", 1)},
	{rule: "Host pending user action timeout with cluster viability check (day1 only)", from: hPendingUser, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			f.ClusterStatus, f.Role = wire.ClusterStatusInstallingPendingUserAction, wire.HostRoleWorker
			f.StatusUpdatedAt = ago(60*time.Minute + time.Second)
			f.ClusterWouldSucceedWithoutHost = true
		},
		to: hError, info: "Host failed to boot from the installation disk within the expected time."},
	{rule: "Refresh during installation without cluster error stays", from: hInProgress, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.ClusterStatus, f.Stage = wire.ClusterStatusInstalling, wire.HostStageInstalling },
		to:    hInProgress},

	// Discovery.
	{rule: "Host reconnected without inventory", from: hDisconnected, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { failHost(f, wire.HostValidationIDHasInventory) },
		to:    hDiscovering, info: "Waiting for host to send hardware details"},
	{rule: "Host has insufficient hardware", from: hDiscovering, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			failHost(f, wire.HostValidationIDHasMinCPUCores)
			f.FailingMessages = []string{"The host is not eligible to participate in Openshift Cluster because the minimum required CPU cores for any role is 2, found only 1"}
		},
		to:   hInsufficient,
		info: "Host does not meet the minimum hardware requirements: The host is not eligible to participate in Openshift Cluster because the minimum required CPU cores for any role is 2, found only 1"},
	{rule: "Host pending input", from: hInsufficient, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			failHost(f, wire.HostValidationIDMachineCIDRDefined)
			f.FailingMessages = []string{"Machine Network CIDR is undefined"}
		},
		to: hPendingInput, info: "Waiting for user input: Machine Network CIDR is undefined"},
	{rule: "Host not ready", from: hKnown, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) {
			failHost(f, wire.HostValidationIDHostnameUnique)
			f.FailingMessages = []string{"Hostname master-0 is not unique in cluster"}
		},
		to: hInsufficient, info: "Host cannot be installed due to following failing validation(s): Hostname master-0 is not unique in cluster"},
	{rule: "Host ready", from: hInsufficient, trigger: TriggerRefreshHost,
		to: hKnown, info: "Host is ready to be installed"},
	{rule: "Host stay ready", from: hKnown, trigger: TriggerRefreshHost,
		to: hKnown, info: infoHostKnown},

	// Terminal statuses.
	{rule: "Log collection timed out stays", from: hError, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.StatusUpdatedAt = ago(2*time.Minute + time.Second) },
		to:    hError},
	{rule: "Refresh during terminal status stays", from: hCancelled, trigger: TriggerRefreshHost,
		to: hCancelled},
	{rule: "Day 2 hosts should stay in added state", from: hAddedExisting, trigger: TriggerRefreshHost,
		facts: func(f *HostFacts) { f.Kind = wire.HostKindAddToExistingClusterHost },
		to:    hAddedExisting},
}

func TestHostRules(t *testing.T) {
	fired := map[string]bool{}
	for _, tc := range hostCases {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := NextHost(tc.from, tc.trigger, hostFacts(tc.facts))
			if err != nil {
				t.Fatalf("NextHost(%q, %s) error: %v", tc.from, tc.trigger, err)
			}
			fired[got.Rule] = true
			want := Transition[wire.HostStatus]{Rule: tc.rule, From: tc.from, To: tc.to, StatusInfo: tc.info, Changed: tc.from != tc.to}
			if got != want {
				t.Errorf("NextHost(%q, %s) =\n %+v\nwant\n %+v", tc.from, tc.trigger, got, want)
			}
		})
	}
	for _, name := range ruleNames(t, HostRules()) {
		if !fired[name] {
			t.Errorf("host rule %q has no test case that fires it", name)
		}
	}
}

// TestHostRuleOrder checks cases where two rules match (same trigger, the
// source among both rules' sources, both conditions hold) and the earlier
// must win. The overlap itself is asserted, so a case cannot pass by the
// later rule simply not matching.
func TestHostRuleOrder(t *testing.T) {
	tests := []struct {
		name        string
		from        wire.HostStatus
		trigger     HostTrigger
		facts       func(*HostFacts)
		want, later string
	}{
		{"connection loss before stage timeout", hInProgress, TriggerRefreshHost,
			func(f *HostFacts) {
				f.ClusterStatus, f.Stage, f.StageUpdatedAt = wire.ClusterStatusInstalling, wire.HostStageInstalling, ago(2*time.Hour)
				failHost(f, wire.HostValidationIDConnected)
			},
			"Move installing host to error when connection times out",
			"Move to error on timeout if host is in particular installation in progress stages other than [writing-image-to-disk, copying-registry-data-to-disk, rebooting]"},
		{"connection loss before the installing no-op", hInProgress, TriggerRefreshHost,
			func(f *HostFacts) {
				f.ClusterStatus, f.Stage = wire.ClusterStatusInstalling, wire.HostStageInstalling
				failHost(f, wire.HostValidationIDConnected)
			},
			"Move installing host to error when connection times out",
			"Refresh during installation without cluster error stays"},
		{"cluster error before connection loss", hInstalling, TriggerRefreshHost,
			func(f *HostFacts) {
				f.ClusterStatus = wire.ClusterStatusError
				failHost(f, wire.HostValidationIDConnected)
			},
			"Move host to error when cluster is in error",
			"Move installing host to error when connection times out"},
		{"cluster error before installing timeout", hInstalling, TriggerRefreshHost,
			func(f *HostFacts) { f.ClusterStatus, f.StatusUpdatedAt = wire.ClusterStatusError, ago(time.Hour) },
			"Move host to error when cluster is in error",
			"Move host to error when installation times out"},
		{"preparing before slow disk", hKnown, TriggerRefreshHost,
			func(f *HostFacts) {
				f.ClusterStatus, f.DiskSpeed = wire.ClusterStatusPreparingForInstallation, CheckFailed
			},
			"Refresh known host in preparing cluster",
			"Preparing failed disk speed host move to insufficient"},
		{"preparing before not ready", hKnown, TriggerRefreshHost,
			func(f *HostFacts) {
				f.ClusterStatus = wire.ClusterStatusPreparingForInstallation
				failHost(f, wire.HostValidationIDHostnameValid)
			},
			"Refresh known host in preparing cluster",
			"Host not ready"},
		{"ignored timeout before boot order hint", hInProgress, TriggerRefreshHost,
			func(f *HostFacts) {
				f.ClusterStatus, f.Stage = wire.ClusterStatusInstallingPendingUserAction, wire.HostStageRebooting
				f.StageUpdatedAt = ago(2 * time.Hour)
			},
			"Ignore timeout if host is in particular installation in progress stages",
			"Tell user about boot order wen reboot takes too long"},
		{"failed stage before default progress", hInProgress, TriggerHostProgressChanged,
			func(f *HostFacts) { f.Stage = wire.HostStageFailed },
			"Host progress reports failure",
			"default host progress changed"},
		{"day-2 done before installed", hInProgress, TriggerHostProgressChanged,
			func(f *HostFacts) { f.Stage, f.Kind = wire.HostStageDone, wire.HostKindAddToExistingClusterHost },
			"host progress changed to added-to-existing-cluster for day2 host",
			"host progress changed to installed"},
		{"wrong boot order before register during installation", hInProgress, TriggerRegisterHost,
			func(f *HostFacts) { f.Stage = wire.HostStageRebooting },
			"Wrong boot order detection",
			"Register during installation"},
		{"log timeout before terminal no-op", hCancelled, TriggerRefreshHost,
			func(f *HostFacts) { f.Logs = Logs{State: wire.LogsStateRequested, StartedAt: ago(11 * time.Minute)} },
			"Log collection timed out stays",
			"Refresh during terminal status stays"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := hostFacts(tc.facts)
			checkOverlap(t, HostRules(), tc.from, tc.trigger, f, tc.want, tc.later)
			got, err := NextHost(tc.from, tc.trigger, f)
			if err != nil {
				t.Fatalf("NextHost error: %v", err)
			}
			if got.Rule != tc.want {
				t.Errorf("NextHost(%q, %s) fired %q, want %q", tc.from, tc.trigger, got.Rule, tc.want)
			}
		})
	}
}
