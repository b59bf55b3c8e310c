package tui

import (
	"strings"
	"testing"
)

// TestNextStep: after a failure the retry path names the key the console
// offers or the API call, and the reboot unless the hosts reboot
// themselves; at installed, what comes next and q; otherwise nothing.
func TestNextStep(t *testing.T) {
	reconnecting := failedSnapshot()
	reconnecting.Err = &SetupError{Reason: "x"}
	for _, tc := range []struct {
		name             string
		snap             Snapshot
		key, selfReboot  bool
		want, wantAbsent []string
	}{
		{"failed, API", failedSnapshot(), false, false,
			[]string{"To retry", "reset the cluster", "POST …/v2/clusters/" + fixtureClusterID + "/actions/reset", "reboot every host from the discovery image"}, []string{"press r"}},
		{"failed, key", failedSnapshot(), true, false,
			[]string{"press r to reset the cluster", "reboot every host from the discovery image"}, []string{"POST"}},
		{"failed, key, the sandbox reboots", failedSnapshot(), true, true,
			[]string{"press r to reset the cluster", "reboot into discovery by themselves"}, []string{"reboot every host"}},
		{"failed, API, the sandbox reboots", failedSnapshot(), false, true,
			[]string{"POST …/v2/clusters/", "reboot into discovery by themselves"}, []string{"reboot every host"}},
		{"installed", installedSnapshot(), true, false,
			[]string{"Done. Next:", "auth/kubeconfig", "auth/kubeadmin-password", "Press q to leave"}, []string{"retry"}},
		{"installing", installingSnapshot(), true, false, nil, []string{"retry", "Done"}},
		{"failed, not connected", reconnecting, true, false, nil, []string{"retry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := nextStep(tc.snap, tc.key, tc.selfReboot)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("nextStep() = %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("nextStep() = %q, want it to hold %q", got, w)
				}
			}
			for _, w := range tc.wantAbsent {
				if strings.Contains(got, w) {
					t.Errorf("nextStep() = %q, want no %q", got, w)
				}
			}
		})
	}
}
