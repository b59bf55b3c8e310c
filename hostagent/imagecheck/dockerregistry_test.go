package imagecheck

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// testPKI is a CA and a server certificate it signed for 127.0.0.1 and
// localhost, PEM.
type testPKI struct{ ca, cert, key []byte }

// newTestPKI makes an ECDSA P-256 CA and a loopback server certificate.
func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: "imagecheck test CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		Subject: pkix.Name{CommonName: "localhost"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testPKI{
		ca:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// dockerRegistry is Debian's docker-registry (distribution) on loopback.
type dockerRegistry struct {
	host   string       // 127.0.0.1:port, as image references name it
	base   string       // scheme://host
	client *http.Client // trusts the registry's CA, if it has one
	stop   func()       // ends it; later calls do nothing
}

// startDockerRegistry runs docker-registry on a free 127.0.0.1 port with
// its storage in a temp dir: HTTPS with pki's server certificate, or plain
// HTTP when pki is nil.
func startDockerRegistry(t *testing.T, pki *testPKI) *dockerRegistry {
	t.Helper()
	bin := needTool(t, "docker-registry")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &dockerRegistry{host: l.Addr().String(), base: "http://" + l.Addr().String(), client: &http.Client{Timeout: 30 * time.Second}}
	l.Close()
	dir := t.TempDir()
	conf := filepath.Join(dir, "config.yml")
	text := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), r.host)
	if pki != nil {
		crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		if err := os.WriteFile(crt, pki.cert, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(key, pki.key, 0o600); err != nil {
			t.Fatal(err)
		}
		text += fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n", crt, key)
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pki.ca)
		r.base = "https://" + r.host
		r.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	}
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	var outMu sync.Mutex
	cmd := exec.CommandContext(ctx, bin, "serve", conf)
	w := lockedWriter{&outMu, &out}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start docker-registry: %v", err)
	}
	var wg sync.WaitGroup
	exited := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(exited)
		_ = cmd.Wait() // killed by cancel in stop
	}()
	var once sync.Once
	r.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(func() {
		r.stop()
		if t.Failed() {
			outMu.Lock()
			t.Logf("docker-registry output:\n%s", out.String())
			outMu.Unlock()
		}
	})
	deadline := time.After(time.Minute) // bounds a hang only
	for {
		resp, err := r.client.Get(r.base + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		select {
		case <-exited:
			t.Fatal("docker-registry exited")
		case <-deadline:
			t.Fatalf("docker-registry never answered: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// push uploads im to r: each blob in one PUT after a POST opens the
// upload, then the manifest.
func (r *dockerRegistry) push(t *testing.T, repo, tag string, im testImage) {
	t.Helper()
	for d, b := range im.blobs {
		resp, err := r.client.Post(r.base+"/v2/"+repo+"/blobs/uploads/", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("start upload: %s", resp.Status)
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		loc = resp.Request.URL.ResolveReference(loc)
		q := loc.Query()
		q.Set("digest", d)
		loc.RawQuery = q.Encode()
		r.put(t, loc.String(), "application/octet-stream", b)
	}
	r.put(t, r.base+"/v2/"+repo+"/manifests/"+tag, mediaDockerManifest, im.manifest)
}

func (r *dockerRegistry) put(t *testing.T, u, contentType string, body []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		t.Fatalf("PUT %s: %s %s", u, resp.Status, strings.TrimSpace(b.String()))
	}
}

func TestStepDockerRegistry(t *testing.T) {
	reg := startDockerRegistry(t, nil)
	host, stop := reg.host, reg.stop
	im := makeImage(t, "first layer", strings.Repeat("second layer ", 4096))
	reg.push(t, "ocp/release", "4.18", im)
	name := host + "/ocp/release:4.18"
	opts := Options{Insecure: []string{host}}

	resp, code := runStep(t, opts, name, host+"/ocp/release@"+digestOf(im.manifest))
	if code != 0 {
		t.Fatalf("step exit %d: %+v", code, resp)
	}
	checkSuccess(t, resp.Images[0], name, im.size)
	checkSuccess(t, resp.Images[1], host+"/ocp/release@"+digestOf(im.manifest), im.size)

	stop()
	resp, code = runStep(t, opts, name)
	if code != exitSomeFailed || len(resp.Images) != 1 || resp.Images[0].Result != wire.ContainerImageAvailabilityResultFailure {
		t.Errorf("step with the registry stopped = %+v, %d; want a failure, %d", resp, code, exitSomeFailed)
	}
}

// TestStepDockerRegistryTrustBundle: a registry whose certificate comes
// from a private CA is pulled from with that CA in the trust bundle (alone
// or among others), and refused without it or with another CA.
func TestStepDockerRegistryTrustBundle(t *testing.T) {
	pki := newTestPKI(t)
	reg := startDockerRegistry(t, pki)
	im := makeImage(t, "first layer", strings.Repeat("second layer ", 4096))
	reg.push(t, "ocp/release", "4.18.0-x86_64", im)
	name := reg.host + "/ocp/release:4.18.0-x86_64"
	other := newTestPKI(t)

	for _, tc := range []struct {
		name   string
		bundle []byte
	}{
		{"its CA", pki.ca},
		{"its CA after another", append(append([]byte("# other CA\n"), other.ca...), pki.ca...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, code := runStep(t, Options{TrustBundle: tc.bundle}, name)
			if code != 0 || len(resp.Images) != 1 {
				t.Fatalf("step exit %d: %+v", code, resp)
			}
			checkSuccess(t, resp.Images[0], name, im.size)
		})
	}

	resp, code := runStep(t, Options{}, name)
	if code != exitSomeFailed || len(resp.Images) != 1 || resp.Images[0].Result != wire.ContainerImageAvailabilityResultFailure {
		t.Errorf("step without the bundle = %+v, %d; want a failure, %d", resp, code, exitSomeFailed)
	}
	var unknown x509.UnknownAuthorityError
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"no bundle", Options{}},
		{"another CA", Options{TrustBundle: other.ca}},
	} {
		if _, err := Pull(context.Background(), tc.opts, name); !errors.As(err, &unknown) {
			t.Errorf("Pull with %s: %v, want an unknown authority error", tc.name, err)
		}
	}
}
