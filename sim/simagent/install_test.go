package simagent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/wire"
)

const (
	testCluster  = "2a7f0e64-1111-4222-8333-444455556666"
	testIgnition = `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/nodezero/role"}]}}`
)

// fakeCluster is an assisted service with one installing cluster: it keeps
// the hosts' stages from their progress reports, serves the lists the
// installer's waits read, and logs, in order, the stages and step replies
// each host sent. onList runs (under the lock) on every cluster-hosts
// request with its count, so a test moves the other hosts on as the
// installer polls, without timing anything.
type fakeCluster struct {
	t       *testing.T
	install *wire.Step

	mu       sync.Mutex
	hosts    []*wire.Host
	status   wire.ClusterStatus
	log      []string // "<hostname> <stage>[: info]" and "<hostname> reply <step> <exit code>"
	lists    int
	gets     int
	onList   func(f *fakeCluster, n int)
	onStage  func(f *fakeCluster, host string, stage wire.HostStage) // nil: none
	stopNext bool                                                    // the next GET hands out stop-installation
	complete []wire.CompletionParams
	stderr   map[wire.StepType]string
	done     chan struct{} // closed once a stage Done or a complete arrives, as the test's want says
	doneWhen func(f *fakeCluster) bool
}

// The infos a booted host reports its last stages with.
const (
	infoIgnition    = installer.BootedInfoIgnition
	infoConfiguring = installer.BootedInfoConfiguring
	infoJoined      = installer.BootedInfoJoined
	infoDone        = installer.BootedInfoDone
)

func (f *fakeCluster) host(id string) *wire.Host {
	for _, h := range f.hosts {
		if h.ID == id {
			return h
		}
	}
	f.t.Errorf("unknown host %s", id)
	return &wire.Host{}
}

// setStage puts a peer at stage. Callers hold f.mu.
func (f *fakeCluster) setStage(name string, stage wire.HostStage) {
	for _, h := range f.hosts {
		if h.RequestedHostname == name {
			h.Progress = &wire.HostProgressInfo{CurrentStage: stage}
			if stage == wire.HostStageDone {
				h.Status = wire.HostStatusInstalled
			}
			return
		}
	}
	f.t.Errorf("no host %s", name)
}

// lastStage is the last stage host reported. Callers hold f.mu.
func (f *fakeCluster) lastStage(name string) string {
	for _, l := range slices.Backward(f.log) {
		if rest, ok := strings.CutPrefix(l, name+" "); ok && !strings.HasPrefix(rest, "reply ") {
			stage, _, _ := strings.Cut(rest, ": ")
			return stage
		}
	}
	return ""
}

func (f *fakeCluster) serve(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	const ie, host = apiPrefix + "/infra-envs/{ie}/hosts", apiPrefix + "/infra-envs/{ie}/hosts/{host}"
	mux.HandleFunc("POST "+ie, func(w http.ResponseWriter, r *http.Request) {
		var body wire.HostCreateParams
		_ = json.NewDecoder(r.Body).Decode(&body)
		args := wire.MustEncodeEmbedded(wire.NextStepCmdRequest{HostID: body.HostID, InfraEnvID: r.PathValue("ie")})
		writeJSON(w, http.StatusCreated, wire.HostRegistrationResponse{Host: wire.Host{ID: body.HostID},
			NextStepRunnerCommand: &wire.HostRegistrationResponseNextStepRunnerCommand{Args: []string{args}}})
	})
	mux.HandleFunc("GET "+host+"/instructions", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.gets++
		var out *wire.Steps
		switch {
		case f.gets == 1:
			out = steps(f.install)
		case f.stopNext:
			f.stopNext = false
			out = steps(&wire.Step{StepType: wire.StepTypeStopInstallation, StepID: "stop-installation-1"})
		}
		f.mu.Unlock()
		if out == nil {
			wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
			select {
			case <-r.Context().Done():
				return
			case <-time.After(wait):
			}
			out = steps()
		}
		writeJSON(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST "+host+"/instructions", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rep, err := wire.ParseStepReply(b)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"reason": err.Error()})
			return
		}
		f.mu.Lock()
		f.log = append(f.log, f.host(r.PathValue("host")).RequestedHostname+" reply "+string(rep.StepType)+" "+itoa(rep.ExitCode))
		f.stderr[rep.StepType] = rep.Error
		f.checkDone()
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("PUT "+host+"/progress", func(w http.ResponseWriter, r *http.Request) {
		var p wire.HostProgress
		_ = json.NewDecoder(r.Body).Decode(&p)
		f.mu.Lock()
		h := f.host(r.PathValue("host"))
		line := h.RequestedHostname + " " + string(p.CurrentStage)
		if p.ProgressInfo != "" {
			line += ": " + p.ProgressInfo
		}
		f.log = append(f.log, line)
		f.setStage(h.RequestedHostname, p.CurrentStage)
		if f.onStage != nil {
			f.onStage(f, h.RequestedHostname, p.CurrentStage)
		}
		f.checkDone()
		f.mu.Unlock()
		writeJSON(w, http.StatusOK, h)
	})
	mux.HandleFunc("GET "+apiPrefix+"/infra-env/{ie}/hosts/{host}/downloads/ignition", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, testIgnition)
	})
	mux.HandleFunc("GET "+apiPrefix+"/clusters/{id}/hosts", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.lists++
		if f.onList != nil {
			f.onList(f, f.lists)
		}
		b, _ := json.Marshal(f.hosts)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET "+apiPrefix+"/clusters/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		// node zero's first look finds the cluster still installing; the
		// next, finalizing.
		if f.status == wire.ClusterStatusInstalling {
			defer func() { f.status = wire.ClusterStatusFinalizing }()
		}
		writeJSON(w, http.StatusOK, wire.Cluster{ID: r.PathValue("id"), Status: f.status})
	})
	mux.HandleFunc("POST "+apiPrefix+"/clusters/{id}/actions/complete-installation", func(w http.ResponseWriter, r *http.Request) {
		var p wire.CompletionParams
		_ = json.NewDecoder(r.Body).Decode(&p)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.status != wire.ClusterStatusFinalizing {
			writeJSON(w, http.StatusConflict, map[string]string{"reason": "not finalizing"})
			return
		}
		f.complete = append(f.complete, p)
		f.status = wire.ClusterStatusInstalled
		f.checkDone()
		writeJSON(w, http.StatusAccepted, wire.Cluster{ID: r.PathValue("id"), Status: f.status})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// checkDone closes done once doneWhen holds. Callers hold f.mu.
func (f *fakeCluster) checkDone() {
	if f.doneWhen != nil && f.doneWhen(f) {
		f.doneWhen = nil
		close(f.done)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// installFixture is one simulated host with its peers in a fake cluster.
type installFixture struct {
	f     *fakeCluster
	agent *Agent
	host  Host
	dir   string
	rec   *Recorder
}

// newInstallFixture makes host index 0 of class c, installing as role,
// with the peers given by name and role.
func newInstallFixture(t *testing.T, c Class, role wire.HostRole, install InstallConfig, peers map[string]wire.HostRole) *installFixture {
	t.Helper()
	h, err := NewHost(0, DefaultNetwork, c)
	if err != nil {
		t.Fatal(err)
	}
	disk := h.Inventory().Disks[0]
	req := wire.InstallCmdRequest{ClusterID: testCluster, InfraEnvID: testInfraEnv, HostID: h.ID, Role: role,
		BootDevice: disk.ByID, ControlPlaneCount: 3,
		InstallerArgs: `["--append-karg","ip=` + strings.ReplaceAll(h.MAC, ":", "-") + `:dhcp"]`}
	if role == wire.HostRoleWorker {
		req.ControlPlaneCount = 0
	}
	self := &wire.Host{ID: h.ID, RequestedHostname: h.Hostname, Role: role, Status: wire.HostStatusInstallingInProgress}
	if role == wire.HostRoleBootstrap {
		self.Role, self.Bootstrap = wire.HostRoleMaster, true
	}
	f := &fakeCluster{t: t, hosts: []*wire.Host{self}, status: wire.ClusterStatusInstalling, stderr: map[wire.StepType]string{},
		done:    make(chan struct{}),
		install: &wire.Step{StepType: wire.StepTypeInstall, StepID: "install-1", Args: []string{wire.MustEncodeEmbedded(req)}}}
	names := make([]string, 0, len(peers))
	for name := range peers {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		f.hosts = append(f.hosts, &wire.Host{ID: "00000000-0000-4000-8000-00000000000" + itoa(int64(i+1)), RequestedHostname: name,
			Role: peers[name], Status: wire.HostStatusInstallingInProgress})
	}
	srv := f.serve(t)
	client, err := wire.NewClient(srv.URL, wire.WithAgentToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.CloseIdleConnections)
	if install.Dir == "x" {
		install.Dir = t.TempDir()
	}
	rec := NewRecorder()
	a, err := New(Config{Client: client, InfraEnvID: testInfraEnv, Host: h, Wait: 20 * time.Millisecond, Observer: rec, Install: install})
	if err != nil {
		t.Fatal(err)
	}
	a.minPollGap = 0
	return &installFixture{f: f, agent: a, host: h, dir: install.Dir, rec: rec}
}

// run runs the agent until f.done closes and Run returns by itself, or
// fails the test after a minute.
func (x *installFixture) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ended := make(chan error, 1)
	go func() { ended <- x.agent.Run(ctx) }()
	select {
	case <-x.f.done:
	case <-ctx.Done():
		x.f.mu.Lock()
		defer x.f.mu.Unlock()
		t.Fatalf("the install did not get where the test waits for; log:\n%s", strings.Join(x.f.log, "\n"))
	}
	if err := <-ended; err != nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (context %v), want nil on its own once the host is installed", err, ctx.Err())
	}
}

func (x *installFixture) logOf(name string) []string {
	x.f.mu.Lock()
	defer x.f.mu.Unlock()
	var out []string
	for _, l := range x.f.log {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// writing is the write progress the installer reports: the stage, then
// every 5 %.
func writing() []string {
	out := []string{string(wire.HostStageWritingImageToDisk)}
	for p := 5; p <= 100; p += 5 {
		out = append(out, string(wire.HostStageWritingImageToDisk)+": "+itoa(int64(p))+"%")
	}
	return out
}

var fastInstall = InstallConfig{Dir: "x", DiskMiB: 1, RebootDelay: time.Millisecond, Poll: 5 * time.Millisecond}

func TestInstallWorker(t *testing.T) {
	x := newInstallFixture(t, Worker, wire.HostRoleWorker, fastInstall,
		map[string]wire.HostRole{"m1": wire.HostRoleMaster, "m2": wire.HostRoleMaster, "m3": wire.HostRoleMaster})
	name := x.host.Hostname
	x.f.doneWhen = func(f *fakeCluster) bool { return f.lastStage(name) == string(wire.HostStageDone) }
	// The worker waits until two masters are done.
	x.f.onList = func(f *fakeCluster, n int) {
		if got := f.lastStage(name); got != string(wire.HostStageWaitingForControlPlane) {
			t.Errorf("cluster hosts listed while the worker is at %q, want only while waiting for the control plane", got)
		}
		switch n {
		case 2:
			f.setStage("m1", wire.HostStageDone)
		case 3:
			f.setStage("m2", wire.HostStageDone)
		}
	}
	x.run(t)

	want := append([]string{"Starting installation: worker", "Installing: worker"}, writing()...)
	want = append(want, "Waiting for control plane: waiting for the control plane hosts to be installed",
		"Rebooting: rebooting in 1ms",
		"reply install 0", // posted before the reboot: the discovery agent dies with it
		"Waiting for ignition: "+infoIgnition, "Configuring: "+infoConfiguring, "Joined: "+infoJoined, "Done: "+infoDone)
	if diff := cmp.Diff(want, x.logOf(name)); diff != "" {
		t.Errorf("the worker's reports (-want +got):\n%s", diff)
	}
	x.f.mu.Lock()
	lists := x.f.lists
	x.f.mu.Unlock()
	if lists != 3 {
		t.Errorf("the worker listed the cluster's hosts %d times, want 3 (until two masters were done)", lists)
	}

	// The disk: a sparse file of the disk's size, the image, the ignition
	// with the installer args folded in.
	fi, err := os.Stat(filepath.Join(x.dir, name, diskFileName))
	if err != nil {
		t.Fatal(err)
	}
	if size := x.host.Inventory().Disks[0].SizeBytes; fi.Size() != size {
		t.Errorf("disk file is %d bytes, want the disk's %d", fi.Size(), size)
	}
	b, err := os.ReadFile(filepath.Join(x.dir, name, rootDirName, "opt/install-dir/worker-"+x.host.ID+".ign"))
	if err != nil {
		t.Fatalf("the installer's saved ignition: %v", err)
	}
	if !strings.Contains(string(b), "ip="+strings.ReplaceAll(x.host.MAC, ":", "-")+":dhcp") {
		t.Errorf("saved ignition %s lacks the installer args' karg", b)
	}
	counts := map[string]int{}
	for _, s := range x.rec.Summaries() {
		if s.Errors > 0 {
			t.Errorf("%s: %d errors: %v", s.Kind, s.Errors, s.ErrorTexts)
		}
		counts[s.Kind] = s.Count
	}
	if counts[KindIgnition] != 1 || counts[KindClusterHosts] != 3 || counts[KindProgress] != len(want)-1 {
		t.Errorf("recorded %v; want 1 ignition, 3 cluster-hosts, %d progress", counts, len(want)-1)
	}
}

func TestInstallBootstrap(t *testing.T) {
	x := newInstallFixture(t, Master, wire.HostRoleBootstrap, fastInstall,
		map[string]wire.HostRole{"m1": wire.HostRoleMaster, "m2": wire.HostRoleMaster, "w1": wire.HostRoleWorker, "w2": wire.HostRoleWorker})
	name := x.host.Hostname
	x.f.doneWhen = func(f *fakeCluster) bool { return len(f.complete) > 0 }
	x.f.mu.Lock()
	for _, p := range []string{"m1", "m2"} {
		x.f.setStage(p, wire.HostStageRebooting)
	}
	for _, p := range []string{"w1", "w2"} {
		x.f.setStage(p, wire.HostStageWritingImageToDisk)
	}
	x.f.mu.Unlock()
	// Node zero waits for the masters to join, then for every worker to
	// be written; each wait sees a few lists before the peers move on.
	joinedAt, writtenAt := 0, 0
	x.f.onList = func(f *fakeCluster, n int) {
		stage := f.lastStage(name)
		switch {
		case joinedAt == 0 && n == 3:
			if stage != string(wire.HostStageWaitingForControlPlane) {
				t.Errorf("bootstrap at %q while no master has joined, want Waiting for control plane", stage)
			}
			f.setStage("m1", wire.HostStageJoined)
			f.setStage("m2", wire.HostStageDone)
			joinedAt = n
		case joinedAt > 0 && writtenAt == 0 && n == joinedAt+3:
			if stage != string(wire.HostStageWaitingForController) {
				t.Errorf("bootstrap at %q while the workers write, want Waiting for controller", stage)
			}
			f.setStage("w1", wire.HostStageRebooting)
			f.setStage("w2", wire.HostStageDone)
			writtenAt = n
		}
	}
	x.run(t)

	want := append([]string{"Starting installation: bootstrap", "Installing: bootstrap"}, writing()...)
	want = append(want,
		"Waiting for control plane: waiting for the control plane hosts to join",
		"Waiting for bootkube", "Waiting for controller", "Rebooting: rebooting in 1ms", "reply install 0",
		"Configuring: "+infoConfiguring, "Joined: "+infoJoined, "Done: "+infoDone)
	got := x.logOf(name)
	for i, l := range got { // the two waits' infos explain the built-in payload; not compared
		if s, _, ok := strings.Cut(l, ": "); ok && (s == string(wire.HostStageWaitingForBootkube) || s == string(wire.HostStageWaitingForController)) {
			got[i] = s
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the bootstrap host's reports (-want +got):\n%s", diff)
	}
	if writtenAt == 0 {
		t.Fatal("the bootstrap host never waited for the workers")
	}
	x.f.mu.Lock()
	defer x.f.mu.Unlock()
	if x.f.lists != writtenAt {
		t.Errorf("the bootstrap host listed the hosts %d times, want %d: it rebooted at the first list with every worker written", x.f.lists, writtenAt)
	}
	if len(x.f.complete) != 1 || x.f.complete[0].IsSuccess == nil || !*x.f.complete[0].IsSuccess {
		t.Errorf("complete-installation calls %+v, want one with is_success true", x.f.complete)
	}
}

func TestInstallRefusedWithoutDir(t *testing.T) {
	x := newInstallFixture(t, Worker, wire.HostRoleWorker, InstallConfig{}, nil)
	x.f.doneWhen = func(f *fakeCluster) bool { return len(f.log) > 0 }
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- x.agent.Run(ctx) }()
	select {
	case <-x.f.done:
	case <-time.After(time.Minute):
		t.Fatal("no reply to the install step")
	}
	cancel()
	<-ended
	x.f.mu.Lock()
	defer x.f.mu.Unlock()
	if diff := cmp.Diff([]string{x.host.Hostname + " reply install -1"}, x.f.log); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if got := x.f.stderr[wire.StepTypeInstall]; !strings.Contains(got, errNoInstallDir.Error()) {
		t.Errorf("install stderr %q, want it to say %q", got, errNoInstallDir)
	}
}

func TestStopInstallation(t *testing.T) {
	// No master ever finishes: the worker waits until the service stops
	// the installation.
	x := newInstallFixture(t, Worker, wire.HostRoleWorker, fastInstall, map[string]wire.HostRole{"m1": wire.HostRoleMaster})
	name := x.host.Hostname
	x.f.onStage = func(f *fakeCluster, host string, stage wire.HostStage) {
		if stage == wire.HostStageWaitingForControlPlane {
			f.stopNext = true
		}
	}
	x.f.doneWhen = func(f *fakeCluster) bool {
		n := 0
		for _, l := range f.log {
			if strings.Contains(l, " reply ") {
				n++
			}
		}
		return n == 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- x.agent.Run(ctx) }()
	select {
	case <-x.f.done:
	case <-time.After(time.Minute):
		t.Fatal("no replies to the install and stop-installation steps")
	}
	cancel()
	if err := <-ended; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
	got := x.logOf(name)
	// The stopped install answers 1 (the real step's exit code), then the
	// stop itself 0; nothing after, and no Failed report.
	if diff := cmp.Diff([]string{"reply install 1", "reply stop-installation 0"}, got[len(got)-2:]); diff != "" {
		t.Errorf("last replies (-want +got):\n%s", diff)
	}
	if slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, string(wire.HostStageFailed)) }) {
		t.Errorf("a stopped install reported Failed: %v", got)
	}
}
