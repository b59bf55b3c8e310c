package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFilesArePrivate: the database and its -wal and -shm files are the
// owner's alone: they hold the pull secret and the cluster's credentials.
func TestFilesArePrivate(t *testing.T) {
	s := openTest(t, Options{})
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.PutCluster(Cluster{ID: "c1", Status: "insufficient", Doc: []byte(`{"name":"one"}`)})
	})
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(s.path), "nodezero.db*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) < 2 {
		t.Fatalf("store files %q: want the database and its WAL", matches)
	}
	for _, p := range matches {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(p), perm)
		}
	}
}
