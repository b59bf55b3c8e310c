package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// hostDoc is a JSON document of about 4 KiB, the size of a host with its
// inventory.
var hostDoc = []byte(`{"inventory":"` + strings.Repeat("x", 4000) + `"}`)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s := openTest(b, Options{})
	mustUpdate(b, s, func(tx *Tx) error {
		for _, c := range []string{"c1", "c2"} {
			if err := tx.PutCluster(Cluster{ID: c, Status: "ready", Doc: []byte(`{}`)}); err != nil {
				return err
			}
			if err := tx.PutInfraEnv(InfraEnv{ID: "ie-" + c, ClusterID: c, Doc: []byte(`{}`)}); err != nil {
				return err
			}
		}
		return nil
	})
	return s
}

func addHosts(b *testing.B, s *Store, cluster string, n int) {
	b.Helper()
	mustUpdate(b, s, func(tx *Tx) error {
		for i := range n {
			h := Host{ID: fmt.Sprintf("%s-h%04d", cluster, i), InfraEnvID: "ie-" + cluster, ClusterID: cluster, Status: "known", Doc: hostDoc}
			if err := tx.PutHost(h); err != nil {
				return err
			}
		}
		return nil
	})
}

// One Update (BEGIN IMMEDIATE, upsert, COMMIT with the WAL fsync) per op,
// over 1,000 host ids: inserts first, then replacements.
func BenchmarkPutHost(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		h := Host{ID: fmt.Sprintf("h%04d", i%1000), InfraEnvID: "ie-c1", ClusterID: "c1", Status: "known", Doc: hostDoc}
		if err := s.Update(ctx, func(tx *Tx) error { return tx.PutHost(h) }); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// The service's usual write: read a host, change its status, store it and
// the event that reports it, in one transaction.
func BenchmarkUpdateHostWithEvent(b *testing.B) {
	s := benchStore(b)
	addHosts(b, s, "c1", 100)
	ctx := context.Background()
	statuses := []string{"known", "insufficient"}
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("c1-h%04d", i%100)
		err := s.Update(ctx, func(tx *Tx) error {
			h, err := tx.Host("ie-c1", id)
			if err != nil {
				return err
			}
			from := h.Status
			h.Status = statuses[i%2]
			if err := tx.PutHost(h); err != nil {
				return err
			}
			_, err = tx.AddEvent(Event{Name: "host_status_updated", Severity: "info", Category: "user",
				Message: "Host " + id + ": updated status from " + from + " to " + h.Status, ClusterID: "c1", HostID: id, InfraEnvID: "ie-c1"})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// 10,000 events over 5 clusters and 50 hosts; each op lists 100 of one
// cluster's events in a View.
func BenchmarkEventsList(b *testing.B) {
	s := benchStore(b)
	mustUpdate(b, s, func(tx *Tx) error {
		for i := range 10000 {
			e := Event{Name: "host_status_updated", Severity: []string{"info", "info", "warning", "error"}[i%4], Category: "user",
				Message:   fmt.Sprintf("Host h%d: updated status from known to insufficient (event %d)", i%50, i),
				ClusterID: fmt.Sprintf("c%d", i%5+1), HostID: fmt.Sprintf("h%d", i%50), InfraEnvID: "ie-c1", Props: []byte(`{"k":"v"}`)}
			if _, err := tx.AddEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	ctx := context.Background()
	for _, bb := range []struct {
		name string
		f    EventFilter
	}{
		{"ascending", EventFilter{ClusterID: "c1", Limit: 100}},
		{"descending", EventFilter{ClusterID: "c1", Limit: 100, Descending: true}},
		{"page50", EventFilter{ClusterID: "c1", Limit: 100, Offset: 1000}},
		{"hosts+severity", EventFilter{ClusterID: "c1", HostIDs: []string{"h0", "h10"}, Severities: []string{"info"}, Limit: 100}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				err := s.View(ctx, func(tx *Tx) error {
					es, err := tx.Events(bb.f)
					if err == nil && len(es) == 0 {
						err = fmt.Errorf("no events")
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("counts", func(b *testing.B) {
		for b.Loop() {
			err := s.View(ctx, func(tx *Tx) error {
				_, _, err := tx.EventCounts(EventFilter{ClusterID: "c1"})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// 1,000 hosts of about 4 KiB in the cluster asked for, 1,000 in another;
// each op reads the first cluster's hosts in a View.
func BenchmarkHostsByCluster(b *testing.B) {
	s := benchStore(b)
	addHosts(b, s, "c1", 1000)
	addHosts(b, s, "c2", 1000)
	ctx := context.Background()
	for b.Loop() {
		err := s.View(ctx, func(tx *Tx) error {
			hs, err := tx.Hosts(HostFilter{ClusterID: "c1"})
			if err == nil && len(hs) != 1000 {
				err = fmt.Errorf("got %d hosts, want 1000", len(hs))
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// One host by key in a View: the cost of a read transaction.
func BenchmarkGetHost(b *testing.B) {
	s := benchStore(b)
	addHosts(b, s, "c1", 100)
	ctx := context.Background()
	for b.Loop() {
		err := s.View(ctx, func(tx *Tx) error {
			_, err := tx.Host("ie-c1", "c1-h0042")
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
