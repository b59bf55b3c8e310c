package testbed

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func parsePEMCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("want one PEM certificate, got %q", b)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRegistryPKI: the CA is an ECDSA P-256 CA; the server certificate
// verifies against it for every name and the gateway's address, not for
// another name or against another bed's CA, and its key matches.
func TestRegistryPKI(t *testing.T) {
	gw := netip.MustParseAddr("10.231.7.1")
	names := []string{"registry.c.test", "mirror.c.test"}
	now := time.Now()
	pki, err := newRegistryPKI("1x2", names, gw, now)
	if err != nil {
		t.Fatal(err)
	}
	ca := parsePEMCert(t, pki.ca)
	if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("CA: IsCA %v, key usage %b; want a CA that signs certificates", ca.IsCA, ca.KeyUsage)
	}
	if k, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("CA key is %T, want ECDSA P-256", ca.PublicKey)
	}
	cert := parsePEMCert(t, pki.cert)
	if cert.SerialNumber.Sign() <= 0 || cert.SerialNumber.Cmp(ca.SerialNumber) == 0 {
		t.Errorf("serials: CA %v, server %v; want positive and distinct", ca.SerialNumber, cert.SerialNumber)
	}
	if _, err := tls.X509KeyPair(pki.cert, pki.key); err != nil {
		t.Errorf("server certificate and key: %v", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, host := range append(names, gw.String()) {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, CurrentTime: now}); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "other.c.test", Roots: roots, CurrentTime: now}); err == nil {
		t.Error("certificate verified for a name it was not made for")
	}
	other, err := newRegistryPKI("3x4", names, gw, now)
	if err != nil {
		t.Fatal(err)
	}
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(parsePEMCert(t, other.ca))
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: names[0], Roots: otherRoots, CurrentTime: now}); err == nil {
		t.Error("certificate verified against another bed's CA")
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: names[0], Roots: roots, CurrentTime: now.Add(registryCertLifetime + time.Hour)}); err == nil {
		t.Error("certificate verified after its lifetime")
	}
}

func TestStartRegistryRefusesBadNames(t *testing.T) {
	for _, n := range []string{"", "registry.c.test:5000", "https://registry.c.test", "registry.c.test/ocp", "two words"} {
		_, err := (&Bed{}).StartRegistry(context.Background(), RegistryConfig{Names: []string{"ok.c.test", n}})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("StartRegistry(Names: %q) = %v, want ErrInvalid", n, err)
		}
	}
}

// registryGet GETs u with c and returns the body, wanting 200.
func registryGet(ctx context.Context, c *http.Client, u, accept string) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b, resp.Header, nil
}

// hostClient is an HTTP client in h's namespace that sends every request to
// addr (as if a name had resolved to it) and trusts roots (nil: the
// system's).
func hostClient(h *Host, addr string, roots *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return h.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
}

type pushedManifest struct {
	Config struct {
		Digest string
		Size   int64
	}
	Layers []struct {
		MediaType string
		Digest    string
		Size      int64
	}
}

// checkPulled fetches repo:tag with c from base and checks it is the image
// Push made of layers: the manifest under its digest, each layer's bytes,
// and size the bytes of every blob.
func checkPulled(t *testing.T, c *http.Client, base, repo, tag, wantDigest string, wantSize int64, layers ...[]byte) {
	t.Helper()
	ctx := t.Context()
	body, hdr, err := registryGet(ctx, c, base+"/v2/"+repo+"/manifests/"+tag, mediaDockerManifest)
	if err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if got := digest(body); got != wantDigest || hdr.Get("Docker-Content-Digest") != wantDigest {
		t.Errorf("manifest digest = %s (header %s), want %s", got, hdr.Get("Docker-Content-Digest"), wantDigest)
	}
	var m pushedManifest
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var gotLayers []string
	total := m.Config.Size
	for _, l := range m.Layers {
		gotLayers = append(gotLayers, l.Digest)
		total += l.Size
	}
	var wantLayers []string
	for _, l := range layers {
		wantLayers = append(wantLayers, digest(l))
	}
	if diff := cmp.Diff(wantLayers, gotLayers); diff != "" {
		t.Errorf("manifest layers (-want +got):\n%s", diff)
	}
	for i, l := range layers {
		b, _, err := registryGet(ctx, c, base+"/v2/"+repo+"/blobs/"+digest(l), "")
		if err != nil || !bytes.Equal(b, l) {
			t.Errorf("layer %d: %d bytes, %v; want its %d bytes", i, len(b), err, len(l))
		}
	}
	cfg, _, err := registryGet(ctx, c, base+"/v2/"+repo+"/blobs/"+m.Config.Digest, "")
	if err != nil || int64(len(cfg)) != m.Config.Size || digest(cfg) != m.Config.Digest {
		t.Errorf("config blob: %d bytes, %v; want %d bytes with digest %s", len(cfg), err, m.Config.Size, m.Config.Digest)
	}
	if wantSize != total {
		t.Errorf("Push size = %d, want %d (config %d + layers)", wantSize, total, m.Config.Size)
	}
}

// TestRegistryTLS: with names the registry serves HTTPS; an image pushed
// from the root namespace is fetched back from a host, by name and by the
// gateway's address, trusting Registry.CA, and refused without it or with
// another CA; Stop and Start keep the storage and the certificate.
func TestRegistryTLS(t *testing.T) {
	needTool(t, "docker-registry")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := newBed(t, Config{Prefix: freePrefix(t), Hosts: []HostSpec{{Name: "h0", Static: true}}})
	h := b.Hosts[0]
	const name = "registry.c.test"
	reg, err := b.StartRegistry(ctx, RegistryConfig{Names: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Addr != net.JoinHostPort(b.Gateway.String(), "5000") {
		t.Errorf("Addr = %s, want the gateway's port 5000", reg.Addr)
	}
	if ca := parsePEMCert(t, reg.CA); !ca.IsCA {
		t.Errorf("CA %s is not a CA", ca.Subject)
	}
	layers := [][]byte{[]byte("first layer"), bytes.Repeat([]byte("second layer "), 4096)}
	d, size, err := reg.Push(ctx, "ocp/release", "4.18.0-x86_64", layers...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d, "sha256:") || size <= int64(len(layers[0])+len(layers[1])) {
		t.Errorf("Push = %s, %d; want a sha256 digest and more than the layers' bytes (the config counts)", d, size)
	}

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(reg.CA) {
		t.Fatal("CA: no certificate")
	}
	trusting := hostClient(h, reg.Addr, roots)
	checkPulled(t, trusting, "https://"+name+":5000", "ocp/release", "4.18.0-x86_64", d, size, layers...)
	if _, _, err := registryGet(ctx, trusting, "https://"+reg.Addr+"/v2/", ""); err != nil {
		t.Errorf("by the gateway's address: %v", err)
	}
	if _, _, err := registryGet(ctx, trusting, "http://"+reg.Addr+"/v2/", ""); err == nil {
		t.Error("the TLS registry answered plain HTTP")
	}

	var unknown x509.UnknownAuthorityError
	_, _, err = registryGet(ctx, hostClient(h, reg.Addr, nil), "https://"+name+":5000/v2/ocp/release/manifests/4.18.0-x86_64", mediaDockerManifest)
	if !errors.As(err, &unknown) {
		t.Errorf("without the CA: %v, want an unknown authority error", err)
	}
	other, err := newRegistryPKI(b.ID, []string{name}, b.Gateway, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	otherRoots := x509.NewCertPool()
	otherRoots.AppendCertsFromPEM(other.ca)
	_, _, err = registryGet(ctx, hostClient(h, reg.Addr, otherRoots), "https://"+name+":5000/v2/", "")
	if !errors.As(err, &unknown) {
		t.Errorf("with another CA: %v, want an unknown authority error", err)
	}

	reg.Stop()
	if _, _, err := registryGet(ctx, trusting, "https://"+name+":5000/v2/", ""); err == nil {
		t.Error("stopped registry still answers")
	}
	if _, _, err := reg.Push(ctx, "ocp/release", "other", []byte("x")); err == nil {
		t.Error("Push to a stopped registry succeeded")
	}
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	checkPulled(t, hostClient(h, reg.Addr, roots), "https://"+name+":5000", "ocp/release", "4.18.0-x86_64", d, size, layers...)
}

// TestRegistryPlainPush: without names the registry is plain HTTP, has no
// CA, and Push works over HTTP.
func TestRegistryPlainPush(t *testing.T) {
	needTool(t, "docker-registry")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := newBed(t, Config{Prefix: freePrefix(t), Hosts: []HostSpec{{Name: "h0", Static: true}}})
	reg, err := b.StartRegistry(ctx, RegistryConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if reg.CA != nil {
		t.Errorf("plain registry CA = %q, want none", reg.CA)
	}
	layer := []byte("only layer")
	d, size, err := reg.Push(ctx, "ocp/release", "4.18", layer)
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, hostClient(b.Hosts[0], reg.Addr, nil), "http://"+reg.Addr, "ocp/release", "4.18", d, size, layer)
	// An image of a config blob alone is pushed too.
	d, size, err = reg.Push(ctx, "ocp/empty", "1")
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, hostClient(b.Hosts[0], reg.Addr, nil), "http://"+reg.Addr, "ocp/empty", "1", d, size)
}
