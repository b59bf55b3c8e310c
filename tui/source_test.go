package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// fakeService serves the three reads HTTPSource makes, in the v2 JSON
// shapes and with v2ListEvents' offset and limit (events oldest first).
type fakeService struct {
	mu       sync.Mutex
	clusters []*wire.Cluster
	hosts    map[string][]*wire.Host
	events   []*wire.Event
	// down answers every request with this status when not 0.
	down int
	// hang holds every request until the client gives up.
	hang bool
	// eventQueries records the offset and limit of each events request.
	eventQueries []string
	// hostReads counts the host list requests.
	hostReads int
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hang {
		f.mu.Unlock()
		<-r.Context().Done()
		f.mu.Lock()
		return
	}
	if f.down != 0 {
		w.WriteHeader(f.down)
		fmt.Fprintf(w, `{"code":"%d","href":"","id":%d,"kind":"Error","reason":"service is starting"}`, f.down, f.down)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, wire.APIBasePath)
	var out any
	switch {
	case path == "/clusters":
		out = f.clusters
	case strings.HasPrefix(path, "/clusters/") && strings.HasSuffix(path, "/hosts"):
		f.hostReads++
		out = f.hosts[strings.TrimSuffix(strings.TrimPrefix(path, "/clusters/"), "/hosts")]
	case path == "/events":
		q := r.URL.Query()
		offset, _ := strconv.Atoi(q.Get("offset"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		f.eventQueries = append(f.eventQueries, fmt.Sprintf("cluster=%s offset=%d limit=%d", q.Get("cluster_id"), offset, limit))
		var evs []*wire.Event
		for _, e := range f.events {
			if e.ClusterID != nil && *e.ClusterID == q.Get("cluster_id") {
				evs = append(evs, e)
			}
		}
		evs = evs[min(offset, len(evs)):]
		if limit > 0 {
			evs = evs[:min(limit, len(evs))]
		}
		out = evs
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (f *fakeService) addEvents(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		i := len(f.events)
		f.events = append(f.events, fixtureEvent(-i, wire.EventSeverityInfo, "", fmt.Sprintf("event %d", i)))
	}
}

func (f *fakeService) set(fn func(f *fakeService)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// serve starts an HTTP server for f on addr ("127.0.0.1:0" for any port).
func serve(t *testing.T, f *fakeService, addr string) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(f)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func eventMessages(evs []*wire.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Message)
	}
	return out
}

// TestHTTPSourceReadsHostsWhenTheyMove: the heavy host list is read again
// only when something says the hosts moved — new events, the cluster's
// status or counts, an install under way — or HostsEvery passed.
func TestHTTPSourceReadsHostsWhenTheyMove(t *testing.T) {
	healthy := healthySnapshot()
	cluster := *healthy.Cluster
	f := &fakeService{clusters: []*wire.Cluster{&cluster}, hosts: map[string][]*wire.Host{fixtureClusterID: healthy.Hosts}}
	f.addEvents(3)
	srv := serve(t, f, "127.0.0.1:0")
	client, err := wire.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	src := NewHTTPSource(client, "")
	clock := fixtureTime
	src.Now = func() time.Time { return clock }
	src.HostsEvery = 30 * time.Second
	reads := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.hostReads }
	step := func(what string, change func(), wantRead bool) {
		t.Helper()
		before := reads()
		change()
		clock = clock.Add(2 * time.Second)
		s := src.Snapshot(t.Context())
		if s.Err != nil || len(s.Hosts) != len(healthy.Hosts) {
			t.Fatalf("%s: snapshot err %v, %d hosts", what, s.Err, len(s.Hosts))
		}
		if got := reads() > before; got != wantRead {
			t.Errorf("%s: host list read = %v, want %v", what, got, wantRead)
		}
	}
	step("first snapshot", func() {}, true)
	step("nothing moved", func() {}, false)
	step("nothing moved again", func() {}, false)
	step("a new event", func() { f.addEvents(1) }, true)
	step("quiet after it", func() {}, false)
	step("a host became ready", func() { f.set(func(*fakeService) { cluster.ReadyHostCount++ }) }, true)
	step("HostsEvery passed", func() { clock = clock.Add(30 * time.Second) }, true)
	step("installing", func() { f.set(func(*fakeService) { cluster.Status = wire.ClusterStatusInstalling }) }, true)
	step("still installing", func() {}, true)
}

func TestHTTPSource(t *testing.T) {
	healthy := healthySnapshot()
	f := &fakeService{
		clusters: []*wire.Cluster{healthy.Cluster},
		hosts:    map[string][]*wire.Host{fixtureClusterID: healthy.Hosts},
	}
	f.addEvents(1060)
	srv := serve(t, f, "127.0.0.1:0")
	addr := srv.Listener.Addr().String()
	client, err := wire.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	src := NewHTTPSource(client, idMaster0)
	src.Timeout = time.Second
	clock := fixtureTime
	src.Now = func() time.Time { return clock }
	ctx := t.Context()

	// The first snapshot reads every event page and keeps the newest 50.
	s := src.Snapshot(ctx)
	if s.Err != nil {
		t.Fatalf("Snapshot() error: %v", s.Err)
	}
	if s.Cluster == nil || s.Cluster.ID != fixtureClusterID || len(s.Hosts) != 5 || s.ThisHost != idMaster0 || !s.At.Equal(clock) {
		t.Fatalf("Snapshot() = cluster %v, %d hosts, this host %q, at %v", s.Cluster, len(s.Hosts), s.ThisHost, s.At)
	}
	if msgs := eventMessages(s.Events); len(msgs) != 50 || msgs[0] != "event 1010" || msgs[49] != "event 1059" {
		t.Fatalf("Snapshot() events = %d, %q … %q; want the newest 50, oldest first", len(msgs), msgs[0], msgs[len(msgs)-1])
	}

	// The next reads only the events after those seen.
	f.addEvents(2)
	clock = clock.Add(2 * time.Second)
	s = src.Snapshot(ctx)
	if msgs := eventMessages(s.Events); s.Err != nil || len(msgs) != 50 || msgs[49] != "event 1061" || msgs[0] != "event 1012" {
		t.Fatalf("second Snapshot() = err %v, events %q … %q", s.Err, msgs[0], msgs[len(msgs)-1])
	}
	f.set(func(f *fakeService) {
		want := []string{
			"cluster=" + fixtureClusterID + " offset=0 limit=1000",
			"cluster=" + fixtureClusterID + " offset=1000 limit=1000",
			"cluster=" + fixtureClusterID + " offset=1060 limit=1000",
		}
		if got := strings.Join(f.eventQueries, "\n"); got != strings.Join(want, "\n") {
			t.Errorf("event queries:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	})
	good := s

	// The service restarting answers 503: the last data stays, with Err.
	f.set(func(f *fakeService) { f.down = http.StatusServiceUnavailable })
	clock = clock.Add(2 * time.Second)
	s = src.Snapshot(ctx)
	if wire.StatusCode(s.Err) != http.StatusServiceUnavailable {
		t.Fatalf("Snapshot() while 503: Err = %v, want the 503", s.Err)
	}
	var fe *FetchError
	if !errors.As(s.Err, &fe) || fe.URL != srv.URL {
		t.Errorf("Snapshot() Err = %#v, want a *FetchError for %s", s.Err, srv.URL)
	}
	if s.Cluster != good.Cluster || len(s.Hosts) != 5 || len(s.Events) != 50 || !s.At.Equal(good.At) {
		t.Errorf("Snapshot() while 503 dropped the last data: %+v", s)
	}

	// The service gone: connection refused, the same data.
	srv.Close()
	s = src.Snapshot(ctx)
	if !errors.Is(s.Err, syscall.ECONNREFUSED) {
		t.Fatalf("Snapshot() with the service gone: Err = %v, want connection refused", s.Err)
	}
	if s.Cluster != good.Cluster || !s.At.Equal(good.At) {
		t.Errorf("Snapshot() with the service gone dropped the last data")
	}
	if got := waitingFor(s); !strings.HasPrefix(got, "Reconnecting to node zero at "+srv.URL+" (connection refused)") {
		t.Errorf("waitingFor(service gone) = %q", got)
	}

	// Back on the same address: the next call simply works again.
	installing := installingSnapshot()
	f.set(func(f *fakeService) {
		f.down = 0
		f.clusters = []*wire.Cluster{installing.Cluster}
		f.hosts[fixtureClusterID] = installing.Hosts
	})
	f.addEvents(1)
	serve(t, f, addr)
	clock = clock.Add(2 * time.Second)
	s = src.Snapshot(ctx)
	if s.Err != nil {
		t.Fatalf("Snapshot() after the service came back: %v", s.Err)
	}
	if s.Cluster.Status != wire.ClusterStatusInstalling || !s.At.Equal(clock) {
		t.Errorf("Snapshot() after the service came back = status %s at %v", s.Cluster.Status, s.At)
	}
	if msgs := eventMessages(s.Events); msgs[49] != "event 1062" {
		t.Errorf("Snapshot() after the service came back: newest event %q, want event 1062", msgs[49])
	}
}

func TestHTTPSourceNoCluster(t *testing.T) {
	f := &fakeService{}
	srv := serve(t, f, "127.0.0.1:0")
	client, err := wire.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	s := NewHTTPSource(client, "").Snapshot(t.Context())
	if s.Err != nil || s.Cluster != nil || s.At.IsZero() {
		t.Fatalf("Snapshot() with no cluster = %+v, want no cluster, no error", s)
	}
	if got, want := waitingFor(s), "Waiting for node zero's service to register the cluster"; got != want {
		t.Errorf("waitingFor = %q, want %q", got, want)
	}
}

func TestHTTPSourcePicksCluster(t *testing.T) {
	other := fixtureCluster(wire.ClusterStatusInstalled, "", 100, nil, nil)
	other.ID, other.Name = "11111111-2222-3333-4444-555555555555", "other"
	mine := fixtureCluster(wire.ClusterStatusReady, "", 0, nil, nil)
	f := &fakeService{clusters: []*wire.Cluster{other, mine}, hosts: map[string][]*wire.Host{}}
	srv := serve(t, f, "127.0.0.1:0")
	client, err := wire.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	src := NewHTTPSource(client, "")
	if s := src.Snapshot(t.Context()); s.Cluster == nil || s.Cluster.Name != "other" {
		t.Errorf("Snapshot() without ClusterID took %v, want the first cluster", s.Cluster)
	}
	src.ClusterID = fixtureClusterID
	if s := src.Snapshot(t.Context()); s.Cluster == nil || s.Cluster.Name != "ocp-edge" {
		t.Errorf("Snapshot() with ClusterID took %v, want ocp-edge", s.Cluster)
	}
}

func TestHTTPSourceTimeout(t *testing.T) {
	f := &fakeService{hang: true}
	srv := serve(t, f, "127.0.0.1:0")
	client, err := wire.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	src := NewHTTPSource(client, "")
	src.Timeout = 50 * time.Millisecond
	s := src.Snapshot(context.Background())
	if !errors.Is(s.Err, context.DeadlineExceeded) {
		t.Fatalf("Snapshot() from a hung service: Err = %v, want a deadline", s.Err)
	}
	if got := waitingFor(s); !strings.Contains(got, "(no answer in time)") {
		t.Errorf("waitingFor(hung) = %q", got)
	}
}
