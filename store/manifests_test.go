package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func putManifest(tx *Tx, clusterID, folder, name, content string) error {
	return tx.PutManifest(Manifest{
		ManifestInfo: ManifestInfo{ClusterID: clusterID, Folder: folder, FileName: name, Source: "user"},
		Content:      []byte(content),
	})
}

func getManifest(t *testing.T, s *Store, clusterID, folder, name string) (Manifest, error) {
	t.Helper()
	var m Manifest
	err := s.View(context.Background(), func(tx *Tx) error {
		var err error
		m, err = tx.Manifest(clusterID, folder, name)
		return err
	})
	return m, err
}

func listManifests(t *testing.T, s *Store, clusterID string) []ManifestInfo {
	t.Helper()
	var out []ManifestInfo
	mustView(t, s, func(tx *Tx) error {
		var err error
		out, err = tx.Manifests(clusterID)
		return err
	})
	return out
}

func TestManifestRoundTrip(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seed(t, s)
	t0 := clock.Now()
	// Content is kept byte for byte: bytes that are not UTF-8, and a file
	// of no bytes at all.
	binary := "kind: ConfigMap\n\x00\xff\xfe"
	mustUpdate(t, s, func(tx *Tx) error {
		if err := putManifest(tx, "c1", "openshift", "99-a.yaml", binary); err != nil {
			return err
		}
		if err := putManifest(tx, "c1", "manifests", "b.json", "{}"); err != nil {
			return err
		}
		return putManifest(tx, "c1", "manifests", "empty.yaml", "")
	})
	got, err := getManifest(t, s, "c1", "openshift", "99-a.yaml")
	if err != nil {
		t.Fatalf("Manifest: %v", err)
	}
	want := Manifest{ManifestInfo: ManifestInfo{ClusterID: "c1", Folder: "openshift", FileName: "99-a.yaml", Source: "user",
		Size: int64(len(binary)), CreatedAt: t0, UpdatedAt: t0}, Content: []byte(binary)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Manifest (-want +got):\n%s", diff)
	}
	if empty, err := getManifest(t, s, "c1", "manifests", "empty.yaml"); err != nil || empty.Content == nil || len(empty.Content) != 0 {
		t.Errorf("Manifest(empty.yaml) = %q (nil %v), %v; want an empty, non-nil content", empty.Content, empty.Content == nil, err)
	}
	wantList := []ManifestInfo{
		{ClusterID: "c1", Folder: "manifests", FileName: "b.json", Source: "user", Size: 2, CreatedAt: t0, UpdatedAt: t0},
		{ClusterID: "c1", Folder: "manifests", FileName: "empty.yaml", Source: "user", Size: 0, CreatedAt: t0, UpdatedAt: t0},
		{ClusterID: "c1", Folder: "openshift", FileName: "99-a.yaml", Source: "user", Size: int64(len(binary)), CreatedAt: t0, UpdatedAt: t0},
	}
	if diff := cmp.Diff(wantList, listManifests(t, s, "c1")); diff != "" {
		t.Errorf("Manifests(c1) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantList, listManifests(t, s, "")); diff != "" {
		t.Errorf("Manifests(all) (-want +got):\n%s", diff)
	}
	if got := listManifests(t, s, "other"); len(got) != 0 {
		t.Errorf("Manifests(other) = %v, want none", got)
	}

	// The same file again leaves the row as it was; new content moves
	// UpdatedAt only.
	clock.Advance(time.Minute)
	mustUpdate(t, s, func(tx *Tx) error { return putManifest(tx, "c1", "openshift", "99-a.yaml", binary) })
	if m, _ := getManifest(t, s, "c1", "openshift", "99-a.yaml"); !m.UpdatedAt.Equal(t0) {
		t.Errorf("UpdatedAt after putting the same content = %v, want %v", m.UpdatedAt, t0)
	}
	t2 := clock.Advance(time.Minute)
	mustUpdate(t, s, func(tx *Tx) error { return putManifest(tx, "c1", "openshift", "99-a.yaml", "kind: Secret\n") })
	m, _ := getManifest(t, s, "c1", "openshift", "99-a.yaml")
	if string(m.Content) != "kind: Secret\n" || !m.CreatedAt.Equal(t0) || !m.UpdatedAt.Equal(t2) {
		t.Errorf("after new content: %q created %v updated %v; want kind: Secret, %v, %v", m.Content, m.CreatedAt, m.UpdatedAt, t0, t2)
	}

	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.DeleteManifest("c1", "manifests", "b.json"); err != nil {
			return err
		}
		if err := tx.DeleteManifest("c1", "manifests", "b.json"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteManifest err = %v, want ErrNotFound", err)
		}
		return nil
	})
	if _, err := getManifest(t, s, "c1", "manifests", "b.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Manifest(deleted) err = %v, want ErrNotFound", err)
	}
}

func TestMoveManifest(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seed(t, s)
	t0 := clock.Now()
	mustUpdate(t, s, func(tx *Tx) error {
		if err := putManifest(tx, "c1", "manifests", "a.yaml", "a: 1\n"); err != nil {
			return err
		}
		return putManifest(tx, "c1", "openshift", "b.yaml", "b: 1\n")
	})
	t1 := clock.Advance(time.Minute)
	mustUpdate(t, s, func(tx *Tx) error {
		// Written and moved in one transaction: the move sees the write.
		if err := putManifest(tx, "c1", "manifests", "a.yaml", "a: 2\n"); err != nil {
			return err
		}
		return tx.MoveManifest("c1", "manifests", "a.yaml", "openshift", "b.yaml")
	})
	want := []ManifestInfo{{ClusterID: "c1", Folder: "openshift", FileName: "b.yaml", Source: "user", Size: 5, CreatedAt: t0, UpdatedAt: t1}}
	if diff := cmp.Diff(want, listManifests(t, s, "c1")); diff != "" {
		t.Errorf("after moving a.yaml onto b.yaml (-want +got):\n%s", diff)
	}
	if m, _ := getManifest(t, s, "c1", "openshift", "b.yaml"); string(m.Content) != "a: 2\n" {
		t.Errorf("b.yaml = %q after the move, want a.yaml's content", m.Content)
	}
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.MoveManifest("c1", "manifests", "a.yaml", "manifests", "c.yaml"); !errors.Is(err, ErrNotFound) {
			t.Errorf("MoveManifest(missing) err = %v, want ErrNotFound", err)
		}
		if err := tx.MoveManifest("c1", "manifests", "a.yaml", "manifests", "a.yaml"); !errors.Is(err, ErrNotFound) {
			t.Errorf("MoveManifest(missing onto itself) err = %v, want ErrNotFound", err)
		}
		return tx.MoveManifest("c1", "openshift", "b.yaml", "openshift", "b.yaml")
	})
	if diff := cmp.Diff(want, listManifests(t, s, "c1")); diff != "" {
		t.Errorf("after moving b.yaml onto itself (-want +got):\n%s", diff)
	}
	err := s.View(context.Background(), func(tx *Tx) error {
		return tx.MoveManifest("c1", "openshift", "b.yaml", "openshift", "b.yaml")
	})
	if !errors.Is(err, ErrReadOnly) {
		t.Errorf("MoveManifest onto itself in View = %v, want ErrReadOnly", err)
	}
}

func TestManifestsGoWithTheirCluster(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s)
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutCluster(Cluster{ID: "c2", Status: "ready", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		for _, c := range []string{"c1", "c2"} {
			if err := putManifest(tx, c, "openshift", "x.yaml", "x: 1\n"); err != nil {
				return err
			}
		}
		return nil
	})
	mustUpdate(t, s, func(tx *Tx) error { return tx.DeleteCluster("c1") })
	got := listManifests(t, s, "")
	if len(got) != 1 || got[0].ClusterID != "c2" {
		t.Errorf("manifests after deleting c1 = %+v, want only c2's", got)
	}
	err := s.Update(context.Background(), func(tx *Tx) error { return putManifest(tx, "nope", "manifests", "a.yaml", "a: 1\n") })
	if !errors.Is(err, ErrConflict) {
		t.Errorf("PutManifest for a missing cluster = %v, want ErrConflict", err)
	}
}

// TestManifestsMigrationOnOldStore: a file made by a binary that knew only
// 0001 gains the manifests table, keeps its rows, and the new table's
// foreign key and cascade work on them.
func TestManifestsMigrationOnOldStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	old := baseMigrations(t)
	delete(old, "0002_manifests.sql")
	s, err := openFS(t, path, old)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s, "h1")
	if tableExists(t, s, "manifests") {
		t.Fatal("manifests exists before 0002")
	}
	s.Close()

	s, err = Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("Open with 0002: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if diff := cmp.Diff(baseApplied(t), applied(t, s)); diff != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", diff)
	}
	mustUpdate(t, s, func(tx *Tx) error { return putManifest(tx, "c1", "openshift", "a.yaml", "a: 1\n") })
	if got := listManifests(t, s, "c1"); len(got) != 1 {
		t.Errorf("manifests of the old cluster = %v, want the one put", got)
	}
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Host("ie1", "h1"); err != nil {
			t.Errorf("host of the old file: %v", err)
		}
		return nil
	})
	mustUpdate(t, s, func(tx *Tx) error { return tx.DeleteCluster("c1") })
	if got := listManifests(t, s, ""); len(got) != 0 {
		t.Errorf("manifests after deleting the old cluster = %v, want none", got)
	}
}
