package sim

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// kubeCluster is a real kube-apiserver (kube/localapi) standing for the
// installed cluster, with the machine config server stand-in on the same
// address (the API VIP) and a DNS server that resolves api-int to it.
type kubeCluster struct {
	admin      *kube.Client
	kubeconfig []byte // the admin's, for a host's KubeconfigPath
	mcs        *MCS
	dns        string
	addr       netip.Addr
}

const (
	testClusterName = "sandbox"
	testBaseDomain  = "nodezero.test"
	testAPIInt      = "api-int." + testClusterName + "." + testBaseDomain
)

// startCluster starts the cluster's API; it skips without the tools (fails
// under CI=true).
func startCluster(t *testing.T, ctx context.Context) *kubeCluster {
	t.Helper()
	tools, err := localapi.FindTools()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("%v", err)
	}
	ca := func(cn string) *pki.CA {
		key, err := pki.NewKey()
		if err != nil {
			t.Fatal(err)
		}
		c, err := pki.SelfSign(nil, key, pki.Spec{Subject: pkixName(cn, "openshift"), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lb, adminCA := ca("kube-apiserver-lb-signer"), ca("admin-kubeconfig-signer")
	adminKey, err := pki.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	adminCert, err := adminCA.Issue(nil, adminKey.Public(), pki.Spec{Subject: pkixName("system:admin", "system:masters"),
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatal(err)
	}
	lbKey, _ := pki.KeyPEM(lb.Key)
	adminKeyPEM, _ := pki.KeyPEM(adminKey)
	lbPEM, adminPEM := pki.CertPEM(lb.Cert), pki.CertPEM(adminCert)

	addr := randomLoopback()
	api, err := localapi.Start(ctx, localapi.Config{
		Dir: t.TempDir(), Addr: addr, Names: []string{"api." + testClusterName + "." + testBaseDomain, testAPIInt},
		ServingSignerCert: lbPEM, ServingSignerKey: lbKey, ClientCA: pki.CertPEM(adminCA.Cert), AdminCert: adminPEM, AdminKey: adminKeyPEM,
		Cluster: localapi.Cluster{ID: "0f8f3b8e-9a3c-4e55-a0b4-6c8d9d6d8a11", Version: "4.18.0", Image: "127.0.0.1:5000/ocp/release:4.18.0-x86_64"},
		Tools:   tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	admin, err := kube.NewClient(&kube.Config{Server: api.URL, TLSServerName: testAPIInt, CAData: lbPEM, CertData: adminPEM, KeyData: adminKeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	m, err := StartMCS(ctx, MCSConfig{Addr: addr, ClusterName: testClusterName, BaseDomain: testBaseDomain, APICA: lbPEM, ClientCert: adminPEM, ClientKey: adminKeyPEM})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	b64 := base64.StdEncoding.EncodeToString
	kc := []byte("clusters:\n- cluster:\n    certificate-authority-data: " + b64(lbPEM) + "\n    server: " + api.URL + "\n    tls-server-name: " + testAPIInt +
		"\n  name: c\ncontexts:\n- context:\n    cluster: c\n    user: admin\n  name: admin\ncurrent-context: admin\nusers:\n- name: admin\n  user:\n    client-certificate-data: " +
		b64(adminPEM) + "\n    client-key-data: " + b64(adminKeyPEM) + "\n")
	return &kubeCluster{admin: admin, kubeconfig: kc, mcs: m, dns: startDNS(t, map[string]netip.Addr{testAPIInt: addr}), addr: addr}
}

// statusLines records a host's status lines and lets a test wait for one.
type statusLines struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
}

func newStatusLines() *statusLines { return &statusLines{changed: make(chan struct{})} }

func (s *statusLines) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, line)
	close(s.changed)
	s.changed = make(chan struct{})
}

// count is how many lines contain sub.
func (s *statusLines) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.lines {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// waitCount waits until n lines contain sub.
func (s *statusLines) waitCount(t *testing.T, sub string, n int) {
	t.Helper()
	deadline := time.After(2 * time.Minute) // bounds a hang only
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if s.count(sub) >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("no %d status lines containing %q; lines:\n%s", n, sub, strings.Join(s.lines, "\n"))
		}
	}
}

// writeDisk writes a small OS image with ign as its Ignition to a disk
// file, as the installer does; it returns the payload folder and the disk.
func writeDisk(t *testing.T, ign []byte) (payloadDir, disk string) {
	t.Helper()
	payloadDir = t.TempDir()
	f, err := os.Create(filepath.Join(payloadDir, "os.img"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := diskwrite.BuildImage(f, diskwrite.ImageSpec{Size: diskwrite.MinImageSize + 1<<20, Seed: 7})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	img.File = "os.img"
	p := &diskwrite.Payload{OS: img}
	if err := diskwrite.WritePayload(payloadDir, p); err != nil {
		t.Fatal(err)
	}
	if p, err = diskwrite.LoadPayload(payloadDir); err != nil {
		t.Fatal(err)
	}
	disk = filepath.Join(t.TempDir(), "disk")
	if err := os.WriteFile(disk, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(disk, img.Size+1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := diskwrite.Write(context.Background(), diskwrite.Options{Device: disk, Payload: p, Ignition: ign}); err != nil {
		t.Fatal(err)
	}
	return payloadDir, disk
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// csrsFor lists the CSRs whose request names the node.
func csrsFor(t *testing.T, ctx context.Context, c *kube.Client, node string) []kube.CertificateSigningRequest {
	t.Helper()
	all, err := c.ListCSRs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []kube.CertificateSigningRequest
	for _, csr := range all {
		if req := parseRequest(t, csr.Spec.Request); req.Subject.CommonName == "system:node:"+node {
			out = append(out, csr)
		}
	}
	return out
}

func parseRequest(t *testing.T, p []byte) *x509.CertificateRequest {
	t.Helper()
	blk, _ := pem.Decode(p)
	if blk == nil {
		t.Fatalf("CSR request %q is not PEM", p)
	}
	req, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.CheckSignature(); err != nil {
		t.Fatalf("CSR request signature: %v", err)
	}
	return req
}

// TestDay2Host: a day-2 host booted from a disk whose Ignition is a
// pointer config fetches the worker config from the machine config server
// (through its DNS server, TLS verified), then joins the real API as a
// kubelet: a client CSR waits for approval, the Node registers Ready, a
// serving CSR waits for approval. Stopped twice mid-way, it resumes: the
// same CSRs, one Node.
func TestDay2Host(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl := startCluster(t, ctx)
	const node = "extra-worker-0"
	// The hostname comes from the pointer config, as assisted writes it.
	payload, disk := writeDisk(t, pointerConfig(t, cl.mcs.WorkerURL(), cl.mcs.CACert, node))
	root := t.TempDir()
	hostAddr := randomLoopback()
	status := newStatusLines()
	d := &onhost.BootDisk{Disk: disk, ClusterID: "5b1e8f0a-0000-4000-8000-000000000001", InfraEnvID: "5b1e8f0a-0000-4000-8000-000000000002",
		HostID: "5b1e8f0a-0000-4000-8000-000000000003", Role: string(wire.HostRoleWorker), RebootedAt: time.Now()}
	// No ServiceURL: a day-2 host that tried to report would fail.
	in := Installed{Root: root, Payload: payload, DNSServer: cl.dns, Addresses: []netip.Prefix{netip.PrefixFrom(hostAddr, 24)},
		Status: status.add, Log: testLog(t)}
	boot := func() (stop func() error) {
		runCtx, stopRun := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- RunInstalled(runCtx, d, in) }()
		return func() error { stopRun(); return <-done }
	}
	approve := func(name string) {
		t.Helper()
		if _, err := cl.admin.ApproveCSR(ctx, name, "NodezeroApprove", "approved by the sim test"); err != nil {
			t.Fatalf("approve %s: %v", name, err)
		}
	}
	const waitClient = "waiting for CSR approval (client certificate"
	const waitServing = "waiting for CSR approval (serving certificate"

	// First boot: the client CSR, pending; then the host is stopped.
	stop := boot()
	status.waitCount(t, waitClient, 1)
	csrs := csrsFor(t, ctx, cl.admin, node)
	if len(csrs) != 1 {
		t.Fatalf("%d CSRs for %s, want 1", len(csrs), node)
	}
	client := csrs[0]
	req := parseRequest(t, client.Spec.Request)
	if client.Spec.SignerName != kube.SignerKubeletClient || !kube.CSRPending(&client) ||
		!slices.Equal(req.Subject.Organization, []string{"system:nodes"}) || !strings.HasPrefix(client.Metadata.Name, "node-csr-") {
		t.Errorf("client CSR %s: signer %s, pending %v, organization %v; want %s, pending, [system:nodes], node-csr-…",
			client.Metadata.Name, client.Spec.SignerName, kube.CSRPending(&client), req.Subject.Organization, kube.SignerKubeletClient)
	}
	if d := cmp.Diff([]string{"client auth", "digital signature"}, slices.Sorted(slices.Values(client.Spec.Usages))); d != "" {
		t.Errorf("client CSR usages (-want +got):\n%s", d)
	}
	kc, err := os.ReadFile(filepath.Join(root, BootstrapKubeconfigPath))
	if err != nil || !strings.Contains(string(kc), "https://"+testAPIInt+":6443") {
		t.Errorf("the fetched bootstrap kubeconfig under the root: %v, %q", err, kc)
	}
	if _, err := cl.admin.GetNode(ctx, node); !errors.Is(err, kube.ErrNotFound) {
		t.Errorf("Node before the client CSR's approval: %v, want not found", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("the stopped host returned %v", err)
	}

	// Second boot: the same CSR, found again; approved, the Node
	// registers Ready; the serving CSR waits; stopped again.
	stop = boot()
	status.waitCount(t, waitClient+", "+client.Metadata.Name, 2)
	if n := len(csrsFor(t, ctx, cl.admin, node)); n != 1 {
		t.Fatalf("%d CSRs after a restart, want the 1 from before", n)
	}
	approve(client.Metadata.Name)
	status.waitCount(t, waitServing, 1)
	n, err := cl.admin.GetNode(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	if !kube.NodeReady(n) {
		t.Errorf("Node %s not Ready: %+v", node, n.Status.Conditions)
	}
	wantLabels := map[string]string{kube.LabelWorkerRole: "", kube.LabelHostname: node, kube.LabelArch: runtime.GOARCH, kube.LabelOS: "linux"}
	for k, v := range wantLabels {
		if got, ok := n.Metadata.Labels[k]; !ok || got != v {
			t.Errorf("Node label %s = %q (%v), want %q", k, got, ok, v)
		}
	}
	if n.Status.NodeInfo.Architecture != runtime.GOARCH || !slices.Contains(n.Status.Addresses, kube.NodeAddress{Type: kube.NodeInternalIP, Address: hostAddr.String()}) {
		t.Errorf("Node status: architecture %q, addresses %+v; want %s and InternalIP %s", n.Status.NodeInfo.Architecture, n.Status.Addresses, runtime.GOARCH, hostAddr)
	}
	got, err := cl.admin.GetCSR(ctx, client.Metadata.Name)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := pki.ParseCert(got.Status.Certificate); err != nil || c.Subject.CommonName != "system:node:"+node {
		t.Errorf("the client CSR's certificate: %v (%v), want one for system:node:%s", err, c, node)
	}
	var serving kube.CertificateSigningRequest
	for _, c := range csrsFor(t, ctx, cl.admin, node) {
		if c.Spec.SignerName == kube.SignerKubeletServing {
			serving = c
		}
	}
	sreq := parseRequest(t, serving.Spec.Request)
	if !kube.CSRPending(&serving) || !slices.Equal(sreq.DNSNames, []string{node}) || len(sreq.IPAddresses) != 1 || !sreq.IPAddresses[0].Equal(hostAddr.AsSlice()) {
		t.Errorf("serving CSR %s: pending %v, DNS %v, IPs %v; want pending, [%s], [%s]", serving.Metadata.Name, kube.CSRPending(&serving), sreq.DNSNames, sreq.IPAddresses, node, hostAddr)
	}
	if err := stop(); err != nil {
		t.Fatalf("the stopped host returned %v", err)
	}

	// Third boot: the client certificate is kept, the Node is there, the
	// serving CSR is found again; approved, the host has joined.
	stop = boot()
	status.waitCount(t, waitServing+", "+serving.Metadata.Name, 2)
	approve(serving.Metadata.Name)
	status.waitCount(t, "Joined the cluster: Node "+node+" is Ready", 1)
	if n := len(csrsFor(t, ctx, cl.admin, node)); n != 2 {
		t.Errorf("%d CSRs for %s, want 2 (client, serving): a restart made another", n, node)
	}
	nodes, err := cl.admin.ListNodes(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].Metadata.Name != node {
		t.Errorf("Nodes %+v, want %s only", nodes, node)
	}
	if status.count(waitClient) != 2 {
		t.Errorf("the third boot asked for a client certificate again (%d lines)", status.count(waitClient))
	}
	if err := stop(); err != nil {
		t.Fatalf("the stopped host returned %v", err)
	}

	t.Run("a denied CSR ends the join", func(t *testing.T) {
		st := newStatusLines()
		k := &Kubelet{Client: cl.admin, NodeName: "denied-worker", PKIDir: t.TempDir(), Status: st.add, Log: testLog(t)}
		done := make(chan error, 1)
		go func() { done <- k.Join(ctx) }()
		st.waitCount(t, waitClient, 1)
		csrs := csrsFor(t, ctx, cl.admin, "denied-worker")
		if len(csrs) != 1 {
			t.Fatalf("%d CSRs, want 1", len(csrs))
		}
		csr := csrs[0]
		csr.Status.Conditions = append(csr.Status.Conditions, kube.CSRCondition{Type: kube.CSRConditionDenied, Status: kube.True,
			Reason: "NotThisOne", Message: "denied by the sim test", LastUpdateTime: kube.Now()})
		if err := cl.admin.Do(ctx, "PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/"+csr.Metadata.Name+"/approval", &csr, nil); err != nil {
			t.Fatal(err)
		}
		err := <-done
		if err == nil || !strings.Contains(err.Error(), "was denied: Denied: NotThisOne denied by the sim test") {
			t.Errorf("Join = %v, want the denial with its reason", err)
		}
		if _, err := cl.admin.GetNode(ctx, "denied-worker"); !errors.Is(err, kube.ErrNotFound) {
			t.Errorf("a denied kubelet's Node: %v, want none", err)
		}
	})
}

// TestDay1Nodes: node zero's simulated controller writes the day-1 hosts'
// Nodes as they join (control plane labelled master and control-plane),
// Ready once done; adding nodes reads the architecture from them.
func TestDay1Nodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl := startCluster(t, ctx)
	w := NewStatusWriter(cl.admin, testLog(t))
	inv := func(name, addr string) string {
		return `{"hostname":"` + name + `","interfaces":[{"name":"eth0","ipv4_addresses":["` + addr + `/24"]}]}`
	}
	host := func(name string, role wire.HostRole, stage wire.HostStage, addr string) *wire.Host {
		return &wire.Host{ID: name, Role: role, Status: wire.HostStatusInstallingInProgress, Inventory: inv(name, addr),
			Progress: &wire.HostProgressInfo{CurrentStage: stage}}
	}
	hosts := []*wire.Host{
		host("master-0", wire.HostRoleBootstrap, wire.HostStageJoined, "192.168.111.20"),
		host("master-1", wire.HostRoleMaster, wire.HostStageDone, "192.168.111.21"),
		host("worker-0", wire.HostRoleWorker, wire.HostStageRebooting, "192.168.111.22"),
	}
	sync := func() {
		t.Helper()
		if _, err := w.Sync(ctx, &wire.Cluster{Status: wire.ClusterStatusInstalling, Hosts: hosts}); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	ready := func() map[string]bool {
		t.Helper()
		nodes, err := cl.admin.ListNodes(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for i := range nodes {
			n := &nodes[i]
			out[n.Metadata.Name] = kube.NodeReady(n)
			_, master := n.Metadata.Labels[kube.LabelMasterRole]
			_, cp := n.Metadata.Labels[kube.LabelControlPlaneRole]
			if !master || !cp || n.Status.NodeInfo.Architecture != runtime.GOARCH {
				t.Errorf("Node %s: labels %v, architecture %q; want master and control-plane, %s", n.Metadata.Name, n.Metadata.Labels, n.Status.NodeInfo.Architecture, runtime.GOARCH)
			}
		}
		return out
	}
	if d := cmp.Diff(map[string]bool{"master-0": false, "master-1": true}, ready()); d != "" {
		t.Errorf("Nodes Ready after the first sync (-want +got):\n%s", d)
	}
	hosts[0].Progress.CurrentStage = wire.HostStageDone
	sync()
	if d := cmp.Diff(map[string]bool{"master-0": true, "master-1": true}, ready()); d != "" {
		t.Errorf("Nodes Ready once master-0 is done (-want +got):\n%s", d)
	}
}

// TestDay2DiskUnreadable: a day-2 host (add-nodes.env under its root)
// whose disk does not read back as written says so on its console and
// stays where it is: it has no service to report to.
func TestDay2DiskUnreadable(t *testing.T) {
	payload, disk := writeDisk(t, pointerConfig(t, "https://"+testAPIInt+":22623/config/worker", []byte("unused")))
	f, err := os.OpenFile(disk, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("not the image"), diskwrite.MinImageSize/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	root := t.TempDir()
	if err := writeUnder(root, onhost.AddNodesEnvPath, []byte("CLUSTER_ID=x\n")); err != nil {
		t.Fatal(err)
	}
	status := newStatusLines()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- RunInstalled(ctx, &onhost.BootDisk{Disk: disk, Role: string(wire.HostRoleWorker)},
			Installed{Root: root, Payload: payload, Status: status.add, Log: testLog(t)})
	}()
	status.waitCount(t, "it does not boot as written", 1)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunInstalled = %v, want nil once stopped", err)
	}
	if n := status.count(""); n != 1 {
		t.Errorf("%d status lines, want the one saying why: %v", n, status.lines)
	}
}
