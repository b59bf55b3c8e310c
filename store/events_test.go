package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// seedEvents adds a fixed set of events and returns the clock's time when
// they were added. Each event's Name says what it is.
func seedEvents(t *testing.T, s *Store, clock *fakeClock) time.Time {
	t.Helper()
	t0 := clock.Now()
	mustUpdate(t, s, func(tx *Tx) error {
		for _, e := range []Event{
			{Name: "c1", Severity: "info", Category: "user", Message: "Cluster created", ClusterID: "c1"},
			{Name: "c1-h1-warn", Severity: "warning", Category: "user", Message: "Host h1: validation has-inventory failed", ClusterID: "c1", HostID: "h1", InfraEnvID: "ie1"},
			{Name: "c1-h2-err", Severity: "error", Category: "user", Message: "Host H2: Install FAILED", ClusterID: "c1", HostID: "h2", InfraEnvID: "ie1"},
			{Name: "c1-h1-metric", Severity: "info", Category: "metrics", Message: "disk speed 10ms", ClusterID: "c1", HostID: "h1", InfraEnvID: "ie1"},
			{Name: "ie2-h9", Severity: "info", Category: "user", Message: "Host h9 registered", HostID: "h9", InfraEnvID: "ie2"},
			{Name: "ie2", Severity: "info", Category: "user", Message: "infra-env created 100%_done", InfraEnvID: "ie2"},
			{Name: "c2-crit", Severity: "critical", Category: "user", Message: "Cluster c2 lost", ClusterID: "c2"},
			// Added last but happened first: time orders before seq.
			{Name: "c1-early", Severity: "info", Category: "user", Message: "Cluster registered", ClusterID: "c1", Time: t0.Add(-time.Hour)},
		} {
			if _, err := tx.AddEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	clock.Advance(time.Second)
	mustUpdate(t, s, func(tx *Tx) error {
		_, err := tx.AddEvent(Event{Name: "c1-late", Severity: "info", Category: "user", Message: "Cluster ready", ClusterID: "c1"})
		return err
	})
	return t0
}

func eventNames(es []Event) []string {
	names := []string{}
	for _, e := range es {
		names = append(names, e.Name)
	}
	return names
}

func TestEventsFilterAndOrder(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seedEvents(t, s, clock)

	tests := []struct {
		name string
		f    EventFilter
		want []string
	}{
		{"all", EventFilter{}, []string{"c1-early", "c1", "c1-h1-warn", "c1-h2-err", "c1-h1-metric", "ie2-h9", "ie2", "c2-crit", "c1-late"}},
		{"cluster", EventFilter{ClusterID: "c1"}, []string{"c1-early", "c1", "c1-h1-warn", "c1-h2-err", "c1-h1-metric", "c1-late"}},
		{"cluster descending", EventFilter{ClusterID: "c1", Descending: true}, []string{"c1-late", "c1-h1-metric", "c1-h2-err", "c1-h1-warn", "c1", "c1-early"}},
		{"cluster limit", EventFilter{ClusterID: "c1", Limit: 2}, []string{"c1-early", "c1"}},
		{"cluster limit offset", EventFilter{ClusterID: "c1", Limit: 2, Offset: 2}, []string{"c1-h1-warn", "c1-h2-err"}},
		{"cluster offset only", EventFilter{ClusterID: "c1", Offset: 4}, []string{"c1-h1-metric", "c1-late"}},
		{"descending limit", EventFilter{ClusterID: "c1", Limit: 1, Descending: true}, []string{"c1-late"}},
		{"cluster level", EventFilter{ClusterID: "c1", ClusterLevel: true}, []string{"c1-early", "c1", "c1-late"}},
		{"hosts", EventFilter{HostIDs: []string{"h1", "h9"}}, []string{"c1-h1-warn", "c1-h1-metric", "ie2-h9"}},
		{"hosts or cluster level", EventFilter{ClusterID: "c1", HostIDs: []string{"h2"}, ClusterLevel: true}, []string{"c1-early", "c1", "c1-h2-err", "c1-late"}},
		{"infra-env", EventFilter{InfraEnvID: "ie2"}, []string{"ie2-h9", "ie2"}},
		{"severities", EventFilter{Severities: []string{"error", "critical"}}, []string{"c1-h2-err", "c2-crit"}},
		{"categories", EventFilter{Categories: []string{"metrics"}}, []string{"c1-h1-metric"}},
		{"message ignores case", EventFilter{Message: "install failed"}, []string{"c1-h2-err"}},
		{"message wildcards are literal", EventFilter{Message: "%_"}, []string{"ie2"}},
		{"message no match", EventFilter{Message: "nothing like this"}, []string{}},
		{"everything", EventFilter{ClusterID: "c1", HostIDs: []string{"h1"}, Severities: []string{"warning"}, Categories: []string{"user"}, Message: "inventory"}, []string{"c1-h1-warn"}},
		{"unknown cluster", EventFilter{ClusterID: "c9"}, []string{}},
	}
	mustView(t, s, func(tx *Tx) error {
		for _, tt := range tests {
			got, err := tx.Events(tt.f)
			if err != nil {
				t.Errorf("Events(%s): %v", tt.name, err)
				continue
			}
			if diff := cmp.Diff(tt.want, eventNames(got)); diff != "" {
				t.Errorf("Events(%s) (-want +got):\n%s", tt.name, diff)
			}
		}
		return nil
	})
}

func TestEventCounts(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	seedEvents(t, s, clock)
	tests := []struct {
		name       string
		f          EventFilter
		bySeverity map[string]int
		total      int
	}{
		{"all", EventFilter{}, map[string]int{"info": 6, "warning": 1, "error": 1, "critical": 1}, 9},
		{"cluster, paging ignored", EventFilter{ClusterID: "c1", Limit: 1, Offset: 3}, map[string]int{"info": 4, "warning": 1, "error": 1}, 6},
		{"severity filter counts only in total", EventFilter{ClusterID: "c1", Severities: []string{"warning", "error", "warning"}}, map[string]int{"info": 4, "warning": 1, "error": 1}, 2},
		{"cluster level", EventFilter{ClusterID: "c1", ClusterLevel: true}, map[string]int{"info": 3}, 3},
		{"nothing", EventFilter{ClusterID: "c9"}, map[string]int{}, 0},
	}
	mustView(t, s, func(tx *Tx) error {
		for _, tt := range tests {
			by, total, err := tx.EventCounts(tt.f)
			if err != nil {
				t.Errorf("EventCounts(%s): %v", tt.name, err)
				continue
			}
			if diff := cmp.Diff(tt.bySeverity, by); diff != "" {
				t.Errorf("EventCounts(%s) bySeverity (-want +got):\n%s", tt.name, diff)
			}
			if total != tt.total {
				t.Errorf("EventCounts(%s) total = %d, want %d", tt.name, total, tt.total)
			}
			// total is what Events returns without paging.
			unpaged := tt.f
			unpaged.Limit, unpaged.Offset = 0, 0
			es, err := tx.Events(unpaged)
			if err != nil {
				return err
			}
			if len(es) != total {
				t.Errorf("EventCounts(%s) total = %d, but Events lists %d", tt.name, total, len(es))
			}
		}
		return nil
	})
}

func TestAddEventRoundTrip(t *testing.T) {
	clock := newFakeClock()
	s := openTest(t, Options{Now: clock.Now})
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("CET", 3600))
	in := []Event{
		{Name: "host_status_updated", Severity: "info", Category: "user", Message: "Host h1: updated status from discovering to known",
			ClusterID: "c1", HostID: "h1", InfraEnvID: "ie1", RequestID: "req-1", Props: []byte(`{"src":"discovering"}`), Time: at},
		{Name: "no_props", Severity: "info", Message: "m"},
	}
	var seqs []int64
	mustUpdate(t, s, func(tx *Tx) error {
		for _, e := range in {
			seq, err := tx.AddEvent(e)
			if err != nil {
				return err
			}
			seqs = append(seqs, seq)
		}
		return nil
	})
	if len(seqs) != 2 || seqs[1] <= seqs[0] {
		t.Fatalf("sequence numbers %v, want strictly increasing", seqs)
	}
	want := []Event{in[0], in[1]} // March, then the clock's November
	want[0].Seq, want[0].Time = seqs[0], at.UTC()
	want[1].Seq, want[1].Time = seqs[1], clock.Now()
	mustView(t, s, func(tx *Tx) error {
		got, err := tx.Events(EventFilter{})
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Events after AddEvent (-want +got):\n%s", diff)
		}
		if got[0].Time.Location() != time.UTC {
			t.Errorf("event time location = %v, want UTC", got[1].Time.Location())
		}
		return nil
	})

	// Seq keeps growing across transactions.
	mustUpdate(t, s, func(tx *Tx) error {
		seq, err := tx.AddEvent(Event{Severity: "info", Message: "later"})
		if err != nil {
			return err
		}
		if seq <= seqs[1] {
			t.Errorf("seq in a later transaction = %d, want > %d", seq, seqs[1])
		}
		return nil
	})
}
