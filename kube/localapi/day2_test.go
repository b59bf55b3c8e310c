package localapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
)

// day2Cluster is what TestLocalAPI's cluster carries for adding nodes.
type day2Cluster struct {
	cl        Cluster
	caPEM     []byte // the machine config server's CA
	signer    *x509.Certificate
	signerKey *rsa.PrivateKey
}

// testDay2 runs on TestLocalAPI's API: the seeded objects, read as the
// node-joiner reads them, and the core/v1 and certificates.k8s.io/v1
// calls adding nodes makes, judged by the real kube-apiserver.
func testDay2(t *testing.T, ctx context.Context, c *kube.Client, d day2Cluster) {
	t.Run("seeded objects", func(t *testing.T) {
		inf, err := c.GetInfrastructure(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if inf.Spec.PlatformSpec.Type != kube.PlatformNone || inf.Status.APIServerURL != "https://api.sandbox.nodezero.test:6443" ||
			inf.Status.APIServerInternalURL != "https://api-int.sandbox.nodezero.test:6443" || !strings.HasPrefix(inf.Status.InfrastructureName, "sandbox-") {
			t.Errorf("Infrastructure cluster = %+v %+v, want platform None, the api and api-int URLs of sandbox.nodezero.test", inf.Spec, inf.Status)
		}
		ps, err := c.GetSecret(ctx, "openshift-config", "pull-secret")
		if err != nil {
			t.Fatal(err)
		}
		if ps.Type != "kubernetes.io/dockerconfigjson" || string(ps.Data[".dockerconfigjson"]) != string(d.cl.PullSecret) {
			t.Errorf("pull-secret = type %q data %q, want kubernetes.io/dockerconfigjson with %q", ps.Type, ps.Data, d.cl.PullSecret)
		}
		ud, err := c.GetSecret(ctx, "openshift-machine-api", "worker-user-data-managed")
		if err != nil {
			t.Fatal(err)
		}
		// The user data is an Ignition config: spec 3.2, a merge of
		// the worker URL, the CA as a base64 data URL.
		var ign map[string]any
		if err := json.Unmarshal(ud.Data["userData"], &ign); err != nil {
			t.Fatalf("userData %q: %v", ud.Data["userData"], err)
		}
		want := map[string]any{"ignition": map[string]any{
			"version": "3.2.0",
			"config":  map[string]any{"merge": []any{map[string]any{"source": d.cl.WorkerIgnitionURL}}},
			"security": map[string]any{"tls": map[string]any{"certificateAuthorities": []any{
				map[string]any{"source": "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(d.caPEM)}}}},
		}}
		if diff := cmp.Diff(want, ign); diff != "" {
			t.Errorf("userData (-want +got):\n%s", diff)
		}
		// Seeding again (a restarted sandbox) leaves them alone.
		if err := seed(ctx, c, Cluster{ID: "other", Name: "other", BaseDomain: "example.org", PullSecret: []byte(`{}`)}, nil); err != nil {
			t.Fatal(err)
		}
		if again, err := c.GetInfrastructure(ctx); err != nil || again.Status.APIServerURL != inf.Status.APIServerURL {
			t.Errorf("after a second seed: %+v, %v: want it unchanged", again, err)
		}
		if err := c.CreateNamespace(ctx, "openshift-config"); err != nil {
			t.Errorf("CreateNamespace of an existing one = %v, want nil", err)
		}
	})

	want := &kube.ClusterInfo{
		ClusterID: d.cl.ID, Version: d.cl.Version, ReleaseImage: d.cl.Image,
		APIDNSName: "api.sandbox.nodezero.test", ClusterName: "sandbox", BaseDomain: "nodezero.test",
		PlatformType: "None", UserManagedNetworking: true, PullSecret: d.cl.PullSecret, Architecture: "amd64",
		WorkerIgnition: &onhost.WorkerIgnitionEndpoint{URL: d.cl.WorkerIgnitionURL, CACertificate: base64.StdEncoding.EncodeToString(d.caPEM)},
	}
	t.Run("ReadClusterInfo before any Node", func(t *testing.T) {
		_, err := kube.ReadClusterInfo(ctx, c, "")
		var ce *kube.ClusterInfoError
		if !errors.As(err, &ce) || len(ce.Problems) != 1 || !strings.Contains(ce.Problems[0], "no control-plane Node") || !strings.Contains(ce.Problems[0], "set cpuArchitecture in nodes-config.yaml") {
			t.Fatalf("ReadClusterInfo without nodes nor arch = %v, want the one problem naming the architecture", err)
		}
		got, err := kube.ReadClusterInfo(ctx, c, "amd64")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadClusterInfo (-want +got):\n%s", diff)
		}
	})

	t.Run("Nodes", func(t *testing.T) {
		master := &kube.Node{
			Metadata: kube.ObjectMeta{Name: "master-0", Labels: map[string]string{kube.LabelMasterRole: "", kube.LabelControlPlaneRole: "", kube.LabelArch: "arm64"}},
			Status: kube.NodeStatus{
				NodeInfo:  kube.NodeSystemInfo{Architecture: "arm64", OperatingSystem: "linux", KubeletVersion: "v1.31.6", OSImage: "Red Hat Enterprise Linux CoreOS 418"},
				Addresses: []kube.NodeAddress{{Type: kube.NodeInternalIP, Address: "192.168.111.20"}, {Type: kube.NodeHostName, Address: "master-0"}},
			},
		}
		master.SetCondition(kube.NodeCondition{Type: kube.NodeReadyCondition, Status: kube.True, Reason: "KubeletReady", Message: "kubelet is posting ready status"})
		created, err := c.CreateNode(ctx, master)
		if err != nil {
			t.Fatal(err)
		}
		if created.Status.NodeInfo.Architecture != "arm64" || !kube.NodeReady(created) || len(created.Status.Addresses) != 2 {
			t.Errorf("created node's status %+v: want the status given at create kept (as a kubelet registers)", created.Status)
		}
		worker, err := c.CreateNode(ctx, &kube.Node{
			Metadata: kube.ObjectMeta{Name: "extra-worker-0", Labels: map[string]string{kube.LabelWorkerRole: ""}},
			Spec:     kube.NodeSpec{ProviderID: "baremetalhost:///openshift-machine-api/extra-worker-0"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if kube.NodeReady(worker) {
			t.Error("a node without conditions is Ready")
		}
		stale := *worker
		worker.SetCondition(kube.NodeCondition{Type: kube.NodeReadyCondition, Status: kube.False, Reason: "KubeletNotReady", Message: "container runtime network not ready"})
		if worker, err = c.UpdateNodeStatus(ctx, worker); err != nil {
			t.Fatal(err)
		}
		notReadySince := worker.Condition(kube.NodeReadyCondition).LastTransitionTime
		if _, err := c.UpdateNodeStatus(ctx, &stale); !errors.Is(err, kube.ErrConflict) {
			t.Errorf("a stale status update = %v, want ErrConflict", err)
		}
		worker.SetCondition(kube.NodeCondition{Type: kube.NodeReadyCondition, Status: kube.True, Reason: "KubeletReady", LastTransitionTime: kube.Time{Time: notReadySince.Add(time.Minute)}})
		if _, err = c.UpdateNodeStatus(ctx, worker); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetNode(ctx, "extra-worker-0")
		if err != nil {
			t.Fatal(err)
		}
		if !kube.NodeReady(got) || got.Spec.ProviderID != "baremetalhost:///openshift-machine-api/extra-worker-0" {
			t.Errorf("extra-worker-0 read back %+v: want Ready and its providerID", got)
		}
		masters, err := c.ListNodes(ctx, kube.LabelMasterRole)
		if err != nil {
			t.Fatal(err)
		}
		all, err := c.ListNodes(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var mn, an []string
		for _, n := range masters {
			mn = append(mn, n.Metadata.Name)
		}
		for _, n := range all {
			an = append(an, n.Metadata.Name)
		}
		if diff := cmp.Diff([]string{"master-0"}, mn); diff != "" {
			t.Errorf("ListNodes(master) (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"extra-worker-0", "master-0"}, an); diff != "" {
			t.Errorf("ListNodes() (-want +got):\n%s", diff)
		}
		// The control-plane Node now gives the architecture, ahead
		// of the one given.
		ci, err := kube.ReadClusterInfo(ctx, c, "")
		if err != nil {
			t.Fatal(err)
		}
		if ci.Architecture != "arm64" {
			t.Errorf("ReadClusterInfo's architecture %q, want master-0's arm64", ci.Architecture)
		}
	})

	t.Run("CSRs", func(t *testing.T) {
		req := csrPEM(t, "system:node:extra-worker-0", "system:nodes")
		csr, err := c.CreateCSR(ctx, &kube.CertificateSigningRequest{
			Metadata: kube.ObjectMeta{Name: "csr-test1"},
			Spec: kube.CertificateSigningRequestSpec{Request: req, SignerName: kube.SignerKubeletClient,
				Usages: []string{"digital signature", "client auth"}, Username: "ignored", Groups: []string{"ignored"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if csr.Spec.Username != "system:admin" || !kube.CSRPending(csr) || kube.CSRApproved(csr) || kube.CSRIssued(csr) {
			t.Errorf("created CSR %+v: want pending, its username the requester's (system:admin)", csr)
		}
		r, err := csr.ParseRequest()
		if err != nil || r.Subject.CommonName != "system:node:extra-worker-0" {
			t.Errorf("ParseRequest = %v, %v: want CN system:node:extra-worker-0", r, err)
		}
		cert := signCSR(t, d, r)
		approved, err := c.ApproveCSR(ctx, "csr-test1", "NodezeroApprove", "approved by nodezero wait-for add-nodes --approve")
		if err != nil {
			t.Fatal(err)
		}
		if !kube.CSRApproved(approved) || kube.CSRPending(approved) {
			t.Fatalf("after ApproveCSR: %+v, want approved", approved.Status)
		}
		cond := approved.Status.Conditions[0]
		if cond.Reason != "NodezeroApprove" || cond.Message != "approved by nodezero wait-for add-nodes --approve" || cond.LastUpdateTime.IsZero() {
			t.Errorf("approval condition %+v", cond)
		}
		again, err := c.ApproveCSR(ctx, "csr-test1", "Other", "again")
		if err != nil || len(again.Status.Conditions) != 1 {
			t.Errorf("approving twice = %+v, %v: want the one condition kept", again, err)
		}
		again.Status.Certificate = cert
		if _, err := c.UpdateCSRStatus(ctx, again); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetCSR(ctx, "csr-test1")
		if err != nil {
			t.Fatal(err)
		}
		if !kube.CSRIssued(got) || string(got.Status.Certificate) != string(cert) {
			t.Errorf("read back certificate %q, want the signed one", got.Status.Certificate)
		}

		// A denied CSR (as oc adm certificate deny writes it) is not
		// approved.
		denied, err := c.CreateCSR(ctx, &kube.CertificateSigningRequest{
			Metadata: kube.ObjectMeta{Name: "csr-test2"},
			Spec: kube.CertificateSigningRequestSpec{Request: csrPEM(t, "system:node:intruder", "system:nodes"), SignerName: kube.SignerKubeletServing,
				Usages: []string{"digital signature", "server auth"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		denied.Status.Conditions = []kube.CSRCondition{{Type: kube.CSRConditionDenied, Status: kube.True, Reason: "Test", LastUpdateTime: kube.Now()}}
		if err := c.Do(ctx, http.MethodPut, "/apis/certificates.k8s.io/v1/certificatesigningrequests/csr-test2/approval", denied, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ApproveCSR(ctx, "csr-test2", "NodezeroApprove", "x"); !errors.Is(err, kube.ErrCSRDenied) {
			t.Errorf("approving a denied CSR = %v, want ErrCSRDenied", err)
		}
		list, err := c.ListCSRs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var states []string
		for _, l := range list {
			states = append(states, l.Metadata.Name+" approved="+boolStr(kube.CSRApproved(&l))+" denied="+boolStr(kube.CSRDenied(&l))+" issued="+boolStr(kube.CSRIssued(&l)))
		}
		if diff := cmp.Diff([]string{"csr-test1 approved=yes denied=no issued=yes", "csr-test2 approved=no denied=yes issued=no"}, states); diff != "" {
			t.Errorf("ListCSRs (-want +got):\n%s", diff)
		}
		if _, err := c.ApproveCSR(ctx, "csr-none", "NodezeroApprove", "x"); !errors.Is(err, kube.ErrNotFound) {
			t.Errorf("approving an absent CSR = %v, want ErrNotFound", err)
		}
	})

	t.Run("ReadClusterInfo with objects missing", func(t *testing.T) {
		for _, p := range []string{
			"/api/v1/namespaces/openshift-config/secrets/pull-secret",
			"/api/v1/namespaces/openshift-machine-api/secrets/worker-user-data-managed",
			"/apis/config.openshift.io/v1/infrastructures/cluster",
		} {
			if err := c.Do(ctx, http.MethodDelete, p, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		ci, err := kube.ReadClusterInfo(ctx, c, "")
		var ce *kube.ClusterInfoError
		if !errors.As(err, &ce) || !errors.Is(err, kube.ErrNotFound) {
			t.Fatalf("ReadClusterInfo = %v, want a ClusterInfoError wrapping NotFound", err)
		}
		var heads []string
		for _, p := range ce.Problems {
			heads = append(heads, strings.SplitN(p, ":", 2)[0])
		}
		if diff := cmp.Diff([]string{"Infrastructure cluster", "Secret openshift-config/pull-secret"}, heads); diff != "" {
			t.Errorf("problems (-want +got):\n%s\n(all: %s)", diff, err)
		}
		if ci.WorkerIgnition != nil || ci.ClusterID != d.cl.ID {
			t.Errorf("with the user data secret absent: %+v, want no worker ignition endpoint and the rest read", ci)
		}
	})
}

func boolStr(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// csrPEM is a kubelet's certificate request: an ECDSA P-256 key, the
// subject CN and O.
func csrPEM(t *testing.T, cn, org string) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: []string{org}}}, k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// signCSR issues the request's certificate with the test's signer.
func signCSR(t *testing.T, d day2Cluster, r *x509.CertificateRequest) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: r.Subject, NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, d.signer, r.PublicKey, d.signerKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
