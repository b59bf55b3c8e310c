package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Writers and readers at once: no SQLITE_BUSY, no lost update, and every
// View sees a consistent snapshot (a host's status and its event commit
// together, so a reader never sees more hosts "known" than events).
func TestConcurrentUpdateAndView(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s)
	const writers, perWriter, readers = 8, 30, 4
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	done := make(chan struct{})

	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				id := fmt.Sprintf("w%d-h%d", w, i)
				err := s.Update(ctx, func(tx *Tx) error {
					if err := tx.PutHost(Host{ID: id, InfraEnvID: "ie1", ClusterID: "c1", Status: "known", Doc: []byte(`{}`)}); err != nil {
						return err
					}
					// A read-modify-write on one shared row: lost updates
					// would show in the final counter.
					c, err := tx.Cluster("c1")
					if err != nil {
						return err
					}
					var n int
					fmt.Sscanf(c.StatusInfo, "%d", &n)
					c.StatusInfo = fmt.Sprint(n + 1)
					if err := tx.PutCluster(c); err != nil {
						return err
					}
					_, err = tx.AddEvent(Event{Severity: "info", Message: "registered " + id, ClusterID: "c1", HostID: id})
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, update %d: %w", w, i, err)
					return
				}
			}
		}()
	}

	var rwg sync.WaitGroup
	for r := range readers {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for views := 0; ; views++ {
				select {
				case <-done:
					if views == 0 {
						errs <- fmt.Errorf("reader %d ran no View", r)
					}
					return
				default:
				}
				err := s.View(ctx, func(tx *Tx) error {
					hosts, err := tx.Hosts(HostFilter{ClusterID: "c1"})
					if err != nil {
						return err
					}
					_, total, err := tx.EventCounts(EventFilter{ClusterID: "c1"})
					if err != nil {
						return err
					}
					if len(hosts) != total {
						return fmt.Errorf("snapshot saw %d hosts but %d events", len(hosts), total)
					}
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
			}
		}()
	}

	wg.Wait()
	close(done)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	mustView(t, s, func(tx *Tx) error {
		hosts, err := tx.Hosts(HostFilter{ClusterID: "c1"})
		if err != nil {
			return err
		}
		if len(hosts) != writers*perWriter {
			t.Errorf("hosts = %d, want %d", len(hosts), writers*perWriter)
		}
		_, total, err := tx.EventCounts(EventFilter{})
		if err != nil {
			return err
		}
		if total != writers*perWriter {
			t.Errorf("events = %d, want %d", total, writers*perWriter)
		}
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		if want := fmt.Sprint(writers * perWriter); c.StatusInfo != want {
			t.Errorf("shared counter = %s, want %s (lost updates)", c.StatusInfo, want)
		}
		return nil
	})
}

// Two Stores on one file stand for two processes: their writers meet at the
// file lock, where BEGIN IMMEDIATE and busy_timeout make them wait, not fail.
func TestTwoStoresOneFile(t *testing.T) {
	path := t.TempDir() + "/shared.db"
	ctx := context.Background()
	var stores [2]*Store
	for i := range stores {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer s.Close()
		stores[i] = s
	}
	seed(t, stores[0])
	const perStore = 25
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for i, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perStore {
				err := s.Update(ctx, func(tx *Tx) error {
					c, err := tx.Cluster("c1")
					if err != nil {
						return err
					}
					var n int
					fmt.Sscanf(c.StatusInfo, "%d", &n)
					c.StatusInfo = fmt.Sprint(n + 1)
					return tx.PutCluster(c)
				})
				if err != nil {
					errs <- fmt.Errorf("store %d, update %d: %w", i, j, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mustView(t, stores[1], func(tx *Tx) error {
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		if want := fmt.Sprint(2 * perStore); c.StatusInfo != want {
			t.Errorf("counter = %s, want %s", c.StatusInfo, want)
		}
		return nil
	})
}
