package api_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// TestManifestsOverHTTP drives the custom manifests and install-config
// routes with the v2 client, as agent-installer-client does, and checks
// the download's wire format by hand.
func TestManifestsOverHTTP(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	ctx := context.Background()
	c := h.client

	const extra = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n"
	m, err := c.CreateClusterManifest(ctx, f.clusterID, wire.CreateManifestParams{
		Folder: wire.ManifestFolderOpenshift, FileName: "99-extra.yaml", Content: base64.StdEncoding.EncodeToString([]byte(extra)),
	})
	if err != nil {
		t.Fatalf("CreateClusterManifest: %v", err)
	}
	if want := (wire.Manifest{Folder: "openshift", FileName: "99-extra.yaml", ManifestSource: "user"}); *m != want {
		t.Errorf("CreateClusterManifest = %+v, want %+v", *m, want)
	}
	list, err := c.ListClusterManifests(ctx, f.clusterID)
	if err != nil {
		t.Fatalf("ListClusterManifests: %v", err)
	}
	want := wire.ListManifests{
		{Folder: "manifests", FileName: fixtureManifest, ManifestSource: "user"},
		{Folder: "openshift", FileName: "99-extra.yaml", ManifestSource: "user"},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("ListClusterManifests (-want +got):\n%s", diff)
	}
	got, err := c.DownloadClusterManifest(ctx, f.clusterID, wire.ManifestFolderOpenshift, "99-extra.yaml")
	if err != nil || string(got) != extra {
		t.Errorf("DownloadClusterManifest = %q, %v; want the file as created", got, err)
	}

	// The download is the file, not JSON, named as assisted names it.
	r := h.user(t, "GET", f.path(clusterPat+"/manifests/files")+"?folder=openshift&file_name=99-extra.yaml", "")
	if r.status != http.StatusOK || string(r.body) != extra {
		t.Fatalf("GET manifests/files = %d %q, want 200 and the file", r.status, r.body)
	}
	for k, v := range map[string]string{
		"Content-Type":        "application/octet-stream",
		"Content-Disposition": `attachment; filename="99-extra.yaml"`,
		"Content-Length":      strconv.Itoa(len(extra)),
	} {
		if got := r.header.Get(k); got != v {
			t.Errorf("download header %s = %q, want %q", k, got, v)
		}
	}
	// The folder defaults to "manifests".
	if r := h.user(t, "GET", f.path(clusterPat+"/manifests/files")+"?file_name="+fixtureManifest, ""); r.status != http.StatusOK || string(r.body) != "kind: ConfigMap\n" {
		t.Errorf("GET manifests/files without a folder = %d %q, want the fixture's manifest", r.status, r.body)
	}

	name := "98-extra.yaml"
	if _, err := c.UpdateClusterManifest(ctx, f.clusterID, wire.UpdateManifestParams{Folder: "openshift", FileName: "99-extra.yaml", UpdatedFileName: &name}); err != nil {
		t.Fatalf("UpdateClusterManifest: %v", err)
	}
	if err := c.DeleteClusterManifest(ctx, f.clusterID, "", fixtureManifest); err != nil {
		t.Fatalf("DeleteClusterManifest: %v", err)
	}
	list, err = c.ListClusterManifests(ctx, f.clusterID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire.ListManifests{{Folder: "openshift", FileName: name, ManifestSource: "user"}}, list); diff != "" {
		t.Errorf("ListClusterManifests after rename and delete (-want +got):\n%s", diff)
	}
	// An empty list is [], not null.
	if err := c.DeleteClusterManifest(ctx, f.clusterID, wire.ManifestFolderOpenshift, name); err != nil {
		t.Fatal(err)
	}
	if r := h.user(t, "GET", f.path(clusterPat+"/manifests"), ""); r.status != http.StatusOK || string(r.body) != "[]\n" {
		t.Errorf("GET manifests of a cluster without any = %d %q, want 200 []", r.status, r.body)
	}

	// Install-config overrides: a JSON string on the wire, kept verbatim.
	const overrides = `{"fips": true}`
	if err := c.UpdateClusterInstallConfig(ctx, f.clusterID, overrides); err != nil {
		t.Fatalf("UpdateClusterInstallConfig: %v", err)
	}
	cl, err := c.GetCluster(ctx, f.clusterID)
	if err != nil {
		t.Fatal(err)
	}
	if cl.InstallConfigOverrides != overrides {
		t.Errorf("install_config_overrides = %q, want %q", cl.InstallConfigOverrides, overrides)
	}
	evs, err := c.ListEvents(ctx, wire.EventsQuery{ClusterID: f.clusterID})
	if err != nil {
		t.Fatal(err)
	}
	applied := 0
	for _, ev := range evs {
		if ev.Name == "install_config_applied" && ev.Message == "Custom install config was applied to the cluster" {
			applied++
		}
	}
	if applied != 1 {
		t.Errorf("install_config_applied events = %d, want 1", applied)
	}
}

// TestManifestsGoWithTheCluster: deleting the cluster deletes its manifests.
func TestManifestsGoWithTheCluster(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	if r := h.user(t, "DELETE", f.path(clusterPat), ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE cluster = %d %s", r.status, r.body)
	}
	r := h.user(t, "GET", f.path(clusterPat+"/manifests/files")+"?file_name="+fixtureManifest, "")
	if r.status != http.StatusNotFound {
		t.Errorf("download after deleting the cluster = %d %s, want 404", r.status, r.body)
	}
	checkErrorBody(t, r.status, r.header, r.body)
	err := h.store.View(context.Background(), func(tx *store.Tx) error {
		rows, err := tx.Manifests("")
		if len(rows) != 0 {
			t.Errorf("stored manifests after deleting the cluster = %+v, want none", rows)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
