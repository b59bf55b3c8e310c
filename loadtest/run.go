package loadtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/loadtest/procstat"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/watch"
	"github.com/nodezero/nodezero/wire"
)

// runner is one run in progress: a fresh service in dir, a cluster, the
// agents, the ramp until every host is known and the cluster ready, the
// idle window, then (simulated agents, --install) the install until the
// cluster is installed.
type runner struct {
	o        Options
	dir      string
	progress io.Writer
	rec      *simagent.Recorder // every request, the agents' and the load test's

	svc                   *Service
	user                  *wire.Client
	watch                 *watch.Watcher // the cluster's status and host counts
	clusterID, infraEnvID string
	agentToken            string

	fleet  *simagent.Fleet // simulated agents, or
	agents *realAgents     // real ones

	start    time.Time       // when the agents started
	before   procstat.Sample // the service then
	self0    procstat.Sample // this process then
	machine0 time.Duration   // the machine's busy CPU then

	rr RunReport
}

// runOnce is one run in dir.
func runOnce(ctx context.Context, o Options, dir string, progress io.Writer) (RunReport, error) {
	r := &runner{o: o, dir: dir, progress: progress, rec: simagent.NewRecorder()}
	defer r.stop()
	if err := r.startService(ctx); err != nil {
		return r.rr, err
	}
	if err := r.startAgents(ctx); err != nil {
		return r.rr, err
	}
	if err := r.ramp(ctx); err != nil {
		return r.rr, err
	}
	last, err := r.idle(ctx)
	if err != nil {
		return r.rr, err
	}
	if r.fleet != nil && o.Install {
		if last, err = r.installed(ctx); err != nil {
			return r.rr, err
		}
	}
	r.rr.CPUS = (last.CPU - r.before.CPU).Seconds()
	r.rr.Requests, r.rr.Errors = requestReports(r.rec, r.start)
	return r.rr, nil
}

// startService starts the service, reads its tokens and registers the
// cluster.
func (r *runner) startService(ctx context.Context) error {
	var extra []string
	if r.o.Pprof != "" {
		extra = []string{"--pprof", r.o.Pprof}
	}
	svc, err := StartService(ctx, r.o.Bin, r.dir, extra...)
	if err != nil {
		return err
	}
	r.svc = svc
	r.rr.StartupMs = ms(svc.firstAnswer)
	userToken, err := ReadToken(r.dir, "user.token")
	if err != nil {
		return err
	}
	if r.agentToken, err = ReadToken(r.dir, "agent.token"); err != nil {
		return err
	}
	r.user, err = wire.NewClient(svc.URL, wire.WithUserToken(userToken),
		wire.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	if err != nil {
		return err
	}
	apiVIP, ingressVIP := realAPIVIP, realIngressVIP
	if r.o.Agents == "sim" {
		a, i, err := simagent.VIPs(simagent.DefaultNetwork)
		if err != nil {
			return err
		}
		apiVIP, ingressVIP = a.String(), i.String()
	}
	if r.clusterID, r.infraEnvID, err = RegisterCluster(ctx, r.user, apiVIP, ingressVIP); err != nil {
		return err
	}
	r.watch = counts(r.user, r.clusterID)
	return nil
}

// startAgents samples the service, this process and the machine, and
// starts the agents.
func (r *runner) startAgents(ctx context.Context) error {
	var err error
	if r.self0, err = procstat.Read(os.Getpid()); err != nil {
		return err
	}
	if r.before, err = procstat.Read(r.svc.PID()); err != nil {
		return err
	}
	if r.machine0, err = procstat.MachineCPU(); err != nil {
		return err
	}
	r.start = time.Now()
	if r.o.Agents != "sim" {
		r.agents, err = startRealAgents(r.o, r.dir, r.svc.URL, r.infraEnvID, r.agentToken)
		return err
	}
	o := r.o
	r.fleet, err = simagent.StartFleet(ctx, simagent.FleetConfig{URL: r.svc.URL, Token: r.agentToken, InfraEnvID: r.infraEnvID,
		Hosts: o.Hosts, Masters: Masters, Wait: o.Wait, Ramp: o.Ramp, Observer: r.rec,
		Install: simagent.InstallConfig{Dir: filepath.Join(r.dir, "hosts"), DiskMiB: o.DiskMiB, WriteTime: o.Write,
			RebootDelay: o.Reboot, Poll: o.InstallPoll}})
	return err
}

// alive fails once the service or a real agent has exited.
func (r *runner) alive() error {
	if err := r.svc.Alive(); err != nil {
		return err
	}
	if r.agents != nil {
		return r.agents.alive()
	}
	return nil
}

// stop ends the agents, then the service.
func (r *runner) stop() {
	switch {
	case r.fleet != nil:
		r.fleet.Stop()
	case r.agents != nil:
		r.agents.stop()
	}
	if r.user != nil {
		r.user.CloseIdleConnections()
	}
	if r.svc != nil {
		_ = r.svc.Stop()
	}
}

// ramp waits until every host is known and the cluster ready, and takes
// the ramp's figures.
func (r *runner) ramp(ctx context.Context) error {
	knownAt, detected, err := waitAllKnown(ctx, r.o, r.watch, r.rec, r.start, r.alive)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.progress, "loadtest: all %d hosts known after %.2f s\n", r.o.Hosts, sinceStart(r.start, knownAt, detected))
	readyAt, err := WaitClusterReady(ctx, r.user, r.clusterID, time.Now().Add(ReadyTimeout), r.alive)
	if err != nil {
		return err
	}
	ramp, err := procstat.Read(r.svc.PID())
	if err != nil {
		return err
	}
	rr := &r.rr
	rr.AllKnownS = sinceStart(r.start, knownAt, detected)
	rr.DetectedS = detected.Sub(r.start).Seconds()
	rr.ClusterReadyS = sinceStart(r.start, readyAt, ramp.At)
	rr.RampCPUS = (ramp.CPU - r.before.CPU).Seconds()
	rr.RampCores = rr.RampCPUS / ramp.At.Sub(r.start).Seconds()
	rr.RampRSSMiB = mib(ramp.HWM)
	return nil
}

// idle measures the idle window: every agent connected, nothing changing,
// nobody polling but the agents. It returns the service's sample at its
// end.
func (r *runner) idle(ctx context.Context) (procstat.Sample, error) {
	rr := &r.rr
	fmt.Fprintf(r.progress, "loadtest: cluster ready after %.2f s; idle for %s\n", rr.ClusterReadyS, r.o.Idle)
	reqs0 := totalRequests(r.rec)
	idle0, err := procstat.Read(r.svc.PID())
	if err != nil {
		return idle0, err
	}
	select {
	case <-ctx.Done():
		return idle0, ctx.Err()
	case <-time.After(r.o.Idle):
	}
	idle1, err := procstat.Read(r.svc.PID())
	if err != nil {
		return idle1, err
	}
	self1, err := procstat.Read(os.Getpid())
	if err != nil {
		return idle1, err
	}
	machine1, err := procstat.MachineCPU()
	if err != nil {
		return idle1, err
	}
	loadgen := self1.CPU - r.self0.CPU
	if r.agents != nil {
		loadgen += r.agents.cpu() // they started at zero
	}
	rr.LoadgenCPUS = loadgen.Seconds()
	rr.OtherCores = max(machine1-r.machine0-(idle1.CPU-r.before.CPU)-loadgen, 0).Seconds() / idle1.At.Sub(r.start).Seconds()
	rr.IdleRequests = totalRequests(r.rec) - reqs0
	rr.IdleCPUPct = 100 * (idle1.CPU - idle0.CPU).Seconds() / idle1.At.Sub(idle0.At).Seconds()
	rr.IdleRSSMiB = mib(idle1.RSS)
	rr.PeakRSSMiB = mib(idle1.HWM)
	rr.SQLiteMiB = mib(r.sqliteSize())

	// Nothing should have changed while idle.
	u, err := r.watch.Poll(ctx)
	if err != nil {
		return idle1, err
	}
	if cl := u.Cluster; cl.ReadyHostCount != int64(r.o.Hosts) || cl.Status != wire.ClusterStatusReady {
		fmt.Fprintf(r.progress, "loadtest: warning: after the idle window the cluster is %s with %d of %d hosts known\n",
			cl.Status, cl.ReadyHostCount, r.o.Hosts)
	}
	return idle1, nil
}

// installed runs the install and takes its figures; it returns the
// service's sample at its end.
func (r *runner) installed(ctx context.Context) (procstat.Sample, error) {
	ir, err := r.install(ctx, r.fleet.Hosts())
	if err != nil {
		// What the requests met so far says where the install stuck.
		reqs, _ := requestReports(r.rec, r.start)
		fmt.Fprintf(r.progress, "loadtest: the install failed; requests so far:\n")
		_ = writeRequests(r.progress, reqs)
		return procstat.Sample{}, err
	}
	// The cluster is installed once node zero's completion was answered;
	// its simulated controller records the call just after. Wait for the
	// fleet to end so that the report counts every request.
	if err := r.fleet.Wait(ctx); err != nil {
		return procstat.Sample{}, fmt.Errorf("install: the simulated hosts did not end after the install: %w", err)
	}
	ir.SQLiteMiB = mib(r.sqliteSize())
	r.rr.Install = &ir
	last, err := procstat.Read(r.svc.PID())
	if err != nil {
		return last, err
	}
	r.rr.PeakRSSMiB = mib(last.HWM)
	return last, nil
}

// sqliteSize is the size of the service's database and its WAL.
func (r *runner) sqliteSize() int64 {
	db := filepath.Join(r.dir, "nodezero.db")
	return fileSizes(db, db+"-wal")
}

// requestReports summarises the recorded requests and counts their
// errors.
func requestReports(rec *simagent.Recorder, start time.Time) ([]RequestReport, int) {
	var out []RequestReport
	errs := 0
	for _, s := range rec.Summaries() {
		q := RequestReport{Kind: s.Kind, Count: s.Count, Errors: s.Errors, FirstError: s.FirstError,
			P50Ms: ms(s.P50), P99Ms: ms(s.P99), MaxMs: ms(s.Max)}
		if !s.Last.IsZero() {
			q.FirstS, q.LastS = s.First.Sub(start).Seconds(), s.Last.Sub(start).Seconds()
		}
		for _, e := range s.ErrorTexts {
			q.ErrorTexts = append(q.ErrorTexts, ErrorText{Text: e.Text, Count: e.Count})
		}
		out = append(out, q)
		errs += s.Errors
	}
	return out, errs
}

// totalRequests counts the agents' requests so far.
func totalRequests(rec *simagent.Recorder) int {
	n := 0
	for _, s := range rec.Summaries() {
		if !userKind(s.Kind) {
			n += s.Count + s.Errors
		}
	}
	return n
}

// sinceStart is stamp - start in seconds; a stamp the service did not set
// (or one from before start: clocks) falls back to when it was seen.
func sinceStart(start, stamp, seen time.Time) float64 {
	if stamp.IsZero() || stamp.Before(start) {
		stamp = seen
	}
	return stamp.Sub(start).Seconds()
}

// fileSizes returns the summed size of the files that exist among paths.
func fileSizes(paths ...string) int64 {
	var n int64
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}
