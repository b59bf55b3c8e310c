package assisted

import (
	"testing"

	"github.com/google/uuid"
)

func TestUpdateInstallConfig(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	// Kept as given, spacing and key order included: the client compares
	// its normalized form, the installer merges it.
	const overrides = `{ "fips": true, "capabilities": {"baselineCapabilitySet": "None"} }`
	if err := e.s.UpdateInstallConfig(e.ctx, clusterID, overrides); err != nil {
		t.Fatalf("UpdateInstallConfig: %v", err)
	}
	if got := e.getCluster(clusterID).InstallConfigOverrides; got != overrides {
		t.Errorf("install_config_overrides = %q, want %q verbatim", got, overrides)
	}
	evs := e.events(EventsQuery{ClusterID: clusterID})
	if !hasEvent(evs, "install_config_applied", "Custom install config was applied to the cluster") {
		t.Errorf("events %q lack install_config_applied", eventLines(evs))
	}
	e.reopen()
	if got := e.getCluster(clusterID).InstallConfigOverrides; got != overrides {
		t.Errorf("install_config_overrides after a restart = %q, want %q", got, overrides)
	}
	// "" removes them, as in assisted-service.
	if err := e.s.UpdateInstallConfig(e.ctx, clusterID, ""); err != nil {
		t.Fatalf("UpdateInstallConfig(\"\"): %v", err)
	}
	if got := e.getCluster(clusterID).InstallConfigOverrides; got != "" {
		t.Errorf("install_config_overrides after clearing = %q, want none", got)
	}
}

func TestUpdateInstallConfigRejections(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	before := e.getCluster(clusterID)
	unknown := uuid.NewString()
	tests := []struct {
		name, id, overrides string
		kind                Kind
		msg                 string
	}{
		{"not JSON", clusterID, `{fips: true}`, KindBadRequest, "install config overrides: not valid JSON: invalid character 'f' looking for beginning of object key string"},
		{"truncated", clusterID, `{"fips":`, KindBadRequest, "install config overrides: not valid JSON: unexpected end of JSON input"},
		{"trailing data", clusterID, `{} {}`, KindBadRequest, "install config overrides: not valid JSON: invalid character '{' after top-level value"},
		{"array", clusterID, `[{"fips":true}]`, KindBadRequest, "install config overrides: must be a JSON object, not an array"},
		{"string", clusterID, `"fips"`, KindBadRequest, "install config overrides: must be a JSON object, not a string"},
		{"number", clusterID, `1`, KindBadRequest, "install config overrides: must be a JSON object, not a number"},
		{"boolean", clusterID, `true`, KindBadRequest, "install config overrides: must be a JSON object, not a boolean"},
		{"null", clusterID, `null`, KindBadRequest, "install config overrides: must be a JSON object, not null"},
		{"bad cluster id", "x", `{}`, KindBadRequest, `cluster_id: "x" is not a UUID`},
		{"unknown cluster", unknown, `{}`, KindNotFound, "cluster " + unknown + " not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.s.UpdateInstallConfig(e.ctx, tt.id, tt.overrides)
			wantKind(t, tt.name, err, tt.kind)
			if got := Message(err); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
		})
	}
	after := e.getCluster(clusterID)
	if after.InstallConfigOverrides != "" || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("cluster after the rejections: overrides %q, updated %v; want none, %v", after.InstallConfigOverrides, after.UpdatedAt, before.UpdatedAt)
	}
	for _, ev := range e.events(EventsQuery{ClusterID: clusterID}) {
		if ev.Name == "install_config_applied" {
			t.Errorf("a rejected request emitted %s", ev.Name)
		}
	}
}
