package tui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// HTTPSource fetches the dashboard's snapshots from node zero's service
// over the v2 API: the cluster, its hosts and the newest events. A failed
// fetch returns the last good data with Err set, and the next call simply
// tries again, so the console outlives the service restarting.
//
// Set the fields before the first Snapshot call. It is safe for concurrent
// use.
type HTTPSource struct {
	client   *wire.Client
	thisHost string

	// ClusterID picks the cluster; "" takes the first the service lists
	// (node zero registers one).
	ClusterID string
	// Timeout bounds each request (default 3 s): a hung service turns
	// into "reconnecting" quickly instead of a frozen dashboard.
	Timeout time.Duration
	// Events is how many of the newest events a snapshot holds (default 50).
	Events int
	// Now stamps the snapshots (default time.Now).
	Now func() time.Time
	// HostsEvery is how often the host list is read again while nothing
	// else says it changed (default 30 s). The list is the heavy part —
	// every host carries its inventory, ~100 KB — so an idle dashboard
	// reads it again only when the cluster's counts, status or update
	// time moved, new events arrived, or HostsEvery passed; while the
	// cluster prepares or installs it is read at every snapshot, for the
	// progress bars.
	HostsEvery time.Duration

	mu   sync.Mutex
	last Snapshot // the last good data
	// The event tail. wire.Client cannot ask for the newest events first
	// (EventsQuery has no order), so the source reads the cluster's events
	// once, oldest first, and then only those after the ones it has seen:
	// seen is the offset of the next unseen event.
	evCluster string
	seen      int
	tail      []*wire.Event
	// hostsAt is when the host list in last was read; hostsKey what the
	// cluster looked like then.
	hostsAt  time.Time
	hostsKey string
}

// FetchError is a snapshot fetch that failed: the service at URL did not
// answer as it should. Snapshot.Err holds one when HTTPSource made it.
type FetchError struct {
	URL string
	Err error
}

func (e *FetchError) Error() string { return fmt.Sprintf("fetch snapshot from %s: %v", e.URL, e.Err) }
func (e *FetchError) Unwrap() error { return e.Err }

// SetupError is a Source that cannot ask node zero at all yet: no address
// or no token. Reason says what is missing, naming the file or the flag;
// the dashboard shows it rather than "reconnecting".
type SetupError struct{ Reason string }

func (e *SetupError) Error() string { return e.Reason }

// eventPage is how many events one request reads while catching up.
const eventPage = 1000

// NewHTTPSource returns a source reading through c. thisHost is the id of
// the host the console runs on ("" when unknown), marked in the table.
func NewHTTPSource(c *wire.Client, thisHost string) *HTTPSource {
	return &HTTPSource{client: c, thisHost: thisHost}
}

// Snapshot fetches the cluster, its hosts and its newest events.
func (s *HTTPSource) Snapshot(ctx context.Context) Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, err := s.fetch(ctx)
	if err != nil {
		out := s.last
		out.ThisHost = s.thisHost
		out.Err = &FetchError{URL: s.client.BaseURL(), Err: err}
		return out
	}
	s.last = snap
	return snap
}

func (s *HTTPSource) fetch(ctx context.Context) (Snapshot, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	snap := Snapshot{ThisHost: s.thisHost}

	var clusters wire.ClusterList
	err := s.call(ctx, func(ctx context.Context) (err error) {
		clusters, err = s.client.ListClusters(ctx)
		return err
	})
	if err != nil {
		return Snapshot{}, err
	}
	for _, c := range clusters {
		if c != nil && (s.ClusterID == "" || c.ID == s.ClusterID) {
			snap.Cluster = c
			break
		}
	}
	if snap.Cluster == nil {
		s.evCluster, s.seen, s.tail = "", 0, nil
		snap.At = now()
		return snap, nil
	}
	id := snap.Cluster.ID

	fresh, err := s.readEvents(ctx, id)
	if err != nil {
		return Snapshot{}, err
	}
	snap.Events = s.tail

	key := hostsKey(snap.Cluster)
	every := s.HostsEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	if fresh > 0 || key != s.hostsKey || s.last.Cluster == nil || s.last.Cluster.ID != id ||
		busy(snap.Cluster.Status) || now().Sub(s.hostsAt) >= every {
		var hosts wire.HostList
		err = s.call(ctx, func(ctx context.Context) (err error) {
			hosts, err = s.client.ListClusterHosts(ctx, id)
			return err
		})
		if err != nil {
			return Snapshot{}, err
		}
		snap.Hosts = hosts
		s.hostsAt, s.hostsKey = now(), key
	} else {
		snap.Hosts = s.last.Hosts
	}
	snap.At = now()
	return snap, nil
}

// hostsKey is what of a cluster moves when its hosts do.
func hostsKey(c *wire.Cluster) string {
	return fmt.Sprintf("%s|%s|%d|%d|%d|%s", c.Status, c.StatusInfo, c.TotalHostCount, c.ReadyHostCount,
		c.EnabledHostCount, c.UpdatedAt.Format(time.RFC3339Nano))
}

// busy reports a cluster whose hosts change by the second.
func busy(st wire.ClusterStatus) bool {
	switch st {
	case wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling, wire.ClusterStatusFinalizing,
		wire.ClusterStatusInstallingPendingUserAction:
		return true
	}
	return false
}

// readEvents brings the tail up to date with the events after the last
// seen one and returns how many it read. Events are kept in the service's
// order (event time, then insertion), which is append-only for one cluster.
func (s *HTTPSource) readEvents(ctx context.Context, clusterID string) (int, error) {
	if clusterID != s.evCluster {
		s.evCluster, s.seen, s.tail = clusterID, 0, nil
	}
	limit := s.Events
	if limit <= 0 {
		limit = 50
	}
	read := 0
	for {
		var page wire.EventList
		err := s.call(ctx, func(ctx context.Context) (err error) {
			page, err = s.client.ListEvents(ctx, wire.EventsQuery{ClusterID: clusterID, Offset: s.seen, Limit: eventPage})
			return err
		})
		if err != nil {
			return read, err
		}
		read += len(page)
		if len(page) > 0 {
			s.seen += len(page)
			// A new slice: the snapshots handed out before keep theirs.
			tail := append(append([]*wire.Event(nil), s.tail...), page...)
			s.tail = tail[max(0, len(tail)-limit):]
		}
		if len(page) < eventPage {
			return read, nil
		}
	}
}

// call runs one request with the per-request timeout.
func (s *HTTPSource) call(ctx context.Context, fn func(context.Context) error) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return fn(ctx)
}
