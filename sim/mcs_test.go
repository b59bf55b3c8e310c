package sim

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coreos/ignition/v2/config/v3_2"
	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/dnscheck"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/kube"
)

func TestAcceptsSpec3(t *testing.T) {
	for _, tc := range []struct {
		name, accept string
		want         bool
		wantErr      bool
	}{
		{"ignition 2.x (spec 3.5)", IgnitionAccept, true, false},
		{"spec 3.1", "application/vnd.coreos.ignition+json;version=3.1.0, */*;q=0.1", true, false},
		{"spec 3.0 is outside both ranges", "application/vnd.coreos.ignition+json;version=3.0.0", false, true},
		{"ignition 0.x (spec 2.x first)", "application/vnd.coreos.ignition+json; version=2.4.0, application/vnd.coreos.ignition+json; version=1; q=0.5, */*; q=0.1", false, false},
		{"quality decides", "application/vnd.coreos.ignition+json;version=2.2.0;q=0.5, application/vnd.coreos.ignition+json;version=3.2.0", true, false},
		{"no version", "application/vnd.coreos.ignition+json", false, false},
		{"curl", "*/*", false, false},
		{"none", "", false, false},
		{"not a media type", "an-invalid-accept-header", false, false},
		{"spec 4", "application/vnd.coreos.ignition+json;version=4.0.0", false, true},
		{"spec 1", "application/vnd.coreos.ignition+json;version=1.0.0", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AcceptsSpec3(tc.accept)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("AcceptsSpec3(%q) = %v, %v; want %v, error %v", tc.accept, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// testAPICA is a CA standing for the cluster API's serving CA, with an
// admin-like client certificate.
func testAPICA(t *testing.T) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	ca, _, _, err := pki.NewServer("kube-apiserver-lb-signer", nil, []string{"api.test"}, time.Now(), time.Now().AddDate(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	key, err := pki.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Issue(nil, key.Public(), pki.Spec{Subject: pkixName("system:admin", "system:masters"),
		NotBefore: time.Now(), NotAfter: time.Now().AddDate(1, 0, 0), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := pki.KeyPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	return pki.CertPEM(ca.Cert), pki.CertPEM(cert), kp
}

// pointerConfig is the pointer Ignition the cluster hands a new worker
// (worker-user-data-managed; assisted's day-2 host ignition).
// With a hostname, it writes /etc/hostname too, as assisted's does.
func pointerConfig(t *testing.T, source string, ca []byte, hostname ...string) []byte {
	t.Helper()
	caSrc := "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(ca)
	c := types.Config{Ignition: types.Ignition{Version: "3.2.0"}}
	c.Ignition.Config.Merge = []types.Resource{{Source: &source}}
	c.Ignition.Security.TLS.CertificateAuthorities = []types.Resource{{Source: &caSrc}}
	for _, h := range hostname {
		src := "data:," + h
		c.Storage.Files = append(c.Storage.Files, types.File{Node: types.Node{Path: "/etc/hostname"}, FileEmbedded1: types.FileEmbedded1{Contents: types.Resource{Source: &src}}})
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMCS: the stand-in serves the worker pool's Ignition over TLS to a
// client that trusts its CA and resolves api-int.<cluster>.<domain>
// through the host's DNS server; the config is spec 3.2 by Ignition's own
// parser and carries the bootstrap kubeconfig for the internal API.
func TestMCS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	apiCA, cert, key := testAPICA(t)
	vip := randomLoopback()
	m, err := StartMCS(ctx, MCSConfig{Addr: vip, ClusterName: "sandbox", BaseDomain: "nodezero.test", APICA: apiCA, ClientCert: cert, ClientKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if want := "https://api-int.sandbox.nodezero.test:22623/config/worker"; m.WorkerURL() != want {
		t.Errorf("WorkerURL %s, want %s", m.WorkerURL(), want)
	}
	dns := startDNS(t, map[string]netip.Addr{"api-int.sandbox.nodezero.test": vip})

	t.Run("a pointer config fetches it", func(t *testing.T) {
		p, err := ParsePointer(pointerConfig(t, m.WorkerURL(), m.CACert))
		if err != nil || p == nil {
			t.Fatalf("ParsePointer = %v, %v; want the pointer", p, err)
		}
		files, err := p.FetchOnce(ctx, dnscheck.Resolver(dns))
		if err != nil {
			t.Fatal(err)
		}
		kc, ok := files[BootstrapKubeconfigPath]
		if !ok {
			t.Fatalf("no %s in %v", BootstrapKubeconfigPath, files)
		}
		cfg, err := kube.ParseKubeconfig([]byte(kc), BootstrapKubeconfigPath)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Server != "https://api-int.sandbox.nodezero.test:6443" || !bytes.Equal(cfg.CAData, apiCA) || !bytes.Equal(cfg.CertData, cert) || !bytes.Equal(cfg.KeyData, key) {
			t.Errorf("bootstrap kubeconfig: server %s, CA/cert/key equal %v %v %v; want api-int:6443 and the given ones",
				cfg.Server, bytes.Equal(cfg.CAData, apiCA), bytes.Equal(cfg.CertData, cert), bytes.Equal(cfg.KeyData, key))
		}
	})

	t.Run("another CA is refused", func(t *testing.T) {
		other, _, _ := testAPICA(t)
		p := &Pointer{Source: m.WorkerURL(), CAs: [][]byte{other}}
		_, err := p.FetchOnce(ctx, dnscheck.Resolver(dns))
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("fetch trusting another CA = %v, want a certificate error", err)
		}
	})

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(m.CACert)
	hc := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: m.Host},
		Proxy:           nil,
	}}
	base := "https://" + m.Addr.String()
	for _, tc := range []struct {
		name, method, path, accept string
		want                       int
	}{
		{"spec 3.2 strictly", http.MethodGet, "/config/worker", "application/vnd.coreos.ignition+json;version=3.2.0, */*;q=0.1", http.StatusOK},
		{"head", http.MethodHead, "/config/worker", IgnitionAccept, http.StatusOK},
		{"spec 2 is not served", http.MethodGet, "/config/worker", "application/vnd.coreos.ignition+json;version=2.2.0", http.StatusNotAcceptable},
		{"curl", http.MethodGet, "/config/worker", "", http.StatusNotAcceptable},
		{"an unsupported version", http.MethodGet, "/config/worker", "application/vnd.coreos.ignition+json;version=1.0.0", http.StatusBadRequest},
		{"another pool", http.MethodGet, "/config/infra", IgnitionAccept, http.StatusNotFound},
		{"post", http.MethodPost, "/config/worker", IgnitionAccept, http.StatusMethodNotAllowed},
		{"healthz", http.MethodGet, "/healthz", "", http.StatusOK},
		{"elsewhere", http.MethodGet, "/other", "", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, tc.method, base+tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body bytes.Buffer
			_, _ = body.ReadFrom(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s (Accept %q): got %d %s, want %d", tc.method, tc.path, tc.accept, resp.StatusCode, body.String(), tc.want)
			}
			if tc.want == http.StatusOK && tc.method == http.MethodGet && tc.path == "/config/worker" {
				// Ignition's spec 3.2 parser, strictly (not the
				// compatible-version one): the served config is 3.2.
				cfg, rpt, err := v3_2.Parse(body.Bytes())
				if err != nil || rpt.IsFatal() {
					t.Fatalf("v3_2.Parse: %v: %s", err, rpt.String())
				}
				if len(cfg.Storage.Files) != 1 || cfg.Storage.Files[0].Path != BootstrapKubeconfigPath || *cfg.Storage.Files[0].Mode != 0o600 {
					t.Errorf("files %+v, want only %s, mode 0600", cfg.Storage.Files, BootstrapKubeconfigPath)
				}
			}
		})
	}
}

// TestParsePointer: only a config merging one https source is a day-2
// host's pointer; its CA and its own files (the hostname) are read.
func TestParsePointer(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	day1 := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/etc/nodezero/role","contents":{"source":"data:,worker"}}]}}`
	for _, tc := range []struct {
		name    string
		ign     []byte
		want    *Pointer
		wantErr string
	}{
		{"assisted's day-2 pointer", pointerConfig(t, "https://api-int.c.test:22623/config/worker", ca, "extra-worker-0"),
			&Pointer{Source: "https://api-int.c.test:22623/config/worker", CAs: [][]byte{ca}, Files: map[string]string{"/etc/hostname": "extra-worker-0"}}, ""},
		{"a day-1 host's config", []byte(day1), nil, ""},
		{"plain http", []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"http://api-int.c.test:22624/config/worker"}]}}}`), nil, ""},
		{"a CA by URL", []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://a.test/config/worker"}]},"security":{"tls":{"certificateAuthorities":[{"source":"https://a.test/ca.pem"}]}}}}`),
			nil, "certificateAuthorities[0].source: only data URLs"},
		{"not Ignition", []byte(`{"ignition":{"version":"9.9.9"}}`), nil, "unsupported config version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePointer(tc.ign)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ParsePointer (-want +got):\n%s", d)
			}
		})
	}
}
