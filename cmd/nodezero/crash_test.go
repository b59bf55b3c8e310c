package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/wire"
)

// The crash harness (issue #8): sandbox installs in which node zero's
// daemon, or a peer's agent, is killed with SIGKILL at points across the
// flow and restarted the way systemd restarts it. Every install must
// complete; what the API showed before a kill must still be there after
// it (no acknowledged write lost: events as a prefix in order, host stages
// never going back, the install never going back once begun); every host
// boots its installed disk exactly once; an agent killed mid-write writes
// its disk again and the installed boot verifies it.
//
// The points are taken in flow order. A point whose window an install
// passed before the harness could act (a previous restart was still under
// way) waits for the next install; the test fails if a point is never hit.

// crashView is what the harness sees of the install at one moment.
type crashView struct {
	cluster *wire.Cluster
	hosts   map[string]*wire.Host // by host id
	names   map[string]string     // hostname to host id
	events  []*wire.Event
}

func (v *crashView) host(name string) *wire.Host { return v.hosts[v.names[name]] }

// stageOf returns a host's stage and write percentage (-1 when none).
func (v *crashView) stageOf(name string) (wire.HostStage, int) {
	h := v.host(name)
	if h == nil || h.Progress == nil {
		return "", -1
	}
	pct := -1
	if n, err := strconv.Atoi(strings.TrimSuffix(h.Progress.ProgressInfo, "%")); err == nil && strings.HasSuffix(h.Progress.ProgressInfo, "%") {
		pct = n
	}
	return h.Progress.CurrentStage, pct
}

// crashPoint is one kill: of which host's process, when (at), and when it
// is too late for this install (past).
type crashPoint struct {
	name     string
	host     string // node zero is master-0
	at, past func(v *crashView) bool
	// logAt, when set, must also hold of the host's log since its last
	// start (a write under way shows there before the API hears of it).
	logAt func(log string) bool
}

func first[A, B any](a A, _ B) A { return a }

// writing: the host's log shows a write begun and not finished.
func writing(log string) bool {
	return strings.Contains(log, `msg="writing image"`) && !strings.Contains(log, `msg="image written"`)
}

const crashNodeZero = "master-0"

// The stage order a host goes through, for "at or after" predicates.
var crashStageOrder = []wire.HostStage{
	wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWaitingForBootkube,
	wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForController,
	wire.HostStageRebooting, wire.HostStageWaitingForIgnition, wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone,
}

// stageRank orders stages by crashStageOrder; the bootstrap host's
// Waiting for bootkube comes after Waiting for control plane, so its rank
// is taken from the host's role list where it matters (stageAtLeast).
func stageRank(s wire.HostStage) int { return slices.Index(crashStageOrder, s) }

func clusterIn(st ...wire.ClusterStatus) func(*crashView) bool {
	return func(v *crashView) bool { return v.cluster != nil && slices.Contains(st, v.cluster.Status) }
}

func clusterPast(st ...wire.ClusterStatus) func(*crashView) bool {
	order := []wire.ClusterStatus{wire.ClusterStatusInsufficient, wire.ClusterStatusReady, wire.ClusterStatusPreparingForInstallation,
		wire.ClusterStatusInstalling, wire.ClusterStatusFinalizing, wire.ClusterStatusInstalled}
	return func(v *crashView) bool {
		if v.cluster == nil {
			return false
		}
		cur := slices.Index(order, v.cluster.Status)
		for _, s := range st {
			if cur <= slices.Index(order, s) {
				return false
			}
		}
		return true
	}
}

func hostCount(n int) func(*crashView) bool {
	return func(v *crashView) bool { return len(v.hosts) >= n }
}

func anyHostIn(st ...wire.HostStatus) func(*crashView) bool {
	return func(v *crashView) bool {
		for _, h := range v.hosts {
			if slices.Contains(st, h.Status) {
				return true
			}
		}
		return false
	}
}

// stageIn: the host is at one of stages, with at least minPct written
// when it writes.
func stageIn(host string, minPct int, stages ...wire.HostStage) func(*crashView) bool {
	return func(v *crashView) bool {
		s, pct := v.stageOf(host)
		if !slices.Contains(stages, s) {
			return false
		}
		return s != wire.HostStageWritingImageToDisk || pct >= minPct
	}
}

// stagePast: the host is past every one of stages (or done writing past
// maxPct when the stage is the write).
func stagePast(host string, maxPct int, stages ...wire.HostStage) func(*crashView) bool {
	return func(v *crashView) bool {
		s, pct := v.stageOf(host)
		if s == "" {
			return false
		}
		for _, st := range stages {
			if s == st {
				if s == wire.HostStageWritingImageToDisk && maxPct >= 0 {
					return pct > maxPct
				}
				return false
			}
			if stageRank(s) < stageRank(st) {
				return false
			}
		}
		return true
	}
}

// crashPoints are the kills, in flow order: registration, validation,
// preparation, installation (node zero's and peers' writes, the waits),
// the reboots and the joins, and finalizing.
var crashPoints = []crashPoint{
	{"registration: the first host registered", crashNodeZero, hostCount(1), hostCount(5), nil},
	{"registration: every host registered", crashNodeZero, hostCount(5), anyHostIn(wire.HostStatusKnown), nil},
	// One validation point: a host known, the cluster insufficient or
	// ready. A host known with the cluster not yet ready is a window of one
	// refresh (the hosts settle together and the cluster follows at once),
	// which a fast machine passed in six installs running.
	{"validation: hosts known, the cluster not started", crashNodeZero, anyHostIn(wire.HostStatusKnown), clusterPast(wire.ClusterStatusReady), nil},
	{"preparation: the cluster preparing for installation", crashNodeZero, clusterIn(wire.ClusterStatusPreparingForInstallation), clusterPast(wire.ClusterStatusPreparingForInstallation), nil},
	{"installation: the cluster installing", crashNodeZero, clusterIn(wire.ClusterStatusInstalling), stagePast("master-1", -1, wire.HostStageInstalling), nil},
	{"installation: master-1 starting", crashNodeZero, stageIn("master-1", 0, wire.HostStageStartingInstallation, wire.HostStageInstalling), stagePast("master-1", 40, wire.HostStageWritingImageToDisk), nil},
	{"mid disk write of a peer: master-1 at 10 % or more", crashNodeZero, stageIn("master-1", 10, wire.HostStageWritingImageToDisk), stagePast("master-1", -1, wire.HostStageWritingImageToDisk), nil},
	{"mid disk write of a peer: worker-0 at 50 % or more", crashNodeZero, stageIn("worker-0", 50, wire.HostStageWritingImageToDisk), stagePast("worker-0", -1, wire.HostStageWritingImageToDisk), nil},
	{"agent killed mid-write: worker-1", "worker-1", stageIn("worker-1", 0, wire.HostStageWritingImageToDisk), stagePast("worker-1", -1, wire.HostStageWritingImageToDisk), writing},
	{"agent killed mid-write: master-2", "master-2", stageIn("master-2", 0, wire.HostStageWritingImageToDisk), stagePast("master-2", -1, wire.HostStageWritingImageToDisk), writing},
	{"node zero writing its own disk", crashNodeZero, stageIn(crashNodeZero, 0, wire.HostStageWritingImageToDisk), stagePast(crashNodeZero, -1, wire.HostStageWritingImageToDisk), nil},
	{"a worker waiting for the control plane", crashNodeZero, stageIn("worker-0", 0, wire.HostStageWaitingForControlPlane), stagePast("worker-0", -1, wire.HostStageWaitingForControlPlane), nil},
	{"node zero waiting for the control plane to join", crashNodeZero, stageIn(crashNodeZero, 0, wire.HostStageWaitingForControlPlane), stagePast(crashNodeZero, -1, wire.HostStageWaitingForControlPlane), nil},
	{"waiting for joins: a master rebooting", crashNodeZero, stageIn("master-1", 0, wire.HostStageRebooting), stagePast("master-1", -1, wire.HostStageRebooting), nil},
	{"waiting for joins: a master booted from its disk", crashNodeZero, stageIn("master-1", 0, wire.HostStageConfiguring, wire.HostStageJoined), stagePast("master-1", -1, wire.HostStageJoined), nil},
	{"waiting for joins: a master joined or done, the install going on", crashNodeZero,
		func(v *crashView) bool {
			return stageIn("master-2", 0, wire.HostStageJoined, wire.HostStageDone)(v) && clusterIn(wire.ClusterStatusInstalling)(v)
		}, clusterPast(wire.ClusterStatusInstalling), nil},
	{"node zero waiting for the controller", crashNodeZero, stageIn(crashNodeZero, 0, wire.HostStageWaitingForBootkube, wire.HostStageWaitingForController), stagePast(crashNodeZero, -1, wire.HostStageWaitingForController), nil},
	{"node zero rebooting", crashNodeZero, stageIn(crashNodeZero, 0, wire.HostStageRebooting), stagePast(crashNodeZero, -1, wire.HostStageRebooting), nil},
	{"node zero booted from its disk", crashNodeZero, stageIn(crashNodeZero, 0, wire.HostStageConfiguring, wire.HostStageJoined), stagePast(crashNodeZero, -1, wire.HostStageJoined), nil},
	{"a worker booted from its disk", crashNodeZero, stageIn("worker-1", 0, wire.HostStageRebooting, wire.HostStageWaitingForIgnition, wire.HostStageConfiguring, wire.HostStageJoined), stagePast("worker-1", -1, wire.HostStageJoined), nil},
	{"finalizing: node zero done, the cluster finishing", crashNodeZero,
		func(v *crashView) bool {
			return clusterIn(wire.ClusterStatusFinalizing)(v) || clusterIn(wire.ClusterStatusInstalling)(v) && stageIn(crashNodeZero, 0, wire.HostStageDone)(v)
		}, clusterPast(wire.ClusterStatusFinalizing), nil},
}

// crashRecord is one kill as the harness made it.
type crashRecord struct {
	point   string
	host    string
	install int
	before  crashView
	logAt   int64 // the host log's size when it was killed
}

// hostLog returns the host's log since its process last started, and the
// log's whole size.
func (h *crashHarness) hostLog(name string) (string, int64) {
	b, err := os.ReadFile(h.hosts[name].Log())
	if err != nil {
		return "", 0
	}
	s := string(b)
	if i := strings.LastIndex(s, "==== boot "); i >= 0 {
		return s[i:], int64(len(b))
	}
	return s, int64(len(b))
}

// crashHarness drives one install's kills and checks its invariants.
type crashHarness struct {
	t       *testing.T
	c       *wire.Client
	hosts   map[string]*sandbox.Host
	pending []crashPoint // shared across installs: what is left to hit
	install int
	start   time.Time
	missed  map[string]bool // points this install passed

	mu       sync.Mutex
	kills    []crashRecord
	problems []string
	// seen: every host status and stage the harness observed, per host.
	seen map[string][]string
}

func (h *crashHarness) problem(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.problems = append(h.problems, fmt.Sprintf(format, a...))
}

// view reads the install through the API; nil while node zero is away.
func (h *crashHarness) view(ctx context.Context) *crashView {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cs, err := h.c.ListClusters(ctx)
	if err != nil {
		return nil
	}
	v := &crashView{hosts: map[string]*wire.Host{}, names: map[string]string{}}
	if len(cs) == 0 {
		return v
	}
	v.cluster = cs[0]
	hs, err := h.c.ListClusterHosts(ctx, v.cluster.ID)
	if err != nil {
		return nil
	}
	for _, x := range hs {
		v.hosts[x.ID] = x
		if x.RequestedHostname != "" {
			v.names[x.RequestedHostname] = x.ID
		}
	}
	evs, err := h.c.ListEvents(ctx, wire.EventsQuery{ClusterID: v.cluster.ID, Limit: 1 << 20})
	if err != nil {
		return nil
	}
	v.events = evs
	return v
}

// run watches the install until ctx ends, killing at the pending points.
func (h *crashHarness) run(ctx context.Context) {
	var last *crashView
	for ctx.Err() == nil {
		v := h.view(ctx)
		if v == nil {
			backoff.Sleep(ctx, 20*time.Millisecond)
			continue
		}
		if last != nil {
			h.compare(*last, *v, "")
		}
		h.observe(v)
		last = v
		// The first pending point this install has not passed yet; those
		// it passed wait for the next install.
		for i := 0; i < len(h.pending); i++ {
			p := h.pending[i]
			if p.past(v) {
				if !h.missed[p.name] {
					h.missed[p.name] = true
					h.t.Logf("install %d: %q passed before the harness could act; left for the next install", h.install, p.name)
				}
				continue
			}
			if !p.at(v) || (p.logAt != nil && !p.logAt(first(h.hostLog(p.host)))) {
				break
			}
			if !h.kill(ctx, p, v) {
				return
			}
			// The point is hit once the kill is made: if the install
			// completes before the restarted process is seen (a kill in
			// the last seconds), crashInstall's checks of the finished
			// install judge it.
			h.pending = slices.Delete(h.pending, i, i+1)
			// Wait for the restarted process, then check that what the
			// API showed before the kill is still there.
			after := h.recovered(ctx, p)
			if after == nil {
				return
			}
			h.compare(*v, *after, p.name)
			last = after
			break
		}
		backoff.Sleep(ctx, 15*time.Millisecond)
	}
}

func (h *crashHarness) observe(v *crashView) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, x := range v.hosts {
		name := x.RequestedHostname
		var s wire.HostStage
		if x.Progress != nil {
			s = x.Progress.CurrentStage
		}
		w := string(x.Status) + "/" + string(s)
		if l := h.seen[name]; len(l) == 0 || l[len(l)-1] != w {
			h.seen[name] = append(h.seen[name], w)
		}
	}
}

func (h *crashHarness) kill(ctx context.Context, p crashPoint, v *crashView) bool {
	sh := h.hosts[p.host]
	for ctx.Err() == nil {
		_, size := h.hostLog(p.host)
		if sh.Kill() {
			h.mu.Lock()
			h.kills = append(h.kills, crashRecord{point: p.name, host: p.host, install: h.install, before: *v, logAt: size})
			h.mu.Unlock()
			s, pct := v.stageOf(p.host)
			h.t.Logf("install %d, %.1fs: killed %s at %q (cluster %s, %s %s %d%%)", h.install, time.Since(h.start).Seconds(), p.host, p.name, v.cluster.Status, p.host, s, pct)
			return true
		}
		backoff.Sleep(ctx, 5*time.Millisecond) // between a reboot and the next process
	}
	return false
}

// recovered waits until the killed host runs again and node zero answers.
func (h *crashHarness) recovered(ctx context.Context, p crashPoint) *crashView {
	sh := h.hosts[p.host]
	boots, _ := sh.Counts()
	for ctx.Err() == nil {
		if b, _ := sh.Counts(); b > boots || p.host != crashNodeZero {
			if v := h.view(ctx); v != nil {
				h.t.Logf("install %d, %.1fs: node zero answers again", h.install, time.Since(h.start).Seconds())
				return v
			}
		}
		backoff.Sleep(ctx, 20*time.Millisecond)
	}
	return nil
}

// compare checks that nothing the API showed in before is lost in after.
func (h *crashHarness) compare(before, after crashView, point string) {
	where := "between two reads"
	if point != "" {
		where = "across the kill at " + strconv.Quote(point)
	}
	if before.cluster != nil && after.cluster == nil {
		h.problem("%s: the cluster is gone", where)
		return
	}
	// Events: what was there is still there, in the same order, and new
	// ones follow.
	if len(after.events) < len(before.events) {
		h.problem("%s: %d events before, %d after", where, len(before.events), len(after.events))
	} else {
		for i, e := range before.events {
			a := after.events[i]
			if a.Message != e.Message || a.Name != e.Name || !time.Time(a.EventTime).Equal(time.Time(e.EventTime)) {
				h.problem("%s: event %d changed: %q at %s became %q at %s", where, i, e.Message, time.Time(e.EventTime), a.Message, time.Time(a.EventTime))
				break
			}
		}
	}
	for i := 1; i < len(after.events); i++ {
		if time.Time(after.events[i].EventTime).Before(time.Time(after.events[i-1].EventTime)) {
			h.problem("%s: events out of order at %d: %q before %q", where, i, after.events[i-1].Message, after.events[i].Message)
			break
		}
	}
	// Hosts: none lost, no stage going back.
	for id, b := range before.hosts {
		a := after.hosts[id]
		name := b.RequestedHostname
		if a == nil {
			h.problem("%s: host %s (%s) is gone", where, id, name)
			continue
		}
		var bs, as wire.HostStage
		if b.Progress != nil {
			bs = b.Progress.CurrentStage
		}
		if a.Progress != nil {
			as = a.Progress.CurrentStage
		}
		if bs != "" && stageRank(as) < stageRank(bs) && !(bs == wire.HostStageWaitingForControlPlane && as == wire.HostStageWaitingForBootkube) {
			h.problem("%s: host %s went back from stage %q to %q", where, name, bs, as)
		}
		if b.Role != "" && b.Role != wire.HostRoleAutoAssign && a.Role != b.Role {
			h.problem("%s: host %s changed role from %s to %s", where, name, b.Role, a.Role)
		}
	}
	// The install, once begun, never goes back.
	begun := []wire.ClusterStatus{wire.ClusterStatusInstalling, wire.ClusterStatusFinalizing, wire.ClusterStatusInstalled}
	if before.cluster != nil && slices.Contains(begun, before.cluster.Status) && !slices.Contains(begun, after.cluster.Status) {
		h.problem("%s: the cluster went from %s to %s", where, before.cluster.Status, after.cluster.Status)
	}
}

// crashInstall runs one sandbox install with the harness.
func crashInstall(t *testing.T, n int, pending []crashPoint) ([]crashPoint, []crashRecord) {
	dir := t.TempDir()
	hw, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hw"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &crashHarness{t: t, pending: pending, install: n, seen: map[string][]string{}, start: time.Now(), missed: map[string]bool{}}
	var wg sync.WaitGroup
	var out strings.Builder
	var outMu sync.Mutex
	o := sandbox.Options{
		Dir: dir, HW: hw, Disks: shmDisks(t, dir), Keep: true, Bin: nodezeroBinary(t), LogLevel: "info",
		Masters: 3, Workers: 2, ImageSize: 48 << 20, Timeout: 5 * time.Minute, CheckInterval: 10 * time.Second,
		// A booted host's Configuring and Joined last as long as this, so
		// that the points there are windows the harness can hit.
		Settle:      1500 * time.Millisecond,
		ConfigImage: sandboxConfigImage(),
		Stdout:      writerFunc(func(p []byte) (int, error) { outMu.Lock(); defer outMu.Unlock(); return out.Write(p) }),
		Started: func(c *wire.Client, hosts []*sandbox.Host) {
			h.c = c
			h.hosts = map[string]*sandbox.Host{}
			for _, x := range hosts {
				h.hosts[x.Name] = x
			}
			wg.Add(1)
			go func() { defer wg.Done(); h.run(ctx) }()
		},
	}
	err = sandbox.Run(ctx, o)
	cancel()
	wg.Wait()
	outMu.Lock()
	log := out.String()
	outMu.Unlock()
	if err != nil {
		t.Fatalf("install %d did not complete: %v\n%s", n, err, log)
	}
	sum := readSummary(t, dir)
	if sum.Status != wire.ClusterStatusInstalled {
		t.Fatalf("install %d: cluster %s (%s)", n, sum.Status, sum.StatusInfo)
	}
	for _, p := range h.problems {
		t.Errorf("install %d: %s", n, p)
	}
	// No host installed twice: once the journal says the image is
	// written, or the host booted from it, no write begins again (a kill
	// between the end of a write and the journal's record of it redoes
	// the write, which is safe); every host booted its installed disk;
	// none left installed once there, and none went through error.
	for _, x := range h.hosts {
		b, err := os.ReadFile(x.Log())
		if err != nil {
			t.Fatal(err)
		}
		hl := string(b)
		for _, mark := range []string{"installed disk verified", "the image was written and verified before the restart"} {
			if i := strings.Index(hl, mark); i >= 0 && strings.Contains(hl[i:], `msg="writing image"`) {
				t.Errorf("install %d: %s began a write after %q", n, x.Name, mark)
			}
		}
		if !strings.Contains(hl, `msg="image written"`) || !strings.Contains(hl, "installed disk verified") {
			t.Errorf("install %d: %s never finished a write and booted its installed disk", n, x.Name)
		}
	}
	for name, l := range h.seen {
		if i := slices.IndexFunc(l, func(w string) bool { return strings.HasPrefix(w, string(wire.HostStatusInstalled)+"/") }); i >= 0 {
			for _, w := range l[i:] {
				if !strings.HasPrefix(w, string(wire.HostStatusInstalled)+"/") {
					t.Errorf("install %d: host %s left installed: %v", n, name, l)
					break
				}
			}
		}
	}
	for name, l := range h.seen {
		for _, w := range l {
			if strings.HasPrefix(w, string(wire.HostStatusError)+"/") || strings.HasPrefix(w, string(wire.HostStatusCancelled)+"/") {
				t.Errorf("install %d: host %s went through %s: %v", n, name, w, l)
			}
		}
	}
	// An agent killed mid-write resumed, wrote its disk again, and its
	// installed boot verified it.
	for _, k := range h.kills {
		if k.host == crashNodeZero {
			continue
		}
		b, err := os.ReadFile(h.hosts[k.host].Log())
		if err != nil {
			t.Fatal(err)
		}
		// The log up to the kill (give or take the lines written while
		// the signal was on its way) and after it.
		pre, post := string(b[:min(int(k.logAt), len(b))]), string(b[min(int(k.logAt), len(b)):])
		if !strings.Contains(post, "resuming the installation") {
			t.Errorf("install %d: %s did not resume its installation after its kill", n, k.host)
		}
		if strings.Contains(pre, `msg="image written"`) {
			t.Errorf("install %d: %s had finished its write before the kill; the point is mid-write", n, k.host)
		}
		// The kill cut a write: the resumed installation writes the disk
		// again, in full, and finishes it.
		if w, d := strings.Count(post, `msg="writing image"`), strings.Count(post, `msg="image written"`); w != 1 || d != 1 {
			t.Errorf("install %d: %s after its kill began %d writes and finished %d; want 1 and 1", n, k.host, w, d)
		}
		if !strings.Contains(post, "installed disk verified") {
			t.Errorf("install %d: %s: its installed boot did not verify the disk", n, k.host)
		}
	}
	return h.pending, h.kills
}

// readSummary reads a sandbox's summary.json.
func readSummary(t *testing.T, dir string) sandbox.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum sandbox.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestCrashFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: up to six sandbox installs with kills")
	}
	pending := slices.Clone(crashPoints)
	var all []crashRecord
	const maxInstalls = 6
	for n := 1; n <= maxInstalls && len(pending) > 0; n++ {
		var kills []crashRecord
		pending, kills = crashInstall(t, n, pending)
		all = append(all, kills...)
		if t.Failed() {
			break
		}
	}
	for _, p := range pending {
		t.Errorf("crash point %q never hit in %d installs", p.name, maxInstalls)
	}
	t.Logf("%d kills survived:", len(all))
	for _, k := range all {
		t.Logf("  install %d: %s killed at %q", k.install, k.host, k.point)
	}
}
