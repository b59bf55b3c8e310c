package loopback

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Media types the registry serves.
const (
	mediaOCIManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaOCIConfig   = "application/vnd.oci.image.config.v1+json"
	// Layers are whatever bytes the caller gave, served uncompressed: the
	// sandbox's pulls only hash them.
	mediaOCILayer = "application/vnd.oci.image.layer.v1.tar"
	mediaBlob     = "application/octet-stream"
)

// readHeaderTimeout bounds how long a client may take to send its request
// headers.
const readHeaderTimeout = 10 * time.Second

// Image is one image the registry serves as repo:tag. A nil Config is
// replaced by a minimal linux config for this machine's architecture that
// lists the layers as its diff IDs.
type Image struct {
	Repo, Tag string
	Config    []byte
	Layers    [][]byte
}

// Registry is a read-only OCI distribution v2 registry on loopback: GET and
// HEAD of /v2/, of manifests by tag or digest and of blobs by digest, for
// the images it was started with. Every other request gets 404 (405 for a
// write) with the registry's JSON error body.
type Registry struct {
	Addr string // ip:port it listens on, the real port when asked for 0

	ca        []byte             // PEM CA of the server certificate; nil over plain HTTP
	pair      KeyPair            // the CA, certificate and key; zero over plain HTTP
	manifests map[string]*served // "repo:tag" and "repo@digest"
	blobs     map[string][]byte  // "repo@digest"
	digests   map[string]string  // "repo:tag" → manifest digest
	pulls     atomic.Int64
	srv       *http.Server
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// served is one manifest: its bytes and their digest.
type served struct {
	body   []byte
	digest string
}

// StartRegistry serves images over plain HTTP on listen (a loopback
// ip:port; port 0 picks one, see Addr) until ctx ends or Close. Note that
// hostagent/imagecheck speaks plain HTTP only to registries it is told are
// insecure; the sandbox's hosts need StartRegistryTLS.
func StartRegistry(ctx context.Context, listen string, images []Image) (*Registry, error) {
	r, ln, err := newRegistry(ctx, listen, images)
	if err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	r.start(ctx, ln, nil)
	return r, nil
}

// StartRegistryTLS is StartRegistry over HTTPS, with a server certificate
// for the listen IP and names (DNS names or IPs the registry is also
// reached by), signed by a CA made in memory for this registry alone: CA
// returns it, for a client's trust bundle (the infra-env's
// additional_trust_bundle). The CA and certificate are valid from an hour
// before now for certLifetime.
func StartRegistryTLS(ctx context.Context, listen string, images []Image, names []string) (*Registry, error) {
	r, ln, err := newRegistry(ctx, listen, images)
	if err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	ip := ln.Addr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	pki, err := newServerPKI(ip, names, time.Now())
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start registry: %w", err)
	}
	r.ca, r.pair = pki.caPEM, pki.pair
	r.start(ctx, ln, &tls.Config{Certificates: []tls.Certificate{pki.cert}, MinVersion: tls.VersionTLS12})
	return r, nil
}

// StartRegistryTLSWith is StartRegistryTLS with the CA, certificate and
// key of an earlier registry (Registry.KeyPair): a client that trusted that
// one trusts this one.
func StartRegistryTLSWith(ctx context.Context, listen string, images []Image, pair KeyPair) (*Registry, error) {
	pki, err := pair.parse()
	if err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	r, ln, err := newRegistry(ctx, listen, images)
	if err != nil {
		return nil, fmt.Errorf("start registry: %w", err)
	}
	r.ca, r.pair = pki.caPEM, pki.pair
	r.start(ctx, ln, &tls.Config{Certificates: []tls.Certificate{pki.cert}, MinVersion: tls.VersionTLS12})
	return r, nil
}

// KeyPair returns the registry's CA, certificate and key (zero over plain
// HTTP), to serve the same registry again.
func (r *Registry) KeyPair() KeyPair { return r.pair }

// newRegistry checks listen and the images, builds the manifests and
// listens.
func newRegistry(ctx context.Context, listen string, images []Image) (*Registry, net.Listener, error) {
	ap, err := loopbackAddr(listen)
	if err != nil {
		return nil, nil, err
	}
	r := &Registry{manifests: map[string]*served{}, blobs: map[string][]byte{}, digests: map[string]string{}}
	var errs []error
	for i, im := range images {
		if err := r.add(im); err != nil {
			errs = append(errs, fmt.Errorf("images[%d]: %w", i, err))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", ap.String())
	if err != nil {
		return nil, nil, err
	}
	r.Addr = ln.Addr().String()
	return r, ln, nil
}

// start serves on ln, over TLS when tc is set.
func (r *Registry) start(ctx context.Context, ln net.Listener, tc *tls.Config) {
	ctx, r.cancel = context.WithCancel(ctx)
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	r.srv = &http.Server{
		Handler:           r,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// The server's own complaints (a client's failed TLS handshake)
		// go to the default logger at debug level: no logger is passed in.
		ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug),
	}
	context.AfterFunc(ctx, func() { r.srv.Close() })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = r.srv.Serve(ln) // returns ErrServerClosed once ctx ends
	}()
}

// add checks im and indexes its manifest and blobs.
func (r *Registry) add(im Image) error {
	if !validRepo(im.Repo) {
		return fmt.Errorf("repo %q: want lowercase components of letters and digits joined by '.', '_' or '-'", im.Repo)
	}
	if !validTag(im.Tag) {
		return fmt.Errorf("tag %q: want 1 to 128 of [A-Za-z0-9_.-], not starting with '.' or '-'", im.Tag)
	}
	key := im.Repo + ":" + im.Tag
	if _, dup := r.digests[key]; dup {
		return fmt.Errorf("%s given twice", key)
	}
	config := im.Config
	if config == nil {
		config = defaultConfig(im.Layers)
	}
	m := ociManifest{SchemaVersion: 2, MediaType: mediaOCIManifest, Config: r.addBlob(im.Repo, mediaOCIConfig, config), Layers: []ociDescriptor{}}
	for _, l := range im.Layers {
		m.Layers = append(m.Layers, r.addBlob(im.Repo, mediaOCILayer, l))
	}
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: encode manifest: %w", key, err)
	}
	s := &served{body: body, digest: digestOf(body)}
	r.manifests[key] = s
	r.manifests[im.Repo+"@"+s.digest] = s
	r.digests[key] = s.digest
	return nil
}

func (r *Registry) addBlob(repo, mediaType string, b []byte) ociDescriptor {
	d := ociDescriptor{MediaType: mediaType, Digest: digestOf(b), Size: int64(len(b))}
	r.blobs[repo+"@"+d.Digest] = b
	return d
}

// ociManifest and ociDescriptor are the OCI image manifest as served.
type ociManifest struct {
	SchemaVersion int             `json:"schemaVersion"`
	MediaType     string          `json:"mediaType"`
	Config        ociDescriptor   `json:"config"`
	Layers        []ociDescriptor `json:"layers"`
}

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

// defaultConfig is a minimal OCI image config for linux on this machine's
// architecture. The layers are served uncompressed, so their diff IDs are
// their digests.
func defaultConfig(layers [][]byte) []byte {
	type rootfs struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	}
	c := struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		RootFS       rootfs `json:"rootfs"`
	}{runtime.GOARCH, "linux", rootfs{Type: "layers", DiffIDs: []string{}}}
	for _, l := range layers {
		c.RootFS.DiffIDs = append(c.RootFS.DiffIDs, digestOf(l))
	}
	b, _ := json.Marshal(c) // strings and slices of strings: cannot fail
	return b
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validRepo: slash-separated components of lowercase letters and digits
// joined by '.', '_' or '-' (the distribution grammar, loosely).
func validRepo(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, c := range strings.Split(s, "/") {
		if c == "" || !lowerAlnum(c[0]) || !lowerAlnum(c[len(c)-1]) {
			return false
		}
		for i := 0; i < len(c); i++ {
			if !lowerAlnum(c[i]) && c[i] != '.' && c[i] != '_' && c[i] != '-' {
				return false
			}
		}
	}
	return true
}

func lowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// validTag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
func validTag(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !lowerAlnum(c) && !('A' <= c && c <= 'Z') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// CA returns the PEM certificate of the CA that signed the server's
// certificate, or nil for a plain HTTP registry.
func (r *Registry) CA() []byte { return r.ca }

// Ref returns the reference of repo:tag on this registry,
// "<ip:port>/<repo>:<tag>".
func (r *Registry) Ref(repo, tag string) string { return r.Addr + "/" + repo + ":" + tag }

// Digest returns the manifest digest of repo:tag ("sha256:…"), for a
// reference by digest, or "" when the registry does not hold it.
func (r *Registry) Digest(repo, tag string) string { return r.digests[repo+":"+tag] }

// Pulls returns how many blob GETs the registry has served.
func (r *Registry) Pulls() int { return int(r.pulls.Load()) }

// Close stops the registry and waits for it.
func (r *Registry) Close() error {
	r.closeOnce.Do(func() {
		r.cancel()
		r.wg.Wait()
	})
	return nil
}

// Registry error codes (OCI distribution spec, "Error Codes").
const (
	codeBlobUnknown     = "BLOB_UNKNOWN"
	codeManifestUnknown = "MANIFEST_UNKNOWN"
	codeUnsupported     = "UNSUPPORTED"
)

// ServeHTTP is the registry's API.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	path := req.URL.Path
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, codeUnsupported, "read-only registry: "+req.Method+" is not served", path)
		return
	}
	if path == "/v2/" || path == "/v2" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "2")
		if req.Method == http.MethodGet {
			_, _ = w.Write([]byte("{}"))
		}
		return
	}
	// /v2/<repo>/<kind>/<ref>: the reference is the last path element and
	// holds no '/'; the repository before the kind may hold "/manifests/"
	// itself.
	rest, ok := strings.CutPrefix(path, "/v2/")
	i := strings.LastIndexByte(rest, '/')
	j := -1
	if ok && i > 0 {
		j = strings.LastIndexByte(rest[:i], '/')
	}
	if j <= 0 {
		writeError(w, http.StatusNotFound, codeUnsupported, "no such registry endpoint", path)
		return
	}
	repo, kind, ref := rest[:j], rest[j+1:i], rest[i+1:]
	switch kind {
	case "manifests":
		r.serveManifest(w, req, repo, ref)
	case "blobs":
		r.serveBlob(w, req, repo, ref)
	default:
		writeError(w, http.StatusNotFound, codeUnsupported, "no such registry endpoint", path)
	}
}

// serveManifest answers a manifest by tag or digest. The manifest is OCI
// whatever the Accept header says: every client the sandbox runs accepts
// OCI, and a real registry converts nothing either.
func (r *Registry) serveManifest(w http.ResponseWriter, req *http.Request, repo, ref string) {
	sep := ":"
	if strings.Contains(ref, ":") {
		sep = "@"
	}
	m, ok := r.manifests[repo+sep+ref]
	if !ok {
		writeError(w, http.StatusNotFound, codeManifestUnknown, "manifest unknown", repo+sep+ref)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mediaOCIManifest)
	h.Set("Content-Length", strconv.Itoa(len(m.body)))
	h.Set("Docker-Content-Digest", m.digest)
	if req.Method == http.MethodGet {
		_, _ = w.Write(m.body)
	}
}

// serveBlob answers a blob of repo by digest.
func (r *Registry) serveBlob(w http.ResponseWriter, req *http.Request, repo, digest string) {
	b, ok := r.blobs[repo+"@"+digest]
	if !ok {
		writeError(w, http.StatusNotFound, codeBlobUnknown, "blob unknown to registry", repo+"@"+digest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mediaBlob)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Docker-Content-Digest", digest)
	if req.Method == http.MethodGet {
		r.pulls.Add(1)
		_, _ = w.Write(b)
	}
}

// writeError sends the registry's JSON error body:
// {"errors":[{"code":…,"message":…,"detail":…}]}.
func writeError(w http.ResponseWriter, status int, code, message, detail string) {
	type regErr struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Detail  string `json:"detail,omitempty"`
	}
	body, _ := json.Marshal(struct {
		Errors []regErr `json:"errors"`
	}{[]regErr{{code, message, detail}}}) // strings only: cannot fail
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
