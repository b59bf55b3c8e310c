package register

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// fakeDay2 is an assisted service that answers the calls of the add-nodes
// flow and records them, so that tests pin their order and count and
// script the host's statuses (TestAddNodeAgainstTheService runs the flow
// against the embedded service). The host it holds takes the
// statuses of script on successive looks (the last one stays) and goes
// to installing when its install is posted.
type fakeDay2 struct {
	mu        sync.Mutex
	calls     []string
	clusters  []*wire.Cluster
	infraEnvs []*wire.InfraEnv
	host      *wire.Host // nil until the agent "registers"
	script    []wire.HostStatus
	after     []wire.HostStatus // statuses after the install was posted
	imported  *wire.ImportClusterParams
	patched   *wire.V2ClusterUpdateParams
	ieCreated *wire.InfraEnvCreateParams
}

func (f *fakeDay2) serve(t *testing.T) *wire.Client {
	t.Helper()
	mux := http.NewServeMux()
	const v2 = wire.APIBasePath
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if err := json.NewEncoder(w).Encode(v); err != nil {
			t.Error(err)
		}
	}
	decode := func(r *http.Request, v any) {
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, v); err != nil {
			t.Errorf("%s %s: body %s: %v", r.Method, r.URL.Path, b, err)
		}
	}
	record := func(r *http.Request, pattern string) {
		f.calls = append(f.calls, r.Method+" "+pattern)
	}
	handle := func(pattern string, fn func(w http.ResponseWriter, r *http.Request)) {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" "+v2+path, func(w http.ResponseWriter, r *http.Request) {
			f.mu.Lock()
			defer f.mu.Unlock()
			record(r, path)
			fn(w, r)
		})
	}
	handle("GET /clusters", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, f.clusters) })
	handle("POST /clusters/import", func(w http.ResponseWriter, r *http.Request) {
		var p wire.ImportClusterParams
		decode(r, &p)
		f.imported = &p
		cl := &wire.Cluster{ID: "c0ffee00-0000-4000-8000-000000000001", Kind: wire.ClusterKindAddHostsCluster,
			Status: wire.ClusterStatusAddingHosts, Imported: true, OpenshiftClusterID: *p.OpenshiftClusterID}
		f.clusters = append(f.clusters, cl)
		reply(w, 201, cl)
	})
	handle("PATCH /clusters/{id}", func(w http.ResponseWriter, r *http.Request) {
		var p wire.V2ClusterUpdateParams
		decode(r, &p)
		f.patched = &p
		cl := f.clusters[0]
		cl.UserManagedNetworking, cl.IgnitionEndpoint = p.UserManagedNetworking, p.IgnitionEndpoint
		reply(w, 201, cl)
	})
	handle("GET /infra-envs", func(w http.ResponseWriter, r *http.Request) { reply(w, 200, f.infraEnvs) })
	handle("POST /infra-envs", func(w http.ResponseWriter, r *http.Request) {
		var p wire.InfraEnvCreateParams
		decode(r, &p)
		f.ieCreated = &p
		ie := &wire.InfraEnv{ID: "1e000000-0000-4000-8000-000000000002", Name: p.Name, ClusterID: *p.ClusterID}
		f.infraEnvs = append(f.infraEnvs, ie)
		reply(w, 201, ie)
	})
	handle("GET /infra-envs/{id}/hosts", func(w http.ResponseWriter, r *http.Request) {
		if f.host == nil {
			reply(w, 200, []*wire.Host{})
			return
		}
		if len(f.script) > 0 {
			f.host.Status = f.script[0]
			if len(f.script) > 1 {
				f.script = f.script[1:]
			}
		}
		reply(w, 200, []*wire.Host{f.host})
	})
	handle("POST /infra-envs/{id}/hosts/{host}/actions/install", func(w http.ResponseWriter, r *http.Request) {
		if f.host == nil || f.host.Status != wire.HostStatusKnown {
			reply(w, 409, wire.APIError{Code: "409", Reason: "host is not known"})
			return
		}
		f.host.Status, f.script = wire.HostStatusInstalling, f.after
		reply(w, 202, f.host)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := wire.NewClient(srv.URL, wire.WithUserToken("user"), wire.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeDay2) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

const day2ClusterID = "6a1b2c3d-0000-4000-8000-0123456789ab"

func day2Env() onhost.AddNodesEnv {
	return onhost.AddNodesEnv{ClusterID: day2ClusterID, ClusterName: "ostest", APIVIPDNSName: "api.ostest.test.metalkube.org",
		TokenExpiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// clusterConfigDir writes clusterconfig/ as a node config image carries
// it; endpoint "" leaves worker-ignition-endpoint.json out.
func clusterConfigDir(t *testing.T, umn bool, endpoint string) string {
	t.Helper()
	dir := t.TempDir()
	icc, _ := json.Marshal(onhost.ImportClusterConfig{Networking: onhost.ImportNetworking{UserManagedNetworking: &umn}})
	if err := os.WriteFile(filepath.Join(dir, onhost.ImportClusterConfigFile), icc, 0o600); err != nil {
		t.Fatal(err)
	}
	if endpoint != "" {
		wie, _ := json.Marshal(onhost.WorkerIgnitionEndpoint{URL: endpoint, CACertificate: testCA(t)})
		if err := os.WriteFile(filepath.Join(dir, onhost.WorkerIgnitionEndpointFile), wie, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testCA is a machine config server CA as worker-ignition-endpoint.json
// carries it: base64 of its PEM.
func testCA(t *testing.T) string {
	t.Helper()
	now := time.Now()
	ca, _, _, err := pki.NewServer("machine-config-server-ca", nil, []string{"api-int.ostest.test.metalkube.org"}, now, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pki.CertPEM(ca.Cert))
}

// day2Set is the manifests of a node config image adding two workers:
// the day-1 set without cluster-deployment.yaml and
// agent-cluster-install.yaml, read by manifests.LoadAddNodes.
func day2Set(t *testing.T) *manifests.Set {
	t.Helper()
	spec := manifests.Spec{
		ClusterName: "ostest", BaseDomain: "test.metalkube.org",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 1, SSHKey: testSSHKey, PullSecret: testPullSecret, CPUArchitecture: "amd64",
	}
	for i := range 2 {
		spec.Hosts = append(spec.Hosts, manifests.Host{Hostname: fmt.Sprintf("extra-worker-%d", i), Role: "worker",
			Interfaces:    []manifests.Interface{{Name: "eth0", MACAddress: macOf(i)}},
			NetworkConfig: nmstate(macOf(i), fmt.Sprintf("192.168.111.%d", 90+i), 24)})
	}
	set, err := manifests.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := manifests.Write(dir, set); err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(dir, manifests.ClusterManifestsDir)
	for _, f := range []string{manifests.ClusterDeploymentFile, manifests.AgentClusterInstallFile} {
		if err := os.Remove(filepath.Join(mdir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := manifests.LoadFrom(mdir, ""); err == nil {
		t.Fatal("the day-1 loader took manifests without a ClusterDeployment")
	}
	loaded, err := manifests.LoadAddNodes(mdir)
	if err != nil {
		t.Fatalf("LoadAddNodes: %v", err)
	}
	return loaded
}

func TestImportClusterImportsOnceAndSetsClusterConfig(t *testing.T) {
	ctx := context.Background()
	f := &fakeDay2{}
	c := f.serve(t)
	dir := clusterConfigDir(t, false, "https://api-int.ostest.test.metalkube.org:22623/config/worker")

	cl, err := ImportCluster(ctx, c, day2Env(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"GET /clusters", "POST /clusters/import", "PATCH /clusters/{id}"}, f.callLog()); d != "" {
		t.Errorf("first import's calls (-want +got):\n%s", d)
	}
	want := ImportParams(day2Env())
	if d := cmp.Diff(&want, f.imported); d != "" {
		t.Errorf("import body (-want +got):\n%s", d)
	}
	if *f.imported.OpenshiftClusterID != day2ClusterID || *f.imported.APIVipDnsname != "api.ostest.test.metalkube.org" || *f.imported.Name != "ostest" {
		t.Errorf("import body %+v: want CLUSTER_ID, CLUSTER_API_VIP_DNS_NAME and CLUSTER_NAME", f.imported)
	}
	if p := f.patched; p == nil || p.UserManagedNetworking == nil || *p.UserManagedNetworking || p.IgnitionEndpoint == nil ||
		*p.IgnitionEndpoint.URL != "https://api-int.ostest.test.metalkube.org:22623/config/worker" || !strings.HasPrefix(*p.IgnitionEndpoint.CACertificate, "LS0tLS1CRUdJTi") {
		t.Errorf("PATCH body %+v: want user_managed_networking false and the worker ignition endpoint with its CA", f.patched)
	}
	if cl.IgnitionEndpoint == nil {
		t.Errorf("ImportCluster returned the cluster before its PATCH: %+v", cl)
	}

	// A restart: the cluster is found, nothing is sent.
	again, err := ImportCluster(ctx, c, day2Env(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"GET /clusters"}, f.callLog()); d != "" {
		t.Errorf("second import's calls (-want +got):\n%s", d)
	}
	if again.ID != cl.ID {
		t.Errorf("second import returned cluster %s, want %s", again.ID, cl.ID)
	}
}

func TestImportClusterResumesBetweenImportAndPatch(t *testing.T) {
	ctx := context.Background()
	f := &fakeDay2{clusters: []*wire.Cluster{{ID: "c0ffee00-0000-4000-8000-000000000001", Kind: wire.ClusterKindAddHostsCluster,
		Status: wire.ClusterStatusAddingHosts, Imported: true, OpenshiftClusterID: day2ClusterID}}}
	c := f.serve(t)
	if _, err := ImportCluster(ctx, c, day2Env(), clusterConfigDir(t, true, "")); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"GET /clusters", "PATCH /clusters/{id}"}, f.callLog()); d != "" {
		t.Errorf("calls after a restart between import and PATCH (-want +got):\n%s", d)
	}
	if p := f.patched; p == nil || p.IgnitionEndpoint != nil || p.UserManagedNetworking == nil || !*p.UserManagedNetworking {
		t.Errorf("PATCH body %+v: want user_managed_networking true and no endpoint (no worker-ignition-endpoint.json)", p)
	}
}

func TestImportClusterRefusesAnotherCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		cl   *wire.Cluster
	}{
		{"day-1 cluster", &wire.Cluster{ID: "c1", Kind: wire.ClusterKindCluster}},
		{"another installed cluster", &wire.Cluster{ID: "c2", Kind: wire.ClusterKindAddHostsCluster, OpenshiftClusterID: "0ther"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDay2{clusters: []*wire.Cluster{tc.cl}}
			_, err := ImportCluster(context.Background(), f.serve(t), day2Env(), clusterConfigDir(t, false, ""))
			if !errors.Is(err, ErrMultiple) {
				t.Fatalf("got %v, want ErrMultiple", err)
			}
			if d := cmp.Diff([]string{"GET /clusters"}, f.callLog()); d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
		})
	}
}

func TestClusterConfigUpdateNamesTheBadFile(t *testing.T) {
	for _, tc := range []struct {
		name, file, data, want string
	}{
		{"import config missing", "", "", onhost.ImportClusterConfigFile + ": no such file"},
		{"import config not JSON", onhost.ImportClusterConfigFile, "{", onhost.ImportClusterConfigFile + ": unexpected EOF"},
		{"import config unknown field", onhost.ImportClusterConfigFile, `{"networking":{"userManagedNetwork":true}}`, `unknown field "userManagedNetwork"`},
		{"endpoint without url", onhost.WorkerIgnitionEndpointFile, `{"ca_certificate":"eA=="}`, onhost.WorkerIgnitionEndpointFile + ": url is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != onhost.ImportClusterConfigFile && tc.file != "" {
				dir = clusterConfigDir(t, false, "")
			}
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ClusterConfigUpdate(dir)
			if !errors.Is(err, ErrManifests) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrManifests naming %q", err, tc.want)
			}
		})
	}
}

// validations is a validations_info whose hardware category fails
// has-min-memory and the root device hints.
const validations = `{"hardware":[{"id":"has-min-memory","status":"failure","message":"The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 4.00 GiB"},` +
	`{"id":"has-inventory","status":"success","message":"Valid inventory exists for the host"}],` +
	`"network":[{"id":"ntp-synced","status":"failure","message":"Host couldn't synchronize with any NTP server"}]}`

func TestAddNodeWaitsForKnownThenInstallsOnce(t *testing.T) {
	ctx := context.Background()
	f := &fakeDay2{
		script: []wire.HostStatus{wire.HostStatusDiscovering, wire.HostStatusInsufficient, wire.HostStatusKnown},
		after:  []wire.HostStatus{wire.HostStatusInstallingInProgress, wire.HostStatusAddedToExistingCluster},
	}
	c := f.serve(t)
	f.host = &wire.Host{ID: "40000000-0000-4000-8000-000000000003", ValidationsInfo: validations, StatusInfo: "Host has rebooted and no further updates will be posted"}
	var got []AddNodeStatus
	set := day2Set(t)
	id, err := AddNode(ctx, AddNodeConfig{
		Client: c, Set: set, Env: day2Env(), ClusterConfigDir: clusterConfigDir(t, false, ""),
		LocalMACs: []string{macOf(0)}, Interval: time.Millisecond,
		Status: func(st AddNodeStatus) { got = append(got, st) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if id != f.host.ID {
		t.Errorf("AddNode returned host %q, want %q", id, f.host.ID)
	}
	wantCalls := []string{
		"GET /clusters", "POST /clusters/import", "PATCH /clusters/{id}", // agent-import-cluster
		"GET /infra-envs", "POST /infra-envs", // agent-register-infraenv
		"GET /infra-envs/{id}/hosts", "GET /infra-envs/{id}/hosts", // discovering, insufficient
		"GET /infra-envs/{id}/hosts", "POST /infra-envs/{id}/hosts/{host}/actions/install", // known: install
		"GET /infra-envs/{id}/hosts", "GET /infra-envs/{id}/hosts", // installing, added
	}
	if d := cmp.Diff(wantCalls, f.callLog()); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if f.ieCreated == nil || *f.ieCreated.ClusterID != "c0ffee00-0000-4000-8000-000000000001" || f.ieCreated.PullSecret != set.PullSecret.PullSecret() {
		t.Errorf("infra-env %+v: want it bound to the imported cluster with the image's pull secret", f.ieCreated)
	}
	if n := len(f.ieCreated.StaticNetworkConfig); n != 2 {
		t.Errorf("infra-env static network configs: got %d, want the image's 2", n)
	}
	var lines []string
	for _, st := range got {
		lines = append(lines, st.Line+" | "+strings.Join(st.Reasons, "; "))
	}
	wantLines := []string{
		"Importing cluster ostest | ",
		"Waiting for the host to be ready | ",
		"Waiting for the host to be ready | The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 4.00 GiB",
		"Host installation in progress | ",
		"Host installation in progress | ",
		"The host was added to the cluster: Host has rebooted and no further updates will be posted | ",
	}
	if d := cmp.Diff(wantLines, lines); d != "" {
		t.Errorf("status lines (-want +got):\n%s", d)
	}
	if last := got[len(got)-1]; !last.Added {
		t.Errorf("last status %+v: want Added", last)
	}
}

func TestAddNodeRestartNeverImportsOrInstallsTwice(t *testing.T) {
	imported := func() *fakeDay2 {
		return &fakeDay2{
			clusters: []*wire.Cluster{{ID: "c0ffee00-0000-4000-8000-000000000001", Kind: wire.ClusterKindAddHostsCluster,
				Status: wire.ClusterStatusAddingHosts, Imported: true, OpenshiftClusterID: day2ClusterID, UserManagedNetworking: new(false)}},
			infraEnvs: []*wire.InfraEnv{{ID: "1e000000-0000-4000-8000-000000000002", ClusterID: "c0ffee00-0000-4000-8000-000000000001"}},
			host:      &wire.Host{ID: "40000000-0000-4000-8000-000000000003"},
		}
	}
	for _, tc := range []struct {
		name      string
		script    []wire.HostStatus
		after     []wire.HostStatus
		wantCalls []string
	}{
		{
			name:   "import done, install not posted",
			script: []wire.HostStatus{wire.HostStatusKnown}, after: []wire.HostStatus{wire.HostStatusAddedToExistingCluster},
			wantCalls: []string{"GET /clusters", "GET /infra-envs", "GET /infra-envs/{id}/hosts",
				"POST /infra-envs/{id}/hosts/{host}/actions/install", "GET /infra-envs/{id}/hosts"},
		},
		{
			name:      "install posted",
			script:    []wire.HostStatus{wire.HostStatusInstallingInProgress, wire.HostStatusAddedToExistingCluster},
			wantCalls: []string{"GET /clusters", "GET /infra-envs", "GET /infra-envs/{id}/hosts", "GET /infra-envs/{id}/hosts"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := imported()
			f.script, f.after = tc.script, tc.after
			c := f.serve(t)
			if _, err := AddNode(context.Background(), AddNodeConfig{
				Client: c, Set: day2Set(t), Env: day2Env(), ClusterConfigDir: clusterConfigDir(t, false, ""), Interval: time.Millisecond,
			}); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantCalls, f.callLog()); d != "" {
				t.Errorf("calls (-want +got):\n%s", d)
			}
		})
	}
}

func TestThisHost(t *testing.T) {
	inv := func(mac string) string { return `{"interfaces":[{"mac_address":"` + mac + `"}]}` }
	a := &wire.Host{ID: "a", Inventory: inv("52:54:00:AA:BB:00")}
	b := &wire.Host{ID: "b", Inventory: inv("52:54:00:aa:bb:01")}
	bare := &wire.Host{ID: "bare"}
	for _, tc := range []struct {
		name  string
		hosts []*wire.Host
		want  string
	}{
		{"by MAC, case-insensitively", []*wire.Host{b, a}, "a"},
		{"the only host, before its inventory", []*wire.Host{bare}, "bare"},
		{"several and none matches", []*wire.Host{b, bare}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if h := ThisHost(tc.hosts, []string{macOf(0)}); h != nil {
				got = h.ID
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestApplyLocalHostConfigs: on a host booted from a node config image,
// apply-host-config keeps only the host config whose MACs are this host's;
// the other hosts' configs are neither applied nor reported as hosts that
// have not registered (each of those hosts is its own node zero).
func TestApplyLocalHostConfigs(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	set := manifestSet(t, compactSpec())
	cluster, err := RegisterCluster(ctx, s.user, set)
	if err != nil {
		t.Fatal(err)
	}
	ie, err := RegisterInfraEnv(ctx, s.user, set, cluster.ID)
	if err != nil {
		t.Fatal(err)
	}
	id := s.addHost(t, ie.ID, inventory("extra-worker-0", macOf(0), 0))
	dir := t.TempDir()
	err = manifests.WriteHostConfigs(dir, []manifests.HostConfig{
		{Name: "extra-worker-0", MACs: []string{macOf(0)}, Role: "worker", Hints: &manifests.RootDeviceHints{WWN: "0x5000000000000fff"}},
		{Name: "extra-worker-1", MACs: []string{macOf(1)}, Role: "worker"},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ApplyLocalHostConfigs(ctx, s.user, ie.ID, dir, []string{"52:54:00:AA:BB:00"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Failures {
		got = append(got, f.Config+" "+f.HostID)
	}
	if d := cmp.Diff([]string{"extra-worker-0 " + id}, got); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	if len(res.Failures) == 1 && !strings.Contains(res.Failures[0].Reason, "0x5000000000000fff") {
		t.Errorf("failure %q: want the hint that matches no disk named", res.Failures[0].Reason)
	}
	// The day-1 pass would wait for the other host.
	all, err := ApplyHostConfigs(ctx, s.user, ie.ID, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := all.Missing(); len(m) != 1 || m[0] != "extra-worker-1" {
		t.Errorf("ApplyHostConfigs missing %v, want [extra-worker-1] (the test's premise)", m)
	}
}

// counter counts the requests a client sends through it, by kind.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// countingClient is a user client of s whose requests pass a proxy that
// counts the add-nodes flow's writes: "import", "patch cluster",
// "register infra-env", "install host".
func (s *service) countingClient(t *testing.T) (*wire.Client, *counter) {
	t.Helper()
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{n: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, wire.APIBasePath)
		kind := ""
		switch {
		case r.Method == http.MethodPost && p == "/clusters/import":
			kind = "import"
		case r.Method == http.MethodPatch && strings.HasPrefix(p, "/clusters/"):
			kind = "patch cluster"
		case r.Method == http.MethodPost && p == "/infra-envs":
			kind = "register infra-env"
		case r.Method == http.MethodPost && strings.HasSuffix(p, "/actions/install"):
			kind = "install host"
		}
		if kind != "" {
			cnt.mu.Lock()
			cnt.n[kind]++
			cnt.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := wire.NewClient(srv.URL, wire.WithUserToken(s.userToken))
	if err != nil {
		t.Fatal(err)
	}
	return c, cnt
}

// TestAddNodeAgainstTheService runs the add-nodes flow against the embedded
// service, killed and restarted twice: after the import (the host not yet
// known) and after the install was posted. It imports once, registers one
// infra-env bound to the imported cluster, posts the install once, and
// the host ends added-to-existing-cluster.
func TestAddNodeAgainstTheService(t *testing.T) {
	s := newService(t)
	c, cnt := s.countingClient(t)
	endpoint := "https://api-int.ostest.test.metalkube.org:22623/config/worker"
	cfg := AddNodeConfig{
		Client: c, Set: day2Set(t), Env: day2Env(), ClusterConfigDir: clusterConfigDir(t, false, endpoint),
		LocalMACs: []string{macOf(0)}, Interval: time.Millisecond,
	}
	type result struct {
		id  string
		err error
	}
	// run starts the flow and returns a function that waits for a status
	// satisfying ok, and a stop that kills the flow (as kill -9 would:
	// nothing runs after it).
	run := func() (waitFor func(what string, ok func(AddNodeStatus) bool) AddNodeStatus, stop func() result) {
		ctx, cancel := context.WithCancel(context.Background())
		statuses := make(chan AddNodeStatus)
		done := make(chan result, 1)
		c := cfg
		c.Status = func(st AddNodeStatus) {
			select {
			case statuses <- st:
			case <-ctx.Done():
			}
		}
		go func() {
			id, err := AddNode(ctx, c)
			done <- result{id, err}
		}()
		waitFor = func(what string, ok func(AddNodeStatus) bool) AddNodeStatus {
			t.Helper()
			var last AddNodeStatus
			for {
				select {
				case st := <-statuses:
					if ok(st) {
						return st
					}
					last = st
				case r := <-done:
					t.Fatalf("waiting for %s: the flow ended (%v) after %+v", what, r.err, last)
				}
			}
		}
		stop = func() result {
			cancel()
			return <-done
		}
		return waitFor, stop
	}
	waiting := func(st AddNodeStatus) bool { return st.Line == MsgWaitingForHost }

	waitFor, stop := run()
	waitFor("the host", waiting)
	stop()
	ctx := context.Background()
	clusters, err := s.user.ListClusters(ctx)
	if err != nil || len(clusters) != 1 {
		t.Fatalf("clusters %v, %v; want the imported one", clusters, err)
	}
	cl := clusters[0]
	if cl.Kind != wire.ClusterKindAddHostsCluster || cl.OpenshiftClusterID != day2ClusterID || cl.Name != "ostest" ||
		cl.IgnitionEndpoint == nil || strOf(cl.IgnitionEndpoint.URL) != endpoint {
		t.Errorf("imported cluster: kind %s, openshift_cluster_id %s, name %s, ignition endpoint %+v; want AddHostsCluster %s ostest %s",
			cl.Kind, cl.OpenshiftClusterID, cl.Name, cl.IgnitionEndpoint, day2ClusterID, endpoint)
	}
	ies, err := s.user.ListInfraEnvs(ctx, "")
	if err != nil || len(ies) != 1 || ies[0].ClusterID != cl.ID {
		t.Fatalf("infra-envs %v, %v; want one bound to %s", ies, err, cl.ID)
	}
	ie := ies[0]

	// Restart: import done, the host not known yet.
	waitFor, stop = run()
	waitFor("the host", waiting)
	id := s.addHost(t, ie.ID, inventory("extra-worker-0", macOf(0), 0))
	if _, err := s.agent.NextSteps(ctx, ie.ID, id, time.Now().Unix(), 0); err != nil {
		t.Fatal(err)
	}
	waitFor("the install", func(st AddNodeStatus) bool { return st.Installing })
	stop()
	h, err := s.user.GetHost(ctx, ie.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind != wire.HostKindAddToExistingClusterHost || h.Status != wire.HostStatusInstalling {
		t.Errorf("host: kind %s status %s (%s), want AddToExistingClusterHost installing", h.Kind, h.Status, h.StatusInfo)
	}

	// Restart: the install was posted. The installer reports its stages
	// up to Rebooting.
	waitFor, stop = run()
	waitFor("the install", func(st AddNodeStatus) bool { return st.Installing })
	if _, err := s.agent.NextSteps(ctx, ie.ID, id, time.Now().Unix(), 0); err != nil {
		t.Fatal(err)
	}
	if h, err = s.user.GetHost(ctx, ie.ID, id); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.ProgressStages {
		if err := s.agent.UpdateHostInstallProgress(ctx, ie.ID, id, wire.HostProgress{CurrentStage: st}); err != nil {
			t.Fatalf("progress %s: %v", st, err)
		}
	}
	added := waitFor("added-to-existing-cluster", func(st AddNodeStatus) bool { return st.Added })
	if !strings.Contains(added.Line, "Host has rebooted") {
		t.Errorf("last line %q: want the service's status info", added.Line)
	}
	if r := stop(); r.err != nil || r.id != id {
		t.Errorf("AddNode = %q, %v; want %q", r.id, r.err, id)
	}
	for kind, want := range map[string]int{"import": 1, "patch cluster": 1, "register infra-env": 1, "install host": 1} {
		if got := cnt.get(kind); got != want {
			t.Errorf("%s: sent %d times, want %d", kind, got, want)
		}
	}
}

// TestAddNodeStopsOnRefusedClusterConfig: what the node config image
// holds and the service refuses (a 4xx) is not retried: the flow stops
// and says why.
func TestAddNodeStopsOnRefusedClusterConfig(t *testing.T) {
	s := newService(t)
	dir := clusterConfigDir(t, false, "")
	wie, _ := json.Marshal(onhost.WorkerIgnitionEndpoint{URL: "https://api-int.ostest.test.metalkube.org:22623/config/worker", CACertificate: "bm90IGEgY2VydGlmaWNhdGU="})
	if err := os.WriteFile(filepath.Join(dir, onhost.WorkerIgnitionEndpointFile), wie, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := AddNode(ctx, AddNodeConfig{Client: s.user, Set: day2Set(t), Env: day2Env(), ClusterConfigDir: dir, Interval: time.Millisecond})
	if wire.StatusCode(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "ca_certificate") {
		t.Fatalf("got %v, want the service's 400 about ca_certificate", err)
	}
}
