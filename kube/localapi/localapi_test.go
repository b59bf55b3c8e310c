package localapi

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/kube"
)

func TestPinMatchesToolsModule(t *testing.T) {
	sum, err := os.ReadFile("../../tools/kube/go.sum")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(sum)
	if got := hex.EncodeToString(h[:])[:12]; got != APIServerSum {
		t.Errorf("tools/kube/go.sum hashes to %s, APIServerSum is %s: update it (and run tools/kube/build.sh)", got, APIServerSum)
	}
	mod, err := os.ReadFile("../../tools/kube/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes ` + regexp.QuoteMeta(APIServerVersion) + `\b`).Match(mod) {
		t.Errorf("tools/kube/go.mod does not require k8s.io/kubernetes %s", APIServerVersion)
	}
}

func TestFindTools(t *testing.T) {
	cache := t.TempDir()
	bin := func(dir, name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := t.TempDir()
	cachedAPI := bin(cache, "kube-apiserver-"+APIServerVersion+"-"+APIServerSum+"/kube-apiserver")
	cachedEtcd := bin(cache, "etcd")
	envEtcd, envKubectl := bin(other, "my-etcd"), bin(other, "my-kubectl")
	notExec := filepath.Join(other, "plain")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bin(cache, "kube-apiserver-v1.0.0-000000000000/kube-apiserver") // another pin's build: never picked

	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    Tools
		wantErr string
	}{
		{"the cache", nil, Tools{APIServer: cachedAPI, Etcd: cachedEtcd}, ""},
		{"overrides first", map[string]string{EnvEtcd: envEtcd, EnvKubectl: envKubectl}, Tools{APIServer: cachedAPI, Etcd: envEtcd, Kubectl: envKubectl}, ""},
		{"an override that is not there", map[string]string{EnvAPIServer: filepath.Join(other, "none")}, Tools{Etcd: cachedEtcd},
			"kube-apiserver (" + filepath.Join(other, "none") + ", or set NODEZERO_KUBE_APISERVER)"},
		{"not executable", map[string]string{EnvEtcd: notExec}, Tools{APIServer: cachedAPI}, "etcd (" + notExec + ", or set NODEZERO_ETCD)"},
		{"an empty cache", map[string]string{EnvToolsCache: other}, Tools{},
			"kube-apiserver (" + filepath.Join(other, "kube-apiserver-"+APIServerVersion+"-"+APIServerSum, "kube-apiserver") + ", or set NODEZERO_KUBE_APISERVER), etcd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvToolsCache, cache)
			for _, e := range []string{EnvAPIServer, EnvEtcd, EnvKubectl} {
				t.Setenv(e, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := FindTools()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("FindTools (-want +got):\n%s", d)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (!errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("FindTools error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// testTools finds the real tools, or skips (fails under CI=true).
func testTools(t *testing.T) Tools {
	t.Helper()
	tools, err := FindTools()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("%v", err)
	}
	return tools
}

// rsaCA is a CA shaped as the installer's signers (RSA).
func rsaCA(t *testing.T, cn string) (*x509.Certificate, *rsa.PrivateKey, []byte, []byte) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn, OrganizationalUnit: []string{"openshift"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, k, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// clientCert signs a client certificate for cn in org with the CA.
func clientCert(t *testing.T, ca *x509.Certificate, caKey *rsa.PrivateKey, cn string, org ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(100), Subject: pkix.Name{CommonName: cn, Organization: org},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

// randomAddr is a 127.x address of the test's own.
func randomAddr() netip.Addr {
	var b [3]byte
	rand.Read(b[:])
	return netip.AddrFrom4([4]byte{127, 100 + b[0]%100, 2 + b[1]%250, 2 + b[2]%250})
}

func TestLocalAPI(t *testing.T) {
	tools := testTools(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	_, _, lbPEM, lbKeyPEM := rsaCA(t, "kube-apiserver-lb-signer")
	adminCA, adminCAKey, adminCAPEM, _ := rsaCA(t, "admin-kubeconfig-signer")
	adminCert, adminKey := clientCert(t, adminCA, adminCAKey, "system:admin", "system:masters")

	addr := randomAddr()
	dir := t.TempDir()
	mcsCA, mcsCAKey, mcsCAPEM, _ := rsaCA(t, "machine-config-server-ca")
	cl := Cluster{ID: "0f8f3b8e-9a3c-4e55-a0b4-6c8d9d6d8a11", Version: "4.18.0", Image: "127.0.0.1:5000/ocp/release:4.18.0-x86_64",
		// Name and BaseDomain come from the names.
		PullSecret:        []byte(`{"auths":{"127.0.0.1:5000":{"auth":"ZmFrZTpmYWtl"}}}`),
		WorkerIgnitionURL: "https://api-int.sandbox.nodezero.test:22623/config/worker", WorkerIgnitionCA: mcsCAPEM}
	api, err := Start(ctx, Config{
		Dir: dir, Addr: addr, Names: []string{"api.sandbox.nodezero.test", "api-int.sandbox.nodezero.test"},
		ServingSignerCert: lbPEM, ServingSignerKey: lbKeyPEM, ClientCA: adminCAPEM, AdminCert: adminCert, AdminKey: adminKey,
		Cluster: cl, Tools: tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	if want := "https://" + addr.String() + ":6443"; api.URL != want {
		t.Errorf("URL %s, want %s", api.URL, want)
	}

	// The user's kubeconfig, as create config-image writes it (the
	// server by name), told to connect to the address.
	user := &kube.Config{Server: api.URL, TLSServerName: "api.sandbox.nodezero.test", CAData: lbPEM, CertData: adminCert, KeyData: adminKey}
	c, err := kube.NewClient(user)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	t.Run("ClusterVersion created, installing", func(t *testing.T) {
		cv, err := c.GetClusterVersion(ctx, kube.ClusterVersionName)
		if err != nil {
			t.Fatal(err)
		}
		if cv.Spec.ClusterID != cl.ID || cv.Status.Desired.Version != cl.Version || cv.Installed() {
			t.Errorf("ClusterVersion %+v: want cluster %s, desired %s, not installed", cv, cl.ID, cl.Version)
		}
		if !kube.IsTrue(cv.Status.Conditions, kube.Progressing) || !kube.IsFalse(cv.Status.Conditions, kube.Available) {
			t.Errorf("conditions %+v: want Progressing True, Available False", cv.Status.Conditions)
		}
	})

	t.Run("operators created, progressing", func(t *testing.T) {
		cos, err := c.ListClusterOperators(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, co := range cos {
			names = append(names, co.Metadata.Name)
			if !kube.IsTrue(co.Status.Conditions, kube.Progressing) || !kube.IsFalse(co.Status.Conditions, kube.Available) {
				t.Errorf("%s: conditions %+v, want Progressing True, Available False", co.Metadata.Name, co.Status.Conditions)
			}
		}
		if d := cmp.Diff(DefaultOperators, names); d != "" {
			t.Errorf("operators (-want +got):\n%s", d)
		}
	})

	t.Run("status written through the status subresource", func(t *testing.T) {
		co, err := c.GetClusterOperator(ctx, "etcd")
		if err != nil {
			t.Fatal(err)
		}
		stale := *co
		kube.SetCondition(&co.Status.Conditions, kube.Condition{Type: kube.Available, Status: kube.True, Reason: "AsExpected"})
		co.Status.Versions = []kube.OperandVersion{{Name: "operator", Version: "4.18.0"}}
		if _, err := c.UpdateClusterOperatorStatus(ctx, co); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpdateClusterOperatorStatus(ctx, &stale); !errors.Is(err, kube.ErrConflict) {
			t.Errorf("a stale update = %v, want ErrConflict", err)
		}
		got, err := c.GetClusterOperator(ctx, "etcd")
		if err != nil {
			t.Fatal(err)
		}
		if !kube.IsTrue(got.Status.Conditions, kube.Available) || got.Version() != "4.18.0" {
			t.Errorf("read back %+v", got.Status)
		}
		// The CRD's schema is enforced: a condition status must be
		// True, False or Unknown.
		kube.SetCondition(&got.Status.Conditions, kube.Condition{Type: kube.Degraded, Status: "Maybe"})
		var apiErr *kube.APIError
		if _, err := c.UpdateClusterOperatorStatus(ctx, got); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("status Maybe = %v, want 422 from the schema", err)
		}
	})

	t.Run("day 2", func(t *testing.T) {
		testDay2(t, ctx, c, day2Cluster{cl: cl, caPEM: mcsCAPEM, signer: mcsCA, signerKey: mcsCAKey})
	})

	t.Run("a certificate of another CA is refused", func(t *testing.T) {
		other, otherKey, _, _ := rsaCA(t, "admin-kubeconfig-signer") // the same name, another key
		cert, key := clientCert(t, other, otherKey, "system:admin", "system:masters")
		bad, err := kube.NewClient(&kube.Config{Server: api.URL, CAData: lbPEM, CertData: cert, KeyData: key})
		if err != nil {
			t.Fatal(err)
		}
		defer bad.Close()
		_, err = bad.GetClusterVersion(ctx, kube.ClusterVersionName)
		if !errors.Is(err, kube.ErrUnauthorized) {
			t.Errorf("GetClusterVersion with another CA's certificate = %v, want 401", err)
		}
	})

	t.Run("a user outside system:masters is forbidden by RBAC", func(t *testing.T) {
		cert, key := clientCert(t, adminCA, adminCAKey, "someone")
		c2, err := kube.NewClient(&kube.Config{Server: api.URL, CAData: lbPEM, CertData: cert, KeyData: key})
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		if _, err := c2.ListClusterOperators(ctx); !errors.Is(err, kube.ErrForbidden) {
			t.Errorf("ListClusterOperators as someone = %v, want 403", err)
		}
	})

	t.Run("the serving certificate names the API and the address", func(t *testing.T) {
		conn, err := tls.Dial("tcp", addr.String()+":6443", &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		leaf := conn.ConnectionState().PeerCertificates[0]
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(lbPEM)
		for _, name := range []string{"api.sandbox.nodezero.test", addr.String()} {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
				t.Errorf("serving certificate for %s: %v", name, err)
			}
		}
	})

	t.Run("every listener on the address", func(t *testing.T) {
		ls := listeners(t, api.Pids())
		t.Logf("listeners: %v", ls)
		if len(ls) < 3 {
			t.Fatalf("listeners %v: want at least etcd's client and peer ports and the API's", ls)
		}
		for _, l := range ls {
			if l.Addr() != addr {
				t.Errorf("a listener on %v, want every one on %v (all: %v)", l, addr, ls)
			}
		}
	})

	t.Run("kubectl get clusterversion", func(t *testing.T) {
		if tools.Kubectl == "" {
			if os.Getenv("CI") == "true" {
				t.Fatal("CI=true and no kubectl (tools/kube/build.sh fetches Debian's)")
			}
			t.Skip("no kubectl (tools/kube/build.sh fetches Debian's)")
		}
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
		os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, tls-server-name: api.sandbox.nodezero.test, certificate-authority-data: %s}
contexts:
- name: admin
  context: {cluster: c, user: admin}
current-context: admin
users:
- name: admin
  user: {client-certificate-data: %s, client-key-data: %s}
`, api.URL, b64(lbPEM), b64(adminCert), b64(adminKey))), 0o600)
		out, err := exec.CommandContext(ctx, tools.Kubectl, "--kubeconfig", kc, "get", "clusterversion").CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl get clusterversion: %v\n%s", err, out)
		}
		t.Logf("kubectl get clusterversion:\n%s", out)
		if !regexp.MustCompile(`(?m)^version\s+False\s+True\s+\S+\s+Working towards 4\.18\.0$`).Match(out) {
			t.Errorf("kubectl get clusterversion:\n%s\nwant the row of version: Available False, Progressing True, Working towards 4.18.0", out)
		}
	})

	t.Run("close stops both processes", func(t *testing.T) {
		pids := api.Pids()
		start := time.Now()
		if err := api.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
		for _, pid := range pids {
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
				t.Errorf("process %d still there after Close", pid)
			}
		}
		select {
		case <-api.Done():
		default:
			t.Error("Done not closed after Close")
		}
		if err := c.Ready(ctx); err == nil {
			t.Error("the API answers after Close")
		}
	})
}

// listeners returns the TCP listening sockets the processes hold, from
// /proc (their fds' socket inodes matched in /proc/net/tcp{,6}).
func listeners(t *testing.T, pids []int) []netip.AddrPort {
	t.Helper()
	inodes := map[string]bool{}
	for _, pid := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	var out []netip.AddrPort
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, parseProcAddr(t, fields[1]))
		}
		f.Close()
	}
	return out
}

// parseProcAddr reads /proc/net/tcp's "0100007F:1F90" (address in host
// order, 32-bit words; port big-endian hex).
func parseProcAddr(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	host, port, _ := strings.Cut(s, ":")
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(host)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+4 <= len(raw); i += 4 { // each 32-bit word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	a, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(a.Unmap(), uint16(p))
}
