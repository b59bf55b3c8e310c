package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeClock is an Options.Now that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// openTest opens a store in a fresh temporary directory and closes it when
// the test ends.
func openTest(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "nodezero.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func mustUpdate(t testing.TB, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func mustView(t testing.TB, s *Store, fn func(tx *Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// seed writes one cluster "c1", infra-env "ie1" bound to it, and the given
// hosts in ie1 bound to c1, all with status "known".
func seed(t testing.TB, s *Store, hostIDs ...string) {
	t.Helper()
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutCluster(Cluster{ID: "c1", Status: "insufficient", Doc: []byte(`{"id":"c1"}`)}); err != nil {
			return err
		}
		if err := tx.PutInfraEnv(InfraEnv{ID: "ie1", ClusterID: "c1", Doc: []byte(`{"id":"ie1"}`)}); err != nil {
			return err
		}
		for _, id := range hostIDs {
			h := Host{ID: id, InfraEnvID: "ie1", ClusterID: "c1", Status: "known", Doc: []byte(`{"id":"` + id + `"}`)}
			if err := tx.PutHost(h); err != nil {
				return err
			}
		}
		return nil
	})
}
