package assisted

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func ptr[T any](v T) *T { return &v }

// listed renders a cluster's manifests as "folder/name source".
func (e *env) listed(clusterID string) []string {
	e.t.Helper()
	l, err := e.s.ListManifests(clusterID)
	if err != nil {
		e.t.Fatalf("ListManifests: %v", err)
	}
	out := []string{}
	for _, m := range l {
		out = append(out, fmt.Sprintf("%s/%s %s", m.Folder, m.FileName, m.ManifestSource))
	}
	return out
}

func (e *env) download(clusterID string, folder wire.ManifestFolder, name string) string {
	e.t.Helper()
	b, err := e.s.ManifestFile(e.ctx, clusterID, folder, name)
	if err != nil {
		e.t.Fatalf("ManifestFile %s/%s: %v", folder, name, err)
	}
	return string(b)
}

func (e *env) createManifest(clusterID string, folder wire.ManifestFolder, name, content string) {
	e.t.Helper()
	if _, err := e.s.CreateManifest(e.ctx, clusterID, &wire.CreateManifestParams{Folder: folder, FileName: name, Content: b64(content)}); err != nil {
		e.t.Fatalf("CreateManifest %s/%s: %v", folder, name, err)
	}
}

// storedManifests is what the store holds for the cluster.
func (e *env) storedManifests(clusterID string) []store.ManifestInfo {
	e.t.Helper()
	var out []store.ManifestInfo
	if err := e.st.View(e.ctx, func(tx *store.Tx) error {
		var err error
		out, err = tx.Manifests(clusterID)
		return err
	}); err != nil {
		e.t.Fatalf("store manifests: %v", err)
	}
	return out
}

func TestManifestLifecycle(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	if got := e.listed(clusterID); len(got) != 0 {
		t.Fatalf("manifests of a new cluster = %v, want none", got)
	}

	// Create: the folder defaults to "manifests"; the answer is the manifest.
	m, err := e.s.CreateManifest(e.ctx, clusterID, &wire.CreateManifestParams{FileName: "50-a.yaml", Content: b64("kind: ConfigMap\n")})
	if err != nil {
		t.Fatalf("CreateManifest: %v", err)
	}
	if want := (&wire.Manifest{Folder: "manifests", FileName: "50-a.yaml", ManifestSource: "user"}); !cmp.Equal(want, m) {
		t.Errorf("CreateManifest = %+v, want %+v", m, want)
	}
	e.createManifest(clusterID, wire.ManifestFolderOpenshift, "99-b.json", `{"kind":"Secret"}`)
	e.createManifest(clusterID, wire.ManifestFolderOpenshift, "10-c.yml.patch", "- op: add\n  path: /a\n  value: 1\n")
	want := []string{"manifests/50-a.yaml user", "openshift/10-c.yml.patch user", "openshift/99-b.json user"}
	if diff := cmp.Diff(want, e.listed(clusterID)); diff != "" {
		t.Errorf("ListManifests (-want +got):\n%s", diff)
	}
	if got := e.download(clusterID, "", "50-a.yaml"); got != "kind: ConfigMap\n" {
		t.Errorf("download 50-a.yaml = %q", got)
	}

	// Update the content in place.
	m, err = e.s.UpdateManifest(e.ctx, clusterID, &wire.UpdateManifestParams{Folder: "manifests", FileName: "50-a.yaml", UpdatedContent: ptr(b64("kind: Namespace\n"))})
	if err != nil {
		t.Fatalf("UpdateManifest content: %v", err)
	}
	if m.Folder != "manifests" || m.FileName != "50-a.yaml" {
		t.Errorf("UpdateManifest = %+v, want manifests/50-a.yaml", m)
	}
	if got := e.download(clusterID, "manifests", "50-a.yaml"); got != "kind: Namespace\n" {
		t.Errorf("download after update = %q, want the new content", got)
	}
	// Move to the other folder under a new name, content kept.
	m, err = e.s.UpdateManifest(e.ctx, clusterID, &wire.UpdateManifestParams{Folder: "manifests", FileName: "50-a.yaml",
		UpdatedFolder: ptr(wire.ManifestFolderOpenshift), UpdatedFileName: ptr("51-a.yaml")})
	if err != nil {
		t.Fatalf("UpdateManifest move: %v", err)
	}
	if m.Folder != "openshift" || m.FileName != "51-a.yaml" {
		t.Errorf("UpdateManifest move = %+v, want openshift/51-a.yaml", m)
	}
	if got := e.download(clusterID, "openshift", "51-a.yaml"); got != "kind: Namespace\n" {
		t.Errorf("download after the move = %q, want the content moved", got)
	}
	// Rename and change the content at once.
	if _, err := e.s.UpdateManifest(e.ctx, clusterID, &wire.UpdateManifestParams{Folder: "openshift", FileName: "99-b.json",
		UpdatedFileName: ptr("98-b.json"), UpdatedContent: ptr(b64(`[]`))}); err != nil {
		t.Fatalf("UpdateManifest rename with content: %v", err)
	}
	want = []string{"openshift/10-c.yml.patch user", "openshift/51-a.yaml user", "openshift/98-b.json user"}
	if diff := cmp.Diff(want, e.listed(clusterID)); diff != "" {
		t.Errorf("ListManifests after the updates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(3, len(e.storedManifests(clusterID))); diff != "" {
		t.Errorf("stored rows: %v", e.storedManifests(clusterID))
	}

	// Delete; deleting again is not an error, as in assisted.
	for range 2 {
		if err := e.s.DeleteManifest(e.ctx, clusterID, "openshift", "51-a.yaml"); err != nil {
			t.Fatalf("DeleteManifest: %v", err)
		}
	}
	_, err = e.s.ManifestFile(e.ctx, clusterID, "openshift", "51-a.yaml")
	wantKind(t, "download a deleted manifest", err, KindNotFound)
	want = []string{"openshift/10-c.yml.patch user", "openshift/98-b.json user"}
	if diff := cmp.Diff(want, e.listed(clusterID)); diff != "" {
		t.Errorf("ListManifests after the delete (-want +got):\n%s", diff)
	}
	if got := len(e.storedManifests(clusterID)); got != 2 {
		t.Errorf("stored rows after the delete = %d, want 2", got)
	}
}

// TestCreateManifestTwice: creating a manifest that exists succeeds; with
// the same content the row is untouched, with other content it is
// replaced, as assisted-service's upload overwrites the object.
func TestCreateManifestTwice(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	e.createManifest(clusterID, "openshift", "a.yaml", "a: 1\n")
	before := e.storedManifests(clusterID)
	e.clock.Advance(time.Minute)
	e.createManifest(clusterID, "openshift", "a.yaml", "a: 1\n")
	if diff := cmp.Diff(before, e.storedManifests(clusterID)); diff != "" {
		t.Errorf("stored row after the same create (-before +after):\n%s", diff)
	}
	e.createManifest(clusterID, "openshift", "a.yaml", "a: 2\n")
	if got := e.download(clusterID, "openshift", "a.yaml"); got != "a: 2\n" {
		t.Errorf("content after a create with other content = %q, want it replaced", got)
	}
	after := e.storedManifests(clusterID)
	if len(after) != 1 || !after[0].UpdatedAt.After(before[0].UpdatedAt) {
		t.Errorf("stored rows = %+v, want one, updated", after)
	}
	if got := e.listed(clusterID); len(got) != 1 {
		t.Errorf("ListManifests = %v, want one manifest", got)
	}
}

func TestManifestRejections(t *testing.T) {
	e := newEnv(t)
	cid, _ := e.cluster(nil)
	e.createManifest(cid, "manifests", "in-manifests.yaml", "a: 1\n")
	e.createManifest(cid, "openshift", "in-openshift.yaml", "a: 1\n")
	unknown := uuid.NewString()
	create := func(folder wire.ManifestFolder, name, content string) func() error {
		return func() error {
			_, err := e.s.CreateManifest(e.ctx, cid, &wire.CreateManifestParams{Folder: folder, FileName: name, Content: content})
			return err
		}
	}
	update := func(p wire.UpdateManifestParams) func() error {
		return func() error { _, err := e.s.UpdateManifest(e.ctx, cid, &p); return err }
	}
	pattern := `'^[^\/]*\.(json|ya?ml(\.patch_?[a-zA-Z0-9_]*)?)$'`
	big := strings.Repeat("a: 1\n", maxManifestBytes/5+1)
	tests := []struct {
		name string
		call func() error
		kind Kind
		msg  string
	}{
		{"no body", func() error { _, err := e.s.CreateManifest(e.ctx, cid, nil); return err }, KindBadRequest, "missing request body"},
		{"no file name", create("", "", b64("a: 1")), KindBadRequest, "file_name in body is required"},
		{"bad folder", create("other", "a.yaml", b64("a: 1")), KindBadRequest, "folder in body should be one of [manifests openshift]"},
		{"extension", create("", "a.txt", b64("a")), KindBadRequest, "file_name in body should match " + pattern},
		{"directory", create("", "dir/a.yaml", b64("a: 1")), KindBadRequest, "file_name in body should match " + pattern},
		{"every problem", create("x", "a.txt", ""), KindBadRequest,
			"folder in body should be one of [manifests openshift]; file_name in body should match " + pattern},
		{"bad cluster id", func() error {
			_, err := e.s.CreateManifest(e.ctx, "nope", &wire.CreateManifestParams{FileName: "a.yaml", Content: b64("a: 1")})
			return err
		}, KindBadRequest, `cluster_id: "nope" is not a UUID`},
		{"unknown cluster", func() error {
			_, err := e.s.CreateManifest(e.ctx, unknown, &wire.CreateManifestParams{FileName: "a.yaml", Content: b64("a: 1")})
			return err
		}, KindNotFound, "cluster " + unknown + " not found"},
		{"hidden file", create("", ".yaml", b64("a: 1")), KindBadRequest, "Cluster manifest .yaml for cluster " + cid + " has an invalid filename."},
		{"blank name", create("", " .yaml", b64("a: 1")), KindBadRequest, "Cluster manifest  .yaml for cluster " + cid + " has an invalid filename."},
		{"space", create("", "a b.yaml", b64("a: 1")), KindBadRequest, "Cluster manifest a b.yaml for cluster " + cid + " should not include a space in its name."},
		{"no content", create("", "a.yaml", ""), KindBadRequest, "Manifest content of file manifests/a.yaml for cluster ID " + cid + " is empty"},
		{"blank content", create("openshift", "a.yaml", "   "), KindBadRequest, "Manifest content of file openshift/a.yaml for cluster ID " + cid + " is empty"},
		{"not base64", create("", "a.yaml", "a: 1"), KindBadRequest, "failed to base64-decode cluster manifest content for cluster " + cid},
		{"too big", create("", "a.yaml", b64(big)), KindBadRequest, "Manifest content of file manifests/a.yaml for cluster ID " + cid + " exceeds the maximum file size of 1MiB"},
		{"bad yaml", create("", "a.yaml", b64("a: [b\n")), KindBadRequest,
			"Manifest content of file manifests/a.yaml for cluster ID " + cid + " has an invalid YAML format: yaml: line 1: did not find expected ',' or ']'"},
		{"bad second document", create("", "a.yml", b64("a: 1\n---\nb: c: d\n")), KindBadRequest,
			"Manifest content of file manifests/a.yml for cluster ID " + cid + " has an invalid YAML format: yaml: line 3: mapping values are not allowed in this context"},
		{"bad json", create("", "a.json", b64("{")), KindBadRequest, "Manifest content of file manifests/a.json for cluster ID " + cid + " has an illegal JSON format"},
		{"yaml for json", create("", "a.json", b64("a: 1")), KindBadRequest, "Manifest content of file manifests/a.json for cluster ID " + cid + " has an illegal JSON format"},
		{"patch not a list", create("", "a.yaml.patch", b64("op: add\n")), KindBadRequest,
			"Patch content of file manifests/a.yaml.patch for cluster ID " + cid + " is invalid: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!map into []assisted.patchOperation"},
		{"not distinct", create("openshift", "in-manifests.yaml", b64("a: 1")), KindBadRequest,
			"manifest file in-manifests.yaml for cluster ID " + cid + " in folder openshift cannot be uploaded as it is not distinct between {manifest, openshift} folders"},

		{"update no body", func() error { _, err := e.s.UpdateManifest(e.ctx, cid, nil); return err }, KindBadRequest, "missing request body"},
		{"update required", update(wire.UpdateManifestParams{}), KindBadRequest, "folder in body is required; file_name in body is required"},
		{"update bad names", update(wire.UpdateManifestParams{Folder: "manifests", FileName: "in-manifests.yaml",
			UpdatedFolder: ptr(wire.ManifestFolder("x")), UpdatedFileName: ptr("b")}), KindBadRequest,
			"updated_folder in body should be one of [manifests openshift]; updated_file_name in body should match " + pattern},
		{"update missing", update(wire.UpdateManifestParams{Folder: "openshift", FileName: "in-manifests.yaml", UpdatedContent: ptr(b64("a: 2"))}), KindNotFound,
			"Cluster manifest openshift/in-manifests.yaml doesn't exist in cluster " + cid},
		{"update space", update(wire.UpdateManifestParams{Folder: "manifests", FileName: "in-manifests.yaml", UpdatedFileName: ptr("b c.yaml")}), KindBadRequest,
			"Cluster manifest b c.yaml for cluster " + cid + " should not include a space in its name."},
		{"update not distinct", update(wire.UpdateManifestParams{Folder: "manifests", FileName: "in-manifests.yaml", UpdatedFileName: ptr("in-openshift.yaml")}), KindBadRequest,
			"manifest file in-openshift.yaml for cluster ID " + cid + " in folder manifests cannot be uploaded as it is not distinct between {manifest, openshift} folders"},
		{"update content checked against the new name", update(wire.UpdateManifestParams{Folder: "manifests", FileName: "in-manifests.yaml",
			UpdatedFileName: ptr("x.json"), UpdatedContent: ptr(b64("a: 1"))}), KindBadRequest,
			"Manifest content of file manifests/x.json for cluster ID " + cid + " has an illegal JSON format"},
		{"update empty content", update(wire.UpdateManifestParams{Folder: "manifests", FileName: "in-manifests.yaml", UpdatedContent: ptr("")}), KindBadRequest,
			"Manifest content of file manifests/in-manifests.yaml for cluster ID " + cid + " is empty"},

		{"delete no name", func() error { return e.s.DeleteManifest(e.ctx, cid, "", "") }, KindBadRequest, "file_name in query is required"},
		{"delete bad folder", func() error { return e.s.DeleteManifest(e.ctx, cid, "etc", "a.yaml") }, KindBadRequest, "folder in query should be one of [manifests openshift]"},
		{"delete directory", func() error { return e.s.DeleteManifest(e.ctx, cid, "", "dir/a.yaml") }, KindBadRequest,
			"Cluster manifest dir/a.yaml for cluster " + cid + " should not include a directory in it's name."},
		{"delete hidden", func() error { return e.s.DeleteManifest(e.ctx, cid, "", "../a.yaml") }, KindBadRequest,
			"Cluster manifest ../a.yaml for cluster " + cid + " has an invalid filename."},
		{"delete unknown cluster", func() error { return e.s.DeleteManifest(e.ctx, unknown, "", "a.yaml") }, KindNotFound, "cluster " + unknown + " not found"},
		{"download missing", func() error { _, err := e.s.ManifestFile(e.ctx, cid, "openshift", "in-manifests.yaml"); return err }, KindNotFound,
			"Cluster manifest openshift/in-manifests.yaml doesn't exist in cluster " + cid},
		{"download directory", func() error { _, err := e.s.ManifestFile(e.ctx, cid, "", "a/b.yaml"); return err }, KindBadRequest,
			"Cluster manifest a/b.yaml for cluster " + cid + " should not include a directory in it's name."},
		{"download unknown cluster", func() error { _, err := e.s.ManifestFile(e.ctx, unknown, "", "a.yaml"); return err }, KindNotFound, "cluster " + unknown + " not found"},
		{"list unknown cluster", func() error { _, err := e.s.ListManifests(unknown); return err }, KindNotFound, "cluster " + unknown + " not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			wantKind(t, tt.name, err, tt.kind)
			if got := Message(err); got != tt.msg {
				t.Errorf("message = %q, want %q", got, tt.msg)
			}
		})
	}
	want := []string{"manifests/in-manifests.yaml user", "openshift/in-openshift.yaml user"}
	if diff := cmp.Diff(want, e.listed(cid)); diff != "" {
		t.Errorf("manifests after the rejections (-want +got):\n%s", diff)
	}
	if got := len(e.storedManifests(cid)); got != 2 {
		t.Errorf("stored rows after the rejections = %d, want 2", got)
	}
}

func TestManifestsSurviveRestart(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	e.createManifest(clusterID, "openshift", "99-a.yaml", "kind: ConfigMap\n")
	e.createManifest(clusterID, "manifests", "b.json", "{}")
	e.reopen()
	want := []string{"manifests/b.json user", "openshift/99-a.yaml user"}
	if diff := cmp.Diff(want, e.listed(clusterID)); diff != "" {
		t.Errorf("ListManifests after a restart (-want +got):\n%s", diff)
	}
	if got := e.download(clusterID, "openshift", "99-a.yaml"); got != "kind: ConfigMap\n" {
		t.Errorf("download after a restart = %q", got)
	}
	// The model knows them: the distinct-folder rule still holds.
	_, err := e.s.CreateManifest(e.ctx, clusterID, &wire.CreateManifestParams{Folder: "manifests", FileName: "99-a.yaml", Content: b64("a: 1")})
	wantKind(t, "create the same name in the other folder after a restart", err, KindBadRequest)
}

// TestManifestsAfterInstallStarts: once the cluster has left the
// pre-installation statuses, manifests and install-config overrides are
// refused with 409; reading them still works.
func TestManifestsAfterInstallStarts(t *testing.T) {
	e := newEnv(t)
	clusterID, _, _ := e.readyCluster()
	e.createManifest(clusterID, "openshift", "a.yaml", "a: 1\n")
	e.rewrite(clusterID, func(c *wire.Cluster) { c.Status = wire.ClusterStatusInstalling }, func(h *wire.Host) { h.Status = wire.HostStatusInstalling })
	if st := e.getCluster(clusterID).Status; preInstall(st) {
		t.Fatalf("cluster is %s after the rewrite, want past pre-installation", st)
	}
	msg := "cluster " + clusterID + " is not in pre-installation states, can't modify manifests after installation has been started"
	calls := map[string]func() error{
		"create": func() error {
			_, err := e.s.CreateManifest(e.ctx, clusterID, &wire.CreateManifestParams{FileName: "b.yaml", Content: b64("b: 1")})
			return err
		},
		"update": func() error {
			_, err := e.s.UpdateManifest(e.ctx, clusterID, &wire.UpdateManifestParams{Folder: "openshift", FileName: "a.yaml", UpdatedContent: ptr(b64("a: 2"))})
			return err
		},
		"delete": func() error { return e.s.DeleteManifest(e.ctx, clusterID, "openshift", "a.yaml") },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			wantKind(t, name, err, KindConflict)
			if got := Message(err); got != msg {
				t.Errorf("message = %q, want %q", got, msg)
			}
		})
	}
	err := e.s.UpdateInstallConfig(e.ctx, clusterID, `{"fips":true}`)
	wantKind(t, "install config after the start", err, KindConflict)
	if got, want := Message(err), "cluster "+clusterID+" is not in pre-installation states, can't modify the install config overrides after installation has been started"; got != want {
		t.Errorf("install config message = %q, want %q", got, want)
	}
	if got := e.download(clusterID, "openshift", "a.yaml"); got != "a: 1\n" {
		t.Errorf("download while installing = %q", got)
	}
	if got := e.listed(clusterID); len(got) != 1 {
		t.Errorf("ListManifests while installing = %v, want the one manifest", got)
	}
}

func TestDeregisterClusterDeletesManifests(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	e.createManifest(clusterID, "openshift", "a.yaml", "a: 1\n")
	if err := e.s.DeregisterCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("DeregisterCluster: %v", err)
	}
	if got := e.storedManifests(""); len(got) != 0 {
		t.Errorf("stored manifests after deregistering the cluster = %+v, want none", got)
	}
	_, err := e.s.ListManifests(clusterID)
	wantKind(t, "list manifests of a deleted cluster", err, KindNotFound)
}

// TestManifestWriteFailure: a manifest whose row cannot be written is not
// acknowledged, and the model, reloaded from the store, does not keep it.
// The cluster is deleted behind the service's back, so the row breaks its
// foreign key.
func TestManifestWriteFailure(t *testing.T) {
	e := newEnv(t)
	clusterID, _ := e.cluster(nil)
	if err := e.st.Update(e.ctx, func(tx *store.Tx) error { return tx.DeleteCluster(clusterID) }); err != nil {
		t.Fatal(err)
	}
	_, err := e.s.CreateManifest(e.ctx, clusterID, &wire.CreateManifestParams{FileName: "a.yaml", Content: b64("a: 1")})
	wantKind(t, "create whose row cannot be written", err, KindInternal)
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("err = %v, want the store's conflict as its cause", err)
	}
	_, err = e.s.ListManifests(clusterID)
	wantKind(t, "list after the failed write", err, KindNotFound)
	if got := e.storedManifests(""); len(got) != 0 {
		t.Errorf("stored manifests = %+v, want none", got)
	}
}
