package assisted

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

const disconnectedInfo = "Host has stopped communicating with the installation service"

func TestTickDisconnectsAndCheckInReconnects(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()

	// Within the timeout nothing happens.
	e.clock.Advance(3 * time.Minute)
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	for _, id := range hosts {
		if h := e.host(ie, id); h.Status != wire.HostStatusKnown {
			t.Fatalf("host %s %s after exactly the disconnection timeout, want known", h.RequestedHostname, h.Status)
		}
	}

	// Host 0 keeps checking in; the others are silent past the timeout.
	e.checkIn(ie, hosts[0])
	e.clock.Advance(time.Second)
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	for i, id := range hosts {
		h := e.host(ie, id)
		want := wire.HostStatusDisconnected
		if i == 0 {
			want = wire.HostStatusKnown
		}
		if h.Status != want {
			t.Errorf("host %s: got %s, want %s", h.RequestedHostname, h.Status, want)
		}
		if i == 0 {
			continue
		}
		if h.StatusInfo != disconnectedInfo {
			t.Errorf("host %s status_info %q, want %q", h.RequestedHostname, h.StatusInfo, disconnectedInfo)
		}
		if r := resultsByID(t, h.ValidationsInfo)["connected"]; r.Status != wire.ValidationFailure || r.Message != "Host is disconnected" {
			t.Errorf("host %s connected validation: got %+v, want failure (Host is disconnected)", h.RequestedHostname, r)
		}
		evs := e.events(EventsQuery{HostIDs: []string{id}, Severities: []string{"warning"}})
		msg := "Host " + h.RequestedHostname + ": updated status from known to disconnected (" + disconnectedInfo + ")"
		if !hasEvent(evs, "host_status_updated", msg) {
			t.Errorf("no warning event %q; got %q", msg, eventLines(evs))
		}
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusInsufficient || c.ReadyHostCount != 1 {
		t.Errorf("cluster: got %s with %d ready hosts, want insufficient with 1", c.Status, c.ReadyHostCount)
	}

	// A check-in is enough to come back: a disconnected host's
	// instructions come at the backed-off interval (docs/reference/assisted-service.md §7).
	steps := e.checkIn(ie, hosts[1])
	if steps.NextInstructionSeconds != 120 {
		t.Errorf("next_instruction_seconds for a disconnected host = %d, want 120", steps.NextInstructionSeconds)
	}
	h := e.host(ie, hosts[1])
	if h.Status != wire.HostStatusKnown {
		t.Errorf("host after a check-in: got %s (%s), want known", h.Status, h.StatusInfo)
	}
	msg := "Host master-1: updated status from disconnected to known (Host is ready to be installed)"
	if evs := e.events(EventsQuery{HostIDs: []string{hosts[1]}}); !hasEvent(evs, "host_status_updated", msg) {
		t.Errorf("no event %q; got %q", msg, eventLines(evs))
	}
	e.wantForming("known host of a forming cluster", hosts[1], e.checkIn(ie, hosts[1]).NextInstructionSeconds, len(hosts))
	e.checkIn(ie, hosts[2])
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Errorf("cluster after every host is back: got %s, want ready", c.Status)
	}
}

// snapshot is everything a client can read of one cluster.
type snapshot struct {
	Cluster *wire.Cluster
	Hosts   []*wire.Host
	Events  []*wire.Event
}

func (e *env) snapshot(clusterID string) snapshot {
	e.t.Helper()
	// Everything a host has: the snapshot is compared with GetHost's.
	hosts, err := e.s.ListClusterHosts(clusterID, HostQuery{WithInventory: true, WithConnectivity: true})
	if err != nil {
		e.t.Fatalf("ListClusterHosts: %v", err)
	}
	l, err := e.s.ListEvents(e.ctx, EventsQuery{})
	if err != nil {
		e.t.Fatalf("ListEvents: %v", err)
	}
	return snapshot{Cluster: e.getCluster(clusterID), Hosts: hosts, Events: l.Events}
}

// asJSON is v as its JSON reads, for comparing wire objects with cmp.
func asJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %T: %v", v, err)
	}
	return out
}

// TestRestart: a service started on the store of a stopped one shows the
// same clusters, hosts, validations and events, and gives every host a
// disconnection timeout's grace, since check-ins while the daemon was down
// could not happen.
func TestRestart(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	undersized := e.addHost(ie, hwInventory(t, "undersized", "small", "192.168.111.30/24"))
	before := e.snapshot(clusterID)
	if before.Cluster.Status != wire.ClusterStatusInsufficient {
		t.Fatalf("cluster before restart: %s, want insufficient", before.Cluster.Status)
	}

	e.clock.Advance(10 * time.Minute) // the daemon was down for longer than the timeout
	e.restart()
	if diff := cmp.Diff(asJSON(t, before), asJSON(t, e.snapshot(clusterID))); diff != "" {
		t.Errorf("state after restart mismatch (-before +after):\n%s", diff)
	}

	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	for _, id := range append(hosts, undersized) {
		h := e.host(ie, id)
		if h.Status == wire.HostStatusDisconnected {
			t.Errorf("host %s disconnected at the first tick after a restart, want the grace period", h.RequestedHostname)
		}
	}
	if diff := cmp.Diff(asJSON(t, before.Events), asJSON(t, e.snapshot(clusterID).Events)); diff != "" {
		t.Errorf("the first tick after a restart wrote events (-before +after):\n%s", diff)
	}

	// Grace is one timeout from the restart; then the silent hosts go.
	e.clock.Advance(3 * time.Minute)
	e.checkIn(ie, hosts[0])
	e.clock.Advance(time.Second)
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatalf("Tick: %v", err)
	}
	for i, id := range append(hosts, undersized) {
		want := wire.HostStatusDisconnected
		if i == 0 {
			want = wire.HostStatusKnown
		}
		if h := e.host(ie, id); h.Status != want {
			t.Errorf("host %s after the grace: got %s, want %s", h.RequestedHostname, h.Status, want)
		}
	}
}

// TestRestartKeepsPendingSteps: the steps handed out before a restart are
// still pending after it, and a reply to one is still matched.
func TestRestartKeepsPendingSteps(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.register(ie)
	steps := e.checkIn(ie, id)
	e.restart()
	if got := e.pendingSteps(ie, id); !cmp.Equal(got, []string{steps.Instructions[0].StepID}) {
		t.Fatalf("pending steps after restart = %q, want %q", got, steps.Instructions[0].StepID)
	}
	r := inventoryReply(t, masterInv(t, "master-0", 10))
	r.StepID = steps.Instructions[0].StepID
	if err := e.s.PostStepReply(e.ctx, ie, id, r); err != nil {
		t.Fatalf("PostStepReply: %v", err)
	}
	if got := e.pendingSteps(ie, id); len(got) != 0 {
		t.Errorf("pending steps after the reply = %q, want none", got)
	}
}
