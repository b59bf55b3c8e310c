package boot

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/daemon/register"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

var expiry = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// addNodesRoot is a host root as a node config image leaves it: the
// rendezvous env for 127.0.0.1 and the add-nodes workflow, add-nodes.env.
func addNodesRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		onhost.RendezvousEnvPath: string(onhost.RendezvousEnv(netip.MustParseAddr("127.0.0.1"), "agent-token", "user-token", onhost.WorkflowAddNodes)),
		onhost.AddNodesEnvPath: string(onhost.AddNodesEnv{ClusterID: "6a1b2c3d-0000-4000-8000-0123456789ab", ClusterName: "ostest",
			APIVIPDNSName: "api.ostest.test.metalkube.org", TokenExpiry: expiry}.Marshal()),
		HostnamesDir + "/52:54:00:aa:bb:09":                            "extra-worker-0\n",
		onhost.ClusterConfigDir + "/" + onhost.ImportClusterConfigFile: `{"networking":{"userManagedNetworking":false}}`,
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestDecideNodeZeroOtherLoopbackAddresses: a sandbox's hosts live on
// 127.x addresses, each its own; the rendezvous one is held by one host.
func TestDecideNodeZeroOtherLoopbackAddresses(t *testing.T) {
	links := fixedLinks{{Name: "eth0", MAC: "52:54:00:aa:bb:02", Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.100.21/24")}}}
	d, err := DecideNodeZero(context.Background(), links, netip.MustParseAddr("127.0.100.20"), time.Millisecond, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if d.NodeZero {
		t.Errorf("got %+v: a host that does not hold the sandbox's rendezvous address 127.0.100.20 is not node zero", d)
	}
	if SelfRendezvous(netip.MustParseAddr("127.0.100.20")) || !SelfRendezvous(netip.MustParseAddr("::ffff:127.0.0.1")) {
		t.Error("SelfRendezvous: want 127.0.0.1 and ::1 only")
	}
}

func TestDecideNodeZeroLoopbackIsThisHost(t *testing.T) {
	// A sandbox host's links hold its own address, not the loopback one.
	links := fixedLinks{{Name: "eth0", MAC: "52:54:00:aa:bb:09", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.90/24")}}}
	for _, ip := range []string{"127.0.0.1", "::1"} {
		t.Run(ip, func(t *testing.T) {
			d, err := DecideNodeZero(context.Background(), links, netip.MustParseAddr(ip), time.Millisecond, time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if want := (Decision{NodeZero: true, IP: netip.MustParseAddr(ip)}); d != want {
				t.Errorf("got %+v, want %+v (its own node zero, never the bootstrap host)", d, want)
			}
		})
	}
}

// TestSequenceAddNodesHost: a host booted from a node config image is its
// own node zero: its service runs, with the add-nodes env and its MACs.
func TestSequenceAddNodesHost(t *testing.T) {
	root := addNodesRoot(t)
	links := fixedLinks{{Name: "eth0", MAC: "52:54:00:aa:bb:09", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.90/24")}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got Env
	service := func(ctx context.Context, env Env) error { got = env; cancel(); return ctx.Err() }
	agent := func(ctx context.Context, _ Env) error { <-ctx.Done(); return ctx.Err() }
	s := &Sequence{Root: root, Links: links, Board: issue.NewBoard(root), NodeZeroWindow: time.Hour, NodeZeroInterval: time.Hour,
		Service: service, Agent: agent}
	if err := s.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if !got.NodeZero || !got.OwnService() || got.Workflow != onhost.WorkflowAddNodes {
		t.Errorf("env %+v: want node zero with its own service, workflow addnodes", got)
	}
	if got.AddNodes == nil || got.AddNodes.ClusterID != "6a1b2c3d-0000-4000-8000-0123456789ab" || !got.AddNodes.TokenExpiry.Equal(expiry) {
		t.Errorf("env.AddNodes = %+v, want add-nodes.env's", got.AddNodes)
	}
	if d := cmp.Diff([]string{"52:54:00:aa:bb:09"}, got.MACs); d != "" {
		t.Errorf("env.MACs (-want +got):\n%s", d)
	}
	b, err := os.ReadFile(filepath.Join(root, onhost.Node0Path))
	if err != nil || onhost.ParseNode0(b) != "" {
		t.Errorf("node0 = %q, %v; want one naming no bootstrap MAC", b, err)
	}
}

func TestReadEnvAddNodes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(root string) error
		wantErr string
	}{
		{"ok", func(string) error { return nil }, ""},
		{"add-nodes.env missing", func(root string) error { return os.Remove(filepath.Join(root, onhost.AddNodesEnvPath)) },
			"WORKFLOW_TYPE is addnodes but "},
		{"expiry not RFC 3339", func(root string) error {
			return os.WriteFile(filepath.Join(root, onhost.AddNodesEnvPath), []byte("CLUSTER_ID=a\nCLUSTER_NAME=b\nCLUSTER_API_VIP_DNS_NAME=c\nAUTH_TOKEN_EXPIRY=tomorrow\n"), 0o600)
		}, `AUTH_TOKEN_EXPIRY: want RFC 3339 (2006-01-02T15:04:05Z), got "tomorrow"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := addNodesRoot(t)
			if err := tc.edit(root); err != nil {
				t.Fatal(err)
			}
			env, err := ReadEnv(root)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || (tc.name == "add-nodes.env missing" && !strings.HasSuffix(err.Error(), onhost.AddNodesEnvPath+" is missing")) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if env.AddNodes == nil || env.AddNodes.APIVIPDNSName != "api.ostest.test.metalkube.org" {
				t.Errorf("AddNodes = %+v", env.AddNodes)
			}
		})
	}
	// A day-1 host has none.
	env, err := ReadEnv(configuredRoot(t))
	if err != nil || env.AddNodes != nil || env.OwnService() {
		t.Errorf("day-1 env: AddNodes %+v, own service %v, err %v; want neither", env.AddNodes, env.OwnService(), err)
	}
}

// clock is a test clock the token watch reads.
type clock struct{ now atomic.Int64 }

func (c *clock) Now() time.Time   { return time.Unix(0, c.now.Load()) }
func (c *clock) Set(t time.Time)  { c.now.Store(t.UnixNano()) }
func newClock(t time.Time) *clock { c := &clock{}; c.Set(t); return c }
func tokenLine(root string) string {
	b, _ := os.ReadFile(filepath.Join(root, issue.MotdDir, string(issue.KeyToken)))
	return string(b)
}
func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }
func issuePath(root string, k issue.Key) string {
	return filepath.Join(root, issue.IssueDir, string(k)+".issue")
}

func TestTokenWatch(t *testing.T) {
	root := t.TempDir()
	clk := newClock(expiry.Add(-time.Minute))
	tick := make(chan time.Time)
	w := TokenWatch{Expiry: expiry, Board: issue.NewBoard(root), Now: clk.Now, Tick: tick}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	tick <- time.Time{} // the first look found it valid: the watch waits for the next
	if got := tokenLine(root); got != "" {
		t.Fatalf("65_token before the expiry: %q", got)
	}
	clk.Set(expiry) // AUTH_TOKEN_EXPIRY itself is expired
	tick <- time.Time{}
	if err := <-done; !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("got %v, want ErrTokenExpired", err)
	}
	if got, want := tokenLine(root), MsgTokenExpired+"\n"; got != want {
		t.Errorf("65_token = %q, want %q", got, want)
	}
}

// recorder is a service that answers every request with 503 and counts
// them, signalling the first.
type recorder struct {
	n     atomic.Int64
	first chan struct{}
	once  sync.Once
}

func (r *recorder) client(t *testing.T) *wire.Client {
	t.Helper()
	r.first = make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.n.Add(1)
		r.once.Do(func() { close(r.first) })
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	c, err := wire.NewClient(srv.URL, wire.WithUserToken("user"), wire.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func addNodesFlow(t *testing.T, root string, c *wire.Client, clk *clock, tick chan time.Time) AddNodes {
	t.Helper()
	env, _, err := ReadAddNodesEnv(root)
	if err != nil {
		t.Fatal(err)
	}
	return AddNodes{
		Register: register.AddNodeConfig{Client: c, Set: day2Set(), Env: env, ClusterConfigDir: filepath.Join(root, onhost.ClusterConfigDir), Interval: time.Millisecond},
		Token:    TokenWatch{Expiry: env.TokenExpiry, Now: clk.Now, Tick: tick},
		Board:    issue.NewBoard(root),
	}
}

func TestAddNodesExpiredTokenStopsBeforeTheImport(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "host")
	if err := os.CopyFS(root, os.DirFS(addNodesRoot(t))); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	var status []string
	flow := addNodesFlow(t, root, rec.client(t), newClock(expiry.Add(time.Second)), make(chan time.Time))
	flow.Status = func(s string) { status = append(status, s) }
	if err := flow.Run(context.Background()); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("got %v, want ErrTokenExpired", err)
	}
	if n := rec.n.Load(); n != 0 {
		t.Errorf("the service got %d requests, want none (no import, no install)", n)
	}
	if d := cmp.Diff([]string{MsgTokenExpired}, status); d != "" {
		t.Errorf("systemd status (-want +got):\n%s", d)
	}
	golden(t, "20-add-nodes-token-expired", consoleFiles(t, root, tmp))
}

func TestAddNodesTokenExpiringMidFlowStopsIt(t *testing.T) {
	root := addNodesRoot(t)
	rec := &recorder{}
	clk := newClock(expiry.Add(-time.Hour))
	tick := make(chan time.Time)
	flow := addNodesFlow(t, root, rec.client(t), clk, tick)
	done := make(chan error, 1)
	go func() { done <- flow.Run(context.Background()) }()
	select { // the import is being tried (and retried: the service answers 503)
	case <-rec.first:
	case err := <-done:
		t.Fatalf("the flow ended before asking the service: %v", err)
	}
	clk.Set(expiry.Add(time.Second))
	tick <- time.Time{}
	if err := <-done; !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("got %v, want ErrTokenExpired", err)
	}
	n := rec.n.Load()
	if got := tokenLine(root); got != MsgTokenExpired+"\n" {
		t.Errorf("65_token = %q", got)
	}
	for _, k := range []issue.Key{issue.KeyAddNode, issue.KeyAgentServices} {
		if fileExists(issuePath(root, k)) {
			t.Errorf("%s still shown after the token expired", k)
		}
	}
	if rec.n.Load() != n {
		t.Errorf("requests went on after Run returned")
	}
}

// TestAddNodeConsoleGoldens: the add-nodes flow's turns as the console
// shows them.
func TestAddNodeConsoleGoldens(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "host")
	board := issue.NewBoard(root)
	ctx := context.Background()
	noDisk := "No eligible disk matches root device hints (wwn: 0x5000000000000fff); eligible disks: sda (120 GB SSD, wwn 0x5000000000000a00)"
	hints := "extra-worker-1: " + noDisk
	for _, tc := range []struct {
		name     string
		st       register.AddNodeStatus
		failures []string
	}{
		{"21-add-node-importing", register.AddNodeStatus{Step: register.StepImportCluster, Line: "Importing cluster ostest"}, nil},
		{"22-add-node-import-retrying", register.AddNodeStatus{Step: register.StepImportCluster,
			Line: "Importing cluster ostest", Err: errors.New("import cluster: 503 Service Unavailable")}, nil},
		{"23-add-node-waiting", register.AddNodeStatus{Step: register.StepAddNode, Line: register.MsgWaitingForHost},
			[]string{"extra-worker-1: " + register.NotRegisteredReason}},
		{"24-add-node-insufficient", register.AddNodeStatus{Step: register.StepAddNode, Line: register.MsgWaitingForHost,
			Reasons: []string{noDisk, "The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 4.00 GiB"}},
			[]string{hints}},
		// Before apply-host-config's pass wrote the failure, the
		// validation's message says it.
		{"24b-add-node-insufficient-no-failures-yet", register.AddNodeStatus{Step: register.StepAddNode, Line: register.MsgWaitingForHost,
			Reasons: []string{noDisk}}, nil},
		{"25-add-node-installing", register.AddNodeStatus{Step: register.StepAddNode, Line: "Host installation in progress: Writing image to disk", Installing: true},
			[]string{hints}},
		{"26-add-node-added", register.AddNodeStatus{Step: register.StepAddNode, Line: "The host was added to the cluster: Host has rebooted and no further updates will be posted. Please check console for progress and to possibly approve pending CSRs", Added: true}, nil},
		{"27-add-node-failed", register.AddNodeStatus{Step: register.StepAddNode, Line: "Host installation failed: error: failed to write the image", Failed: true}, nil},
	} {
		if err := ShowAddNodeStatus(ctx, board, tc.st, tc.failures); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, consoleFiles(t, root, tmp))
	}
}

// day2Set is the least a node config image's manifests hold: an
// infra-env and a pull secret.
func day2Set() *manifests.Set {
	return &manifests.Set{InfraEnv: &manifests.InfraEnv{}, PullSecret: &manifests.Secret{StringData: map[string]string{manifests.PullSecretKey: `{"auths":{}}`}}}
}
