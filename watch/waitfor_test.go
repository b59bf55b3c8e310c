package watch

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/assisted/assistedtest"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// The wait-for tests run node zero's real service in-process: a SQLite
// store in a temp dir, the assisted service with its monitor off and the
// API with token checks, on loopback HTTP. The test registers the cluster
// and plays the hosts' agents (simulated hardware, check replies from
// assistedtest) and the user. Statuses the service does not reach on its
// own in this build (installing, installed, error) are written to the
// store between two service instances, as the install flow would set them.

const wfPullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`

// wfNode is node zero's service under test.
type wfNode struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	key    *ecdsa.PrivateKey
	tokens map[auth.Scheme]string
	srv    *httptest.Server

	mu      sync.RWMutex // held for writing while the service restarts
	st      *store.Store
	svc     *assisted.Service
	handler http.Handler

	user, agent           *wire.Client
	clusterID, infraEnvID string
	hosts                 []simagent.Host
}

func newWFNode(t *testing.T) *wfNode {
	t.Helper()
	n := &wfNode{t: t, ctx: context.Background(), dir: t.TempDir(), tokens: map[auth.Scheme]string{}}
	var err error
	if n.key, err = auth.GenerateKey(); err != nil {
		t.Fatal(err)
	}
	for _, s := range auth.Schemes {
		if n.tokens[s], err = auth.Sign(n.key, s, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	n.start()
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.RLock()
		defer n.mu.RUnlock()
		n.handler.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		n.srv.Close()
		n.stop()
	})
	if n.user, err = wire.NewClient(n.srv.URL, wire.WithUserToken(n.tokens[auth.User]), wire.WithHTTPClient(n.srv.Client())); err != nil {
		t.Fatal(err)
	}
	if n.agent, err = wire.NewClient(n.srv.URL, wire.WithAgentToken(n.tokens[auth.Agent]), wire.WithHTTPClient(n.srv.Client())); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *wfNode) start() {
	n.t.Helper()
	st, err := store.Open(n.ctx, filepath.Join(n.dir, "nodezero.db"), store.Options{})
	if err != nil {
		n.t.Fatal(err)
	}
	svc, err := assisted.New(assisted.Config{Store: st, MonitorInterval: -1, MaxWait: time.Millisecond})
	if err != nil {
		st.Close()
		n.t.Fatal(err)
	}
	n.st, n.svc = st, svc
	n.handler = api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(&n.key.PublicKey, nil)})
}

func (n *wfNode) stop() {
	if n.svc != nil {
		n.svc.Close()
		n.st.Close()
		n.svc, n.st = nil, nil
	}
}

// cluster registers a three-master cluster and its infra-env.
func (n *wfNode) cluster() {
	n.t.Helper()
	apiVIP, ingressVIP, err := simagent.VIPs(simagent.DefaultNetwork)
	if err != nil {
		n.t.Fatal(err)
	}
	cp := int64(3)
	c, err := n.user.RegisterCluster(n.ctx, wire.ClusterCreateParams{
		Name: "ostest", OpenshiftVersion: "4.18", BaseDNSDomain: "example.com", PullSecret: wfPullSecret,
		ControlPlaneCount: &cp,
		APIVIPs:           []*wire.APIVIP{{IP: wire.IP(apiVIP.String())}},
		IngressVIPs:       []*wire.IngressVIP{{IP: wire.IP(ingressVIP.String())}},
	})
	if err != nil {
		n.t.Fatal(err)
	}
	ie, err := n.user.RegisterInfraEnv(n.ctx, wire.InfraEnvCreateParams{Name: "ostest", PullSecret: wfPullSecret, ClusterID: &c.ID})
	if err != nil {
		n.t.Fatal(err)
	}
	n.clusterID, n.infraEnvID = c.ID, ie.ID
}

// addHost does what a master's agent does in its first seconds: register,
// ask for instructions, post the inventory; then every host answers its
// checks as healthy peers on one network would.
func (n *wfNode) addHost() simagent.Host {
	n.t.Helper()
	h, err := simagent.NewHost(len(n.hosts), simagent.DefaultNetwork, simagent.Master)
	if err != nil {
		n.t.Fatal(err)
	}
	if _, err := n.agent.RegisterHost(n.ctx, n.infraEnvID, wire.HostCreateParams{HostID: h.ID}); err != nil {
		n.t.Fatal(err)
	}
	if _, err := n.agent.NextSteps(n.ctx, n.infraEnvID, h.ID, time.Now().Unix(), 0); err != nil {
		n.t.Fatal(err)
	}
	inv, err := json.Marshal(h.Inventory())
	if err != nil {
		n.t.Fatal(err)
	}
	reply := wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-0badc0de", Output: string(inv)}
	if err := n.agent.PostStepReply(n.ctx, n.infraEnvID, h.ID, reply); err != nil {
		n.t.Fatal(err)
	}
	n.hosts = append(n.hosts, h)
	c, err := n.user.GetCluster(n.ctx, n.clusterID)
	if err != nil {
		n.t.Fatal(err)
	}
	if err := assistedtest.AnswerChecks(n.ctx, n.user, n.agent, n.infraEnvID, c); err != nil {
		n.t.Fatal(err)
	}
	return h
}

// ready registers the cluster and three masters and checks it is ready.
func (n *wfNode) ready() {
	n.t.Helper()
	n.cluster()
	for range 3 {
		n.addHost()
	}
	if c := n.get(); c.Status != wire.ClusterStatusReady {
		n.t.Fatalf("cluster %s (%s), want ready; validations %s", c.Status, c.StatusInfo, c.ValidationsInfo)
	}
}

func (n *wfNode) get() *wire.Cluster {
	n.t.Helper()
	c, err := n.user.GetCluster(n.ctx, n.clusterID)
	if err != nil {
		n.t.Fatal(err)
	}
	return c
}

// installing starts the install and moves the cluster and its hosts on to
// installing, as the preparation would.
func (n *wfNode) installing() {
	n.t.Helper()
	if _, err := n.user.InstallCluster(n.ctx, n.clusterID); err != nil {
		n.t.Fatal(err)
	}
	n.rewrite(wire.ClusterStatusInstalling, "Installation in progress", func(h *wire.Host) {
		h.Status, h.StatusInfo = wire.HostStatusInstalling, "Installation is in progress"
	})
	if c := n.get(); c.Status != wire.ClusterStatusInstalling {
		n.t.Fatalf("cluster after the rewrite: %s (%s), want installing", c.Status, c.StatusInfo)
	}
}

// bootstrap returns the bootstrap host's id.
func (n *wfNode) bootstrap() string {
	n.t.Helper()
	for _, h := range n.get().Hosts {
		if h.Bootstrap {
			return h.ID
		}
	}
	n.t.Fatal("no bootstrap host")
	return ""
}

// progress reports a host's install stages, as its agent does.
func (n *wfNode) progress(hostID string, stages ...wire.HostStage) {
	n.t.Helper()
	for _, st := range stages {
		if err := n.agent.UpdateHostInstallProgress(n.ctx, n.infraEnvID, hostID, wire.HostProgress{CurrentStage: st}); err != nil {
			n.t.Fatalf("progress %s: %v", st, err)
		}
	}
}

// rewrite stops the service, sets the cluster's status (and each host
// through fh, when not nil) in the store, and starts a service on the
// result. Requests wait meanwhile.
func (n *wfNode) rewrite(status wire.ClusterStatus, info string, fh func(*wire.Host)) {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.svc.Close()
	err := n.st.Update(n.ctx, func(tx *store.Tx) error {
		row, err := tx.Cluster(n.clusterID)
		if err != nil {
			return err
		}
		// The document is the service's: the cluster under "cluster",
		// other keys kept as they are.
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(row.Doc, &doc); err != nil {
			return err
		}
		var c wire.Cluster
		if err := json.Unmarshal(doc["cluster"], &c); err != nil {
			return err
		}
		c.Status, c.StatusInfo = status, info
		if doc["cluster"], err = json.Marshal(&c); err != nil {
			return err
		}
		row.Status, row.StatusInfo = string(status), info
		if row.Doc, err = json.Marshal(doc); err != nil {
			return err
		}
		if err := tx.PutCluster(row); err != nil {
			return err
		}
		if fh == nil {
			return nil
		}
		hosts, err := tx.Hosts(store.HostFilter{ClusterID: n.clusterID})
		if err != nil {
			return err
		}
		for _, hr := range hosts {
			var h wire.Host
			if err := json.Unmarshal(hr.Doc, &h); err != nil {
				return err
			}
			fh(&h)
			hr.Status, hr.StatusInfo = string(h.Status), h.StatusInfo
			if hr.Doc, err = json.Marshal(&h); err != nil {
				return err
			}
			if err := tx.PutHost(hr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		n.t.Fatalf("rewrite store: %v", err)
	}
	n.st.Close()
	n.svc, n.st = nil, nil
	n.start()
}

// wfClock is the watcher's clock in step tests.
type wfClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *wfClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *wfClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// wfBuffer is a log buffer a watcher goroutine writes while a test reads.
type wfBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *wfBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *wfBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// take returns the lines written since the last take.
func (b *wfBuffer) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSuffix(b.buf.String(), "\n")
	b.buf.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// wfWatcher is a waiter the test polls by hand, on a fake clock.
type wfWatcher struct {
	t     *testing.T
	w     *waiter
	out   *wfBuffer
	clock *wfClock
}

func (n *wfNode) watcher(level slog.Level) *wfWatcher {
	n.t.Helper()
	c, err := wire.NewClient(n.srv.URL, wire.WithWatcherToken(n.tokens[auth.Watcher]), wire.WithHTTPClient(n.srv.Client()))
	if err != nil {
		n.t.Fatal(err)
	}
	sw := &wfWatcher{t: n.t, out: &wfBuffer{}, clock: &wfClock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}}
	cfg := defaultWaitConfig()
	cfg.client, cfg.tokenGiven, cfg.log, cfg.now = c, true, Logger(sw.out, level), sw.clock.Now
	sw.w = newWaiter(cfg)
	return sw
}

// poll polls once, wants no error and returns the result and the lines.
func (sw *wfWatcher) poll() (pollResult, []string) {
	sw.t.Helper()
	res, err := sw.w.poll(context.Background())
	if err != nil {
		sw.t.Fatalf("poll: %v\n%s", err, sw.out.String())
	}
	return res, sw.out.take()
}

// wfInfo and wfWarn are log lines as wait-for prints them.
func wfInfo(msg string) string { return fmt.Sprintf("level=info msg=%q", msg) }
func wfWarn(msg string) string { return fmt.Sprintf("level=warning msg=%q", msg) }

// wfInOrder fails unless every line of want is in got, in that order.
func wfInOrder(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	i := 0
	for _, line := range got {
		if i < len(want) && line == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("%s: line %q missing or out of order; got:\n%s", what, want[i], strings.Join(got, "\n"))
	}
}

func wfNotIn(t *testing.T, what string, got []string, unwanted string) {
	t.Helper()
	if slices.Contains(got, unwanted) {
		t.Errorf("%s: unexpected line %q; got:\n%s", what, unwanted, strings.Join(got, "\n"))
	}
}

// TestWaitForDiscovery follows a cluster from registration to a stalled
// ready: status lines on change only, failing validations as warnings at
// first sight and as info once fixed, the infra-env's latest event, the
// retry after a failed preparation and the ready timeout.
func TestWaitForDiscovery(t *testing.T) {
	n := newWFNode(t)
	sw := n.watcher(slog.LevelInfo)

	if _, lines := sw.poll(); len(lines) != 0 {
		t.Errorf("no cluster yet: got %q, want nothing at info level", lines)
	}
	n.cluster()
	_, lines := sw.poll()
	wfInOrder(t, "cluster registered", lines,
		wfInfo("User input is required to continue cluster installation"),
		wfWarn("Cluster validation: The cluster must have exactly 3 dedicated control plane nodes. Add or remove hosts, or change their roles configurations to meet the requirement."),
		wfInfo("Registered infra env"))
	wfNotIn(t, "cluster registered", lines, wfInfo("Cluster validation: The pull secret is set."))
	if _, lines := sw.poll(); len(lines) != 0 {
		t.Errorf("nothing changed: got %q, want no line", lines)
	}

	n.addHost()
	_, lines = sw.poll()
	wfInOrder(t, "first host", lines,
		wfInfo("Cluster is not ready for install. Check validations"),
		wfWarn("Cluster validation: The cluster has hosts that are not ready to install."))

	n.addHost()
	n.addHost()
	_, lines = sw.poll()
	wfInOrder(t, "three hosts", lines,
		wfInfo("Cluster is ready for install"),
		wfInfo("Cluster validation: All hosts in the cluster are ready to install."),
		wfInfo("Cluster validation: The cluster has the exact amount of dedicated control plane nodes."),
		wfInfo("Host sim-master-0002: updated status from insufficient to known (Host is ready to be installed)"))
	for _, l := range lines {
		if strings.Contains(l, "Host sim-master-") && strings.Contains(l, " validation: ") {
			t.Errorf("three hosts: a passing host validation printed at info level: %s", l)
		}
	}

	if _, err := n.user.InstallCluster(n.ctx, n.clusterID); err != nil {
		t.Fatal(err)
	}
	_, lines = sw.poll()
	wfInOrder(t, "install", lines, wfInfo("Preparing cluster for installation"))
	if _, err := n.user.CancelInstallation(n.ctx, n.clusterID); err != nil {
		t.Fatal(err)
	}
	_, lines = sw.poll()
	wfInOrder(t, "preparation cancelled", lines,
		wfInfo("Cluster is ready for install"), wfWarn("failed to prepare cluster installation, retrying"))

	sw.clock.Advance(59 * time.Second)
	if _, lines := sw.poll(); len(lines) != 0 {
		t.Errorf("ready for 59 s: got %q, want no line", lines)
	}
	sw.clock.Advance(2 * time.Second)
	if _, err := sw.w.poll(n.ctx); err == nil || err.Error() != "failed to progress after all hosts available" {
		t.Errorf("ready for 61 s: poll error %v, want failed to progress after all hosts available", err)
	}
}

// TestWaitForInstallStages follows the install: bootstrap complete when the
// bootstrap host reaches Rebooting, not before; finalizing; installed.
func TestWaitForInstallStages(t *testing.T) {
	n := newWFNode(t)
	n.ready()
	sw := n.watcher(slog.LevelInfo)
	sw.poll()
	n.installing()
	res, lines := sw.poll()
	wfInOrder(t, "installing", lines, wfInfo("Cluster installation in progress"))
	if res.bootstrapDone || res.installed {
		t.Errorf("installing: %+v, want neither bootstrap done nor installed", res)
	}

	boot := n.bootstrap()
	var bootName string
	for _, h := range n.hosts {
		if h.ID == boot {
			bootName = h.Hostname
		}
	}
	n.progress(boot, wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageCopyingRegistryDataToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube,
		wire.HostStageWaitingForController)
	res, lines = sw.poll()
	wfInOrder(t, "waiting for controller", lines, wfInfo("Host: "+bootName+", reached installation stage Waiting for controller"))
	if res.bootstrapDone {
		t.Errorf("bootstrap host waiting for the controller: bootstrap done, want not yet")
	}
	n.progress(boot, wire.HostStageRebooting)
	res, lines = sw.poll()
	wfInOrder(t, "rebooting", lines, wfInfo("Host: "+bootName+", reached installation stage Rebooting"))
	if !res.bootstrapDone || res.installed {
		t.Errorf("bootstrap host rebooting: %+v, want bootstrap done, not installed", res)
	}

	for _, h := range n.hosts {
		if h.ID != boot {
			n.progress(h.ID, wire.HostStageDone)
		}
	}
	n.progress(boot, wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone)
	res, lines = sw.poll()
	wfInOrder(t, "every host done", lines, wfInfo("Finalizing cluster installation"))
	if !res.bootstrapDone || res.installed {
		t.Errorf("finalizing: %+v, want bootstrap done, not installed", res)
	}
	n.rewrite(wire.ClusterStatusInstalled, "Cluster is installed", nil)
	res, lines = sw.poll()
	wfInOrder(t, "installed", lines, wfInfo("Cluster is installed"))
	if !res.installed {
		t.Errorf("installed: %+v, want installed", res)
	}
}

// TestWaitForStoppedInstall: hosts waiting for the user are named, a
// cluster in error is given its grace, a cancelled one ends the wait.
func TestWaitForStoppedInstall(t *testing.T) {
	n := newWFNode(t)
	n.ready()
	n.installing()
	sw := n.watcher(slog.LevelInfo)
	sw.poll()

	const bootOrder = "Expected the host to boot from disk, but it booted the installation image - please reboot and fix boot order to boot from disk"
	first := n.hosts[0].ID
	n.rewrite(wire.ClusterStatusInstalling, "Installation in progress", func(h *wire.Host) {
		if h.ID == first {
			h.Status, h.StatusInfo = wire.HostStatusInstallingPendingUserAction, bootOrder
		}
	})
	_, lines := sw.poll()
	wfInOrder(t, "pending user action", lines,
		wfInfo("Cluster has hosts requiring user input"),
		wfWarn("Host "+n.hosts[0].Hostname+" "+bootOrder),
		wfWarn("cluster has stopped installing... working to recover installation"))

	n.rewrite(wire.ClusterStatusError, "cluster has hosts in error", nil)
	_, lines = sw.poll()
	wfInOrder(t, "error", lines,
		wfInfo("Cluster has hosts in error"), wfWarn("cluster has stopped installing... working to recover installation"))
	sw.clock.Advance(sw.w.cfg.errorGrace)
	if _, lines := sw.poll(); len(lines) != 0 {
		t.Errorf("error within its grace: got %q, want no line", lines)
	}
	sw.clock.Advance(time.Second)
	if _, err := sw.w.poll(n.ctx); err == nil || !strings.Contains(err.Error(), "cluster in error for 5m1s") {
		t.Errorf("error past its grace: poll error %v, want cluster in error for 5m1s", err)
	}

	n.rewrite(wire.ClusterStatusInstalling, "Installation in progress", func(h *wire.Host) {
		h.Status, h.StatusInfo = wire.HostStatusInstalling, "Installation is in progress"
	})
	sw.poll()
	if _, err := n.user.CancelInstallation(n.ctx, n.clusterID); err != nil {
		t.Fatal(err)
	}
	res, err := sw.w.poll(n.ctx)
	if err == nil || !strings.Contains(err.Error(), "cluster installation was cancelled") {
		t.Errorf("cancelled: poll %+v, error %v, want cluster installation was cancelled", res, err)
	}
	wfInOrder(t, "cancelled", sw.out.take(), wfInfo("Cluster installation cancelled"))
}

// wfRunWait runs WaitFor with o in the background, its lines at info
// level as `nodezero wait-for` prints them by default; the test ends it if
// it is still running.
func wfRunWait(t *testing.T, o WaitOptions) (out *wfBuffer, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &wfBuffer{}
	o.Log = Logger(out, slog.LevelInfo)
	ch := make(chan error, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		ch <- WaitFor(ctx, o)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return out, ch
}

// wfResult waits for a background wait-for to end.
func wfResult(t *testing.T, done <-chan error, out *wfBuffer) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("wait-for did not end within a minute; output:\n%s", out)
		return nil
	}
}

// waitOptions are a wait for target on n with its watcher token, asking
// every 5 ms.
func (n *wfNode) waitOptions(target Target) WaitOptions {
	return WaitOptions{Target: target, URL: n.srv.URL, Token: n.tokens[auth.Watcher], Interval: 5 * time.Millisecond}
}

// TestWaitForComplete runs a wait through a whole install while the test
// moves the hosts on. (Where the command reads the target among its flags,
// cmd/nodezero's TestWaitForFlags says.)
func TestWaitForComplete(t *testing.T) {
	for _, target := range []Target{BootstrapComplete, InstallComplete} {
		t.Run(string(target), func(t *testing.T) {
			n := newWFNode(t)
			n.ready()
			n.installing()
			out, done := wfRunWait(t, n.waitOptions(target))
			boot := n.bootstrap()
			n.progress(boot, wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
				wire.HostStageCopyingRegistryDataToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube,
				wire.HostStageWaitingForController, wire.HostStageRebooting)
			if target == InstallComplete {
				for _, h := range n.hosts {
					if h.ID != boot {
						n.progress(h.ID, wire.HostStageDone)
					}
				}
				n.progress(boot, wire.HostStageConfiguring, wire.HostStageJoined, wire.HostStageDone)
				n.rewrite(wire.ClusterStatusInstalled, "Cluster is installed", nil)
			}
			if err := wfResult(t, done, out); err != nil {
				t.Fatalf("wait-for %s: %v\n%s", target, err, out)
			}
			lines := out.take()
			want := []string{wfInfo("Cluster installation in progress"), wfInfo("Bootstrap is complete")}
			if target == InstallComplete {
				want = append(want, wfInfo("Install complete!"),
					wfInfo("Access the OpenShift web-console here: https://console-openshift-console.apps.ostest.example.com"))
			} else {
				wfNotIn(t, string(target), lines, wfInfo("Install complete!"))
			}
			wfInOrder(t, string(target), lines, want...)
		})
	}
}

// TestWaitForExitCodes: a run that times out or fails exits 5 before the
// bootstrap completes, 6 after.
func TestWaitForExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target Target
		setup  func(n *wfNode)
		code   int
		want   string
	}{
		{"bootstrap timeout", BootstrapComplete, func(n *wfNode) { n.cluster() }, 5,
			"bootstrap failed to complete: timed out after"},
		{"install timeout before the bootstrap", InstallComplete, func(n *wfNode) { n.cluster() }, 5,
			"bootstrap failed to complete: timed out after"},
		{"install timeout after the bootstrap", InstallComplete, func(n *wfNode) {
			n.ready()
			n.installing()
			n.progress(n.bootstrap(), wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageRebooting)
		}, 6, "install failed to complete: timed out after"},
		{"cancelled during the install", InstallComplete, func(n *wfNode) {
			n.ready()
			n.installing()
			n.progress(n.bootstrap(), wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageRebooting)
			if _, err := n.user.CancelInstallation(n.ctx, n.clusterID); err != nil {
				n.t.Fatal(err)
			}
		}, 6, "install failed to complete: cluster installation was cancelled"},
		{"cancelled before the bootstrap", BootstrapComplete, func(n *wfNode) {
			n.ready()
			n.installing()
			if _, err := n.user.CancelInstallation(n.ctx, n.clusterID); err != nil {
				n.t.Fatal(err)
			}
		}, 5, "bootstrap failed to complete: cluster installation was cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newWFNode(t)
			tc.setup(n)
			o := n.waitOptions(tc.target)
			o.Timeout = 300 * time.Millisecond
			out, done := wfRunWait(t, o)
			err := wfResult(t, done, out)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("wait-for %s = %v (%T), want exit code %d and %q\n%s", tc.target, err, err, tc.code, tc.want, out)
			}
			what := "Bootstrap"
			if tc.code == 6 {
				what = "Install"
			}
			lines := out.take()
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, `level=error msg="`+what+" failed to complete: ") {
				t.Errorf("last line %s, want the error", last)
			}
		})
	}
}

// TestWaitForRefusedToken: a token node zero refuses ends the run at once
// with what to do, not after the timeout.
func TestWaitForRefusedToken(t *testing.T) {
	n := newWFNode(t)
	n.cluster()
	otherKey, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := auth.Sign(otherKey, auth.Watcher, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		token string
		want  []string
	}{
		{"another install's token", foreign, []string{"answered 401", "auth/watcher.token"}},
		{"the user token", n.tokens[auth.User], []string{"answered 403", "auth/watcher.token"}},
		{"no token", "", []string{"answered 401", "--token or --token-file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := n.waitOptions(BootstrapComplete)
			o.Token = tc.token
			out, done := wfRunWait(t, o)
			err := wfResult(t, done, out)
			var ee *ExitError
			if !errors.Is(err, ErrRefused) || errors.As(err, &ee) {
				t.Fatalf("wait-for = %v (%T), want ErrRefused without an exit code", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestWaitForUnreachable: while node zero never answered, the wait says it
// initialises (connections refused: the host is up) or that the host
// cannot be reached (connections accepted and never answered), pausing
// between tries, until the timeout.
func TestWaitForUnreachable(t *testing.T) {
	refused := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	silent := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var conns []net.Conn
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		}()
		t.Cleanup(func() {
			ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				c.Close()
			}
		})
		return ln.Addr().String()
	}
	for _, tc := range []struct {
		name string
		addr func(*testing.T) string
		want string
	}{
		{"refused", refused, "Waiting for cluster install to initialize: node zero's service at http://%s is not listening yet"},
		{"silent", silent, "Cannot access Rendezvous Host. There may be a network configuration problem, check console for additional info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := tc.addr(t)
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, addr)
			}
			c, err := wire.NewClient("http://"+addr, wire.WithWatcherToken("x"), wire.WithRequestTimeout(50*time.Millisecond),
				wire.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			out := &wfBuffer{}
			cfg := defaultWaitConfig()
			cfg.target, cfg.client, cfg.log = BootstrapComplete, c, Logger(out, slog.LevelInfo)
			cfg.timeout, cfg.initPause, cfg.unreachableAfter = time.Second, 20*time.Millisecond, 0
			err = waitForTarget(context.Background(), cfg)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 5 || !strings.Contains(err.Error(), "last cluster status: none seen") {
				t.Fatalf("waitFor = %v, want exit code 5 after a timeout with no status seen\n%s", err, out)
			}
			lines := out.take()
			n := strings.Count(strings.Join(lines, "\n"), wfInfo(want))
			switch {
			case tc.name == "refused" && n != 1:
				// Retried at the interval, said once.
				t.Errorf("%q printed %d times, want once:\n%s", want, n, strings.Join(lines, "\n"))
			case tc.name != "refused" && n < 2:
				t.Errorf("%q printed %d times, want once per try, at least twice:\n%s", want, n, strings.Join(lines, "\n"))
			}
		})
	}
}

// TestWaitForUnansweredLater: node zero that answered once and then stops
// answering (rebooting, crashed) is a warning, repeated only after a
// while; its return is noted.
func TestWaitForUnansweredLater(t *testing.T) {
	n := newWFNode(t)
	n.cluster()
	sw := n.watcher(slog.LevelInfo)
	sw.poll()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "service restarting", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	up := sw.w.watch.c
	if sw.w.watch.c, _ = wire.NewClient(down.URL, wire.WithHTTPClient(down.Client())); sw.w.watch.c == nil {
		t.Fatal("client for the stopped service")
	}
	_, lines := sw.poll()
	want := wfWarn(fmt.Sprintf("cluster bootstrap did not complete: node zero's service at %s does not answer (get cluster: service answered 503: service restarting)", down.URL))
	wfInOrder(t, "first failure", lines, want)
	sw.clock.Advance(time.Minute)
	if _, lines := sw.poll(); len(lines) != 0 {
		t.Errorf("a minute later: got %q, want no line", lines)
	}
	sw.clock.Advance(time.Minute + time.Second)
	_, lines = sw.poll()
	wfInOrder(t, "two minutes later", lines, want)
	sw.w.watch.c = up
	_, lines = sw.poll()
	wfInOrder(t, "back", lines, wfInfo("Node zero's service answers again"))
}

func TestWaitLogger(t *testing.T) {
	var buf bytes.Buffer
	log := Logger(&buf, slog.LevelInfo)
	log.Debug("not shown")
	log.Info("Cluster is ready for install")
	log.Warn("Host master-0 validation: Host NTP is not synced")
	log.Error("Bootstrap failed to complete: timed out")
	log.Info("done")
	want := `level=info msg="Cluster is ready for install"
level=warning msg="Host master-0 validation: Host NTP is not synced"
level=error msg="Bootstrap failed to complete: timed out"
level=info msg=done
`
	if got := buf.String(); got != want {
		t.Errorf("log lines:\n%s\nwant:\n%s", got, want)
	}
}

// TestWaitForValidationChanges: a validation that fails is a warning at
// first sight and whenever its message changes; fixed, it is info once;
// passing from the start, it is debug only.
func TestWaitForValidationChanges(t *testing.T) {
	var buf wfBuffer
	w := &waiter{log: Logger(&buf, slog.LevelInfo), watch: New(nil, Options{})}
	host := &wire.Host{ID: "1", RequestedHostname: "h"}
	info1 := func(status, msg string) string {
		return fmt.Sprintf(`{"hardware":[{"id":"has-cpu-cores-for-role","status":"success","message":"Sufficient CPU cores for role master"}],`+
			`"network":[{"id":"ntp-synced","status":%q,"message":%q}]}`, status, msg)
	}
	for _, step := range []struct {
		info string
		want []string
	}{
		{info1("failure", "Host NTP is not synced"), []string{wfWarn("Host h validation: Host NTP is not synced")}},
		{info1("failure", "Host NTP is not synced"), nil},
		{info1("failure", "Host couldn't synchronize with any NTP server"), []string{wfWarn("Host h validation: Host couldn't synchronize with any NTP server")}},
		{info1("success", "Host NTP is synced"), []string{wfInfo("Host h validation: Host NTP is synced")}},
		{info1("success", "Host NTP is synced"), nil},
		{"not json", nil},
	} {
		w.reportValidations(w.watch.diffValidations(nil, "host 1", host, step.info))
		if got := buf.take(); !slices.Equal(got, step.want) {
			t.Errorf("after %s: got %q, want %q", step.info, got, step.want)
		}
	}
}

func TestBootstrapDone(t *testing.T) {
	stages := []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWaitingForController,
		wire.HostStageRebooting, wire.HostStageConfiguring, wire.HostStageDone}
	host := func(bootstrap bool, status wire.HostStatus, stage wire.HostStage) *wire.Host {
		h := &wire.Host{Bootstrap: bootstrap, Status: status, ProgressStages: stages}
		if stage != "" {
			h.Progress = &wire.HostProgressInfo{CurrentStage: stage}
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		cluster wire.Cluster
		want    bool
	}{
		{"no hosts", wire.Cluster{Status: wire.ClusterStatusInstalling}, false},
		{"bootstrap not started", wire.Cluster{Status: wire.ClusterStatusInstalling,
			Hosts: []*wire.Host{host(true, wire.HostStatusInstalling, "")}}, false},
		{"bootstrap waiting for the controller", wire.Cluster{Status: wire.ClusterStatusInstalling,
			Hosts: []*wire.Host{host(false, wire.HostStatusInstalled, wire.HostStageDone), host(true, wire.HostStatusInstallingInProgress, wire.HostStageWaitingForController)}}, false},
		{"bootstrap rebooting", wire.Cluster{Status: wire.ClusterStatusInstalling,
			Hosts: []*wire.Host{host(true, wire.HostStatusInstallingInProgress, wire.HostStageRebooting)}}, true},
		{"bootstrap configuring", wire.Cluster{Status: wire.ClusterStatusInstalling,
			Hosts: []*wire.Host{host(true, wire.HostStatusInstallingInProgress, wire.HostStageConfiguring)}}, true},
		{"bootstrap failed", wire.Cluster{Status: wire.ClusterStatusError,
			Hosts: []*wire.Host{host(true, wire.HostStatusError, wire.HostStageFailed)}}, false},
		{"bootstrap installed", wire.Cluster{Status: wire.ClusterStatusInstalling,
			Hosts: []*wire.Host{host(true, wire.HostStatusInstalled, "")}}, true},
		{"finalizing", wire.Cluster{Status: wire.ClusterStatusFinalizing}, true},
		{"installed", wire.Cluster{Status: wire.ClusterStatusInstalled}, true},
	} {
		if got := bootstrapDone(&tc.cluster); got != tc.want {
			t.Errorf("%s: bootstrapDone = %v, want %v", tc.name, got, tc.want)
		}
	}
}
