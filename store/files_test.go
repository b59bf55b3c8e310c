package store

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClusterFiles(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s)
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.ReplaceClusterFiles("c1", map[string][]byte{
			"master.ign": []byte(`{"ignition":{"version":"3.4.0"}}`), "hosts/h1.ign": []byte("x"), "empty": nil,
		})
	})
	var names []string
	var master, empty []byte
	mustView(t, s, func(tx *Tx) (err error) {
		if names, err = tx.ClusterFileNames("c1"); err != nil {
			return err
		}
		if master, err = tx.ClusterFile("c1", "master.ign"); err != nil {
			return err
		}
		empty, err = tx.ClusterFile("c1", "empty")
		return err
	})
	if diff := cmp.Diff([]string{"empty", "hosts/h1.ign", "master.ign"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if string(master) != `{"ignition":{"version":"3.4.0"}}` || empty == nil || len(empty) != 0 {
		t.Errorf("content: master %q, empty %q (nil %v)", master, empty, empty == nil)
	}

	// A new preparation's set replaces the old one whole; one file can be
	// added to it.
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.ReplaceClusterFiles("c1", map[string][]byte{"worker.ign": []byte("w")}); err != nil {
			return err
		}
		return tx.PutClusterFile("c1", "kubeconfig", []byte("k"))
	})
	mustView(t, s, func(tx *Tx) (err error) {
		names, err = tx.ClusterFileNames("c1")
		return err
	})
	if diff := cmp.Diff([]string{"kubeconfig", "worker.ign"}, names); diff != "" {
		t.Errorf("after replace (-want +got):\n%s", diff)
	}
	err := s.View(t.Context(), func(tx *Tx) error {
		_, err := tx.ClusterFile("c1", "master.ign")
		return err
	})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("replaced file: err = %v, want ErrNotFound", err)
	}

	// Files go with their cluster.
	mustUpdate(t, s, func(tx *Tx) error { return tx.DeleteCluster("c1") })
	mustView(t, s, func(tx *Tx) (err error) {
		names, err = tx.ClusterFileNames("c1")
		return err
	})
	if len(names) != 0 {
		t.Errorf("files of a deleted cluster: %q", names)
	}
}
