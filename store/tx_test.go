package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

var errBoom = errors.New("boom")

// A status change and the event that reports it commit together or not at
// all.
func TestUpdateRollsBackOnError(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s, "h1")
	err := s.Update(context.Background(), func(tx *Tx) error {
		h, err := tx.Host("ie1", "h1")
		if err != nil {
			return err
		}
		h.Status = "installing"
		if err := tx.PutHost(h); err != nil {
			return err
		}
		if _, err := tx.AddEvent(Event{Severity: "info", Message: "Host h1: updated status from known to installing", ClusterID: "c1", HostID: "h1"}); err != nil {
			return err
		}
		if err := tx.PutCluster(Cluster{ID: "c1", Status: "installing", Doc: []byte(`{}`)}); err != nil {
			return err
		}
		// A failed statement inside the transaction does not end it...
		if err := tx.PutHost(Host{ID: "h2", InfraEnvID: "ghost", Status: "known"}); !errors.Is(err, ErrConflict) {
			t.Errorf("PutHost(unknown infra-env) err = %v, want ErrConflict", err)
		}
		// ...but the error returned from fn undoes everything.
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update err = %v, want fn's error", err)
	}
	assertUntouched(t, s)
}

func TestUpdateRollsBackOnPanic(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s, "h1")
	func() {
		defer func() {
			if r := recover(); r != errBoom {
				t.Errorf("recovered %v, want the panic to pass through", r)
			}
		}()
		s.Update(context.Background(), func(tx *Tx) error {
			if err := tx.PutCluster(Cluster{ID: "c1", Status: "installing", Doc: []byte(`{}`)}); err != nil {
				return err
			}
			tx.AddEvent(Event{Severity: "info", Message: "x", ClusterID: "c1"})
			panic(errBoom)
		})
	}()
	assertUntouched(t, s)
	// The writer connection was released: another Update goes through.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Update(ctx, func(tx *Tx) error { return tx.PutCluster(Cluster{ID: "c2", Status: "ready"}) }); err != nil {
		t.Errorf("Update after a panicking one: %v", err)
	}
}

func assertUntouched(t *testing.T, s *Store) {
	t.Helper()
	mustView(t, s, func(tx *Tx) error {
		h, err := tx.Host("ie1", "h1")
		if err != nil {
			return err
		}
		if h.Status != "known" {
			t.Errorf("host status = %q after a rolled-back Update, want known", h.Status)
		}
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		if c.Status != "insufficient" {
			t.Errorf("cluster status = %q after a rolled-back Update, want insufficient", c.Status)
		}
		_, total, err := tx.EventCounts(EventFilter{})
		if err != nil {
			return err
		}
		if total != 0 {
			t.Errorf("%d events after a rolled-back Update, want 0", total)
		}
		return nil
	})
}

func TestViewIsReadOnly(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s, "h1")
	writes := []struct {
		name string
		fn   func(tx *Tx) error
	}{
		{"PutCluster", func(tx *Tx) error { return tx.PutCluster(Cluster{ID: "c9", Status: "ready"}) }},
		{"DeleteCluster", func(tx *Tx) error { return tx.DeleteCluster("c1") }},
		{"PutInfraEnv", func(tx *Tx) error { return tx.PutInfraEnv(InfraEnv{ID: "ie9"}) }},
		{"DeleteInfraEnv", func(tx *Tx) error { return tx.DeleteInfraEnv("ie1") }},
		{"PutHost", func(tx *Tx) error { return tx.PutHost(Host{ID: "h9", InfraEnvID: "ie1", Status: "known"}) }},
		{"DeleteHost", func(tx *Tx) error { return tx.DeleteHost("ie1", "h1") }},
		{"AddEvent", func(tx *Tx) error { _, err := tx.AddEvent(Event{Severity: "info", Message: "m"}); return err }},
		{"PutStep", func(tx *Tx) error {
			return tx.PutStep(Step{InfraEnvID: "ie1", HostID: "h1", StepID: "s", StepType: "x"})
		}},
		{"DeleteStep", func(tx *Tx) error { return tx.DeleteStep("ie1", "h1", "s") }},
		{"DeleteSteps", func(tx *Tx) error { return tx.DeleteSteps("ie1", "h1") }},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			err := s.View(context.Background(), w.fn)
			if !errors.Is(err, ErrReadOnly) {
				t.Errorf("%s in View: err = %v, want ErrReadOnly", w.name, err)
			}
		})
	}
	// Below Tx's own check, the reader connections refuse writes as well.
	err := s.View(context.Background(), func(tx *Tx) error {
		_, err := tx.tx.Exec(`DELETE FROM hosts`)
		return err
	})
	if err == nil {
		t.Error("raw DELETE through a View connection succeeded, want query_only to refuse it")
	}
	assertUntouched(t, s)
}

func TestClockIsInjected(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seed(t, s, "h1")
	want := clock.Advance(42 * time.Hour)
	mustUpdate(t, s, func(tx *Tx) error {
		if !tx.Now().Equal(want) {
			t.Errorf("tx.Now() = %v, want the injected clock's %v", tx.Now(), want)
		}
		clock.Advance(time.Hour) // a transaction keeps the time it began with
		if err := tx.PutCluster(Cluster{ID: "c2", Status: "ready"}); err != nil {
			return err
		}
		if err := tx.PutStep(Step{InfraEnvID: "ie1", HostID: "h1", StepID: "s1", StepType: "inventory"}); err != nil {
			return err
		}
		_, err := tx.AddEvent(Event{Severity: "info", Message: "m"})
		return err
	})
	mustView(t, s, func(tx *Tx) error {
		c, err := tx.Cluster("c2")
		if err != nil {
			return err
		}
		steps, err := tx.Steps("ie1", "h1")
		if err != nil {
			return err
		}
		events, err := tx.Events(EventFilter{})
		if err != nil {
			return err
		}
		for name, got := range map[string]time.Time{
			"cluster CreatedAt":       c.CreatedAt,
			"cluster UpdatedAt":       c.UpdatedAt,
			"cluster StatusUpdatedAt": c.StatusUpdatedAt,
			"step IssuedAt":           steps[0].IssuedAt,
			"event Time":              events[0].Time,
		} {
			if !got.Equal(want) {
				t.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		return nil
	})
}

func TestUpdateHonoursContext(t *testing.T) {
	s := openTest(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Update(ctx, func(tx *Tx) error { return tx.PutCluster(Cluster{ID: "c1", Status: "ready"}) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a canceled context: err = %v, want context.Canceled", err)
	}
	mustView(t, s, func(tx *Tx) error {
		if cs, _ := tx.Clusters(); len(cs) != 0 {
			t.Errorf("clusters after a canceled Update = %d, want 0", len(cs))
		}
		return nil
	})
}

func TestTimeOutOfRange(t *testing.T) {
	s := openTest(t, Options{})
	seed(t, s)
	err := s.Update(context.Background(), func(tx *Tx) error {
		return tx.PutHost(Host{ID: "h1", InfraEnvID: "ie1", Status: "known", CheckedInAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)})
	})
	if err == nil || !strings.Contains(err.Error(), "put host ie1/h1") {
		t.Errorf("PutHost with a time in 2300: err = %v, want an error naming the host", err)
	}
}

func TestSizeBytes(t *testing.T) {
	s := openTest(t, Options{})
	before, err := s.SizeBytes()
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 {
		t.Errorf("SizeBytes of a fresh store = %d, want > 0", before)
	}
	seed(t, s)
	doc := []byte(`{"pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	mustUpdate(t, s, func(tx *Tx) error {
		for i := range 16 {
			if err := tx.PutHost(Host{ID: string(rune('a' + i)), InfraEnvID: "ie1", Status: "known", Doc: doc}); err != nil {
				return err
			}
		}
		return nil
	})
	after, err := s.SizeBytes()
	if err != nil {
		t.Fatal(err)
	}
	if after < before+16*64<<10 {
		t.Errorf("SizeBytes after writing 1 MiB = %d, want at least %d", after, before+16*64<<10)
	}
}
