package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	v2 "github.com/nodezero/nodezero/daemon/v2"
	"github.com/nodezero/nodezero/hostagent/simagent"
)

// ltKindPoll is the load test's own request: the host list it polls while
// hosts come up. It is reported apart from the agents' requests.
const ltKindPoll = "list-hosts (poller)"

// loadtestRun is one run: a fresh service in dir, a cluster, the agents,
// the ramp until every host is known and the cluster ready, then the idle
// window.
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
	uc, err := v2.NewClient(svc.url, v2.WithUserToken(userToken),
		v2.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
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
	start := time.Now()
	if o.agents == "sim" {
		fleet, err := simagent.StartFleet(ctx, simagent.FleetConfig{URL: svc.url, Token: agentToken, InfraEnvID: infraEnvID,
			Hosts: o.hosts, Masters: ltMasters, Wait: o.wait, Ramp: o.ramp, Observer: rec})
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
	knownAt, detected, err := ltWaitAllKnown(ctx, o, uc, infraEnvID, rec, start, alive)
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
	hosts, err := uc.ListHosts(ctx, infraEnvID)
	if err != nil {
		return rr, err
	}
	if known := ltCountStatus(hosts, v2.HostStatusKnown); known != o.hosts {
		fmt.Fprintf(progress, "loadtest: warning: %d of %d hosts known after the idle window (%s)\n", known, o.hosts, ltStatusHistogram(hosts))
	}
	for _, s := range rec.Summaries() {
		rr.Requests = append(rr.Requests, ltRequestReport{Kind: s.Kind, Count: s.Count, Errors: s.Errors, FirstError: s.FirstError,
			P50Ms: ltMs(s.P50), P99Ms: ltMs(s.P99), MaxMs: ltMs(s.Max)})
	}
	return rr, nil
}

// ltWaitAllKnown polls the host list until every host is known. It returns
// when the last host became known by the service's clock
// (status_updated_at), and when the poll saw it.
func ltWaitAllKnown(ctx context.Context, o loadtestOptions, uc *v2.Client, infraEnvID string, rec *simagent.Recorder, start time.Time, alive func() error) (knownAt, detected time.Time, err error) {
	var last v2.HostList
	for {
		if err := alive(); err != nil {
			return knownAt, detected, err
		}
		t := time.Now()
		hosts, err := uc.ListHosts(ctx, infraEnvID)
		rec.Observe(ltKindPoll, time.Since(t), err)
		if err == nil {
			last = hosts
			if len(hosts) == o.hosts && ltCountStatus(hosts, v2.HostStatusKnown) == o.hosts {
				for _, h := range hosts {
					if at := h.StatusUpdatedAt.Time(); at.After(knownAt) {
						knownAt = at
					}
				}
				return knownAt, time.Now(), nil
			}
		}
		if time.Since(start) > o.timeout {
			return knownAt, detected, fmt.Errorf("%d of %d hosts known after %s (%s; last poll error: %v)",
				ltCountStatus(last, v2.HostStatusKnown), o.hosts, o.timeout, ltStatusHistogram(last), err)
		}
		select {
		case <-ctx.Done():
			return knownAt, detected, ctx.Err()
		case <-time.After(o.poll):
		}
	}
}

// ltReadyTimeout is how long the cluster may take to become ready once
// every host is known: longer means a cluster validation fails.
const ltReadyTimeout = time.Minute

// ltWaitClusterReady polls the cluster list (host counts, not hosts) until
// the cluster is ready, and returns when it became so by the service's
// clock. Past deadline it fails with the cluster validations that do not
// pass.
func ltWaitClusterReady(ctx context.Context, uc *v2.Client, clusterID string, deadline time.Time, alive func() error) (time.Time, error) {
	var last *v2.Cluster
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
			if last != nil && last.Status == v2.ClusterStatusReady {
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
	var groups map[string][]struct{ ID, Status, Message string }
	if json.Unmarshal([]byte(info), &groups) != nil {
		return ""
	}
	var out []string
	for _, g := range groups {
		for _, v := range g {
			if v.Status != "success" && v.Status != "disabled" {
				out = append(out, fmt.Sprintf("%s %s (%s)", v.ID, v.Status, v.Message))
			}
		}
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

func ltCountStatus(hosts v2.HostList, st v2.HostStatus) int {
	n := 0
	for _, h := range hosts {
		if h != nil && h.Status == st {
			n++
		}
	}
	return n
}

// ltStatusHistogram is "known 980, insufficient 20".
func ltStatusHistogram(hosts v2.HostList) string {
	m := map[v2.HostStatus]int{}
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

func ltTotalRequests(rec *simagent.Recorder) int {
	n := 0
	for _, s := range rec.Summaries() {
		if s.Kind != ltKindPoll {
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
