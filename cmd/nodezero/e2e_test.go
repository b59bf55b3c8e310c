package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// The end-to-end tests run the real binary: one `nodezero service`
// process, agent processes on the committed hardware trees, all over real
// HTTP on 127.0.0.1 and a real SQLite file. Agents report 127.0.0.x
// addresses for their hardware tree's NIC (they share one loopback), so no
// packet leaves the machine.

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// nodezeroBinary builds the command once per test run.
func nodezeroBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nodezero-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "nodezero")
		cmd := exec.Command("go", "build", "-o", builtBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// proc is a child process with its output in a file.
type proc struct {
	cmd *exec.Cmd
	log string
}

func start(t *testing.T, logPath string, env []string, args ...string) *proc {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodezeroBinary(t), args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	p := &proc{cmd: cmd, log: logPath}
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
	}
}

func (p *proc) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// service is a running `nodezero service`.
type service struct {
	*proc
	dir, addr string
	user      *wire.Client
	token     map[string]string
	dns       string // the agents' loopback DNS server, started with the first agent
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var listeningRE = regexp.MustCompile(`listening on http://(\S+)/api/assisted-install/v2`)

func startService(t *testing.T, dir, addr string) *service {
	t.Helper()
	p := start(t, filepath.Join(dir, fmt.Sprintf("service-%d.log", time.Now().UnixNano())), nil,
		"service", "--dir", dir, "--listen", addr, "--log-level", "debug", "--monitor-interval", "1s")
	deadline := time.Now().Add(20 * time.Second)
	for !listeningRE.MatchString(p.output()) {
		if time.Now().After(deadline) || p.cmd.ProcessState != nil {
			t.Fatalf("service did not start:\n%s", p.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := &service{proc: p, dir: dir, addr: listeningRE.FindStringSubmatch(p.output())[1], token: map[string]string{}}
	for _, name := range []string{"agent", "user", "watcher"} {
		b, err := os.ReadFile(filepath.Join(dir, "auth", name+".token"))
		if err != nil {
			t.Fatal(err)
		}
		s.token[name] = strings.TrimSpace(string(b))
	}
	c, err := wire.NewClient("http://"+s.addr, wire.WithUserToken(s.token["user"]))
	if err != nil {
		t.Fatal(err)
	}
	s.user = c
	return s
}

const testPullSecret = `{"auths":{"registry.example.com:5000":{"auth":"dXNlcjpwYXNz","email":"e2e@example.com"}}}`

// registerCluster registers a 3-control-plane cluster whose VIPs sit in the
// agents' 127.0.0.0/8 and its infra-env, as ABI's registerCluster and
// registerInfraEnv do.
func registerCluster(t *testing.T, ctx context.Context, s *service) (*wire.Cluster, *wire.InfraEnv) {
	t.Helper()
	cp := int64(3)
	c, err := s.user.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "e2e", OpenshiftVersion: "4.18", PullSecret: testPullSecret, BaseDNSDomain: "example.com",
		ControlPlaneCount: &cp,
		APIVIPs:           []*wire.APIVIP{{IP: "127.0.0.100"}},
		IngressVIPs:       []*wire.IngressVIP{{IP: "127.0.0.101"}},
	})
	if err != nil {
		t.Fatalf("register cluster: %v", err)
	}
	ie, err := s.user.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: "e2e", PullSecret: testPullSecret, ClusterID: &c.ID})
	if err != nil {
		t.Fatalf("register infra-env: %v", err)
	}
	return c, ie
}

// startAgent runs `nodezero agent` on a hardware tree with a loopback address.
func startAgent(t *testing.T, s *service, ie, tree, addr string) *proc {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hw", tree))
	if err != nil {
		t.Fatal(err)
	}
	if s.dns == "" {
		s.dns = loopbackDNS(t)
	}
	return start(t, filepath.Join(s.dir, "agent-"+tree+".log"), []string{"PULL_SECRET_TOKEN=" + s.token["agent"]},
		"agent", "--url", "http://"+s.addr, "--infra-env-id", ie, "--root", root,
		"--host-address", addr+"/8", "--hostname", tree, "--interval", "1", "--log-level", "debug",
		"--dns-server", s.dns)
}

// loopbackDNS starts a dnsmasq of the test's own on 127.0.0.1 that knows no
// names and asks nobody (every lookup is NXDOMAIN): the DNS of sandbox
// hosts, which must never query the machine's resolver. It returns
// host:port.
func loopbackDNS(t *testing.T) string {
	t.Helper()
	needTool(t, "dnsmasq")
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	cmd := exec.Command("dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--listen-address=127.0.0.1", "--bind-interfaces",
		"--port="+port, "--no-resolv", "--no-hosts", "--local=/#/", "--pid-file="+filepath.Join(dir, "pid"))
	out, err := os.Create(filepath.Join(dir, "dnsmasq.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); out.Close() })
	waitFor(t, "dnsmasq on "+addr, 10*time.Second, func() (bool, string) {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil, fmt.Sprint(err)
	})
	return addr
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s; last state:\n%s", timeout, what, last)
}

func hostsByName(hs []*wire.Host) map[string]*wire.Host {
	m := map[string]*wire.Host{}
	for _, h := range hs {
		m[h.RequestedHostname] = h
	}
	return m
}

func describe(c *wire.Cluster) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s: %s\n", c.Status, c.StatusInfo)
	for _, h := range c.Hosts {
		fmt.Fprintf(&b, "  %s %s role=%s/%s %s\n", h.RequestedHostname, h.Status, h.Role, h.SuggestedRole, h.StatusInfo)
	}
	return b.String()
}

// validations returns id → {status, message} from a validations_info string.
func validations(t *testing.T, info string) map[string][2]string {
	t.Helper()
	var m map[string][]struct{ ID, Status, Message string }
	if err := json.Unmarshal([]byte(info), &m); err != nil {
		t.Fatalf("validations_info %q: %v", info, err)
	}
	out := map[string][2]string{}
	for _, list := range m {
		for _, v := range list {
			out[v.ID] = [2]string{v.Status, v.Message}
		}
	}
	return out
}

func TestEndToEndThreeMastersAndAnUndersizedHost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	svc := startService(t, dir, freePort(t))
	if !strings.Contains(svc.output(), "made a key pair and tokens in "+filepath.Join(dir, "auth")) {
		t.Errorf("service did not say where it made the tokens:\n%s", svc.output())
	}
	c, ie := registerCluster(t, ctx, svc)
	addrs := map[string]string{"master-0": "127.0.0.10", "master-1": "127.0.0.11", "master-2": "127.0.0.12", "undersized": "127.0.0.13"}
	for _, tree := range []string{"master-0", "master-1", "master-2"} {
		startAgent(t, svc, ie.ID, tree, addrs[tree])
	}
	var got *wire.Cluster
	// Two minutes: a check that missed a peer on a loaded machine is
	// repeated at the host's next round, a minute on.
	waitFor(t, "three known masters and a ready cluster", 2*time.Minute, func() (bool, string) {
		var err error
		if got, err = svc.user.GetCluster(ctx, c.ID); err != nil {
			return false, err.Error()
		}
		known := 0
		for _, h := range got.Hosts {
			if h.Status == wire.HostStatusKnown {
				known++
			}
		}
		return known == 3 && got.Status == wire.ClusterStatusReady, describe(got)
	})
	if len(got.MachineNetworks) != 1 || got.MachineNetworks[0].CIDR != "127.0.0.0/8" {
		t.Errorf("machine networks = %v, want the derived 127.0.0.0/8", got.MachineNetworks)
	}
	for _, h := range got.Hosts {
		if h.SuggestedRole != wire.HostRoleMaster {
			t.Errorf("%s suggested role %s, want master", h.RequestedHostname, h.SuggestedRole)
		}
	}

	// A fourth, undersized host: insufficient, with the failing validations
	// named and numbered.
	startAgent(t, svc, ie.ID, "undersized", addrs["undersized"])
	var small *wire.Host
	waitFor(t, "the undersized host to be insufficient", time.Minute, func() (bool, string) {
		hs, err := svc.user.ListHosts(ctx, ie.ID)
		if err != nil {
			return false, err.Error()
		}
		small = hostsByName(hs)["undersized"]
		// The role checks below name the role the service suggests; an
		// agent's reply settles its own host at once, the cluster-wide
		// role suggestion comes with the deferred evaluation (a host is
		// registered with auto-assign as its suggestion), and the
		// host's role validations and the cluster's status follow at the
		// next refresh. Wait for all of them to agree (on a loaded machine
		// they are seconds apart; on a fast one a read can fall between).
		if small == nil || small.Status != wire.HostStatusInsufficient || small.SuggestedRole == "" || small.SuggestedRole == wire.HostRoleAutoAssign {
			return false, fmt.Sprint(small)
		}
		if v := validations(t, small.ValidationsInfo)["has-memory-for-role"]; !strings.Contains(v[1], "role "+string(small.SuggestedRole)) {
			return false, "role validations not yet for the suggested role " + string(small.SuggestedRole) + ": " + v[1]
		}
		cl, err := svc.user.GetCluster(ctx, c.ID)
		if err != nil {
			return false, err.Error()
		}
		return cl.Status != wire.ClusterStatusReady, "cluster still " + string(cl.Status)
	})
	vals := validations(t, small.ValidationsInfo)
	var failing []string
	for id, v := range vals {
		// Not the hardware's doing: the cluster has no NTP source, and the
		// masters check their peers once a minute, so a host that came
		// after their last round is not in their reports yet.
		if v[0] == "failure" && id != "ntp-synced" && id != "belongs-to-majority-group" {
			failing = append(failing, id)
		}
	}
	sort.Strings(failing)
	wantFailing := []string{"has-cpu-cores-for-role", "has-memory-for-role", "has-min-cpu-cores", "has-min-memory", "has-min-valid-disks"}
	if !slices.Equal(failing, wantFailing) {
		t.Errorf("failing validations = %v, want %v\n%s", failing, wantFailing, small.ValidationsInfo)
	}
	for id, want := range map[string]string{
		"has-min-cpu-cores":      "The host is not eligible to participate in Openshift Cluster because the minimum required CPU cores for any role is 2, found only 1",
		"has-cpu-cores-for-role": "Require at least 2 CPU cores for worker role, found only 1",
		"has-min-valid-disks":    "No eligible disks were found, please check specific disks to see why they are not eligible",
		"has-min-memory":         "The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 4.00 GiB",
		"has-memory-for-role":    "Require at least 8.00 GiB RAM for role worker, found only 4.00 GiB",
	} {
		if got := vals[id][1]; got != want {
			t.Errorf("%s message = %q, want %q", id, got, want)
		}
	}
	if !strings.HasPrefix(small.StatusInfo, "Host does not meet the minimum hardware requirements: ") {
		t.Errorf("status_info = %q", small.StatusInfo)
	}
	cl, err := svc.user.GetCluster(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster with an insufficient host is %s, want insufficient", cl.Status)
	}
	if v := validations(t, cl.ValidationsInfo)["all-hosts-are-ready-to-install"]; v[0] != "failure" {
		t.Errorf("all-hosts-are-ready-to-install = %v, want failure", v)
	}
}

// snapshot is what the API acknowledged before a crash.
type snapshot struct {
	cluster *wire.Cluster
	events  []*wire.Event
}

func takeSnapshot(t *testing.T, ctx context.Context, s *service, clusterID string) snapshot {
	t.Helper()
	c, err := s.user.GetCluster(ctx, clusterID)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.user.ListEvents(ctx, wire.EventsQuery{ClusterID: clusterID})
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{c, evs}
}

func TestEndToEndKillNineAndRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	addr := freePort(t)
	svc := startService(t, dir, addr)
	c, ie := registerCluster(t, ctx, svc)
	trees := map[string]string{"master-0": "127.0.0.20", "master-1": "127.0.0.21", "master-2": "127.0.0.22", "worker-0": "127.0.0.23", "worker-1": "127.0.0.24"}
	for tree, a := range trees {
		startAgent(t, svc, ie.ID, tree, a)
	}
	// Kill the service while the agents are at work: once some host has an
	// inventory but before every host is known.
	waitFor(t, "a host with an inventory", time.Minute, func() (bool, string) {
		cl, err := svc.user.GetCluster(ctx, c.ID)
		if err != nil {
			return false, err.Error()
		}
		for _, h := range cl.Hosts {
			if h.Inventory != "" {
				return true, ""
			}
		}
		return false, describe(cl)
	})
	before := takeSnapshot(t, ctx, svc, c.ID)
	if err := svc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = svc.cmd.Wait()

	svc2 := startService(t, dir, addr)
	after := takeSnapshot(t, ctx, svc2, c.ID)
	// Everything acknowledged before the kill is there.
	if after.cluster.ID != before.cluster.ID || after.cluster.Name != before.cluster.Name {
		t.Fatalf("cluster after restart = %s %q, want %s %q", after.cluster.ID, after.cluster.Name, before.cluster.ID, before.cluster.Name)
	}
	afterHosts := map[string]*wire.Host{}
	for _, h := range after.cluster.Hosts {
		afterHosts[h.ID] = h
	}
	for _, h := range before.cluster.Hosts {
		a := afterHosts[h.ID]
		switch {
		case a == nil:
			t.Errorf("host %s (%s) lost by the kill", h.ID, h.RequestedHostname)
		case h.Inventory != "" && a.Inventory != h.Inventory:
			t.Errorf("host %s inventory changed across the restart", h.RequestedHostname)
		case h.ValidationsInfo != "" && a.ValidationsInfo == "":
			t.Errorf("host %s lost its validations_info", h.RequestedHostname)
		}
	}
	seen := map[string]bool{}
	for _, e := range after.events {
		seen[e.EventTime.String()+e.Name+e.Message] = true
	}
	for _, e := range before.events {
		if !seen[e.EventTime.String()+e.Name+e.Message] {
			t.Errorf("event lost by the kill: %s %s", e.Name, e.Message)
		}
	}
	if len(before.events) == 0 {
		t.Error("no events before the kill: the test saw nothing to lose")
	}
	// The agents find the restarted service by themselves and the install
	// gets to ready.
	restart := time.Now()
	// Two minutes: a host whose check after the restart missed a peer (a
	// loaded CI machine) is checked again at its next round, a minute on.
	waitFor(t, "five known hosts and a ready cluster after the restart", 2*time.Minute, func() (bool, string) {
		cl, err := svc2.user.GetCluster(ctx, c.ID)
		if err != nil {
			return false, err.Error()
		}
		known := 0
		for _, h := range cl.Hosts {
			if h.Status == wire.HostStatusKnown && h.CheckedInAt.Time().After(restart) {
				known++
			}
		}
		return known == 5 && cl.Status == wire.ClusterStatusReady, describe(cl)
	})
}

// TestServiceReusesItsTokens: a second start keeps the key and tokens.
func TestServiceReusesItsTokens(t *testing.T) {
	dir := t.TempDir()
	s1 := startService(t, dir, "127.0.0.1:0")
	tok := s1.token["user"]
	s1.kill()
	s2 := startService(t, dir, "127.0.0.1:0")
	if strings.Contains(s2.output(), "made a key pair") {
		t.Error("second start made new tokens")
	}
	if s2.token["user"] != tok {
		t.Error("user token changed across restarts")
	}
	if _, err := s2.user.ListClusters(context.Background()); err != nil {
		t.Errorf("the kept user token is refused: %v", err)
	}
}
