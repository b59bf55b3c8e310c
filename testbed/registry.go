package testbed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/pki"
)

// The bed's registry v2: Debian's docker-registry (distribution) with
// filesystem storage on the gateway's port 5000, plain HTTP or TLS with a
// certificate from a CA made for the bed, and Push to put small images in
// it without a container tool.

// registryCertLifetime is how long the bed's CA and server certificate are
// valid: a bed lives for a test or a sandbox session, never this long.
const registryCertLifetime = 7 * 24 * time.Hour

// Media types Push writes: a Docker schema 2 image.
const (
	mediaDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaDockerConfig   = "application/vnd.docker.container.image.v1+json"
	mediaDockerLayer    = "application/vnd.docker.image.rootfs.diff.tar.gzip"
)

// RegistryConfig configures the bed's registry.
type RegistryConfig struct {
	// Names are the DNS names the registry is known by (e.g.
	// registry.c.test, resolved to the gateway by the bed's dnsmasq). When
	// set, the registry serves HTTPS with a certificate for these names and
	// the gateway's address, signed by a CA made for this registry
	// (Registry.CA). Empty means plain HTTP.
	Names []string
}

// Registry is the bed's registry v2 on the gateway.
type Registry struct {
	*service
	Addr string // host:port, e.g. 10.231.0.1:5000
	// CA is the PEM certificate of the CA that signed the registry's
	// server certificate: what a client trusts (an install-config's
	// additionalTrustBundle). Nil for a plain HTTP registry.
	CA []byte

	bed   *Bed
	conf  string
	roots *x509.CertPool // CA alone; nil for plain HTTP
}

// StartRegistry starts docker-registry on the gateway's port 5000, over
// HTTPS when cfg names the registry.
func (b *Bed) StartRegistry(ctx context.Context, cfg RegistryConfig) (*Registry, error) {
	for i, n := range cfg.Names {
		if n == "" || strings.ContainsAny(n, ":/ \t\n") {
			return nil, fmt.Errorf("start registry: names[%d] %q: want a DNS name without scheme, port or path: %w", i, n, ErrInvalid)
		}
	}
	dir := filepath.Join(b.Dir, "registry")
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	r := &Registry{Addr: net.JoinHostPort(b.Gateway.String(), "5000"), bed: b, conf: filepath.Join(dir, "config.yml")}
	conf := "version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: " + filepath.Join(dir, "data") +
		"\n  delete:\n    enabled: true\nhttp:\n  addr: " + r.Addr + "\n"
	if len(cfg.Names) > 0 {
		pki, err := newRegistryPKI(b.ID, cfg.Names, b.Gateway, time.Now())
		if err != nil {
			return nil, fmt.Errorf("start registry: %w", err)
		}
		crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
		if err := os.WriteFile(crt, pki.cert, 0o644); err != nil {
			return nil, fmt.Errorf("start registry: %w", err)
		}
		if err := os.WriteFile(key, pki.key, 0o600); err != nil {
			return nil, fmt.Errorf("start registry: %w", err)
		}
		conf += "  tls:\n    certificate: " + crt + "\n    key: " + key + "\n"
		r.CA = pki.ca
		r.roots = x509.NewCertPool()
		r.roots.AppendCertsFromPEM(pki.ca)
	}
	if err := os.WriteFile(r.conf, []byte(conf), 0o644); err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	return r, r.Start(ctx)
}

// Start (re)starts a stopped registry with the same storage and
// certificate.
func (r *Registry) Start(ctx context.Context) error {
	if r.service != nil {
		select {
		case <-r.done:
		default:
			return nil // running
		}
	}
	s, err := r.bed.startService(ctx, filepath.Dir(r.conf), "registry", "docker-registry", "serve", r.conf)
	if err != nil {
		return err
	}
	r.service = s
	if err := r.bed.waitTCP(ctx, s, r.Addr); err != nil {
		s.stop()
		return err
	}
	return nil
}

// Stop stops the registry; its storage and certificate stay for Start.
func (r *Registry) Stop() { r.stop() }

// Push uploads an image to repo:tag: a config blob and the given layers
// (opaque bytes, labelled gzip'd tar layers: the image is for pulling, not
// for running), then its Docker schema 2 manifest. It talks to the registry
// from the switch namespace, where the gateway lives, trusting only the
// registry's CA. size is the bytes of every blob, config included: what an
// image availability check downloads.
func (r *Registry) Push(ctx context.Context, repo, tag string, layers ...[]byte) (manifestDigest string, size int64, err error) {
	c := r.client()
	defer c.CloseIdleConnections()
	base := "http://" + r.Addr
	if r.roots != nil {
		base = "https://" + r.Addr
	}
	desc := func(mediaType string, b []byte) map[string]any {
		return map[string]any{"mediaType": mediaType, "digest": digest(b), "size": len(b)}
	}
	ls, diffIDs := []map[string]any{}, []string{} // [] rather than null with no layers
	for _, l := range layers {
		ls = append(ls, desc(mediaDockerLayer, l))
		diffIDs = append(diffIDs, digest(l)) // the layer's bytes are all there is
	}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
	})
	if err != nil {
		return "", 0, fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": mediaDockerManifest,
		"config": desc(mediaDockerConfig, config), "layers": ls,
	})
	if err != nil {
		return "", 0, fmt.Errorf("push %s:%s: %w", repo, tag, err)
	}
	for _, blob := range append([][]byte{config}, layers...) {
		if err := pushBlob(ctx, c, base, repo, blob); err != nil {
			return "", 0, fmt.Errorf("push %s:%s: %w", repo, tag, err)
		}
		size += int64(len(blob))
	}
	resp, err := send(ctx, c, http.MethodPut, base+"/v2/"+repo+"/manifests/"+tag, mediaDockerManifest, manifest, http.StatusCreated)
	if err != nil {
		return "", 0, fmt.Errorf("push %s:%s: manifest: %w", repo, tag, err)
	}
	manifestDigest = digest(manifest)
	if got := resp.Header.Get("Docker-Content-Digest"); got != "" && got != manifestDigest {
		return "", 0, fmt.Errorf("push %s:%s: registry stored the manifest as %s, want %s", repo, tag, got, manifestDigest)
	}
	return manifestDigest, size, nil
}

// pushBlob uploads one blob in a single request: POST opens an upload,
// PUT to its location with the digest closes it.
func pushBlob(ctx context.Context, c *http.Client, base, repo string, blob []byte) error {
	resp, err := send(ctx, c, http.MethodPost, base+"/v2/"+repo+"/blobs/uploads/", "", nil, http.StatusAccepted)
	if err != nil {
		return fmt.Errorf("start upload: %w", err)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return fmt.Errorf("start upload: bad Location %q", resp.Header.Get("Location"))
	}
	loc = resp.Request.URL.ResolveReference(loc)
	q := loc.Query()
	q.Set("digest", digest(blob))
	loc.RawQuery = q.Encode()
	if _, err := send(ctx, c, http.MethodPut, loc.String(), "application/octet-stream", blob, http.StatusCreated); err != nil {
		return fmt.Errorf("upload blob %s: %w", digest(blob), err)
	}
	return nil
}

// send makes one request and wants status back; the body is read and
// closed, and on another status its start goes into the error.
func send(ctx context.Context, c *http.Client, method, u, contentType string, body []byte, want int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

// client reaches the registry, and nothing else, from the switch
// namespace; over TLS it trusts the registry's CA alone.
func (r *Registry) client() *http.Client {
	t := &http.Transport{
		Proxy: nil, // never a proxy: the registry is inside the bed
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			if address != r.Addr {
				return nil, fmt.Errorf("dial %s: not the registry %s: %w", address, r.Addr, ErrOutsideRange)
			}
			return r.bed.dialSwitch(ctx, network, address)
		},
	}
	if r.roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: r.roots, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: t}
}

// dialSwitch connects from the switch namespace to an address of the bed,
// as waitTCP does.
func (b *Bed) dialSwitch(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s from the switch: %w", address, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !b.owns(netip.PrefixFrom(a.Unmap(), a.BitLen())) {
		return nil, fmt.Errorf("dial %s from the switch: %w (%s)", address, ErrOutsideRange, b.prefixes())
	}
	var c net.Conn
	err = inNetns(b.Switch, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s from the switch: %w", address, err)
	}
	return c, nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// registryPKI is a fresh CA and the server certificate it signed, PEM.
type registryPKI struct {
	ca   []byte // CA certificate
	cert []byte // server certificate
	key  []byte // server key, PEM
}

// newRegistryPKI makes an ECDSA P-256 CA named after the bed and a server
// certificate for names and ip, both valid from an hour before now (clock
// skew between whoever checks) for registryCertLifetime.
func newRegistryPKI(bedID string, names []string, ip netip.Addr, now time.Time) (*registryPKI, error) {
	ca, cert, key, err := pki.NewServer("nodezero test bed "+bedID+" CA", []netip.Addr{ip}, names, now, now.Add(registryCertLifetime))
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return nil, fmt.Errorf("make registry certificate: %w", err)
	}
	return &registryPKI{ca: pki.CertPEM(ca.Cert), cert: pki.CertPEM(cert), key: keyPEM}, nil
}
