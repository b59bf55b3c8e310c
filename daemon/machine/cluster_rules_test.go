package machine

import (
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

type clusterCase struct {
	rule    string
	from    wire.ClusterStatus
	trigger ClusterTrigger
	facts   func(*ClusterFacts)
	to      wire.ClusterStatus
	info    string
}

var (
	m = wire.HostRoleMaster
	w = wire.HostRoleWorker
)

// clusterCases hold one case per rule of the cluster machine.
var clusterCases = []clusterCase{
	{rule: "Cancel installation of installing cluster", from: cFinalizing, trigger: TriggerClusterCancelInstallation,
		facts: func(f *ClusterFacts) { f.Reason = "Installation was cancelled by user" },
		to:    cCancelled, info: "Installation was cancelled by user"},
	{rule: "Cancel installation of preparing cluster", from: cPreparing, trigger: TriggerClusterCancelInstallation,
		facts: func(f *ClusterFacts) { f.Reason = "Installation was cancelled by user" },
		to:    cReady, info: "Installation was cancelled by user"},
	{rule: "Reset installation", from: cError, trigger: TriggerResetCluster,
		facts: func(f *ClusterFacts) { f.Reason = "cluster was reset by user" },
		to:    cInsufficient, info: "cluster was reset by user"},
	{rule: "Start installation", from: cReady, trigger: TriggerPrepareForInstallation,
		to: cPreparing, info: "Preparing cluster for installation"},

	{rule: "Refresh discovering cluster - detect required input", from: cInsufficient, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) { failCluster(f, wire.ClusterValidationIDAPIVIPsDefined) },
		to:    cPendingInput, info: "User input required"},
	{rule: "Refresh discovering cluster - detect insufficient", from: cReady, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) { failCluster(f, wire.ClusterValidationIDSufficientMastersCount) },
		to:    cInsufficient, info: "Cluster is not ready for install"},
	{rule: "Refresh discovering cluster with DHCP VIPs - detect required input", from: cInsufficient, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.VIPDHCPAllocation = true
			failCluster(f, wire.ClusterValidationIDPullSecretSet)
		},
		to: cPendingInput, info: "User input required"},
	{rule: "Refresh discovering cluster with DHCP VIPs - detect insufficient", from: cPendingInput, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.VIPDHCPAllocation = true
			failCluster(f, wire.ClusterValidationIDAPIVIPsDefined) // lease not allocated yet
		},
		to: cInsufficient, info: "Cluster is not ready for install"},
	{rule: "Refresh discovering cluster - detect ready", from: cInsufficient, trigger: TriggerRefreshStatus,
		to: cReady, info: "Cluster ready to be installed"},

	{rule: "Refresh preparing cluster - detect timeout", from: cPreparing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = hosts(m, wire.HostStatusPreparingForInstallation, 3)
			f.StatusUpdatedAt = ago(10*time.Minute + time.Second)
		},
		to: cReady, info: "Preparing cluster for installation timeout"},
	{rule: "Refresh preparing cluster - done preparing", from: cPreparing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = hosts(m, wire.HostStatusPreparingSuccessful, 3)
			f.Preparation = wire.LastInstallationPreparationStatusSuccess
		},
		to: cInstalling, info: "Installation in progress"},
	{rule: "Refresh preparing cluster - insufficient", from: cPreparing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusPreparingSuccessful, 2), hosts(m, wire.HostStatusDisconnected, 1))
		},
		to: cInsufficient, info: "At least one host has stopped preparing for installation"},
	{rule: "Refresh preparing cluster - failed", from: cPreparing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusPreparingSuccessful, 2), hosts(m, wire.HostStatusPreparingFailed, 1))
		},
		to: cReady, info: "Cluster failed to prepare for installation"},

	{rule: "Pending user action cluster without enough installing hosts goes error", from: cPendingUser, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstallingPendingUserAction, 1), hosts(m, wire.HostStatusError, 2))
		},
		to: cError, info: "cluster has hosts in error"},
	{rule: "Timed out while waiting for user", from: cPendingUser, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstallingPendingUserAction, 1), hosts(m, wire.HostStatusInstalled, 2))
			f.InstallStartedAt = ago(24*time.Hour + time.Second)
		},
		to: cError, info: "cluster installation timed out while pending user action (a manual booting from installation disk)"},
	{rule: "Timed out while finalizing", from: cFinalizing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = hosts(m, wire.HostStatusInstalled, 3)
			f.StatusUpdatedAt = ago(5*time.Hour + time.Second)
		},
		to: cError, info: "Cluster installation timeout while finalizing"},
	{rule: "Finalizing stage timed out.  Move to error", from: cFinalizing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = hosts(m, wire.HostStatusInstalled, 3)
			f.FinalizingStage = wire.FinalizingStageWaitingForClusterOperators
			f.FinalizingStageStartedAt = ago(10*time.Hour + time.Second)
		},
		to: cError, info: "Cluster finalizing stage 'Waiting for cluster operators' has been timed out after timeout duration of 600 minutes"},
	{rule: "Finalizing stage is taking too long.  Emit an appropriate event", from: cFinalizing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = hosts(m, wire.HostStatusInstalled, 3)
			f.FinalizingStage = wire.FinalizingStageWaitingForOLMOperatorsCsv
			f.FinalizingStageStartedAt = ago(70*time.Minute + time.Second)
		},
		to:   cFinalizing,
		info: "Cluster finalizing stage 'Waiting for olm operators csv' is taking longer than the expected duration (70 minutes). To troubleshoot use kubeconfig or connect to any node using ssh"},
	{rule: "Pending user action cluster stays", from: cPendingUser, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstallingPendingUserAction, 1), hosts(m, wire.HostStatusInstallingInProgress, 2))
		},
		to: cPendingUser},
	{rule: "Pending user action cluster back to installing", from: cPendingUser, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) { f.Hosts = hosts(m, wire.HostStatusInstallingInProgress, 3) },
		to:    cInstalling, info: "Installation in progress"},
	{rule: "Pending user action cluster to finalizing", from: cPendingUser, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) { f.Hosts = hosts(m, wire.HostStatusInstalled, 3) },
		to:    cFinalizing, info: "Finalizing cluster installation"},
	{rule: "Installing cluster has hosts pending user action", from: cInstalling, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstallingInProgress, 3), hosts(w, wire.HostStatusInstallingPendingUserAction, 1))
		},
		to: cPendingUser, info: "Cluster has hosts pending user action"},
	{rule: "Move to finalizing", from: cInstalling, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstalled, 3), hosts(w, wire.HostStatusInstalled, 2), hosts(w, wire.HostStatusError, 1))
		},
		to: cFinalizing, info: "Finalizing cluster installation"},
	{rule: "Stay in installing", from: cInstalling, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstalled, 3), hosts(w, wire.HostStatusInstallingInProgress, 2))
		},
		to: cInstalling, info: "Installation in progress"},
	{rule: "Finalizing complete", from: cFinalizing, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstalled, 3), hosts(w, wire.HostStatusInstalled, 2))
			f.KubeconfigPresent = true
			f.Operators = []wire.MonitoredOperator{{Name: "console", OperatorType: wire.OperatorTypeBuiltin, Status: wire.OperatorStatusAvailable}}
		},
		to: cInstalled, info: "Cluster is installed"},
	{rule: "Installation error", from: cInstalling, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Hosts = concat(hosts(m, wire.HostStatusInstallingInProgress, 2), hosts(m, wire.HostStatusError, 1))
		},
		to: cError, info: "cluster has hosts in error"},

	{rule: "Log collection timeout", from: cError, trigger: TriggerRefreshStatus,
		facts: func(f *ClusterFacts) {
			f.Logs = Logs{State: wire.LogsStateCollecting, StartedAt: ago(2 * time.Hour), CollectedAt: ago(60*time.Minute + time.Second)}
		},
		to: cError},
	{rule: "Maintain state", from: cAddingHosts, trigger: TriggerRefreshStatus, to: cAddingHosts},
}

func TestClusterRules(t *testing.T) {
	fired := map[string]bool{}
	for _, tc := range clusterCases {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := NextCluster(tc.from, tc.trigger, clusterFacts(tc.facts))
			if err != nil {
				t.Fatalf("NextCluster(%q, %s) error: %v", tc.from, tc.trigger, err)
			}
			fired[got.Rule] = true
			want := Transition[wire.ClusterStatus]{Rule: tc.rule, From: tc.from, To: tc.to, StatusInfo: tc.info, Changed: tc.from != tc.to}
			if got != want {
				t.Errorf("NextCluster(%q, %s) =\n %+v\nwant\n %+v", tc.from, tc.trigger, got, want)
			}
		})
	}
	for _, name := range ruleNames(t, ClusterRules()) {
		if !fired[name] {
			t.Errorf("cluster rule %q has no test case that fires it", name)
		}
	}
}

func TestClusterRuleOrder(t *testing.T) {
	tests := []struct {
		name        string
		from        wire.ClusterStatus
		trigger     ClusterTrigger
		facts       func(*ClusterFacts)
		want, later string
	}{
		{"preparation timeout before done preparing", cPreparing, TriggerRefreshStatus,
			func(f *ClusterFacts) {
				f.Hosts = hosts(m, wire.HostStatusPreparingSuccessful, 3)
				f.Preparation = wire.LastInstallationPreparationStatusSuccess
				f.StatusUpdatedAt = ago(time.Hour)
			},
			"Refresh preparing cluster - detect timeout",
			"Refresh preparing cluster - done preparing"},
		{"unpreparing hosts before failed preparation", cPreparing, TriggerRefreshStatus,
			func(f *ClusterFacts) {
				f.Hosts = concat(hosts(m, wire.HostStatusPreparingFailed, 1), hosts(m, wire.HostStatusDisconnected, 2))
			},
			"Refresh preparing cluster - insufficient",
			"Refresh preparing cluster - failed"},
		{"hosts in error before pending-user timeout", cPendingUser, TriggerRefreshStatus,
			func(f *ClusterFacts) {
				f.Hosts = concat(hosts(m, wire.HostStatusInstallingPendingUserAction, 1), hosts(m, wire.HostStatusError, 2))
				f.InstallStartedAt = ago(48 * time.Hour)
			},
			"Pending user action cluster without enough installing hosts goes error",
			"Timed out while waiting for user"},
		{"finalizing timeout before completion", cFinalizing, TriggerRefreshStatus,
			func(f *ClusterFacts) {
				f.Hosts = hosts(m, wire.HostStatusInstalled, 3)
				f.KubeconfigPresent = true
				f.StatusUpdatedAt = ago(6 * time.Hour)
			},
			"Timed out while finalizing",
			"Finalizing complete"},
		{"finalizing stage error before pending user action", cFinalizing, TriggerRefreshStatus,
			func(f *ClusterFacts) {
				f.Hosts = concat(hosts(m, wire.HostStatusInstalled, 3), hosts(w, wire.HostStatusInstallingPendingUserAction, 1))
				f.FinalizingStage = wire.FinalizingStageWaitingForClusterOperators
				f.FinalizingStageStartedAt = ago(11 * time.Hour)
			},
			"Finalizing stage timed out.  Move to error",
			"Installing cluster has hosts pending user action"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := clusterFacts(tc.facts)
			checkOverlap(t, ClusterRules(), tc.from, tc.trigger, f, tc.want, tc.later)
			got, err := NextCluster(tc.from, tc.trigger, f)
			if err != nil {
				t.Fatalf("NextCluster error: %v", err)
			}
			if got.Rule != tc.want {
				t.Errorf("NextCluster(%q, %s) fired %q, want %q", tc.from, tc.trigger, got.Rule, tc.want)
			}
		})
	}
}

func TestClusterCompletionInfo(t *testing.T) {
	base := concat(hosts(m, wire.HostStatusInstalled, 3), hosts(w, wire.HostStatusInstalled, 2))
	tests := []struct {
		name  string
		hosts []HostState
		ops   []wire.MonitoredOperator
		want  string
	}{
		{"all good", base, nil, "Cluster is installed"},
		{"worker failed", concat(base, hosts(w, wire.HostStatusError, 1)), nil, "Cluster is installed but some workers did not join"},
		{"olm operators failed", base, []wire.MonitoredOperator{
			{Name: "lvms", OperatorType: wire.OperatorTypeOLM, Status: wire.OperatorStatusFailed},
			{Name: "console", OperatorType: wire.OperatorTypeBuiltin, Status: wire.OperatorStatusAvailable},
			{Name: "odf", OperatorType: wire.OperatorTypeOLM, Status: wire.OperatorStatusFailed},
		}, "Cluster is installed but degraded. Failed OLM operators: lvms, odf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NextCluster(cFinalizing, TriggerRefreshStatus, clusterFacts(func(f *ClusterFacts) {
				f.Hosts, f.Operators, f.KubeconfigPresent = tc.hosts, tc.ops, true
			}))
			if err != nil {
				t.Fatal(err)
			}
			if got.To != cInstalled || got.StatusInfo != tc.want {
				t.Errorf("NextCluster = %s %q, want %s %q", got.To, got.StatusInfo, cInstalled, tc.want)
			}
		})
	}
}

func TestClusterWaitsForOperators(t *testing.T) {
	f := clusterFacts(func(f *ClusterFacts) {
		f.Hosts = hosts(m, wire.HostStatusInstalled, 3)
		f.KubeconfigPresent = true
		f.Operators = []wire.MonitoredOperator{{Name: "console", OperatorType: wire.OperatorTypeBuiltin, Status: wire.OperatorStatusProgressing}}
	})
	got, err := NextCluster(cFinalizing, TriggerRefreshStatus, f)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rule != "Maintain state" {
		t.Errorf("finalizing with a progressing builtin operator fired %q, want Maintain state", got.Rule)
	}
}
