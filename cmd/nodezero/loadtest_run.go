package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/hostagent/simagent"
	"github.com/nodezero/nodezero/wire"
)

// The load test's own requests, reported apart from the agents': the
// cluster list it polls (host counts, not hosts: a thousand hosts' list is
// tens of MiB), the host list it reads once, and the user's calls of the
// install.
const (
	ltKindPoll      = "list-clusters (poller)"
	ltKindListHosts = "list-hosts (user)"
	ltKindRole      = "update-host role (user)"
	ltKindInstall   = "install (user)"
)

// ltUserKind reports whether kind is the load test's own request rather
// than an agent's.
func ltUserKind(kind string) bool {
	switch kind {
	case ltKindPoll, ltKindListHosts, ltKindRole, ltKindInstall:
		return true
	}
	return false
}

// loadtestRun is one run: a fresh service in dir, a cluster, the agents,
// the ramp until every host is known and the cluster ready, the idle
// window, then (simulated agents, --install) the install until the cluster
// is installed.
func loadtestRun(ctx context.Context, o loadtestOptions, dir string, progress io.Writer) (ltRunReport, error) {
	var rr ltRunReport
	var extra []string
	if o.pprof != "" {
		extra = []string{"--pprof", o.pprof}
	}
	svc, err := ltStartService(ctx, o.bin, dir, extra...)
	if err != nil {
		return rr, err
	}
	defer svc.stop()
	rr.StartupMs = ltMs(svc.firstAnswer)
	userToken, err := ltReadToken(dir, "user.token")
	if err != nil {
		return rr, err
	}
	agentToken, err := ltReadToken(dir, "agent.token")
	if err != nil {
		return rr, err
	}
	uc, err := wire.NewClient(svc.url, wire.WithUserToken(userToken),
		wire.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	if err != nil {
		return rr, err
	}
	defer uc.CloseIdleConnections()

	apiVIP, ingressVIP := ltRealAPIVIP, ltRealIngressVIP
	if o.agents == "sim" {
		a, i, err := simagent.VIPs(simagent.DefaultNetwork)
		if err != nil {
			return rr, err
		}
		apiVIP, ingressVIP = a.String(), i.String()
	}
	clusterID, infraEnvID, err := ltRegisterCluster(ctx, uc, apiVIP, ingressVIP)
	if err != nil {
		return rr, err
	}

	rec := simagent.NewRecorder()
	self0, err := readProc(os.Getpid())
	if err != nil {
		return rr, err
	}
	before, err := readProc(svc.pid())
	if err != nil {
		return rr, err
	}
	machine0, err := readMachineCPU()
	if err != nil {
		return rr, err
	}
	var agents *ltAgents
	var fleet *simagent.Fleet
	start := time.Now()
	if o.agents == "sim" {
		fleet, err = simagent.StartFleet(ctx, simagent.FleetConfig{URL: svc.url, Token: agentToken, InfraEnvID: infraEnvID,
			Hosts: o.hosts, Masters: ltMasters, Wait: o.wait, Ramp: o.ramp, Observer: rec,
			Install: simagent.InstallConfig{Dir: filepath.Join(dir, "hosts"), DiskMiB: o.diskMiB, WriteTime: o.write,
				RebootDelay: o.reboot, Poll: o.installPoll}})
		if err != nil {
			return rr, err
		}
		defer fleet.Stop()
	} else {
		agents, err = ltStartAgents(o, dir, svc.url, infraEnvID, agentToken)
		if err != nil {
			return rr, err
		}
		defer agents.stop()
	}

	alive := func() error {
		if err := svc.alive(); err != nil {
			return err
		}
		if agents != nil {
			return agents.alive()
		}
		return nil
	}
	knownAt, detected, err := ltWaitAllKnown(ctx, o, uc, clusterID, infraEnvID, rec, start, alive)
	if err != nil {
		return rr, err
	}
	fmt.Fprintf(progress, "loadtest: all %d hosts known after %.2f s\n", o.hosts, ltSinceStart(start, knownAt, detected))
	readyAt, err := ltWaitClusterReady(ctx, uc, clusterID, time.Now().Add(ltReadyTimeout), alive)
	if err != nil {
		return rr, err
	}
	ramp, err := readProc(svc.pid())
	if err != nil {
		return rr, err
	}
	rr.AllKnownS = ltSinceStart(start, knownAt, detected)
	rr.DetectedS = detected.Sub(start).Seconds()
	rr.ClusterReadyS = ltSinceStart(start, readyAt, ramp.at)
	rr.RampCPUS = (ramp.cpu - before.cpu).Seconds()
	rr.RampCores = rr.RampCPUS / ramp.at.Sub(start).Seconds()
	rr.RampRSSMiB = ltMiB(ramp.hwm)

	// The idle window: every agent connected, nothing changing, nobody
	// polling but the agents.
	fmt.Fprintf(progress, "loadtest: cluster ready after %.2f s; idle for %s\n", rr.ClusterReadyS, o.idle)
	reqs0 := ltTotalRequests(rec)
	idle0, err := readProc(svc.pid())
	if err != nil {
		return rr, err
	}
	select {
	case <-ctx.Done():
		return rr, ctx.Err()
	case <-time.After(o.idle):
	}
	idle1, err := readProc(svc.pid())
	if err != nil {
		return rr, err
	}
	self1, err := readProc(os.Getpid())
	if err != nil {
		return rr, err
	}
	machine1, err := readMachineCPU()
	if err != nil {
		return rr, err
	}
	loadgen := self1.cpu - self0.cpu
	if agents != nil {
		loadgen += agents.cpu() // they started at zero
	}
	rr.LoadgenCPUS = loadgen.Seconds()
	rr.OtherCores = max(machine1-machine0-(idle1.cpu-before.cpu)-loadgen, 0).Seconds() / idle1.at.Sub(start).Seconds()
	rr.IdleRequests = ltTotalRequests(rec) - reqs0
	rr.IdleCPUPct = 100 * (idle1.cpu - idle0.cpu).Seconds() / idle1.at.Sub(idle0.at).Seconds()
	rr.IdleRSSMiB = ltMiB(idle1.rss)
	rr.PeakRSSMiB = ltMiB(idle1.hwm)
	db := filepath.Join(dir, "nodezero.db")
	rr.SQLiteMiB = ltMiB(ltFileSizes(db, db+"-wal"))

	// Nothing should have changed while idle.
	if cl, err := ltGetClusterCounts(ctx, uc, clusterID); err != nil {
		return rr, err
	} else if cl.ReadyHostCount != int64(o.hosts) || cl.Status != wire.ClusterStatusReady {
		fmt.Fprintf(progress, "loadtest: warning: after the idle window the cluster is %s with %d of %d hosts known\n",
			cl.Status, cl.ReadyHostCount, o.hosts)
	}

	last := idle1
	if fleet != nil && o.install {
		ir, err := ltInstall(ctx, o, uc, svc, clusterID, infraEnvID, fleet.Hosts(), rec, alive, progress)
		if err != nil {
			// What the requests met so far says where the install stuck.
			reqs, _ := ltRequests(rec, start)
			fmt.Fprintf(progress, "loadtest: the install failed; requests so far:\n")
			_ = ltWriteRequests(progress, reqs)
			return rr, err
		}
		ir.SQLiteMiB = ltMiB(ltFileSizes(db, db+"-wal"))
		rr.Install = &ir
		if last, err = readProc(svc.pid()); err != nil {
			return rr, err
		}
		rr.PeakRSSMiB = ltMiB(last.hwm)
	}
	rr.CPUS = (last.cpu - before.cpu).Seconds()
	rr.Requests, rr.Errors = ltRequests(rec, start)
	return rr, nil
}

// ltRequests summarises the recorded requests and counts their errors.
func ltRequests(rec *simagent.Recorder, start time.Time) ([]ltRequestReport, int) {
	var out []ltRequestReport
	errs := 0
	for _, s := range rec.Summaries() {
		q := ltRequestReport{Kind: s.Kind, Count: s.Count, Errors: s.Errors, FirstError: s.FirstError,
			P50Ms: ltMs(s.P50), P99Ms: ltMs(s.P99), MaxMs: ltMs(s.Max)}
		if !s.Last.IsZero() {
			q.FirstS, q.LastS = s.First.Sub(start).Seconds(), s.Last.Sub(start).Seconds()
		}
		for _, e := range s.ErrorTexts {
			q.ErrorTexts = append(q.ErrorTexts, ltErrorText{Text: e.Text, Count: e.Count})
		}
		out = append(out, q)
		errs += s.Errors
	}
	return out, errs
}

// ltGetClusterCounts returns the cluster from the cluster list: its status
// and host counts without its hosts.
func ltGetClusterCounts(ctx context.Context, uc *wire.Client, clusterID string) (*wire.Cluster, error) {
	cls, err := uc.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range cls {
		if c != nil && c.ID == clusterID {
			return c, nil
		}
	}
	return nil, fmt.Errorf("cluster %s not listed", clusterID)
}

// ltWaitAllKnown polls the cluster list until every host is known, then
// reads the host list once for when the last host became known by the
// service's clock (status_updated_at). It returns that and when the poll
// saw it; a host list too large for the client leaves knownAt zero (the
// report then uses the poll's time).
func ltWaitAllKnown(ctx context.Context, o loadtestOptions, uc *wire.Client, clusterID, infraEnvID string, rec *simagent.Recorder, start time.Time, alive func() error) (knownAt, detected time.Time, err error) {
	var last *wire.Cluster
	for {
		if err := alive(); err != nil {
			return knownAt, detected, err
		}
		t := time.Now()
		c, err := ltGetClusterCounts(ctx, uc, clusterID)
		rec.Observe(ltKindPoll, time.Since(t), err)
		if err == nil {
			last = c
			if c.TotalHostCount == int64(o.hosts) && c.ReadyHostCount == int64(o.hosts) {
				break
			}
		}
		if time.Since(start) > o.timeout {
			state := "not listed"
			if last != nil {
				state = fmt.Sprintf("%d registered, cluster %s: %s", last.TotalHostCount, last.Status, last.StatusInfo)
			}
			return knownAt, detected, fmt.Errorf("%d of %d hosts known after %s (%s; last poll error: %v)",
				ltReadyCount(last), o.hosts, o.timeout, state, err)
		}
		select {
		case <-ctx.Done():
			return knownAt, detected, ctx.Err()
		case <-time.After(o.poll):
		}
	}
	detected = time.Now()
	t := time.Now()
	// The cluster's host list without inventories and connectivity
	// reports: their times are all this reads.
	hosts, err := uc.ListClusterHostsQuery(ctx, clusterID, wire.HostsQuery{})
	if errors.Is(err, wire.ErrResponseTooLarge) {
		// A limit of this optional read, not an answer of the service's
		// to count.
		return knownAt, detected, nil
	}
	rec.Observe(ltKindListHosts, time.Since(t), err)
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

func ltReadyCount(c *wire.Cluster) int64 {
	if c == nil {
		return 0
	}
	return c.ReadyHostCount
}

// ltReadyTimeout is how long the cluster may take to become ready once
// every host is known: longer means a cluster validation fails.
const ltReadyTimeout = time.Minute

// ltWaitClusterReady polls the cluster list (host counts, not hosts) until
// the cluster is ready, and returns when it became so by the service's
// clock. Past deadline it fails with the cluster validations that do not
// pass.
func ltWaitClusterReady(ctx context.Context, uc *wire.Client, clusterID string, deadline time.Time, alive func() error) (time.Time, error) {
	var last *wire.Cluster
	for {
		if err := alive(); err != nil {
			return time.Time{}, err
		}
		cls, err := uc.ListClusters(ctx)
		if err == nil {
			for _, c := range cls {
				if c.ID == clusterID {
					last = c
				}
			}
			if last != nil && last.Status == wire.ClusterStatusReady {
				return last.StatusUpdatedAt.Time(), nil
			}
		}
		if time.Now().After(deadline) {
			if last == nil {
				return time.Time{}, fmt.Errorf("cluster not ready: not listed (last error: %v)", err)
			}
			return time.Time{}, fmt.Errorf("cluster not ready with every host known: %s: %s%s", last.Status, last.StatusInfo,
				ltFailingValidations(last.ValidationsInfo))
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ltFailingValidations lists the validations of a validations_info
// document that neither pass nor are disabled.
func ltFailingValidations(info string) string {
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

// ltSinceStart is stamp - start in seconds; a stamp the service did not set
// (or one from before start: clocks) falls back to when it was seen.
func ltSinceStart(start, stamp, seen time.Time) float64 {
	if stamp.IsZero() || stamp.Before(start) {
		stamp = seen
	}
	return stamp.Sub(start).Seconds()
}

func ltCountStatus(hosts wire.HostList, st wire.HostStatus) int {
	n := 0
	for _, h := range hosts {
		if h != nil && h.Status == st {
			n++
		}
	}
	return n
}

// ltStatusHistogram is "known 980, insufficient 20".
func ltStatusHistogram(hosts wire.HostList) string {
	m := map[wire.HostStatus]int{}
	for _, h := range hosts {
		if h != nil {
			m[h.Status]++
		}
	}
	if len(m) == 0 {
		return "no hosts"
	}
	var parts []string
	for st, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", st, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// ltTotalRequests counts the agents' requests so far.
func ltTotalRequests(rec *simagent.Recorder) int {
	n := 0
	for _, s := range rec.Summaries() {
		if !ltUserKind(s.Kind) {
			n += s.Count + s.Errors
		}
	}
	return n
}

func ltMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ltMiB(b int64) float64 { return float64(b) / (1 << 20) }

// ltMedian returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func ltMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
