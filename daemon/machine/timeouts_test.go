package machine

import (
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

func TestStageTimeouts(t *testing.T) {
	tests := []struct {
		name    string
		stage   wire.HostStage
		sno     bool
		elapsed time.Duration
		tmo     Timeouts
		to      wire.HostStatus
		info    string
	}{
		{"writing image within limit", wire.HostStageWritingImageToDisk, false, 29 * time.Minute, Timeouts{}, hInProgress, ""},
		{"starting installation times out", wire.HostStageStartingInstallation, false, 31 * time.Minute, Timeouts{}, hError,
			"Host failed to install because its installation stage Starting installation took longer than expected 30m0s"},
		{"ABI waits 90m for the control plane", wire.HostStageWaitingForControlPlane, false, 89 * time.Minute, Timeouts{}, hInProgress, ""},
		{"control plane wait times out", wire.HostStageWaitingForControlPlane, false, 91 * time.Minute, Timeouts{}, hError,
			"Host failed to install because its installation stage Waiting for control plane took longer than expected 1h30m0s"},
		{"overridden stage limit", wire.HostStageWaitingForControlPlane, false, 21 * time.Minute,
			Timeouts{HostStages: map[wire.HostStage]time.Duration{wire.HostStageWaitingForControlPlane: 20 * time.Minute}}, hError,
			"Host failed to install because its installation stage Waiting for control plane took longer than expected 20m0s"},
		{"ignition wait is a day", wire.HostStageWaitingForIgnition, false, 23 * time.Hour, Timeouts{}, hInProgress, ""},
		{"rebooting too long asks the user", wire.HostStageRebooting, false, 41 * time.Minute, Timeouts{}, hPendingUser,
			strings.Replace(infoHostRebootTimeout, "$INSTALLATION_DISK", "", 1)},
		{"single node reboots get 80m", wire.HostStageRebooting, true, 79 * time.Minute, Timeouts{}, hInProgress, ""},
		{"single node reboot times out", wire.HostStageRebooting, true, 81 * time.Minute, Timeouts{}, hPendingUser,
			strings.Replace(infoHostRebootTimeout, "$INSTALLATION_DISK", "", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := hostFacts(func(f *HostFacts) {
				f.ClusterStatus, f.Stage, f.SNO, f.Timeouts = wire.ClusterStatusInstalling, tc.stage, tc.sno, tc.tmo
				f.StageUpdatedAt = ago(tc.elapsed)
			})
			got, err := NextHost(hInProgress, TriggerRefreshHost, f)
			if err != nil {
				t.Fatal(err)
			}
			if got.To != tc.to || got.StatusInfo != tc.info {
				t.Errorf("after %v in %q: %s %q (rule %q), want %s %q", tc.elapsed, tc.stage, got.To, got.StatusInfo, got.Rule, tc.to, tc.info)
			}
		})
	}
}

func TestDefaultTimeouts(t *testing.T) {
	d := DefaultTimeouts()
	checks := map[string][2]time.Duration{
		"HostDisconnection":     {d.HostDisconnection, 3 * time.Minute},
		"HostPreparation":       {d.HostPreparation, 8 * time.Minute},
		"HostInstalling":        {d.HostInstalling, 20 * time.Minute},
		"HostPendingUserAction": {d.HostPendingUserAction, time.Hour},
		"ClusterPreparation":    {d.ClusterPreparation, 10 * time.Minute},
		"ClusterInstallation":   {d.ClusterInstallation, 24 * time.Hour},
		"ClusterFinalizing":     {d.ClusterFinalizing, 5 * time.Hour},
		"Installing stage":      {d.HostStage(wire.HostStageInstalling), time.Hour},
		"Joined stage":          {d.HostStage(wire.HostStageJoined), time.Hour},
		"Done stage (default)":  {d.HostStage(wire.HostStageDone), time.Hour},
		"cluster operators":     {d.FinalizingStage(wire.FinalizingStageWaitingForClusterOperators, 0), 10 * time.Hour},
		"olm csv, no operators": {d.FinalizingStage(wire.FinalizingStageWaitingForOLMOperatorsCsv, 0), 70 * time.Minute},
		"olm csv, 2h operator":  {d.FinalizingStage(wire.FinalizingStageWaitingForOLMOperatorsCsv, 2*time.Hour), 2 * time.Hour},
		"router ca not olm":     {d.FinalizingStage(wire.FinalizingStageAddingRouterCA, 2*time.Hour), 70 * time.Minute},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	// The zero Timeouts behaves as the defaults.
	var zero Timeouts
	if got := zero.HostStage(wire.HostStageWaitingForControlPlane); got != 90*time.Minute {
		t.Errorf("Timeouts{}.HostStage(control plane) = %v, want 1h30m", got)
	}
}

func TestTimeoutsFromEnv(t *testing.T) {
	env := map[string]string{
		"HOST_STAGE_WAITING_FOR_CONTROL_PLANE_TIMEOUT": "2h",
		"HOST_STAGE_WRITING_IMAGE_TO_DISK_TIMEOUT":     "45m",
		"INSTALLATION_TIMEOUT":                         "12h",
		"FINALIZING_STAGE_ADDING_ROUTER_CA_TIMEOUT":    "15m",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got, err := TimeoutsFromEnv(lookup)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string][2]time.Duration{
		"control plane":       {got.HostStage(wire.HostStageWaitingForControlPlane), 2 * time.Hour},
		"writing image":       {got.HostStage(wire.HostStageWritingImageToDisk), 45 * time.Minute},
		"rebooting untouched": {got.HostStage(wire.HostStageRebooting), 40 * time.Minute},
		"installation":        {got.ClusterInstallation, 12 * time.Hour},
		"router ca":           {got.FinalizingStage(wire.FinalizingStageAddingRouterCA, 0), 15 * time.Minute},
		"preparation default": {got.HostPreparation, 8 * time.Minute},
	} {
		if c[0] != c[1] {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	if DefaultTimeouts().HostStage(wire.HostStageWritingImageToDisk) != 30*time.Minute {
		t.Errorf("TimeoutsFromEnv changed the package defaults")
	}

	env = map[string]string{"HOST_STAGE_REBOOTING_TIMEOUT": "soon", "FINALIZING_TIMEOUT": "5 hours"}
	_, err = TimeoutsFromEnv(lookup)
	if err == nil || !strings.Contains(err.Error(), "HOST_STAGE_REBOOTING_TIMEOUT") || !strings.Contains(err.Error(), "FINALIZING_TIMEOUT") {
		t.Errorf("TimeoutsFromEnv(bad values) error = %v, want both names reported", err)
	}
}

func TestStageEnvNames(t *testing.T) {
	for stage, want := range map[wire.HostStage]string{
		wire.HostStageStartingInstallation:      "HOST_STAGE_STARTING_INSTALLATION_TIMEOUT",
		wire.HostStageWaitingForControlPlane:    "HOST_STAGE_WAITING_FOR_CONTROL_PLANE_TIMEOUT",
		wire.HostStageCopyingRegistryDataToDisk: "HOST_STAGE_COPYING_REGISTRY_DATA_TO_DISK_TIMEOUT",
	} {
		if got := StageEnvName(stage); got != want {
			t.Errorf("StageEnvName(%q) = %q, want %q", stage, got, want)
		}
	}
	if got := FinalizingStageEnvName(wire.FinalizingStageWaitingForOLMOperatorSetupJobs); got != "FINALIZING_STAGE_WAITING_FOR_OLM_OPERATOR_SETUP_JOBS_TIMEOUT" {
		t.Errorf("FinalizingStageEnvName = %q", got)
	}
}

func BenchmarkNextHostRefreshKnown(b *testing.B) {
	f := hostFacts(nil)
	for b.Loop() {
		if _, err := NextHost(hKnown, TriggerRefreshHost, f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNextClusterRefreshInstalling(b *testing.B) {
	f := clusterFacts(func(f *ClusterFacts) {
		f.Hosts = concat(hosts(m, wire.HostStatusInstalled, 3), hosts(w, wire.HostStatusInstallingInProgress, 2))
	})
	for b.Loop() {
		if _, err := NextCluster(cInstalling, TriggerRefreshStatus, f); err != nil {
			b.Fatal(err)
		}
	}
}
