package imagecheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzBlobs are the blobs the fuzzed registry holds: a config and a layer.
var fuzzBlobs = map[string][]byte{}

func init() {
	for _, b := range []string{`{"architecture":"` + runtime.GOARCH + `","os":"linux"}`, "layer bytes"} {
		h := sha256.Sum256([]byte(b))
		fuzzBlobs["sha256:"+hex.EncodeToString(h[:])] = []byte(b)
	}
}

// fuzzRegistryState is what the fuzzed registry answers: the tag's
// manifest, the manifest any digest names (an index's choice), an auth
// challenge ("" for none; "{realm}" stands for its token URL) and the
// token endpoint's body.
type fuzzRegistryState struct {
	manifest, byDigest []byte
	challenge          string
	token              []byte
}

type fuzzRegistry struct {
	mu  sync.Mutex
	st  fuzzRegistryState
	srv *httptest.Server
}

func (r *fuzzRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	st := r.st
	r.mu.Unlock()
	if req.URL.Path == "/token" {
		w.Write(st.token)
		return
	}
	if st.challenge != "" && req.Header.Get("Authorization") == "" {
		w.Header().Set("WWW-Authenticate", strings.ReplaceAll(st.challenge, "{realm}", r.srv.URL+"/token"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	path := strings.TrimPrefix(req.URL.Path, "/v2/fuzz/")
	switch {
	case path == "manifests/latest":
		w.Header().Set("Content-Type", mediaDockerManifest)
		w.Write(st.manifest)
	case strings.HasPrefix(path, "manifests/"):
		w.Write(st.byDigest)
	case strings.HasPrefix(path, "blobs/"):
		d := strings.TrimPrefix(path, "blobs/")
		if b, ok := fuzzBlobs[d]; ok {
			w.Write(b)
			return
		}
		// A blob the registry does not hold comes back as other bytes:
		// only a digest check tells.
		w.Write([]byte("not the blob " + d))
	default:
		http.NotFound(w, req)
	}
}

// FuzzRegistry pulls an image from a registry on loopback that answers
// with any manifest, index choice, auth challenge and token. Pull returns
// at once; when it succeeds, every blob it counted was one the manifest
// named by a sha256 digest and that matched it, and the bytes are theirs.
func FuzzRegistry(f *testing.F) {
	var cfgD, layerD string
	for d, b := range fuzzBlobs {
		if strings.HasPrefix(string(b), "{") {
			cfgD = d
		} else {
			layerD = d
		}
	}
	image := func(cfg string, layers ...string) []byte {
		var ls []map[string]any
		for _, l := range layers {
			ls = append(ls, map[string]any{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "digest": l, "size": 1})
		}
		b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaDockerManifest,
			"config": map[string]any{"mediaType": "application/vnd.docker.container.image.v1+json", "digest": cfg}, "layers": ls})
		return b
	}
	index, _ := json.Marshal(map[string]any{"mediaType": mediaOCIIndex, "manifests": []any{
		map[string]any{"digest": "sha256:" + strings.Repeat("a", 64), "platform": map[string]any{"os": "linux", "architecture": runtime.GOARCH}}}})
	good := image(cfgD, layerD)
	f.Add(good, []byte(nil), "", []byte(nil))
	f.Add(index, good, "", []byte(nil))
	f.Add(good, []byte(nil), `Bearer realm="{realm}",service="fuzz",scope="repository:fuzz:pull"`, []byte(`{"token":"t"}`))
	f.Add(good, []byte(nil), `Basic realm="fuzz"`, []byte(nil))
	f.Add(good, []byte(nil), `Bearer realm="ftp://x"`, []byte(nil))
	f.Add(good, []byte(nil), `Bearer realm="{realm}"`, []byte(`{"access_token":""}`))
	f.Add(image("sha512:"+strings.Repeat("0", 128), layerD), []byte(nil), "", []byte(nil))
	f.Add(image(cfgD, "x"), []byte(nil), "", []byte(nil))
	f.Add(image(cfgD, "sha256:"+strings.Repeat("b", 64)), []byte(nil), "", []byte(nil))
	f.Add(index, index, "", []byte(nil))

	reg := &fuzzRegistry{}
	reg.srv = httptest.NewTLSServer(reg)
	f.Cleanup(reg.srv.Close)
	host := strings.TrimPrefix(reg.srv.URL, "https://")
	opts := Options{Client: reg.srv.Client(), PullSecret: []byte(`{"auths":{"` + host + `":{"auth":"dXNlcjpwYXNz"}}}`)}
	f.Fuzz(func(t *testing.T, tagged, byDigest []byte, challenge string, token []byte) {
		reg.mu.Lock()
		reg.st = fuzzRegistryState{tagged, byDigest, challenge, token}
		reg.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		n, err := Pull(ctx, opts, host+"/fuzz:latest")
		if ctx.Err() != nil {
			t.Fatalf("Pull did not return within 10s: %v", err)
		}
		if err != nil {
			return
		}
		// The manifest the pull used: the tag's, or the index's choice.
		var m manifest
		if json.Unmarshal(tagged, &m) != nil || len(m.Manifests) > 0 {
			if json.Unmarshal(byDigest, &m) != nil {
				t.Fatalf("Pull succeeded (%d bytes) on manifests that do not decode", n)
			}
		}
		blobs := m.Layers
		if m.Config != nil && m.Config.Digest != "" {
			blobs = append(blobs, *m.Config)
		}
		var want int64
		for _, d := range blobs {
			b, ok := fuzzBlobs[d.Digest]
			if !ok {
				t.Fatalf("Pull succeeded with blob %q, which the registry does not hold (it sent other bytes)", d.Digest)
			}
			want += int64(len(b))
		}
		if n != want {
			t.Fatalf("Pull = %d bytes, the blobs hold %d", n, want)
		}
	})
}
