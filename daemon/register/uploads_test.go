package register

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// TestApplyInstallConfigOverrides: the overrides are sent once; overrides
// the cluster has already, however formatted, are not sent again.
func TestApplyInstallConfigOverrides(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	set := manifestSet(t, compactSpec())
	cluster, err := RegisterCluster(ctx, s.user, set)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := ApplyInstallConfigOverrides(ctx, s.user, cluster, set)
	if err != nil || !sent {
		t.Fatalf("ApplyInstallConfigOverrides = %v, %v; want sent", sent, err)
	}
	cluster, err = s.user.GetCluster(ctx, cluster.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cluster.InstallConfigOverrides != `{"fips":true}` {
		t.Errorf("install_config_overrides = %q, want the annotation verbatim", cluster.InstallConfigOverrides)
	}
	if sent, err := ApplyInstallConfigOverrides(ctx, s.user, cluster, set); err != nil || sent {
		t.Errorf("second ApplyInstallConfigOverrides = %v, %v; want nothing sent", sent, err)
	}
	// The same overrides written differently are the same overrides.
	if err := s.user.UpdateClusterInstallConfig(ctx, cluster.ID, "{ \"fips\" :\n true }"); err != nil {
		t.Fatal(err)
	}
	cluster, _ = s.user.GetCluster(ctx, cluster.ID)
	if sent, err := ApplyInstallConfigOverrides(ctx, s.user, cluster, set); err != nil || sent {
		t.Errorf("ApplyInstallConfigOverrides over reformatted overrides = %v, %v; want nothing sent", sent, err)
	}
	// Other overrides, or overrides that are not JSON, are replaced.
	for _, have := range []string{`{"fips":false}`, `{not json`} {
		if sent, err := ApplyInstallConfigOverrides(ctx, s.user, &wire.Cluster{ID: cluster.ID, InstallConfigOverrides: have}, set); err != nil || !sent {
			t.Errorf("ApplyInstallConfigOverrides over %q = %v, %v; want sent", have, sent, err)
		}
	}
	// No annotation: nothing to send.
	delete(set.AgentClusterInstall.Metadata.Annotations, manifests.InstallConfigOverridesAnnotation)
	if sent, err := ApplyInstallConfigOverrides(ctx, s.user, &wire.Cluster{ID: cluster.ID}, set); err != nil || sent {
		t.Errorf("ApplyInstallConfigOverrides without the annotation = %v, %v; want nothing sent", sent, err)
	}
	set.AgentClusterInstall.Metadata.Annotations = map[string]string{manifests.InstallConfigOverridesAnnotation: "{not json"}
	if _, err := ApplyInstallConfigOverrides(ctx, s.user, cluster, set); !errors.Is(err, ErrManifests) {
		t.Errorf("ApplyInstallConfigOverrides(bad overrides) = %v, want ErrManifests", err)
	}
}

func TestRegisterExtraManifests(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	spec := compactSpec()
	spec.ExtraManifests = append(spec.ExtraManifests, manifests.ExtraManifest{Name: "98-more.yml", Data: []byte("kind: Namespace\n")})
	set := manifestSet(t, spec)
	cluster, err := RegisterCluster(ctx, s.user, set)
	if err != nil {
		t.Fatal(err)
	}
	names, err := RegisterExtraManifests(ctx, s.user, cluster.ID, set)
	if err != nil {
		t.Fatalf("RegisterExtraManifests: %v", err)
	}
	if diff := cmp.Diff([]string{"98-more.yml", "99-extra.yaml"}, names); diff != "" {
		t.Errorf("uploaded (-want +got):\n%s", diff)
	}
	for _, m := range set.ExtraManifests {
		b, err := s.user.DownloadClusterManifest(ctx, cluster.ID, ExtraManifestsFolder, m.Name)
		if err != nil || string(b) != string(m.Data) {
			t.Errorf("openshift/%s = %q, %v; want %q", m.Name, b, err, m.Data)
		}
	}
	// Again: everything is there with the same content.
	if names, err := RegisterExtraManifests(ctx, s.user, cluster.ID, set); err != nil || len(names) != 0 {
		t.Errorf("second RegisterExtraManifests = %v, %v; want nothing uploaded", names, err)
	}
	// A file of the same name in the other folder is not the same file:
	// the service refuses it (not distinct), which is not ErrManifestExists.
	other := manifestSet(t, compactSpec())
	other.ExtraManifests = []manifests.ExtraManifest{{Name: "97-new.yaml", Data: []byte("a: 1\n")}}
	if _, err := s.user.CreateClusterManifest(ctx, cluster.ID, wire.CreateManifestParams{Folder: wire.ManifestFolderManifests, FileName: "97-new.yaml", Content: base64.StdEncoding.EncodeToString([]byte("a: 1\n"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterExtraManifests(ctx, s.user, cluster.ID, other); !wire.IsStatus(err, 400) || errors.Is(err, ErrManifestExists) {
		t.Errorf("RegisterExtraManifests with the name taken in folder manifests = %v, want the service's 400", err)
	}
}

// TestExtraManifestConflict: a manifest the cluster has with other content
// is an error that names the file, and Run reports it instead of retrying.
func TestExtraManifestConflict(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	set := manifestSet(t, compactSpec())
	cluster, err := RegisterCluster(ctx, s.user, set)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.user.CreateClusterManifest(ctx, cluster.ID, wire.CreateManifestParams{
		Folder: ExtraManifestsFolder, FileName: "99-extra.yaml", Content: base64.StdEncoding.EncodeToString([]byte("kind: Secret\n")),
	}); err != nil {
		t.Fatal(err)
	}
	_, err = RegisterExtraManifests(ctx, s.user, cluster.ID, set)
	if !errors.Is(err, ErrManifestExists) || !strings.Contains(err.Error(), "manifest 99-extra.yaml already exists with different content") {
		t.Errorf("RegisterExtraManifests = %v, want ErrManifestExists naming 99-extra.yaml", err)
	}

	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var statuses []string
	_, err = Run(ctx, RunConfig{Client: s.user, Set: set, Interval: 10 * time.Millisecond, Status: func(st string) { statuses = append(statuses, st) }})
	if !errors.Is(err, ErrManifestExists) || !strings.Contains(err.Error(), "99-extra.yaml") {
		t.Errorf("Run = %v, want ErrManifestExists naming 99-extra.yaml", err)
	}
	if len(statuses) != 0 {
		t.Errorf("Run retried: statuses %q", statuses)
	}
	// The service's file is untouched, and no infra-env was registered.
	if b, _ := s.user.DownloadClusterManifest(ctx, cluster.ID, ExtraManifestsFolder, "99-extra.yaml"); string(b) != "kind: Secret\n" {
		t.Errorf("99-extra.yaml = %q, want the service's content kept", b)
	}
	if ies, err := s.user.ListInfraEnvs(ctx, ""); err != nil || len(ies) != 0 {
		t.Errorf("infra-envs = %v, %v; want none", ies, err)
	}
}

// TestRunRefusedOverrides: overrides the service refuses (the cluster is
// installing) end Run with the service's error rather than a retry loop.
func TestRunRefusedOverrides(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	set := manifestSet(t, snoSpec())
	set.AgentClusterInstall.Metadata.Annotations = map[string]string{manifests.InstallConfigOverridesAnnotation: `{"fips":true}`}
	cluster, err := RegisterCluster(ctx, s.user, set)
	if err != nil {
		t.Fatal(err)
	}
	ie, err := RegisterInfraEnv(ctx, s.user, set, cluster.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.addHost(t, ie.ID, inventory("sno", macOf(0), 0))
	if _, err := s.user.InstallCluster(ctx, cluster.ID); err != nil {
		t.Fatalf("InstallCluster: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = Run(ctx, RunConfig{Client: s.user, Set: set, Interval: 10 * time.Millisecond})
	if !wire.IsStatus(err, 409) {
		t.Errorf("Run over an installing cluster with new overrides = %v, want the service's 409", err)
	}
}
