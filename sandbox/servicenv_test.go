package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/daemon/validation"
)

// The sandbox's requirements table is assisted's default with only the
// disk-speed threshold changed: for every version it is parsed for, every
// other figure is the default's (the table is a copy, and this keeps it
// from drifting when the default changes).
func TestSandboxRequirementsFollowTheDefault(t *testing.T) {
	def, err := validation.DefaultRequirements()
	if err != nil {
		t.Fatal(err)
	}
	ours, err := validation.ParseRequirements([]byte(sandboxRequirements))
	if err != nil {
		t.Fatalf("HW_VALIDATOR_REQUIREMENTS of the sandbox: %v", err)
	}
	for _, v := range []string{"4.14", "4.18", "4.21", "4.22", "4.24"} {
		want := def.ForVersion(v)
		for _, r := range []*validation.RoleRequirements{&want.Master, &want.Arbiter, &want.Worker, &want.SNO, &want.EdgeWorker} {
			r.InstallationDiskSpeedThresholdMs = sandboxDiskSpeedMs
		}
		if diff := cmp.Diff(want, ours.ForVersion(v)); diff != "" {
			t.Errorf("%s: the sandbox's requirements differ from the default beyond the disk speed (-default +sandbox):\n%s", v, diff)
		}
	}
}
