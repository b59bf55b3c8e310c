package watch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// Options say what a Watcher reads.
type Options struct {
	// ClusterID is the cluster to follow. "" follows the one cluster node
	// zero lists, and looks for it again when node zero no longer knows
	// it (a fresh database).
	ClusterID string
	// Counts reads the cluster from the cluster list: its status,
	// validations and host counts, without its hosts (a thousand hosts'
	// list is tens of MiB). Otherwise every poll reads the cluster with
	// its hosts.
	Counts bool
	// Events says which events a poll reads: none, the cluster's
	// infra-env's or the cluster's.
	Events EventScope
	// Now is the clock status times are read from (default time.Now).
	Now func() time.Time
}

// EventScope is which events a Watcher reads.
type EventScope int

const (
	NoEvents       EventScope = iota
	InfraEnvEvents            // the events of the cluster's (first) infra-env, as openshift-install reads them
	ClusterEvents             // the cluster's events, its hosts' included
)

// ErrClusters: node zero lists more than one cluster and the Watcher was
// not told which to follow.
var ErrClusters = errors.New("node zero lists more than one cluster")

// Watcher polls one cluster of node zero. It is not safe for concurrent
// use: one goroutine polls.
type Watcher struct {
	c   *wire.Client
	o   Options
	now func() time.Time

	clusterID  string     // the cluster followed; "" until found
	infraEnvID string     // its infra-env, for InfraEnvEvents
	tail       *EventTail // nil until the events' scope is known

	status      wire.ClusterStatus // the status last seen
	statusSince time.Time          // when it was first seen
	validations map[string]validationSeen
	hosts       map[string]string // host ID → what Update.Hosts compares
}

type validationSeen struct {
	status  wire.ValidationStatus
	message string
}

// New returns a Watcher reading node zero through c.
func New(c *wire.Client, o Options) *Watcher {
	w := &Watcher{c: c, o: o, now: o.Now, clusterID: o.ClusterID,
		validations: map[string]validationSeen{}, hosts: map[string]string{}}
	if w.now == nil {
		w.now = time.Now
	}
	return w
}

// Client is the client the Watcher reads through.
func (w *Watcher) Client() *wire.Client { return w.c }

// ClusterID is the cluster followed, "" while none is known.
func (w *Watcher) ClusterID() string { return w.clusterID }

// Update is what one poll learnt.
type Update struct {
	// Answered: node zero's service answered at least one request of
	// the poll as it should (the poll may still have failed after it). A
	// 404 for the cluster followed is not such an answer: see Gone.
	Answered bool
	// Cluster is the cluster as read (without hosts with Options.Counts);
	// nil while node zero has none, or when it went away (Gone).
	Cluster *wire.Cluster
	// Gone is the ID of a cluster node zero no longer knows; the next
	// poll looks for its cluster again.
	Gone string
	// StatusChanged: Cluster.Status is not the status of the poll before
	// (PrevStatus, "" at first sight). StatusSince is when the current
	// status was first seen.
	StatusChanged bool
	PrevStatus    wire.ClusterStatus
	StatusSince   time.Time
	// Validations are the validations of the cluster, then of each host,
	// that are new or whose status or message changed, in that order.
	Validations []ValidationChange
	// Hosts are the hosts that are new or whose status, install stage or
	// progress info changed (without hosts with Options.Counts).
	Hosts []*wire.Host
	// Events are the events that arrived since the last poll, oldest
	// first. EventsErr says why they could not be read this time (a
	// *NoInfraEnvError while the cluster has no infra-env); the next poll
	// reads them.
	Events    []*wire.Event
	EventsErr error
	// Took is how long the poll's requests took.
	Took time.Duration
}

// ValidationChange is one validation that is new or changed, or the
// validations_info of a host or the cluster that could not be read (Err).
type ValidationChange struct {
	Host       *wire.Host // nil: the cluster's
	Validation wire.Validation
	// Seen: the validation was seen before, with WasStatus and
	// WasMessage.
	Seen       bool
	WasStatus  wire.ValidationStatus
	WasMessage string
	Err        error
}

// NoInfraEnvError is Update.EventsErr while the cluster has no infra-env
// to read events from: Err is the listing's error, nil when it answered
// with none.
type NoInfraEnvError struct{ Err error }

func (e *NoInfraEnvError) Error() string {
	if e.Err == nil {
		return "no infra-env to read events from yet"
	}
	return "no infra-env to read events from yet: " + e.Err.Error()
}

func (e *NoInfraEnvError) Unwrap() error { return e.Err }

// Poll asks node zero once and returns what changed. An error is a
// request node zero did not answer as it should (wire.StatusCode tells a
// refusal from an outage), or ErrClusters; the Update still says whether
// it answered anything.
func (w *Watcher) Poll(ctx context.Context) (Update, error) {
	start := time.Now()
	u, err := w.poll(ctx)
	u.Took = time.Since(start)
	return u, err
}

func (w *Watcher) poll(ctx context.Context) (Update, error) {
	var u Update
	c, err := w.cluster(ctx, &u)
	if err != nil || c == nil {
		return u, err
	}
	u.Cluster = c
	if c.Status != w.status {
		u.StatusChanged, u.PrevStatus = true, w.status
		w.status, w.statusSince = c.Status, w.now()
	}
	u.StatusSince = w.statusSince
	u.Validations = w.validationChanges(c)
	u.Hosts = w.hostChanges(c)
	if w.o.Events != NoEvents {
		u.Events, u.EventsErr = w.events(ctx)
	}
	return u, nil
}

// cluster reads the cluster followed, finding it first when it is not
// known; nil while node zero has none.
func (w *Watcher) cluster(ctx context.Context, u *Update) (*wire.Cluster, error) {
	if w.clusterID == "" || w.o.Counts {
		list, err := w.c.ListClusters(ctx)
		if err != nil {
			return nil, err
		}
		u.Answered = true
		if w.clusterID == "" {
			switch len(list) {
			case 0:
				return nil, nil
			case 1:
				w.clusterID = list[0].ID
			default:
				return nil, fmt.Errorf("%w: %d", ErrClusters, len(list))
			}
		}
		if w.o.Counts {
			for _, c := range list {
				if c != nil && c.ID == w.clusterID {
					return c, nil
				}
			}
			return nil, fmt.Errorf("cluster %s not listed", w.clusterID)
		}
	}
	c, err := w.c.GetCluster(ctx, w.clusterID)
	if wire.IsStatus(err, http.StatusNotFound) && w.o.ClusterID == "" {
		u.Gone = w.clusterID
		w.clusterID, w.infraEnvID, w.tail = "", "", nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u.Answered = true
	return c, nil
}

// validationChanges compares the validations of c and its hosts with
// those seen before.
func (w *Watcher) validationChanges(c *wire.Cluster) []ValidationChange {
	out := w.diffValidations(nil, "cluster", nil, c.ValidationsInfo)
	for _, h := range c.Hosts {
		out = w.diffValidations(out, "host "+h.ID, h, h.ValidationsInfo)
	}
	return out
}

// diffValidations appends to out the validations of info (h's, or the
// cluster's when h is nil) that are new or changed; key names whose.
func (w *Watcher) diffValidations(out []ValidationChange, key string, h *wire.Host, info string) []ValidationChange {
	vi, err := wire.ParseValidationsInfo(info)
	if err != nil {
		return append(out, ValidationChange{Host: h, Err: err})
	}
	for _, r := range vi {
		k := key + " " + r.ID
		old, seen := w.validations[k]
		now := validationSeen{r.Status, r.Message}
		w.validations[k] = now
		if seen && old == now {
			continue
		}
		out = append(out, ValidationChange{Host: h, Validation: r, Seen: seen, WasStatus: old.status, WasMessage: old.message})
	}
	return out
}

// hostChanges returns the hosts that are new or moved.
func (w *Watcher) hostChanges(c *wire.Cluster) []*wire.Host {
	var out []*wire.Host
	for _, h := range c.Hosts {
		if h == nil {
			continue
		}
		key := string(h.Status)
		if h.Progress != nil {
			key += "|" + string(h.Progress.CurrentStage) + "|" + h.Progress.ProgressInfo
		}
		if old, seen := w.hosts[h.ID]; seen && old == key {
			continue
		}
		w.hosts[h.ID] = key
		out = append(out, h)
	}
	return out
}

// events reads the events that arrived since the last poll.
func (w *Watcher) events(ctx context.Context) ([]*wire.Event, error) {
	if w.tail == nil {
		q := wire.EventsQuery{ClusterID: w.clusterID}
		if w.o.Events == InfraEnvEvents {
			if w.infraEnvID == "" {
				ies, err := w.c.ListInfraEnvs(ctx, w.clusterID)
				if err != nil || len(ies) == 0 {
					return nil, &NoInfraEnvError{Err: err}
				}
				w.infraEnvID = ies[0].ID
			}
			q = wire.EventsQuery{InfraEnvID: w.infraEnvID}
		}
		w.tail = &EventTail{Query: q}
	}
	return w.tail.Next(ctx, w.c)
}

// Follow polls at once, then every interval, and hands each poll to fn
// until fn is done or fails, or ctx ends (its error is returned then).
func (w *Watcher) Follow(ctx context.Context, interval time.Duration, fn func(Update, error) (done bool, err error)) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		done, err := fn(w.Poll(ctx))
		if done || err != nil {
			return err
		}
		timer.Reset(interval)
	}
}
