package watch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/wire"
)

// anNodeZero is an added host's own node zero as AddNodes reads it: the
// imported cluster, its infra-env, the one host and its events, behind
// the user token. The test sets what it answers.
type anNodeZero struct {
	mu     sync.Mutex
	host   *wire.Host // nil: not registered yet
	events []*wire.Event
	srv    *httptest.Server
}

const anToken = "user-token-of-the-node-config-image"

func newANNodeZero(t *testing.T) *anNodeZero {
	n := &anNodeZero{}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	t.Cleanup(n.srv.Close)
	return n
}

func (n *anNodeZero) serve(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	defer n.mu.Unlock()
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	if r.Header.Get(wire.HeaderUserToken) != anToken {
		w.WriteHeader(http.StatusUnauthorized)
		reply(map[string]any{"code": "401", "reason": "unauthorized"})
		return
	}
	const ie = "9b4c1a52-1111-4d6e-9c43-000000000001"
	switch r.URL.Path {
	case wire.APIBasePath + "/clusters":
		reply([]map[string]any{{"id": "5d2c0e60-2222-4a4e-8c3b-000000000002", "kind": "AddHostsCluster", "status": "adding-hosts"}})
	case wire.APIBasePath + "/infra-envs":
		reply([]map[string]any{{"id": ie, "kind": "InfraEnv"}})
	case wire.APIBasePath + "/infra-envs/" + ie + "/hosts":
		if n.host == nil {
			reply([]any{})
			return
		}
		reply([]*wire.Host{n.host})
	case wire.APIBasePath + "/events":
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		reply(n.events[min(off, len(n.events)):])
	default:
		http.NotFound(w, r)
	}
}

// set changes what the host's node zero says of it.
func (n *anNodeZero) set(name string, status wire.HostStatus, stage wire.HostStage, info string, validations string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.host = &wire.Host{ID: "0c7a4d1e-3333-4f3e-9d2a-00000000000" + name[len(name)-1:], RequestedHostname: name, Status: status, ValidationsInfo: validations}
	if stage != "" {
		n.host.Progress = &wire.HostProgressInfo{CurrentStage: stage, ProgressInfo: info}
	}
}

func (n *anNodeZero) event(sev wire.EventSeverity, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, &wire.Event{Severity: sev, Message: msg})
}

// The validations of a host whose disks are all too small.
const anNoDisk = `{"hardware":[{"id":"has-inventory","status":"success","message":"Valid inventory exists for the host"},` +
	`{"id":"has-min-valid-disks","status":"failure","message":"No eligible disks were found, please check specific disks to see why they are not eligible"}],` +
	`"network":[{"id":"ntp-synced","status":"success","message":"Host NTP is synced"}]}`

// anLines is a writer that hands out the lines written since the last take.
type anLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *anLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *anLines) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSuffix(l.b.String(), "\n")
	l.b.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// anCluster is the installed cluster's real kube-apiserver; it skips
// without the tools (fails under CI=true).
func anCluster(t *testing.T, ctx context.Context) *kube.Client {
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
		c, err := pki.SelfSign(nil, key, pki.Spec{Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)})
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
	adminCert, err := adminCA.Issue(nil, adminKey.Public(), pki.Spec{Subject: pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatal(err)
	}
	lbKey, _ := pki.KeyPEM(lb.Key)
	adminKeyPEM, _ := pki.KeyPEM(adminKey)
	var b [3]byte
	rand.Read(b[:])
	addr := netip.AddrFrom4([4]byte{127, 100 + b[0]%100, 2 + b[1]%250, 2 + b[2]%250})
	api, err := localapi.Start(ctx, localapi.Config{
		Dir: t.TempDir(), Addr: addr, Names: []string{"api.sandbox.nodezero.test"},
		ServingSignerCert: pki.CertPEM(lb.Cert), ServingSignerKey: lbKey, ClientCA: pki.CertPEM(adminCA.Cert),
		AdminCert: pki.CertPEM(adminCert), AdminKey: adminKeyPEM,
		Cluster: localapi.Cluster{ID: "0f8f3b8e-9a3c-4e55-a0b4-6c8d9d6d8a11", Version: "4.18.0", Image: "127.0.0.1:5000/ocp/release:4.18.0-x86_64"},
		Tools:   tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	return api.Client()
}

// anCSR is what a joining kubelet asks for: a request for CN
// system:node:<name>.
func anCSR(t *testing.T, ctx context.Context, c *kube.Client, name, node, signer string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}}}, k)
	if err != nil {
		t.Fatal(err)
	}
	usages := []string{"digital signature", "client auth"}
	if signer == kube.SignerKubeletServing {
		usages = []string{"digital signature", "server auth"}
	}
	_, err = c.CreateCSR(ctx, &kube.CertificateSigningRequest{Metadata: kube.ObjectMeta{Name: name},
		Spec: kube.CertificateSigningRequestSpec{Request: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), SignerName: signer, Usages: usages}})
	if err != nil {
		t.Fatal(err)
	}
}

func anNode(t *testing.T, ctx context.Context, c *kube.Client, name string, ready kube.ConditionStatus) {
	t.Helper()
	n, err := c.GetNode(ctx, name)
	if errors.Is(err, kube.ErrNotFound) {
		n, err = c.CreateNode(ctx, &kube.Node{Metadata: kube.ObjectMeta{Name: name, Labels: map[string]string{kube.LabelWorkerRole: ""}}})
	}
	if err != nil {
		t.Fatal(err)
	}
	n.SetCondition(kube.NodeCondition{Type: kube.NodeReadyCondition, Status: ready})
	if _, err := c.UpdateNodeStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
}

func TestAddNodes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kc := anCluster(t, ctx)
	w0, w1 := newANNodeZero(t), newANNodeZero(t)
	out := &anLines{}
	m, err := NewAddNodesMonitor(AddNodesOptions{
		Hosts:     []AddNodesHost{{Name: "extra-worker-0", URL: w0.srv.URL}, {Name: "extra-worker-1", URL: w1.srv.URL}},
		UserToken: anToken, Kube: kc, Approve: true, Out: out, StuckPolls: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	step := func(name string, wantDone bool, want ...string) error {
		t.Helper()
		done, err := m.Poll(ctx)
		got := out.take()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: lines (-want +got):\n%s", name, d)
		}
		if done != wantDone {
			t.Fatalf("%s: done %v (err %v), want %v", name, done, err, wantDone)
		}
		if !done && err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return err
	}

	w0.set("extra-worker-0", wire.HostStatusKnown, "", "", "")
	step("known; the other not registered", false, "extra-worker-0: known")

	w0.set("extra-worker-0", wire.HostStatusInstallingInProgress, wire.HostStageWritingImageToDisk, "42%", "")
	w1.set("extra-worker-1", wire.HostStatusInsufficient, "", "", anNoDisk)
	step("installing; the other insufficient", false,
		"extra-worker-0: installing-in-progress: Writing image to disk 42%",
		"extra-worker-1: insufficient",
		"extra-worker-1: validation has-min-valid-disks failed: No eligible disks were found, please check specific disks to see why they are not eligible")

	w0.event(wire.EventSeverityWarning, "Host extra-worker-0: the disk write is slow")
	step("a warning; the other still insufficient: given up", false,
		"extra-worker-0: warning: Host extra-worker-0: the disk write is slow",
		"extra-worker-1: cannot be added: insufficient, and it will not fix itself: No eligible disks were found, please check specific disks to see why they are not eligible (validation has-min-valid-disks)")
	step("nothing new", false)

	w0.set("extra-worker-0", wire.HostStatusAddedToExistingCluster, wire.HostStageDone, "", "")
	step("added", false, "extra-worker-0: added-to-existing-cluster: Done")
	w0.srv.Close()
	step("rebooted", false, "extra-worker-0: its node zero no longer answers (the host rebooted): following it in the cluster")

	anCSR(t, ctx, kc, "csr-a", "extra-worker-0", kube.SignerKubeletClient)
	anCSR(t, ctx, kc, "csr-other", "someone-else", kube.SignerKubeletClient)
	step("the client CSR", false, "extra-worker-0: CSR csr-a is pending approval (client)", "extra-worker-0: CSR csr-a approved (client)")
	a, err := kc.GetCSR(ctx, "csr-a")
	if err != nil {
		t.Fatal(err)
	}
	if !kube.CSRApproved(a) || a.Status.Conditions[0].Reason != ApproveReason || a.Status.Conditions[0].Message != ApproveMessage {
		t.Errorf("csr-a after the poll: %+v, want approved by nodezero", a.Status)
	}
	if o, err := kc.GetCSR(ctx, "csr-other"); err != nil || !kube.CSRPending(o) {
		t.Errorf("another node's CSR: %+v, %v: want it left pending", o, err)
	}

	anNode(t, ctx, kc, "extra-worker-0", kube.False)
	anCSR(t, ctx, kc, "csr-b", "extra-worker-0", kube.SignerKubeletServing)
	step("its Node, the serving CSR", false,
		"extra-worker-0: CSR csr-b is pending approval (serving)", "extra-worker-0: CSR csr-b approved (serving)", "extra-worker-0: joined the cluster")
	anNode(t, ctx, kc, "extra-worker-0", kube.True)
	err = step("Ready", true, "extra-worker-0: Ready")
	var ae *AddNodesError
	if !errors.As(err, &ae) || len(ae.Failed) != 1 || !strings.HasPrefix(ae.Failed[0], "extra-worker-1: insufficient") || !strings.Contains(err.Error(), "No eligible disks") {
		t.Errorf("the end: %v, want an AddNodesError naming extra-worker-1 and its validation", err)
	}

	t.Run("without --approve, the CSR waits and the wait says so", func(t *testing.T) {
		w2 := newANNodeZero(t)
		w2.set("extra-worker-2", wire.HostStatusAddedToExistingCluster, wire.HostStageDone, "", "")
		anCSR(t, ctx, kc, "csr-c", "extra-worker-2", kube.SignerKubeletClient)
		out := &anLines{}
		cctx, ccancel := context.WithCancel(ctx)
		m, err := NewAddNodesMonitor(AddNodesOptions{Hosts: []AddNodesHost{{Name: "extra-worker-2", URL: w2.srv.URL}}, UserToken: anToken, Kube: kc, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if done, err := m.Poll(cctx); done || err != nil {
				t.Fatalf("poll: done %v, %v", done, err)
			}
		}
		want := []string{
			"extra-worker-2: added-to-existing-cluster: Done",
			"extra-worker-2: CSR csr-c is pending approval (client): approve it with `oc adm certificate approve csr-c`, or run with --approve",
		}
		if d := cmp.Diff(want, out.take()); d != "" {
			t.Errorf("lines (-want +got):\n%s", d)
		}
		if c, err := kc.GetCSR(ctx, "csr-c"); err != nil || !kube.CSRPending(c) {
			t.Errorf("csr-c: %+v, %v: want it pending", c, err)
		}
		ccancel()
		err = m.Interrupted(cctx.Err())
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "extra-worker-2 CSR csr-c pending approval (client)") {
			t.Errorf("Interrupted = %v, want what extra-worker-2 reached", err)
		}

		// Denied: the host cannot join.
		c, err := kc.GetCSR(ctx, "csr-c")
		if err != nil {
			t.Fatal(err)
		}
		c.Status.Conditions = []kube.CSRCondition{{Type: kube.CSRConditionDenied, Status: kube.True, Reason: "AdminDenied", Message: "not ours", LastUpdateTime: kube.Now()}}
		if err := kc.Do(ctx, http.MethodPut, "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-c/approval", c, nil); err != nil {
			t.Fatal(err)
		}
		done, err := m.Poll(ctx)
		if !done || err == nil || !strings.Contains(err.Error(), "extra-worker-2: its client CSR csr-c was denied: AdminDenied not ours") {
			t.Errorf("after the denial: done %v, %v; want the host named with the denial", done, err)
		}
		if d := cmp.Diff([]string{"extra-worker-2: CSR csr-c was denied (client): AdminDenied not ours"}, out.take()); d != "" {
			t.Errorf("lines (-want +got):\n%s", d)
		}
	})

	t.Run("AddNodes returns nil once every Node is Ready", func(t *testing.T) {
		w3 := newANNodeZero(t)
		w3.set("extra-worker-3", wire.HostStatusAddedToExistingCluster, wire.HostStageDone, "", "")
		anNode(t, ctx, kc, "extra-worker-3", kube.True)
		out := &anLines{}
		err := AddNodes(ctx, AddNodesOptions{Hosts: []AddNodesHost{{Name: "extra-worker-3", URL: w3.srv.URL}}, UserToken: anToken, Kube: kc, Out: out, Poll: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"extra-worker-3: added-to-existing-cluster: Done", "extra-worker-3: joined the cluster", "extra-worker-3: Ready"}
		if d := cmp.Diff(want, out.take()); d != "" {
			t.Errorf("lines (-want +got):\n%s", d)
		}
	})
}

// Without the cluster's API, AddNodes follows the hosts to
// added-to-existing-cluster; a refused token, a host in error and an
// unanswering node zero are said as such.
func TestAddNodesWithoutCluster(t *testing.T) {
	ctx := context.Background()
	t.Run("added", func(t *testing.T) {
		n := newANNodeZero(t)
		n.set("extra-worker-0", wire.HostStatusAddedToExistingCluster, wire.HostStageDone, "", "")
		out := &anLines{}
		if err := AddNodes(ctx, AddNodesOptions{Hosts: []AddNodesHost{{Name: "extra-worker-0", URL: n.srv.URL}}, UserToken: anToken, Out: out, Poll: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"extra-worker-0: added-to-existing-cluster: Done"}, out.take()); d != "" {
			t.Errorf("lines (-want +got):\n%s", d)
		}
	})
	t.Run("token refused", func(t *testing.T) {
		n := newANNodeZero(t)
		err := AddNodes(ctx, AddNodesOptions{Hosts: []AddNodesHost{{Name: "extra-worker-0", URL: n.srv.URL}}, UserToken: "another", Poll: time.Millisecond})
		if !errors.Is(err, ErrAddNodesRefused) || !strings.Contains(err.Error(), "extra-worker-0") {
			t.Errorf("AddNodes = %v, want ErrAddNodesRefused naming the host", err)
		}
	})
	t.Run("error", func(t *testing.T) {
		n := newANNodeZero(t)
		n.mu.Lock()
		n.host = &wire.Host{ID: "x", RequestedHostname: "extra-worker-0", Status: wire.HostStatusError, StatusInfo: "Failed to write image to disk: no space left on device"}
		n.mu.Unlock()
		out := &anLines{}
		err := AddNodes(ctx, AddNodesOptions{Hosts: []AddNodesHost{{Name: "extra-worker-0", URL: n.srv.URL}}, UserToken: anToken, Out: out, Poll: time.Millisecond})
		if err == nil || err.Error() != "wait-for add-nodes: extra-worker-0: error: Failed to write image to disk: no space left on device" {
			t.Errorf("AddNodes = %v", err)
		}
		want := []string{"extra-worker-0: error (Failed to write image to disk: no space left on device)", "extra-worker-0: cannot be added: error: Failed to write image to disk: no space left on device"}
		if d := cmp.Diff(want, out.take()); d != "" {
			t.Errorf("lines (-want +got):\n%s", d)
		}
	})
	t.Run("node zero not answering, then the wait ends", func(t *testing.T) {
		n := newANNodeZero(t)
		n.srv.Close()
		out := &anLines{}
		m, err := NewAddNodesMonitor(AddNodesOptions{Hosts: []AddNodesHost{{Name: "extra-worker-0", URL: n.srv.URL}}, UserToken: anToken, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if done, err := m.Poll(ctx); done || err != nil {
				t.Fatalf("poll: done %v, %v", done, err)
			}
		}
		got := out.take()
		if len(got) != 1 || !strings.HasPrefix(got[0], "extra-worker-0: its node zero at "+n.srv.URL+" does not answer: ") {
			t.Errorf("lines %q, want one saying its node zero does not answer", got)
		}
		err = m.Interrupted(context.DeadlineExceeded)
		if want := "wait-for add-nodes: context deadline exceeded: extra-worker-0 not seen yet"; err.Error() != want {
			t.Errorf("Interrupted = %q, want %q", err, want)
		}
	})
}
