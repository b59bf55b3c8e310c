package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClusterCRUD(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	t0 := clock.Now()

	mustUpdate(t, s, func(tx *Tx) error {
		if _, err := tx.Cluster("c1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Cluster(missing) err = %v, want ErrNotFound", err)
		}
		return tx.PutCluster(Cluster{ID: "c1", Status: "insufficient", StatusInfo: "need hosts", Doc: []byte(`{"name":"one"}`)})
	})
	t1 := clock.Advance(time.Minute)
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.PutCluster(Cluster{ID: "c2", Status: "ready", Doc: []byte(`{"name":"two"}`)})
	})

	// Same status: StatusUpdatedAt stays; CreatedAt stays; UpdatedAt moves.
	t2 := clock.Advance(time.Minute)
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.PutCluster(Cluster{ID: "c1", Status: "insufficient", StatusInfo: "still", Doc: []byte(`{"name":"one","v":2}`),
			StatusUpdatedAt: t2.Add(time.Hour), CreatedAt: t2.Add(time.Hour), UpdatedAt: t2.Add(time.Hour)}) // ignored
	})
	mustView(t, s, func(tx *Tx) error {
		got, err := tx.Clusters()
		if err != nil {
			return err
		}
		want := []Cluster{
			{ID: "c1", Status: "insufficient", StatusInfo: "still", StatusUpdatedAt: t0, CreatedAt: t0, UpdatedAt: t2, Doc: []byte(`{"name":"one","v":2}`)},
			{ID: "c2", Status: "ready", StatusUpdatedAt: t1, CreatedAt: t1, UpdatedAt: t1, Doc: []byte(`{"name":"two"}`)},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Clusters() (-want +got):\n%s", diff)
		}
		return nil
	})

	// New status: StatusUpdatedAt moves to Now, whatever the caller passed
	// (here the value it read back, the usual read-modify-write).
	t3 := clock.Advance(time.Minute)
	mustUpdate(t, s, func(tx *Tx) error {
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		c.Status = "ready"
		return tx.PutCluster(c)
	})
	mustView(t, s, func(tx *Tx) error {
		c1, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		if !c1.StatusUpdatedAt.Equal(t3) {
			t.Errorf("c1 StatusUpdatedAt after a status change = %v, want %v", c1.StatusUpdatedAt, t3)
		}
		if c1.CreatedAt.Location() != time.UTC {
			t.Errorf("CreatedAt location = %v, want UTC", c1.CreatedAt.Location())
		}
		return nil
	})

	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.DeleteCluster("c1"); err != nil {
			return err
		}
		if err := tx.DeleteCluster("c1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteCluster err = %v, want ErrNotFound", err)
		}
		return nil
	})
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Cluster("c1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Cluster(deleted) err = %v, want ErrNotFound", err)
		}
		return nil
	})
}

func TestInfraEnvCRUD(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	t0 := clock.Now()
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutCluster(Cluster{ID: "c1", Status: "ready", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		if err := tx.PutInfraEnv(InfraEnv{ID: "ie1", ClusterID: "c1", Doc: []byte(`{"a":1}`)}); err != nil {
			return err
		}
		return tx.PutInfraEnv(InfraEnv{ID: "ie0", Doc: []byte(`{"late":true}`)})
	})
	t1 := clock.Advance(time.Second)
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.PutInfraEnv(InfraEnv{ID: "ie0", ClusterID: "c1", Doc: []byte(`{"bound":true}`)})
	})
	mustView(t, s, func(tx *Tx) error {
		got, err := tx.InfraEnvs()
		if err != nil {
			return err
		}
		want := []InfraEnv{
			{ID: "ie0", ClusterID: "c1", CreatedAt: t0, UpdatedAt: t1, Doc: []byte(`{"bound":true}`)},
			{ID: "ie1", ClusterID: "c1", CreatedAt: t0, UpdatedAt: t0, Doc: []byte(`{"a":1}`)},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("InfraEnvs() (-want +got):\n%s", diff)
		}
		one, err := tx.InfraEnv("ie1")
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want[1], one); diff != "" {
			t.Errorf("InfraEnv(ie1) (-want +got):\n%s", diff)
		}
		if _, err := tx.InfraEnv("nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("InfraEnv(missing) err = %v, want ErrNotFound", err)
		}
		return nil
	})
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.DeleteInfraEnv("ie0"); err != nil {
			return err
		}
		if err := tx.DeleteInfraEnv("ie0"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteInfraEnv err = %v, want ErrNotFound", err)
		}
		return nil
	})
}

func TestInfraEnvUnknownClusterIsConflict(t *testing.T) {
	s := openTest(t, Options{})
	err := s.Update(context.Background(), func(tx *Tx) error {
		return tx.PutInfraEnv(InfraEnv{ID: "ie1", ClusterID: "ghost", Doc: []byte(`{}`)})
	})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("PutInfraEnv with an unknown cluster: err = %v, want ErrConflict", err)
	}
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.InfraEnv("ie1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("InfraEnv after the failed put: err = %v, want ErrNotFound", err)
		}
		return nil
	})
}

// Deleting a cluster deletes its hosts (and their steps) and unbinds its
// infra-envs; events stay.
func TestDeleteClusterCascade(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s, "h1", "h2")
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutInfraEnv(InfraEnv{ID: "ie2", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		// A host of another infra-env, not bound: must survive.
		if err := tx.PutHost(Host{ID: "h3", InfraEnvID: "ie2", Status: "known", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		if err := tx.PutStep(Step{InfraEnvID: "ie1", HostID: "h1", StepID: "s1", StepType: "inventory"}); err != nil {
			return err
		}
		_, err := tx.AddEvent(Event{Severity: "info", Message: "m", ClusterID: "c1", HostID: "h1"})
		return err
	})
	mustUpdate(t, s, func(tx *Tx) error { return tx.DeleteCluster("c1") })
	mustView(t, s, func(tx *Tx) error {
		hosts, err := tx.Hosts(HostFilter{})
		if err != nil {
			return err
		}
		var ids []string
		for _, h := range hosts {
			ids = append(ids, h.ID)
		}
		if diff := cmp.Diff([]string{"h3"}, ids); diff != "" {
			t.Errorf("hosts after DeleteCluster (-want +got):\n%s", diff)
		}
		ie, err := tx.InfraEnv("ie1")
		if err != nil {
			t.Errorf("infra-env ie1 after DeleteCluster: %v, want it kept", err)
		} else if ie.ClusterID != "" {
			t.Errorf("ie1.ClusterID after DeleteCluster = %q, want \"\"", ie.ClusterID)
		}
		steps, err := tx.Steps("ie1", "h1")
		if err != nil {
			return err
		}
		if len(steps) != 0 {
			t.Errorf("steps of a deleted host = %v, want none", steps)
		}
		events, err := tx.Events(EventFilter{ClusterID: "c1"})
		if err != nil {
			return err
		}
		if len(events) != 1 {
			t.Errorf("events of a deleted cluster = %d, want 1", len(events))
		}
		return nil
	})
}

func TestDeleteInfraEnvCascade(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s, "h1")
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutStep(Step{InfraEnvID: "ie1", HostID: "h1", StepID: "s1", StepType: "inventory"}); err != nil {
			return err
		}
		return tx.DeleteInfraEnv("ie1")
	})
	mustView(t, s, func(tx *Tx) error {
		if _, err := tx.Host("ie1", "h1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("host of a deleted infra-env: err = %v, want ErrNotFound", err)
		}
		if _, err := tx.Cluster("c1"); err != nil {
			t.Errorf("cluster after deleting its infra-env: %v, want it kept", err)
		}
		var n int
		if err := tx.tx.QueryRow(`SELECT count(*) FROM steps`).Scan(&n); err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("%d steps left after their infra-env was deleted, want 0", n)
		}
		return nil
	})
}
