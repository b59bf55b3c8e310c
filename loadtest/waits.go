package loadtest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/watch"
	"github.com/nodezero/nodezero/wire"
)

// The load test's own requests, reported apart from the agents': the
// cluster list it polls (host counts, not hosts: a thousand hosts' list is
// tens of MiB), the host list it reads once, and the user's calls of the
// install.
const (
	KindPoll      = "list-clusters (poller)"
	KindListHosts = "list-hosts (user)"
	KindRole      = "update-host role (user)"
	KindInstall   = "install (user)"
)

// userKind reports whether kind is the load test's own request rather
// than an agent's.
func userKind(kind string) bool {
	switch kind {
	case KindPoll, KindListHosts, KindRole, KindInstall:
		return true
	}
	return false
}

// counts is a Watcher of the cluster's status and host counts, from the
// cluster list.
func counts(uc *wire.Client, clusterID string) *watch.Watcher {
	return watch.New(uc, watch.Options{ClusterID: clusterID, Counts: true})
}

// pollCounts reads the cluster once through w and records the poll.
func pollCounts(ctx context.Context, w *watch.Watcher, rec *simagent.Recorder) (*wire.Cluster, error) {
	u, err := w.Poll(ctx)
	rec.Observe(KindPoll, u.Took, err)
	return u.Cluster, err
}

// waitAllKnown polls the cluster list until every host is known, then
// reads the host list once for when the last host became known by the
// service's clock (status_updated_at). It returns that and when the poll
// saw it; a host list too large for the client leaves knownAt zero (the
// report then uses the poll's time).
func waitAllKnown(ctx context.Context, o Options, w *watch.Watcher, rec *simagent.Recorder, start time.Time, alive func() error) (knownAt, detected time.Time, err error) {
	var last *wire.Cluster
	for {
		if err := alive(); err != nil {
			return knownAt, detected, err
		}
		c, err := pollCounts(ctx, w, rec)
		if err == nil {
			last = c
			if c.TotalHostCount == int64(o.Hosts) && c.ReadyHostCount == int64(o.Hosts) {
				break
			}
		}
		if time.Since(start) > o.Timeout {
			state := "not listed"
			if last != nil {
				state = fmt.Sprintf("%d registered, cluster %s: %s", last.TotalHostCount, last.Status, last.StatusInfo)
			}
			return knownAt, detected, fmt.Errorf("%d of %d hosts known after %s (%s; last poll error: %v)",
				readyCount(last), o.Hosts, o.Timeout, state, err)
		}
		select {
		case <-ctx.Done():
			return knownAt, detected, ctx.Err()
		case <-time.After(o.Poll):
		}
	}
	detected = time.Now()
	t := time.Now()
	// The cluster's host list without inventories and connectivity
	// reports: their times are all this reads.
	hosts, err := w.Client().ListClusterHostsQuery(ctx, w.ClusterID(), wire.HostsQuery{})
	if errors.Is(err, wire.ErrResponseTooLarge) {
		// A limit of this optional read, not an answer of the service's
		// to count.
		return knownAt, detected, nil
	}
	rec.Observe(KindListHosts, time.Since(t), err)
	if err != nil {
		return knownAt, detected, err
	}
	for _, h := range hosts {
		if at := h.StatusUpdatedAt.Time(); h.Status == wire.HostStatusKnown && at.After(knownAt) {
			knownAt = at
		}
	}
	return knownAt, detected, nil
}

func readyCount(c *wire.Cluster) int64 {
	if c == nil {
		return 0
	}
	return c.ReadyHostCount
}

// ReadyTimeout is how long the cluster may take to become ready once
// every host is known: longer means a cluster validation fails.
const ReadyTimeout = time.Minute

// WaitClusterReady polls the cluster list (host counts, not hosts) until
// the cluster is ready, and returns when it became so by the service's
// clock. alive is asked before each poll. Past deadline it fails with the
// cluster validations that do not pass.
func WaitClusterReady(ctx context.Context, uc *wire.Client, clusterID string, deadline time.Time, alive func() error) (time.Time, error) {
	w := counts(uc, clusterID)
	var last *wire.Cluster
	for {
		if err := alive(); err != nil {
			return time.Time{}, err
		}
		u, err := w.Poll(ctx)
		if err == nil {
			last = u.Cluster
			if last.Status == wire.ClusterStatusReady {
				return last.StatusUpdatedAt.Time(), nil
			}
		}
		if time.Now().After(deadline) {
			if last == nil {
				return time.Time{}, fmt.Errorf("cluster not ready: not listed (last error: %v)", err)
			}
			return time.Time{}, fmt.Errorf("cluster not ready with every host known: %s: %s%s", last.Status, last.StatusInfo,
				failingValidations(last.ValidationsInfo))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// failingValidations lists the validations of a validations_info
// document that neither pass nor are disabled.
func failingValidations(info string) string {
	vi, _ := wire.ParseValidationsInfo(info) // unreadable text names nothing
	var out []string
	for _, v := range vi.Unmet() {
		out = append(out, fmt.Sprintf("%s %s (%s)", v.ID, v.Status, v.Message))
	}
	if len(out) == 0 {
		return ""
	}
	sort.Strings(out)
	return "; failing: " + strings.Join(out, "; ")
}

// waitInstalled polls the cluster list until the cluster is installed
// and returns it with when the poll saw it. An installation that failed,
// was cancelled or took longer than --install-timeout is an error naming
// the cluster's status and its hosts' progress.
func waitInstalled(ctx context.Context, o Options, w *watch.Watcher, rec *simagent.Recorder,
	start time.Time, alive func() error) (*wire.Cluster, time.Time, error) {
	var last *wire.Cluster
	var err error
	for {
		if err := alive(); err != nil {
			return nil, time.Time{}, err
		}
		var c *wire.Cluster
		c, err = pollCounts(ctx, w, rec)
		if err == nil {
			last = c
			switch c.Status {
			case wire.ClusterStatusInstalled:
				return c, time.Now(), nil
			case wire.ClusterStatusError, wire.ClusterStatusCancelled:
				return nil, time.Time{}, fmt.Errorf("install: cluster %s: %s%s", c.Status, c.StatusInfo, hostProgress(ctx, w))
			}
		}
		if time.Since(start) > o.InstallTimeout {
			state := "not listed"
			if last != nil {
				state = fmt.Sprintf("%s: %s", last.Status, last.StatusInfo)
			}
			return nil, time.Time{}, fmt.Errorf("install: cluster not installed after %s (%s; last poll error: %v)%s",
				o.InstallTimeout, state, err, hostProgress(ctx, w))
		}
		select {
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

// hostProgress is "; hosts: installed 97, installing-in-progress 3
// (Rebooting 3)" for an error message, or "" when the hosts cannot be
// listed.
func hostProgress(ctx context.Context, w *watch.Watcher) string {
	hosts, err := w.Client().ListClusterHostsQuery(ctx, w.ClusterID(), wire.HostsQuery{})
	if err != nil {
		return ""
	}
	stages := map[wire.HostStage]int{}
	for _, h := range hosts {
		if h != nil && h.Progress != nil && h.Status != wire.HostStatusInstalled {
			stages[h.Progress.CurrentStage]++
		}
	}
	return fmt.Sprintf("; hosts: %s; stages of those not installed: %v", watch.StatusHistogram(hosts), stages)
}
