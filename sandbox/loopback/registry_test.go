package loopback

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/hostagent/imagecheck"
)

const (
	testRepo = "ocp/release"
	testTag  = "4.18.1-x86_64"
)

// testImage is a release-like image: two layers and the default config.
func testImage() Image {
	return Image{Repo: testRepo, Tag: testTag, Layers: [][]byte{
		bytes.Repeat([]byte("layer one "), 1000),
		[]byte("layer two"),
	}}
}

// blobBytes is what a pull of im reads: its config and layers.
func blobBytes(im Image) int64 {
	n := int64(len(im.Config))
	if im.Config == nil {
		n = int64(len(defaultConfig(im.Layers)))
	}
	for _, l := range im.Layers {
		n += int64(len(l))
	}
	return n
}

func startTestRegistry(t *testing.T, tlsOn bool, names []string, images ...Image) *Registry {
	t.Helper()
	var r *Registry
	var err error
	if tlsOn {
		r, err = StartRegistryTLS(t.Context(), "127.0.0.1:0", images, names)
	} else {
		r, err = StartRegistry(t.Context(), "127.0.0.1:0", images)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRegistryImagecheck pulls with the host agent's own client, as the
// container-image-availability step does: by tag and by digest, trusting
// the registry's CA as the infra-env's trust bundle.
func TestRegistryImagecheck(t *testing.T) {
	im := testImage()
	other := Image{Repo: "ocp/other", Tag: "latest", Config: []byte(`{"os":"linux"}`), Layers: [][]byte{[]byte("x")}}
	r := startTestRegistry(t, true, nil, im, other)
	opts := imagecheck.Options{TrustBundle: r.CA()}

	for i, ref := range []string{r.Ref(testRepo, testTag), r.Addr + "/" + testRepo + "@" + r.Digest(testRepo, testTag)} {
		got, err := imagecheck.Pull(t.Context(), opts, ref)
		if err != nil {
			t.Fatalf("Pull(%s): %v", ref, err)
		}
		if got != blobBytes(im) {
			t.Errorf("Pull(%s) = %d bytes, want %d", ref, got, blobBytes(im))
		}
		if want := (i + 1) * (1 + len(im.Layers)); r.Pulls() != want {
			t.Errorf("after pulling %s: Pulls() = %d, want %d", ref, r.Pulls(), want)
		}
	}
	if got, err := imagecheck.Pull(t.Context(), opts, r.Ref("ocp/other", "latest")); err != nil || got != blobBytes(other) {
		t.Errorf("Pull(ocp/other) = %d, %v; want %d bytes", got, err, blobBytes(other))
	}
}

// TestRegistryImagecheckFailures: a wrong tag, a wrong repo or an
// untrusted CA fail the pull and serve no blob.
func TestRegistryImagecheckFailures(t *testing.T) {
	r := startTestRegistry(t, true, nil, testImage())
	other := startTestRegistry(t, true, nil) // another CA
	tests := []struct {
		name string
		opts imagecheck.Options
		ref  string
	}{
		{"wrong tag", imagecheck.Options{TrustBundle: r.CA()}, r.Ref(testRepo, "4.99.0")},
		{"wrong repo", imagecheck.Options{TrustBundle: r.CA()}, r.Ref("ocp/nope", testTag)},
		{"wrong digest", imagecheck.Options{TrustBundle: r.CA()}, r.Addr + "/" + testRepo + "@" + digestOf([]byte("nope"))},
		{"CA not trusted", imagecheck.Options{TrustBundle: other.CA()}, r.Ref(testRepo, testTag)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, err := imagecheck.Pull(t.Context(), tt.opts, tt.ref); err == nil {
				t.Errorf("Pull(%s) = %d bytes, want an error", tt.ref, n)
			}
		})
	}
	if r.Pulls() != 0 {
		t.Errorf("Pulls() = %d after failed pulls, want 0", r.Pulls())
	}
}

// TestRegistryPlainHTTP: imagecheck reaches a plain HTTP registry only when
// told it is insecure, which the agent never is: hence StartRegistryTLS.
func TestRegistryPlainHTTP(t *testing.T) {
	im := testImage()
	r := startTestRegistry(t, false, nil, im)
	if r.CA() != nil {
		t.Error("CA() of a plain HTTP registry is not nil")
	}
	if _, err := imagecheck.Pull(t.Context(), imagecheck.Options{}, r.Ref(testRepo, testTag)); err == nil {
		t.Error("Pull over plain HTTP without Insecure succeeded; imagecheck is expected to speak HTTPS only")
	}
	got, err := imagecheck.Pull(t.Context(), imagecheck.Options{Insecure: []string{r.Addr}}, r.Ref(testRepo, testTag))
	if err != nil || got != blobBytes(im) {
		t.Errorf("Pull(insecure) = %d, %v; want %d bytes", got, err, blobBytes(im))
	}
}

// TestRegistryByName: the registry known by a cluster name that the
// loopback DNS resolves, as the sandbox's release image is.
func TestRegistryByName(t *testing.T) {
	const name = "registry.c.example.com"
	im := testImage()
	r := startTestRegistry(t, true, []string{name}, im)
	d := startTestDNS(t, []Record{{Name: name, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}}, nil)
	dialer := &net.Dialer{Resolver: resolverFor(d, "udp")}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = dialer.DialContext
	_, port, _ := net.SplitHostPort(r.Addr)
	ref := name + ":" + port + "/" + testRepo + ":" + testTag

	got, err := imagecheck.Pull(t.Context(), imagecheck.Options{TrustBundle: r.CA(), Client: &http.Client{Transport: tr}}, ref)
	if err != nil || got != blobBytes(im) {
		t.Errorf("Pull(%s) = %d, %v; want %d bytes", ref, got, err, blobBytes(im))
	}
	if d.Queries() == 0 {
		t.Error("the registry's name was not resolved by the loopback DNS")
	}
}

// httpsClient trusts r's CA alone.
func httpsClient(t *testing.T, r *Registry) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(r.CA()) {
		t.Fatal("CA() holds no certificate")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return &http.Client{Transport: tr}
}

// get sends method path to r and returns the response with its body read.
func get(t *testing.T, c *http.Client, r *Registry, method, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, "https://"+r.Addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func sha256Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestRegistryDigests: the manifest's digest, and every blob's digest and
// size, are those of the bytes served; the default config names the layers.
func TestRegistryDigests(t *testing.T) {
	im := testImage()
	r := startTestRegistry(t, true, nil, im)
	c := httpsClient(t, r)

	resp, body := get(t, c, r, http.MethodGet, "/v2/"+testRepo+"/manifests/"+testTag)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET manifest = %s", resp.Status)
	}
	digest := sha256Digest(body)
	if got := resp.Header.Get("Docker-Content-Digest"); got != digest || r.Digest(testRepo, testTag) != digest {
		t.Errorf("manifest digest: header %q, Digest() %q; sha256 of the body is %q", got, r.Digest(testRepo, testTag), digest)
	}
	if got := resp.Header.Get("Content-Type"); got != mediaOCIManifest {
		t.Errorf("manifest Content-Type = %q, want %q", got, mediaOCIManifest)
	}
	_, byDigest := get(t, c, r, http.MethodGet, "/v2/"+testRepo+"/manifests/"+digest)
	if !bytes.Equal(byDigest, body) {
		t.Error("manifest by digest differs from manifest by tag")
	}

	var m ociManifest
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if m.SchemaVersion != 2 || m.MediaType != mediaOCIManifest || len(m.Layers) != len(im.Layers) {
		t.Fatalf("manifest = %s", body)
	}
	var blobs [][]byte
	for _, d := range append([]ociDescriptor{m.Config}, m.Layers...) {
		resp, blob := get(t, c, r, http.MethodGet, "/v2/"+testRepo+"/blobs/"+d.Digest)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET blob %s = %s", d.Digest, resp.Status)
		}
		if got := sha256Digest(blob); got != d.Digest || int64(len(blob)) != d.Size || resp.Header.Get("Docker-Content-Digest") != d.Digest {
			t.Errorf("blob %s: %d bytes hashing to %s (header %q), manifest says %d bytes", d.Digest, len(blob), got, resp.Header.Get("Docker-Content-Digest"), d.Size)
		}
		blobs = append(blobs, blob)
	}
	for i, l := range im.Layers {
		if !bytes.Equal(blobs[i+1], l) {
			t.Errorf("layer %d served differs from the one given", i)
		}
	}
	var config struct {
		OS     string `json:"os"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blobs[0], &config); err != nil {
		t.Fatal(err)
	}
	want := []string{sha256Digest(im.Layers[0]), sha256Digest(im.Layers[1])}
	if diff := cmp.Diff(want, config.RootFS.DiffIDs); config.OS != "linux" || diff != "" {
		t.Errorf("default config %s: os %q, diff_ids (-want +got):\n%s", blobs[0], config.OS, diff)
	}
}

// TestRegistryAPI: status, headers and error codes of each endpoint.
func TestRegistryAPI(t *testing.T) {
	im := testImage()
	r := startTestRegistry(t, true, nil, im, Image{Repo: "other", Tag: "v1", Layers: [][]byte{[]byte("o")}})
	c := httpsClient(t, r)
	layer := sha256Digest(im.Layers[1])
	tests := []struct {
		name, method, path string
		status             int
		code               string // registry error code; "" for none
		length             int    // Content-Length, -1 when not checked
	}{
		{"version GET", "GET", "/v2/", 200, "", 2},
		{"version HEAD", "HEAD", "/v2/", 200, "", 2},
		{"manifest HEAD", "HEAD", "/v2/" + testRepo + "/manifests/" + testTag, 200, "", -1},
		{"blob HEAD", "HEAD", "/v2/" + testRepo + "/blobs/" + layer, 200, "", len(im.Layers[1])},
		{"unknown tag", "GET", "/v2/" + testRepo + "/manifests/nope", 404, codeManifestUnknown, -1},
		{"tag of another repo", "GET", "/v2/other/manifests/" + testTag, 404, codeManifestUnknown, -1},
		{"unknown blob", "GET", "/v2/" + testRepo + "/blobs/" + sha256Digest(nil), 404, codeBlobUnknown, -1},
		{"blob of another repo", "GET", "/v2/other/blobs/" + layer, 404, codeBlobUnknown, -1},
		{"manifest as blob", "GET", "/v2/" + testRepo + "/blobs/" + r.Digest(testRepo, testTag), 404, codeBlobUnknown, -1},
		{"tags list", "GET", "/v2/" + testRepo + "/tags/list", 404, codeUnsupported, -1},
		{"no repo", "GET", "/v2/manifests/" + testTag, 404, codeUnsupported, -1},
		{"outside v2", "GET", "/v1/" + testRepo + "/manifests/" + testTag, 404, codeUnsupported, -1},
		{"push", "PUT", "/v2/" + testRepo + "/manifests/" + testTag, 405, codeUnsupported, -1},
		{"upload", "POST", "/v2/" + testRepo + "/blobs/uploads/", 405, codeUnsupported, -1},
		{"delete", "DELETE", "/v2/" + testRepo + "/manifests/" + testTag, 405, codeUnsupported, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, c, r, tt.method, tt.path)
			if resp.StatusCode != tt.status {
				t.Errorf("%s %s = %s, want %d", tt.method, tt.path, resp.Status, tt.status)
			}
			if got := resp.Header.Get("Docker-Distribution-API-Version"); got != "registry/2.0" {
				t.Errorf("Docker-Distribution-API-Version = %q, want registry/2.0", got)
			}
			if tt.length >= 0 && resp.Header.Get("Content-Length") != strconv.Itoa(tt.length) {
				t.Errorf("Content-Length = %q, want %d", resp.Header.Get("Content-Length"), tt.length)
			}
			if tt.method == "HEAD" && len(body) != 0 {
				t.Errorf("HEAD sent a %d-byte body", len(body))
			}
			if tt.code == "" {
				return
			}
			var e struct {
				Errors []struct{ Code, Message string } `json:"errors"`
			}
			if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) != 1 || e.Errors[0].Code != tt.code || e.Errors[0].Message == "" {
				t.Errorf("body %s (%v), want one error with code %s and a message", body, err, tt.code)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("error Content-Type = %q, want JSON", ct)
			}
		})
	}
	if r.Pulls() != 0 {
		t.Errorf("Pulls() = %d after HEADs and failed GETs, want 0", r.Pulls())
	}
}

func TestStartRegistryRejects(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "192.0.2.1:5000", "localhost:5000"} {
		if r, err := StartRegistry(t.Context(), listen, nil); !errors.Is(err, ErrNotLoopback) {
			if r != nil {
				r.Close()
			}
			t.Errorf("StartRegistry(%q) = %v, want ErrNotLoopback", listen, err)
		}
	}
	_, err := StartRegistry(t.Context(), "127.0.0.1:0", []Image{
		{Repo: "OCP/release", Tag: "v1"},
		{Repo: "ocp/release", Tag: "-v1"},
		{Repo: "ocp/release", Tag: "v1"},
		{Repo: "ocp/release", Tag: "v1"},
	})
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Errorf("StartRegistry(bad images) = %v, want 3 problems (repo, tag, duplicate)", err)
	}
	if _, err := StartRegistryTLS(t.Context(), "127.0.0.1:0", nil, []string{"bad name"}); err == nil {
		t.Error("StartRegistryTLS with a bad certificate name succeeded")
	}
}

// TestRegistryClose: once the context ends and Close returns, nothing
// listens.
func TestRegistryClose(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r, err := StartRegistryTLS(ctx, "127.0.0.1:0", []Image{testImage()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", r.Addr); err == nil {
		c.Close()
		t.Errorf("dial %s after Close succeeded", r.Addr)
	}
}

// TestRegistryTLSWithKeyPair: a registry started again with the first
// one's key pair, on the same address, is trusted by a client that trusts
// the first one's CA (a resumed sandbox's hosts).
func TestRegistryTLSWithKeyPair(t *testing.T) {
	im := testImage()
	first := startTestRegistry(t, true, nil, im)
	pair, addr := first.KeyPair(), first.Addr
	if len(pair.CA) == 0 || len(pair.Cert) == 0 || len(pair.Key) == 0 {
		t.Fatalf("KeyPair() = %+v, want CA, certificate and key", pair)
	}
	first.Close()
	again, err := StartRegistryTLSWith(t.Context(), addr, []Image{im}, pair)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, err := imagecheck.Pull(t.Context(), imagecheck.Options{TrustBundle: first.CA()}, again.Ref(testRepo, testTag)); err != nil {
		t.Errorf("Pull from the registry started again, trusting the first CA: %v", err)
	}
	if _, err := StartRegistryTLSWith(t.Context(), "127.0.0.1:0", []Image{im}, KeyPair{CA: pair.CA, Cert: pair.Cert}); err == nil {
		t.Error("StartRegistryTLSWith without a key succeeded")
	}
}
