package imagecheck

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

func digestOf(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// testImage is an image made of a config blob and layers, with its Docker
// schema 2 manifest.
type testImage struct {
	manifest []byte
	blobs    map[string][]byte
	size     int64 // bytes of every blob
}

func makeImage(t *testing.T, layers ...string) testImage {
	t.Helper()
	im := testImage{blobs: map[string][]byte{}}
	add := func(b []byte, mediaType string) map[string]any {
		d := digestOf(b)
		im.blobs[d] = b
		im.size += int64(len(b))
		return map[string]any{"mediaType": mediaType, "digest": d, "size": len(b)}
	}
	cfg := add([]byte(`{"architecture":"`+runtime.GOARCH+`","os":"linux","rootfs":{"type":"layers"}}`), "application/vnd.docker.container.image.v1+json")
	var ls []map[string]any
	for _, l := range layers {
		ls = append(ls, add([]byte(l), "application/vnd.docker.image.rootfs.diff.tar.gzip"))
	}
	m, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaDockerManifest, "config": cfg, "layers": ls})
	if err != nil {
		t.Fatal(err)
	}
	im.manifest = m
	return im
}

// fakeRegistry is a registry v2 server in the test: images by
// "repo:ref", blobs by digest, and an optional auth scheme.
type fakeRegistry struct {
	mu        sync.Mutex
	manifests map[string][]byte // "repo:ref" → manifest
	types     map[string]string // "repo:ref" → media type
	blobs     map[string][]byte
	auth      string // "", "basic" or "bearer"
	user      string
	pass      string
	token     string
	hold      chan struct{} // when set, manifest requests wait on it
	seen      chan struct{} // when set, signalled on each manifest request
	srv       *httptest.Server
}

func newFakeRegistry(auth string) *fakeRegistry {
	return &fakeRegistry{manifests: map[string][]byte{}, types: map[string]string{}, blobs: map[string][]byte{}, auth: auth, user: "puller", pass: "s3cret", token: "tok-123"}
}

func (r *fakeRegistry) add(repo, tag string, im testImage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifests[repo+":"+tag] = im.manifest
	r.manifests[repo+":"+digestOf(im.manifest)] = im.manifest
	r.types[repo+":"+tag] = mediaDockerManifest
	r.types[repo+":"+digestOf(im.manifest)] = mediaDockerManifest
	for d, b := range im.blobs {
		r.blobs[d] = b
	}
}

func (r *fakeRegistry) addRaw(repo, ref, mediaType string, m []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifests[repo+":"+ref] = m
	r.types[repo+":"+ref] = mediaType
}

func (r *fakeRegistry) start(t *testing.T, tlsOn bool) string {
	t.Helper()
	if tlsOn {
		r.srv = httptest.NewTLSServer(r)
	} else {
		r.srv = httptest.NewServer(r)
	}
	t.Cleanup(r.srv.Close)
	return strings.TrimPrefix(strings.TrimPrefix(r.srv.URL, "http://"), "https://")
}

func (r *fakeRegistry) pullSecret(host string) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(r.user + ":" + r.pass))
	return []byte(fmt.Sprintf(`{"auths":{"other.example":{"auth":"eDp5"},%q:{"auth":%q,"email":"x@example.com"}}}`, host, auth))
}

func (r *fakeRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/token" {
		u, p, ok := req.BasicAuth()
		if !ok || u != r.user || p != r.pass || req.URL.Query().Get("service") != "fake" {
			http.Error(w, "bad credentials", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"token":%q,"expires_in":300}`, r.token)
		return
	}
	switch r.auth {
	case "basic":
		if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="fake"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	case "bearer":
		if req.Header.Get("Authorization") != "Bearer "+r.token {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="fake",scope="repository:x:pull"`, r.srv.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	path := strings.TrimPrefix(req.URL.Path, "/v2/")
	if i := strings.LastIndex(path, "/manifests/"); i >= 0 {
		if r.seen != nil {
			r.seen <- struct{}{}
		}
		if r.hold != nil {
			<-r.hold
		}
		key := path[:i] + ":" + path[i+len("/manifests/"):]
		r.mu.Lock()
		m, ok := r.manifests[key]
		mt := r.types[key]
		r.mu.Unlock()
		if !ok {
			http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		if !strings.Contains(req.Header.Get("Accept"), mt) {
			http.Error(w, "not acceptable", http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", mt)
		w.Write(m)
		return
	}
	if i := strings.LastIndex(path, "/blobs/"); i >= 0 {
		r.mu.Lock()
		b, ok := r.blobs[path[i+len("/blobs/"):]]
		r.mu.Unlock()
		if !ok {
			http.Error(w, `{"errors":[{"code":"BLOB_UNKNOWN"}]}`, http.StatusNotFound)
			return
		}
		w.Write(b)
		return
	}
	http.NotFound(w, req)
}

func runStep(t *testing.T, opts Options, images ...string) (wire.ContainerImageAvailabilityResponse, int) {
	t.Helper()
	arg, err := wire.EncodeEmbedded(wire.ContainerImageAvailabilityRequest{Images: images, Timeout: 60})
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := Step(opts)(context.Background(), []string{arg})
	if code != 0 && code != exitSomeFailed {
		t.Fatalf("step exit %d, stderr %q", code, stderr)
	}
	var resp wire.ContainerImageAvailabilityResponse
	if err := wire.DecodeEmbedded(out, &resp); err != nil {
		t.Fatalf("step output %q: %v", out, err)
	}
	return resp, code
}

func checkSuccess(t *testing.T, got *wire.ContainerImageAvailability, name string, size int64) {
	t.Helper()
	if got.Name != name || got.Result != wire.ContainerImageAvailabilityResultSuccess || got.SizeBytes != float64(size) {
		t.Errorf("image = %+v, want %s success with %d bytes", got, name, size)
	}
	if got.Time <= 0 || got.DownloadRate <= 0 {
		t.Errorf("image %s time %v rate %v, want both > 0", name, got.Time, got.DownloadRate)
	}
	if want := got.SizeBytes / 1e6 / got.Time; got.DownloadRate != want {
		t.Errorf("image %s rate %v, want size/1e6/time = %v", name, got.DownloadRate, want)
	}
}

func TestStepAuth(t *testing.T) {
	for _, auth := range []string{"", "basic", "bearer"} {
		t.Run("auth="+auth, func(t *testing.T) {
			reg := newFakeRegistry(auth)
			host := reg.start(t, false)
			im := makeImage(t, "layer one", strings.Repeat("layer two ", 1000))
			reg.add("ocp/release", "4.18", im)
			opts := Options{PullSecret: reg.pullSecret(host), Insecure: []string{host}}
			byTag := host + "/ocp/release:4.18"
			byDigest := host + "/ocp/release@" + digestOf(im.manifest)
			missing := host + "/ocp/release:none"
			resp, code := runStep(t, opts, byTag, byDigest, missing)
			if code != exitSomeFailed {
				t.Errorf("step exit %d with a missing image, want %d", code, exitSomeFailed)
			}
			if len(resp.Images) != 3 {
				t.Fatalf("step reported %d images, want 3", len(resp.Images))
			}
			checkSuccess(t, resp.Images[0], byTag, im.size)
			checkSuccess(t, resp.Images[1], byDigest, im.size)
			if got := resp.Images[2]; got.Result != wire.ContainerImageAvailabilityResultFailure || got.SizeBytes != 0 {
				t.Errorf("missing image = %+v, want failure", got)
			}
		})
	}
}

func TestPullRefused(t *testing.T) {
	for _, auth := range []string{"basic", "bearer"} {
		t.Run(auth, func(t *testing.T) {
			reg := newFakeRegistry(auth)
			host := reg.start(t, false)
			reg.add("ocp/release", "4.18", makeImage(t, "l"))
			// No credentials, then wrong ones.
			_, err := Pull(context.Background(), Options{Insecure: []string{host}}, host+"/ocp/release:4.18")
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("Pull without credentials = %v, want ErrUnauthorized", err)
			}
			secret := reg.pullSecret(host)
			reg.pass = "changed"
			_, err = Pull(context.Background(), Options{PullSecret: secret, Insecure: []string{host}}, host+"/ocp/release:4.18")
			if !errors.Is(err, ErrUnauthorized) {
				t.Errorf("Pull with wrong credentials = %v, want ErrUnauthorized", err)
			}
		})
	}
}

func TestPullHTTPSOnlyUnlessInsecure(t *testing.T) {
	plain := newFakeRegistry("")
	host := plain.start(t, false)
	plain.add("a/b", "1", makeImage(t, "x"))
	if _, err := Pull(context.Background(), Options{}, host+"/a/b:1"); err == nil {
		t.Error("Pull over plain HTTP from a registry not listed insecure succeeded")
	}

	tlsReg := newFakeRegistry("basic")
	tlsHost := tlsReg.start(t, true)
	im := makeImage(t, "y")
	tlsReg.add("a/b", "1", im)
	// A self-signed certificate: refused unless insecure, then used over
	// HTTPS (the fake serves no plain HTTP).
	if _, err := Pull(context.Background(), Options{PullSecret: tlsReg.pullSecret(tlsHost)}, tlsHost+"/a/b:1"); err == nil {
		t.Error("Pull with an unknown certificate succeeded")
	}
	n, err := Pull(context.Background(), Options{PullSecret: tlsReg.pullSecret(tlsHost), Insecure: []string{tlsHost}}, tlsHost+"/a/b:1")
	if err != nil || n != im.size {
		t.Errorf("Pull from an insecure TLS registry = %d, %v; want %d bytes", n, err, im.size)
	}
	// With the server's CA the registry needs no insecure entry.
	n, err = Pull(context.Background(), Options{PullSecret: tlsReg.pullSecret(tlsHost), Client: tlsReg.srv.Client()}, tlsHost+"/a/b:1")
	if err != nil || n != im.size {
		t.Errorf("Pull with the registry's CA = %d, %v; want %d bytes", n, err, im.size)
	}
}

func TestPullIndex(t *testing.T) {
	reg := newFakeRegistry("")
	host := reg.start(t, false)
	im := makeImage(t, "native layer")
	reg.add("multi", digestOf(im.manifest), im)
	other := makeImage(t, "other arch layer")
	reg.add("multi", digestOf(other.manifest), other)
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": mediaOCIIndex,
		"manifests": []map[string]any{
			{"mediaType": mediaDockerManifest, "digest": digestOf(other.manifest), "size": len(other.manifest), "platform": map[string]string{"os": "linux", "architecture": "not-" + runtime.GOARCH}},
			{"mediaType": mediaDockerManifest, "digest": digestOf(im.manifest), "size": len(im.manifest), "platform": map[string]string{"os": "linux", "architecture": runtime.GOARCH}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	reg.addRaw("multi", "latest", mediaOCIIndex, index)
	n, err := Pull(context.Background(), Options{Insecure: []string{host}}, host+"/multi")
	if err != nil || n != im.size {
		t.Errorf("Pull of an index = %d, %v; want this platform's %d bytes", n, err, im.size)
	}
}

func TestPullBadBlob(t *testing.T) {
	reg := newFakeRegistry("")
	host := reg.start(t, false)
	im := makeImage(t, "good")
	for d := range im.blobs {
		im.blobs[d] = []byte("tampered")
	}
	reg.add("a", "1", im)
	if _, err := Pull(context.Background(), Options{Insecure: []string{host}}, host+"/a:1"); err == nil || !strings.Contains(err.Error(), "digest") {
		t.Errorf("Pull of a tampered blob = %v, want a digest mismatch", err)
	}
}

func TestStepSemaphore(t *testing.T) {
	reg := newFakeRegistry("")
	host := reg.start(t, false)
	im := makeImage(t, "l")
	reg.add("a", "1", im)
	reg.hold = make(chan struct{})
	reg.seen = make(chan struct{}, 1)
	opts := Options{Insecure: []string{host}}
	arg := fmt.Sprintf(`{"images":[%q],"timeout":60}`, host+"/a:1")

	var wg sync.WaitGroup
	var first string
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, _, _ = Step(opts)(context.Background(), []string{arg})
	}()
	<-reg.seen // the first run is inside the registry now
	out, stderr, code := Step(opts)(context.Background(), []string{arg})
	if out != "{}" || stderr != "" || code != 0 {
		t.Errorf("concurrent step = %q, %q, %d; want {}, \"\", 0", out, stderr, code)
	}
	close(reg.hold)
	wg.Wait()
	if !strings.Contains(first, `"result":"success"`) {
		t.Errorf("first step output = %s, want a success", first)
	}
}

func TestStepTimeout(t *testing.T) {
	// The budget is whole seconds; a cancelled parent context stands in
	// for it running out.
	reg := newFakeRegistry("")
	host := reg.start(t, false)
	reg.add("a", "1", makeImage(t, "l"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, _, code := Step(Options{Insecure: []string{host}})(ctx, []string{fmt.Sprintf(`{"images":[%q],"timeout":1}`, host+"/a:1")})
	if code != exitSomeFailed || !strings.Contains(out, `"result":"failure"`) {
		t.Errorf("step past its budget = %s, %d; want a failure, %d", out, code, exitSomeFailed)
	}
}

func TestParseChallenge(t *testing.T) {
	scheme, p := parseChallenge(`Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"`)
	if scheme != "Bearer" || p["realm"] != "https://auth.example/token" || p["service"] != "registry.example" || p["scope"] != "repository:a/b:pull,push" {
		t.Errorf("parseChallenge = %q, %v", scheme, p)
	}
	scheme, p = parseChallenge(`Basic realm=reg`)
	if scheme != "Basic" || p["realm"] != "reg" {
		t.Errorf("parseChallenge = %q, %v", scheme, p)
	}
}

// TestInspect: Inspect authenticates and reads the manifest but fetches no
// blob — a tampered blob does not fail it — and refuses what Pull refuses.
func TestInspect(t *testing.T) {
	reg := newFakeRegistry("bearer")
	host := reg.start(t, false)
	im := makeImage(t, "release")
	for d := range im.blobs {
		im.blobs[d] = []byte("tampered")
	}
	reg.add("ocp/release", "4.18", im)
	secret := reg.pullSecret(host)
	opts := Options{PullSecret: secret, Insecure: []string{host}}
	if err := Inspect(context.Background(), opts, host+"/ocp/release:4.18"); err != nil {
		t.Errorf("Inspect = %v, want nil (no blob is fetched)", err)
	}
	if err := Inspect(context.Background(), Options{Insecure: []string{host}}, host+"/ocp/release:4.18"); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Inspect without credentials = %v, want ErrUnauthorized", err)
	}
	if err := Inspect(context.Background(), opts, host+"/ocp/release:4.19"); err == nil {
		t.Error("Inspect of a missing tag succeeded")
	}
	if err := Inspect(context.Background(), opts, "not a reference"); err == nil {
		t.Error("Inspect of a bad reference succeeded")
	}
}
