package store

import (
	"errors"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHostConnectivity(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s, "h1", "h2", "h3")
	mustUpdate(t, s, func(tx *Tx) error {
		for _, c := range []HostConnectivity{{"ie1", "h1", `{"a":1}`}, {"ie1", "h2", `{"b":2}`}, {"ie1", "h1", `{"a":3}`}} {
			if err := tx.PutHostConnectivity(c.InfraEnvID, c.HostID, c.Report); err != nil {
				return err
			}
		}
		if err := tx.PutHostConnectivity("ie1", "ghost", `{}`); !errors.Is(err, ErrConflict) {
			t.Errorf("PutHostConnectivity for an unknown host err = %v, want ErrConflict", err)
		}
		// A host's doc written again leaves its report alone.
		return tx.PutHost(Host{ID: "h1", InfraEnvID: "ie1", ClusterID: "c1", Status: "known", Doc: []byte(`{}`)})
	})
	read := func(ie, id string) string {
		t.Helper()
		var got string
		mustView(t, s, func(tx *Tx) (err error) { got, err = tx.HostConnectivityReport(ie, id); return err })
		return got
	}
	list := func(f HostFilter) []HostConnectivity {
		t.Helper()
		var got []HostConnectivity
		mustView(t, s, func(tx *Tx) (err error) { got, err = tx.HostsConnectivity(f); return err })
		sort.Slice(got, func(i, j int) bool { return got[i].HostID < got[j].HostID })
		return got
	}
	for _, c := range []struct{ id, want string }{{"h1", `{"a":3}`}, {"h2", `{"b":2}`}, {"h3", ""}, {"ghost", ""}} {
		if got := read("ie1", c.id); got != c.want {
			t.Errorf("HostConnectivityReport(ie1, %s) = %q, want %q", c.id, got, c.want)
		}
	}
	want := []HostConnectivity{{"ie1", "h1", `{"a":3}`}, {"ie1", "h2", `{"b":2}`}}
	for _, f := range []HostFilter{{}, {ClusterID: "c1"}, {InfraEnvID: "ie1"}} {
		if diff := cmp.Diff(want, list(f)); diff != "" {
			t.Errorf("HostsConnectivity(%+v) (-want +got):\n%s", f, diff)
		}
	}
	if got := list(HostFilter{ClusterID: "other"}); len(got) != 0 {
		t.Errorf("HostsConnectivity(another cluster) = %v, want none", got)
	}
	// "" deletes a report; a deleted host takes its report with it.
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutHostConnectivity("ie1", "h2", ""); err != nil {
			return err
		}
		return tx.DeleteHost("ie1", "h1")
	})
	if got := list(HostFilter{}); len(got) != 0 {
		t.Errorf("after deleting h2's report and host h1: %v, want none", got)
	}
}

// TestMigrateConnectivityOutOfDocs: reports kept in host docs by an older
// schema move to host_connectivity, and the docs lose them.
func TestMigrateConnectivityOutOfDocs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	old := baseMigrations(t)
	delete(old, "0004_host_connectivity.sql")
	s, err := openFS(t, path, old)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s)
	mustUpdate(t, s, func(tx *Tx) error {
		for _, h := range []Host{
			{ID: "h1", Doc: []byte(`{"id":"h1","connectivity":"{\"remote_hosts\":[]}","status":"known"}`)},
			{ID: "h2", Doc: []byte(`{"id":"h2","connectivity":""}`)},
			{ID: "h3", Doc: []byte(`{"id":"h3"}`)},
		} {
			h.InfraEnvID, h.ClusterID, h.Status = "ie1", "c1", "known"
			if err := tx.PutHost(h); err != nil {
				return err
			}
		}
		return nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = openFS(t, path, baseMigrations(t))
	if err != nil {
		t.Fatal(err)
	}
	mustView(t, s, func(tx *Tx) error {
		got, err := tx.HostsConnectivity(HostFilter{})
		if err != nil {
			return err
		}
		if want := []HostConnectivity{{"ie1", "h1", `{"remote_hosts":[]}`}}; !cmp.Equal(want, got) {
			t.Errorf("moved reports = %v, want %v", got, want)
		}
		hs, err := tx.Hosts(HostFilter{})
		if err != nil {
			return err
		}
		docs := map[string]string{}
		for _, h := range hs {
			docs[h.ID] = string(h.Doc)
		}
		want := map[string]string{"h1": `{"id":"h1","status":"known"}`, "h2": `{"id":"h2"}`, "h3": `{"id":"h3"}`}
		if diff := cmp.Diff(want, docs); diff != "" {
			t.Errorf("host docs after the migration (-want +got):\n%s", diff)
		}
		return nil
	})
}
