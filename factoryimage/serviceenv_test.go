package factoryimage

import (
	"strings"
	"testing"
)

// TestServiceEnvFiles: node zero's environment goes into the factory image
// as an environment file systemd reads verbatim (single quotes keep JSON
// whole) and a drop-in naming it; what systemd would read otherwise is
// refused. The VM tests judge it under systemd (the VMs' requirements
// reach node zero through it).
func TestServiceEnvFiles(t *testing.T) {
	file, dropIn, err := serviceEnvFiles([]string{`HW_VALIDATOR_REQUIREMENTS=[{"version":"default","master":{"cpu_cores":1}}]`, "DISABLED_STEPS=free-network-addresses"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`HW_VALIDATOR_REQUIREMENTS='[{"version":"default","master":{"cpu_cores":1}}]'` + "\n",
		"DISABLED_STEPS='free-network-addresses'\n",
	} {
		if !strings.Contains(string(file), want) {
			t.Errorf("environment file:\n%s\nwant a line %q", file, want)
		}
	}
	if !strings.Contains(string(dropIn), "[Service]\nEnvironmentFile="+serviceEnvFile+"\n") {
		t.Errorf("drop-in:\n%s\nwant EnvironmentFile=%s under [Service]", dropIn, serviceEnvFile)
	}
	for _, bad := range []struct{ kv, want string }{
		{"NOEQUALS", "want KEY=VALUE"},
		{"1BAD=x", "want KEY=VALUE"},
		{"K=it's", "single quote"},
		{"K=a\nb", "line break"},
	} {
		if _, _, err := serviceEnvFiles([]string{bad.kv}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("serviceEnvFiles(%q) = %v, want an error saying %q", bad.kv, err, bad.want)
		}
	}
}
