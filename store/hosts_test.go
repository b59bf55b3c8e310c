package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func hostIDs(hs []Host) []string {
	ids := []string{}
	for _, h := range hs {
		ids = append(ids, h.InfraEnvID+"/"+h.ID)
	}
	return ids
}

func TestHostCRUD(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seed(t, s) // c1, ie1 -> c1
	t0 := clock.Now()
	checkin := time.Date(2026, 11, 22, 9, 59, 0, 0, time.UTC)

	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.PutInfraEnv(InfraEnv{ID: "ie2", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		return tx.PutHost(Host{ID: "h1", InfraEnvID: "ie1", ClusterID: "c1", Status: "discovering",
			CheckedInAt: checkin, Doc: []byte(`{"inventory":"x"}`)})
	})
	t1 := clock.Advance(time.Second)
	mustUpdate(t, s, func(tx *Tx) error {
		// Same host id in another infra-env is another host.
		if err := tx.PutHost(Host{ID: "h1", InfraEnvID: "ie2", Status: "discovering-unbound", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		return tx.PutHost(Host{ID: "h2", InfraEnvID: "ie1", ClusterID: "c1", Status: "known", Doc: []byte(`{}`)})
	})
	t2 := clock.Advance(time.Second)
	mustUpdate(t, s, func(tx *Tx) error {
		h, err := tx.Host("ie1", "h1")
		if err != nil {
			return err
		}
		h.Status, h.StatusInfo, h.Doc = "known", "Host is ready to be installed", []byte(`{"inventory":"y"}`)
		return tx.PutHost(h)
	})

	mustView(t, s, func(tx *Tx) error {
		got, err := tx.Host("ie1", "h1")
		if err != nil {
			return err
		}
		want := Host{ID: "h1", InfraEnvID: "ie1", ClusterID: "c1", Status: "known", StatusInfo: "Host is ready to be installed",
			StatusUpdatedAt: t2, CheckedInAt: checkin, CreatedAt: t0, UpdatedAt: t2, Doc: []byte(`{"inventory":"y"}`)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Host(ie1, h1) (-want +got):\n%s", diff)
		}
		if _, err := tx.Host("ie2", "h2"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Host(ie2, h2) err = %v, want ErrNotFound", err)
		}

		filters := []struct {
			name string
			f    HostFilter
			want []string
		}{
			{"all", HostFilter{}, []string{"ie1/h1", "ie1/h2", "ie2/h1"}},
			{"cluster", HostFilter{ClusterID: "c1"}, []string{"ie1/h1", "ie1/h2"}},
			{"infra-env", HostFilter{InfraEnvID: "ie2"}, []string{"ie2/h1"}},
			{"both", HostFilter{InfraEnvID: "ie2", ClusterID: "c1"}, []string{}},
			{"unknown cluster", HostFilter{ClusterID: "c9"}, []string{}},
		}
		for _, f := range filters {
			hs, err := tx.Hosts(f.f)
			if err != nil {
				return err
			}
			// Registration order: h1 in ie1 at t0, then ie1/h2 and ie2/h1 at t1 (ties by key).
			if diff := cmp.Diff(f.want, hostIDs(hs)); diff != "" {
				t.Errorf("Hosts(%s) (-want +got):\n%s", f.name, diff)
			}
		}
		unbound, err := tx.Host("ie2", "h1")
		if err != nil {
			return err
		}
		if unbound.ClusterID != "" || !unbound.CreatedAt.Equal(t1) {
			t.Errorf("unbound host = cluster %q created %v, want \"\" and %v", unbound.ClusterID, unbound.CreatedAt, t1)
		}
		return nil
	})

	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.DeleteHost("ie1", "h1"); err != nil {
			return err
		}
		if err := tx.DeleteHost("ie1", "h1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteHost err = %v, want ErrNotFound", err)
		}
		if _, err := tx.Host("ie2", "h1"); err != nil {
			t.Errorf("the same id in another infra-env was deleted too: %v", err)
		}
		return nil
	})
}

func TestHostReferencesAreChecked(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s)
	tests := []struct {
		name string
		h    Host
	}{
		{"unknown infra-env", Host{ID: "h1", InfraEnvID: "ghost", Status: "known", Doc: []byte(`{}`)}},
		{"unknown cluster", Host{ID: "h1", InfraEnvID: "ie1", ClusterID: "ghost", Status: "known", Doc: []byte(`{}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Update(context.Background(), func(tx *Tx) error { return tx.PutHost(tt.h) })
			if !errors.Is(err, ErrConflict) {
				t.Errorf("PutHost(%+v) err = %v, want ErrConflict", tt.h, err)
			}
		})
	}
}

func TestSteps(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seed(t, s, "h1", "h2")
	t0 := clock.Now()
	early := t0.Add(-time.Hour)
	mustUpdate(t, s, func(tx *Tx) error {
		for _, st := range []Step{
			{InfraEnvID: "ie1", HostID: "h1", StepID: "inventory-1", StepType: "inventory", Args: []byte(`["a"]`)},
			{InfraEnvID: "ie1", HostID: "h1", StepID: "ntp-1", StepType: "ntp-synchronizer"},
			{InfraEnvID: "ie1", HostID: "h1", StepID: "old-1", StepType: "free-network-addresses", IssuedAt: early},
			{InfraEnvID: "ie1", HostID: "h2", StepID: "inventory-2", StepType: "inventory"},
		} {
			if err := tx.PutStep(st); err != nil {
				return err
			}
		}
		err := tx.PutStep(Step{InfraEnvID: "ie1", HostID: "ghost", StepID: "x", StepType: "inventory"})
		if !errors.Is(err, ErrConflict) {
			t.Errorf("PutStep for an unknown host err = %v, want ErrConflict", err)
		}
		return nil
	})
	mustView(t, s, func(tx *Tx) error {
		got, err := tx.Steps("ie1", "h1")
		if err != nil {
			return err
		}
		want := []Step{
			{InfraEnvID: "ie1", HostID: "h1", StepID: "old-1", StepType: "free-network-addresses", IssuedAt: early},
			{InfraEnvID: "ie1", HostID: "h1", StepID: "inventory-1", StepType: "inventory", Args: []byte(`["a"]`), IssuedAt: t0},
			{InfraEnvID: "ie1", HostID: "h1", StepID: "ntp-1", StepType: "ntp-synchronizer", IssuedAt: t0},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Steps(ie1, h1) (-want +got):\n%s", diff)
		}
		return nil
	})

	// Replacing a host keeps its steps (an upsert, not delete + insert).
	mustUpdate(t, s, func(tx *Tx) error {
		return tx.PutHost(Host{ID: "h1", InfraEnvID: "ie1", ClusterID: "c1", Status: "insufficient", Doc: []byte(`{}`)})
	})
	mustUpdate(t, s, func(tx *Tx) error {
		if err := tx.DeleteStep("ie1", "h1", "ntp-1"); err != nil {
			return err
		}
		if err := tx.DeleteStep("ie1", "h1", "ntp-1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second DeleteStep err = %v, want ErrNotFound", err)
		}
		got, err := tx.Steps("ie1", "h1")
		if err != nil {
			return err
		}
		if len(got) != 2 {
			t.Errorf("after PutHost and DeleteStep: %d steps, want 2", len(got))
		}
		if err := tx.DeleteSteps("ie1", "h1"); err != nil {
			return err
		}
		if err := tx.DeleteSteps("ie1", "h1"); err != nil {
			t.Errorf("DeleteSteps with none left: %v, want nil", err)
		}
		if got, _ := tx.Steps("ie1", "h1"); len(got) != 0 {
			t.Errorf("after DeleteSteps: %v, want none", got)
		}
		if got, _ := tx.Steps("ie1", "h2"); len(got) != 1 {
			t.Errorf("h2's steps after deleting h1's: %d, want 1", len(got))
		}
		return nil
	})
}
