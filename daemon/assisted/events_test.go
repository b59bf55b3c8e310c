package assisted

import (
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

var (
	hostStatusRE    = regexp.MustCompile(`^Host (\S+): updated status from (\S+) to (\S+) \((.*)\)$`)
	clusterStatusRE = regexp.MustCompile(`^Updated status of the cluster to (\S+)$`)
)

// TestStatusEvents: every status change has its event, worded as
// assisted's host_status_updated and cluster_status_updated, with the
// severity of the new status: replaying the events from the first status
// gives the current one.
func TestStatusEvents(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	small := e.addHost(ie, hwInventory(t, "undersized", "small", "192.168.111.30/24"))
	e.clock.Advance(4 * time.Minute)
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range hosts {
		e.checkIn(ie, id)
	}
	if err := e.s.DeregisterHost(e.ctx, ie, small); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.CancelInstallation(e.ctx, clusterID); err != nil {
		t.Fatal(err)
	}

	severity := map[wire.HostStatus]wire.EventSeverity{
		wire.HostStatusInsufficient: "warning", wire.HostStatusDisconnected: "warning", wire.HostStatusError: "error",
	}
	for _, id := range append(hosts, small) {
		status := "discovering"
		changes := 0
		for _, ev := range e.events(EventsQuery{HostIDs: []string{id}}) {
			if ev.Name != "host_status_updated" {
				continue
			}
			m := hostStatusRE.FindStringSubmatch(ev.Message)
			if m == nil {
				t.Errorf("host_status_updated message %q is not assisted's wording", ev.Message)
				continue
			}
			if m[2] != status {
				t.Errorf("host %s: event %q starts from %s, but the host was %s", m[1], ev.Message, m[2], status)
			}
			status = m[3]
			changes++
			want := severity[wire.HostStatus(status)]
			if want == "" {
				want = "info"
			}
			if ev.Severity != want || deref(ev.ClusterID) != clusterID || deref(ev.InfraEnvID) != ie {
				t.Errorf("event %q: severity %s cluster %s infra-env %s; want %s %s %s", ev.Message, ev.Severity, deref(ev.ClusterID), deref(ev.InfraEnvID), want, clusterID, ie)
			}
		}
		if id == small {
			if status != "disconnected" {
				t.Errorf("deregistered host's events end at %s, want disconnected (then it was deregistered)", status)
			}
			continue
		}
		if h := e.host(ie, id); string(h.Status) != status || changes < 5 {
			t.Errorf("host %s: events replay to %s in %d changes, host is %s", h.RequestedHostname, status, changes, h.Status)
		}
	}

	var statuses []string
	for _, ev := range e.events(EventsQuery{ClusterID: clusterID, ClusterLevel: true}) {
		if ev.HostID != nil {
			t.Errorf("cluster-level query returned host event %q", ev.Message)
		}
		if ev.Name != "cluster_status_updated" {
			continue
		}
		m := clusterStatusRE.FindStringSubmatch(ev.Message)
		if m == nil {
			t.Errorf("cluster_status_updated message %q is not assisted's wording", ev.Message)
			continue
		}
		statuses = append(statuses, m[1])
	}
	want := []string{
		"pending-for-input", "insufficient", "ready", // discovery
		"insufficient",               // the undersized host came (and all went silent)
		"ready",                      // the others checked in, it was deregistered
		"preparing-for-installation", // install
		"ready",                      // cancel
	}
	if diff := cmp.Diff(want, statuses); diff != "" {
		t.Errorf("cluster status events mismatch (-want +got):\n%s", diff)
	}
	if c := e.getCluster(clusterID); string(c.Status) != statuses[len(statuses)-1] {
		t.Errorf("cluster is %s, events end at %s", c.Status, statuses[len(statuses)-1])
	}
}

func TestListEvents(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	small := e.addHost(ie, hwInventory(t, "undersized", "small", "192.168.111.30/24"))
	otherCluster, _ := e.cluster(nil)

	all, err := e.s.ListEvents(e.ctx, EventsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != len(all.Events) || all.Total == 0 {
		t.Fatalf("all events: total %d, %d listed", all.Total, len(all.Events))
	}
	sum := 0
	for _, n := range all.BySeverity {
		sum += n
	}
	if sum != all.Total {
		t.Errorf("severity counts %v sum to %d, want the total %d", all.BySeverity, sum, all.Total)
	}
	for i := 1; i < len(all.Events); i++ {
		if all.Events[i].EventTime.Time().Before(all.Events[i-1].EventTime.Time()) {
			t.Errorf("events not in ascending time order at %d", i)
		}
	}

	l, err := e.s.ListEvents(e.ctx, EventsQuery{ClusterID: clusterID})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range l.Events {
		if deref(ev.ClusterID) != clusterID {
			t.Errorf("cluster filter returned %q of cluster %s", ev.Message, deref(ev.ClusterID))
		}
	}
	o, err := e.s.ListEvents(e.ctx, EventsQuery{ClusterID: otherCluster})
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(o.Events, "cluster_registration_succeeded", "Successfully registered cluster") {
		t.Errorf("other cluster's events: %q", eventLines(o.Events))
	}
	for _, ev := range o.Events {
		if ev.HostID != nil {
			t.Errorf("other cluster's events hold host event %q", ev.Message)
		}
	}
	if l.Total+o.Total != all.Total {
		t.Errorf("cluster totals %d + %d, want all %d", l.Total, o.Total, all.Total)
	}

	h, err := e.s.ListEvents(e.ctx, EventsQuery{HostIDs: []string{hosts[0], small}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range h.Events {
		if id := deref(ev.HostID); id != hosts[0] && id != small {
			t.Errorf("host filter returned %q of host %q", ev.Message, id)
		}
	}

	w, err := e.s.ListEvents(e.ctx, EventsQuery{ClusterID: clusterID, Severities: []string{"warning"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Events) == 0 || w.Total != len(w.Events) || w.BySeverity["warning"] != l.BySeverity["warning"] {
		t.Errorf("warning filter: %d events, total %d, counts %v; cluster counts %v", len(w.Events), w.Total, w.BySeverity, l.BySeverity)
	}
	for _, ev := range w.Events {
		if ev.Severity != "warning" {
			t.Errorf("severity filter returned %s %q", ev.Severity, ev.Message)
		}
	}

	// Pages, newest first, with the total of the whole selection.
	desc, err := e.s.ListEvents(e.ctx, EventsQuery{ClusterID: clusterID, Descending: true})
	if err != nil {
		t.Fatal(err)
	}
	page, err := e.s.ListEvents(e.ctx, EventsQuery{ClusterID: clusterID, Descending: true, Limit: 3, Offset: 2})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != l.Total {
		t.Errorf("page total %d, want the selection's %d", page.Total, l.Total)
	}
	if diff := cmp.Diff(asJSON(t, desc.Events[2:5]), asJSON(t, page.Events)); diff != "" {
		t.Errorf("limit 3 offset 2 mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(asJSON(t, l.Events[len(l.Events)-1]), asJSON(t, desc.Events[0])); diff != "" {
		t.Errorf("descending order does not start with the newest (-want +got):\n%s", diff)
	}

	for name, q := range map[string]EventsQuery{
		"unknown severity": {Severities: []string{"fatal"}},
		"negative limit":   {Limit: -1},
		"negative offset":  {Offset: -1},
		"bad cluster id":   {ClusterID: "nope"},
	} {
		_, err := e.s.ListEvents(e.ctx, q)
		wantKind(t, name, err, KindBadRequest)
	}
	_, err = e.s.ListEvents(e.ctx, EventsQuery{ClusterID: "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e02"})
	wantKind(t, "unknown cluster", err, KindNotFound)
}
