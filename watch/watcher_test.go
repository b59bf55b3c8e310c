package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// The Watcher tests run against node zero's real service in-process (the
// wfNode of the wait-for tests), with the user token as the load program
// and the console read it.

// hostNames returns the requested host names of hs, sorted.
func hostNames(hs []*wire.Host) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.RequestedHostname)
	}
	slices.Sort(out)
	return out
}

func eventIDs(evs []*wire.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.EventTime.Time().String()+" "+e.Message)
	}
	return out
}

func mustPoll(t *testing.T, w *Watcher) Update {
	t.Helper()
	u, err := w.Poll(context.Background())
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	if !u.Answered {
		t.Fatal("poll: node zero did not answer")
	}
	return u
}

// TestWatcherCounts: a Watcher on the cluster list reads the cluster's
// status and host counts without its hosts, says a status once, and
// fails on a cluster that is not listed.
func TestWatcherCounts(t *testing.T) {
	n := newWFNode(t)
	n.ready()
	w := New(n.user, Options{ClusterID: n.clusterID, Counts: true})
	u := mustPoll(t, w)
	if u.Cluster == nil || u.Cluster.TotalHostCount != 3 || u.Cluster.ReadyHostCount != 3 || len(u.Cluster.Hosts) != 0 {
		t.Fatalf("cluster %+v, want 3 hosts counted, 3 ready, none listed", u.Cluster)
	}
	if !u.StatusChanged || u.PrevStatus != "" || u.Cluster.Status != wire.ClusterStatusReady || u.StatusSince.IsZero() {
		t.Errorf("first poll: status changed %v from %q to %q since %v, want ready at first sight", u.StatusChanged, u.PrevStatus, u.Cluster.Status, u.StatusSince)
	}
	if len(u.Validations) == 0 || len(u.Hosts) != 0 || u.Events != nil || u.EventsErr != nil {
		t.Errorf("first poll: %d validations, hosts %v, events %v (%v); want the cluster's validations, no hosts, no events",
			len(u.Validations), hostNames(u.Hosts), u.Events, u.EventsErr)
	}
	since := u.StatusSince
	u = mustPoll(t, w)
	if u.StatusChanged || len(u.Validations) != 0 || !u.StatusSince.Equal(since) {
		t.Errorf("second poll: status changed %v, validations %+v, since %v; want nothing new since %v", u.StatusChanged, u.Validations, u.StatusSince, since)
	}

	other := New(n.user, Options{ClusterID: "5f0c6c8f-0000-4000-8000-000000000000", Counts: true})
	if _, err := other.Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "not listed") {
		t.Errorf("poll of an unknown cluster: %v, want not listed", err)
	}
}

// TestWatcherHostsAndEvents: a Watcher with hosts and the cluster's events
// says which hosts are new or moved and hands each event over once.
func TestWatcherHostsAndEvents(t *testing.T) {
	n := newWFNode(t)
	w := New(n.user, Options{Events: ClusterEvents})
	u := mustPoll(t, w)
	if u.Cluster != nil || u.Gone != "" || w.ClusterID() != "" {
		t.Fatalf("no cluster yet: got %+v, cluster %q", u.Cluster, w.ClusterID())
	}
	n.cluster()
	u = mustPoll(t, w)
	if w.ClusterID() != n.clusterID || len(u.Events) == 0 || len(u.Hosts) != 0 {
		t.Fatalf("registered: cluster %q, %d events, hosts %v; want %s, its events, no host", w.ClusterID(), len(u.Events), hostNames(u.Hosts), n.clusterID)
	}
	seen := eventIDs(u.Events)
	h0 := n.addHost()
	u = mustPoll(t, w)
	if diff := cmp.Diff([]string{h0.Hostname}, hostNames(u.Hosts)); diff != "" {
		t.Errorf("a host registered: hosts (-want +got):\n%s", diff)
	}
	if len(u.Events) == 0 {
		t.Error("a host registered: no new event")
	}
	for _, id := range eventIDs(u.Events) {
		if slices.Contains(seen, id) {
			t.Errorf("event %q handed over twice", id)
		}
	}
	if u = mustPoll(t, w); len(u.Hosts) != 0 || len(u.Events) != 0 {
		t.Errorf("nothing moved: hosts %v, %d events; want none", hostNames(u.Hosts), len(u.Events))
	}
	var hostValidation bool
	for _, v := range mustPollAfter(t, w, func() { n.addHost() }).Validations {
		hostValidation = hostValidation || v.Host != nil
	}
	if !hostValidation {
		t.Error("a second host: none of its validations reported")
	}
}

// mustPollAfter runs change, then polls.
func mustPollAfter(t *testing.T, w *Watcher, change func()) Update {
	t.Helper()
	change()
	return mustPoll(t, w)
}

// TestWatcherInstallStages: a host whose install stage moves is reported,
// one that does not is not.
func TestWatcherInstallStages(t *testing.T) {
	n := newWFNode(t)
	n.ready()
	n.installing()
	w := New(n.user, Options{})
	mustPoll(t, w)
	boot := n.bootstrap()
	n.progress(boot, wire.HostStageStartingInstallation)
	u := mustPoll(t, w)
	if len(u.Hosts) != 1 || u.Hosts[0].ID != boot || u.Hosts[0].Progress.CurrentStage != wire.HostStageStartingInstallation {
		t.Errorf("bootstrap host started: hosts %v, want the bootstrap host at %s", hostNames(u.Hosts), wire.HostStageStartingInstallation)
	}
}

// TestWatcherGone: node zero on a fresh database no longer knows the
// cluster followed; the Watcher says so and finds the new one.
func TestWatcherGone(t *testing.T) {
	n := newWFNode(t)
	n.cluster()
	w := New(n.user, Options{Events: InfraEnvEvents})
	if u := mustPoll(t, w); u.Cluster == nil || u.EventsErr != nil || len(u.Events) == 0 {
		t.Fatalf("first poll: cluster %v, events %d (%v); want the cluster and its infra-env's events", u.Cluster, len(u.Events), u.EventsErr)
	}
	old := n.clusterID
	n.mu.Lock()
	n.stop()
	for _, f := range []string{"nodezero.db", "nodezero.db-wal", "nodezero.db-shm"} {
		if err := os.Remove(filepath.Join(n.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	n.start()
	n.mu.Unlock()
	u, err := w.Poll(context.Background())
	if err != nil || u.Gone != old || u.Cluster != nil || w.ClusterID() != "" {
		t.Fatalf("after a fresh database: gone %q, cluster %v, error %v; want %s gone", u.Gone, u.Cluster, err, old)
	}
	n.cluster()
	u = mustPoll(t, w)
	if u.Cluster == nil || u.Cluster.ID != n.clusterID || len(u.Events) == 0 {
		t.Errorf("new cluster: %v with %d events, want %s and its infra-env's events from the start", u.Cluster, len(u.Events), n.clusterID)
	}
}

// TestWatcherNoInfraEnv: infra-env events are asked for only once the
// cluster has an infra-env; until then EventsErr says why there are none.
func TestWatcherNoInfraEnv(t *testing.T) {
	n := newWFNode(t)
	apiVIP := "192.168.111.5"
	cp := int64(1)
	c, err := n.user.RegisterCluster(n.ctx, wire.ClusterCreateParams{Name: "solo", OpenshiftVersion: "4.18", BaseDNSDomain: "example.com",
		PullSecret: wfPullSecret, ControlPlaneCount: &cp, APIVIPs: []*wire.APIVIP{{IP: wire.IP(apiVIP)}}})
	if err != nil {
		t.Fatal(err)
	}
	w := New(n.user, Options{Events: InfraEnvEvents})
	u := mustPoll(t, w)
	var none *NoInfraEnvError
	if !errors.As(u.EventsErr, &none) || none.Err != nil || u.Events != nil {
		t.Errorf("no infra-env: events %v, error %v; want a NoInfraEnvError without a cause", u.Events, u.EventsErr)
	}
	if _, err := n.user.RegisterInfraEnv(n.ctx, wire.InfraEnvCreateParams{Name: "solo", PullSecret: wfPullSecret, ClusterID: &c.ID}); err != nil {
		t.Fatal(err)
	}
	if u = mustPoll(t, w); u.EventsErr != nil || len(u.Events) == 0 {
		t.Errorf("infra-env registered: %d events, error %v; want its events", len(u.Events), u.EventsErr)
	}
}

// TestWatcherTwoClusters: a Watcher told no cluster refuses to pick one of
// two.
func TestWatcherTwoClusters(t *testing.T) {
	n := newWFNode(t)
	n.cluster()
	n.cluster()
	u, err := New(n.user, Options{}).Poll(context.Background())
	if !errors.Is(err, ErrClusters) || !u.Answered {
		t.Errorf("two clusters: %v (answered %v), want ErrClusters after an answer", err, u.Answered)
	}
}

// TestEventTailPages: a tail read in pages hands over every event once, in
// the service's order, as one unpaged read lists them.
func TestEventTailPages(t *testing.T) {
	n := newWFNode(t)
	n.ready()
	all, err := n.user.ListEvents(n.ctx, wire.EventsQuery{ClusterID: n.clusterID})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 5 {
		t.Fatalf("%d events, want enough for pages of 2", len(all))
	}
	tail := &EventTail{Query: wire.EventsQuery{ClusterID: n.clusterID}, Page: 2}
	got, err := tail.Next(n.ctx, n.user)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(eventIDs(all), eventIDs(got)); diff != "" {
		t.Errorf("paged read (-unpaged +paged):\n%s", diff)
	}
	if tail.Read() != len(all) {
		t.Errorf("Read() = %d, want %d", tail.Read(), len(all))
	}
	if more, err := tail.Next(n.ctx, n.user); err != nil || len(more) != 0 {
		t.Errorf("nothing new: %d events, %v", len(more), err)
	}
}

// TestFollow: Follow hands each poll over until the caller is done or
// fails, and stops when ctx ends.
func TestFollow(t *testing.T) {
	n := newWFNode(t)
	n.cluster()
	w := New(n.user, Options{})
	polls := 0
	err := w.Follow(context.Background(), time.Millisecond, func(u Update, err error) (bool, error) {
		if err != nil {
			return false, err
		}
		polls++
		return polls == 3, nil
	})
	if err != nil || polls != 3 {
		t.Errorf("Follow until the third poll: %v after %d polls", err, polls)
	}
	stop := errors.New("stop")
	if err := w.Follow(context.Background(), time.Millisecond, func(Update, error) (bool, error) { return false, stop }); !errors.Is(err, stop) {
		t.Errorf("Follow whose caller fails: %v, want its error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = w.Follow(ctx, time.Hour, func(Update, error) (bool, error) {
		cancel()
		return false, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after ctx ended: %v, want context.Canceled", err)
	}
}

func TestStatusHistogram(t *testing.T) {
	hosts := wire.HostList{{Status: wire.HostStatusKnown}, {Status: wire.HostStatusInsufficient}, nil, {Status: wire.HostStatusKnown}}
	if got, want := StatusHistogram(hosts), "insufficient 1, known 2"; got != want {
		t.Errorf("StatusHistogram = %q, want %q", got, want)
	}
	if got, want := StatusHistogram(nil), "no hosts"; got != want {
		t.Errorf("StatusHistogram(nil) = %q, want %q", got, want)
	}
	if got := StatusCount(hosts, wire.HostStatusKnown); got != 2 {
		t.Errorf("StatusCount(known) = %d, want 2", got)
	}
}
