package imagecheck

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
)

// Manifest media types asked for, most specific first.
const (
	mediaOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mediaOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mediaDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
	mediaDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	maxManifestBytes    = 4 << 20
	maxTokenBytes       = 1 << 20
)

var manifestAccept = strings.Join([]string{mediaOCIManifest, mediaDockerManifest, mediaOCIIndex, mediaDockerList}, ", ")

// ErrUnauthorized is returned (wrapped) when the registry refuses the
// credentials, or asks for some and the pull secret has none.
var ErrUnauthorized = errors.New("registry refused access")

// credentials are one registry's entry of the pull secret.
type credentials struct{ user, pass string }

// parsePullSecret reads {"auths":{"<registry>":{"auth":"base64(user:pass)"}}}
// (or "username"/"password") into a map keyed by registry host[:port].
func parsePullSecret(b []byte) (map[string]credentials, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var ps struct {
		Auths map[string]struct {
			Auth     string `json:"auth"`
			Username string `json:"username"`
			Password string `json:"password"`
		} `json:"auths"`
	}
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, fmt.Errorf("parse pull secret: %w", err)
	}
	m := map[string]credentials{}
	for key, a := range ps.Auths {
		c := credentials{user: a.Username, pass: a.Password}
		if a.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return nil, fmt.Errorf("parse pull secret: auths[%q].auth: %w", key, err)
			}
			u, p, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("parse pull secret: auths[%q].auth: no ':' between user and password", key)
			}
			c = credentials{user: u, pass: p}
		}
		m[registryKey(key)] = c
	}
	return m, nil
}

// registryKey turns a pull-secret key ("https://quay.io/v1/", "quay.io")
// into the host[:port] an image reference names; Docker Hub's historic
// keys become "docker.io".
func registryKey(k string) string {
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k, _, _ = strings.Cut(k, "/")
	switch k {
	case "index.docker.io", "registry-1.docker.io":
		return "docker.io"
	}
	return k
}

// session is one image's conversation with its registry: base URL, the
// credentials for it and the Authorization header that worked last.
type session struct {
	client   *http.Client
	base     string // scheme://host[:port]
	creds    *credentials
	authz    string
	insecure bool // may fall back to plain HTTP
}

// newSession prepares talking to registry; Docker Hub is served from
// registry-1.docker.io.
func newSession(client *http.Client, registry string, creds *credentials, insecure bool) *session {
	host := registry
	if host == "docker.io" {
		host = "registry-1.docker.io"
	}
	return &session{client: client, base: "https://" + host, creds: creds, insecure: insecure}
}

// get GETs path on the registry, answering an auth challenge once.
func (s *session) get(ctx context.Context, path, accept string) (*http.Response, error) {
	resp, err := s.do(ctx, path, accept)
	if err != nil && s.insecure && strings.HasPrefix(s.base, "https://") {
		// An insecure registry may speak plain HTTP only.
		s.base = "http://" + strings.TrimPrefix(s.base, "https://")
		resp, err = s.do(ctx, path, accept)
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusUnauthorized {
		return resp, nil
	}
	challenge := resp.Header.Get("WWW-Authenticate")
	drain(resp)
	if err := s.authorize(ctx, challenge); err != nil {
		return nil, err
	}
	resp, err = s.do(ctx, path, accept)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		drain(resp)
		return nil, fmt.Errorf("get %s%s: %w", s.base, path, ErrUnauthorized)
	}
	return resp, nil
}

func (s *session) do(ctx context.Context, path, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		return nil, fmt.Errorf("get %s%s: %w", s.base, path, err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if s.authz != "" {
		req.Header.Set("Authorization", s.authz)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s%s: %w", s.base, path, err)
	}
	return resp, nil
}

// authorize answers a WWW-Authenticate challenge: Basic with the pull
// secret's credentials, or Bearer by fetching a token from the realm.
func (s *session) authorize(ctx context.Context, challenge string) error {
	scheme, params := parseChallenge(challenge)
	switch strings.ToLower(scheme) {
	case "basic":
		if s.creds == nil {
			return fmt.Errorf("registry %s asks for basic auth: %w: no credentials in the pull secret", s.base, ErrUnauthorized)
		}
		s.authz = "Basic " + base64.StdEncoding.EncodeToString([]byte(s.creds.user+":"+s.creds.pass))
		return nil
	case "bearer":
		tok, err := s.token(ctx, params)
		if err != nil {
			return err
		}
		s.authz = "Bearer " + tok
		return nil
	default:
		return fmt.Errorf("registry %s: %w: unsupported challenge %q", s.base, ErrUnauthorized, challenge)
	}
}

// token fetches a bearer token from the challenge's realm, with the pull
// secret's credentials when there are some (anonymous otherwise).
func (s *session) token(ctx context.Context, params map[string]string) (string, error) {
	realm := params["realm"]
	u, err := url.Parse(realm)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("registry %s: bad token realm %q", s.base, realm)
	}
	q := u.Query()
	if v := params["service"]; v != "" {
		q.Set("service", v)
	}
	if v := params["scope"]; v != "" {
		q.Set("scope", v)
	}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("get token %s: %w", realm, err)
	}
	if s.creds != nil {
		req.SetBasicAuth(s.creds.user, s.creds.pass)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("get token %s: %w", realm, err)
	}
	defer drain(resp)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return "", fmt.Errorf("get token %s: %w: %s", realm, ErrUnauthorized, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get token %s: %s", realm, resp.Status)
	}
	var body struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTokenBytes)).Decode(&body); err != nil {
		return "", fmt.Errorf("get token %s: %w", realm, err)
	}
	if body.Token == "" {
		body.Token = body.AccessToken
	}
	if body.Token == "" {
		return "", fmt.Errorf("get token %s: no token in the answer", realm)
	}
	return body.Token, nil
}

// parseChallenge splits `Bearer realm="x",service="y"` into the scheme and
// its parameters (quoted or bare values).
func parseChallenge(h string) (string, map[string]string) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			break
		}
		key = strings.ToLower(strings.TrimSpace(key))
		var val string
		if strings.HasPrefix(after, `"`) {
			end := strings.IndexByte(after[1:], '"')
			if end < 0 {
				val, rest = after[1:], ""
			} else {
				val, rest = after[1:end+1], after[end+2:]
			}
		} else {
			val, rest, _ = strings.Cut(after, ",")
			val = strings.TrimSpace(val)
		}
		params[key] = val
		rest = strings.TrimLeft(rest, ", ")
	}
	return scheme, params
}

// descriptor is the part of an OCI/Docker descriptor the check uses.
type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
	Platform  *struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
	} `json:"platform,omitempty"`
}

// manifest covers image manifests and indexes/lists alike.
type manifest struct {
	MediaType string       `json:"mediaType"`
	Config    *descriptor  `json:"config"`
	Layers    []descriptor `json:"layers"`
	Manifests []descriptor `json:"manifests"`
}

// fetchManifest GETs and decodes the manifest at ref.
func (s *session) fetchManifest(ctx context.Context, repo, ref string) (*manifest, error) {
	resp, err := s.get(ctx, "/v2/"+repo+"/manifests/"+ref, manifestAccept)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get manifest %s:%s: %s", repo, ref, resp.Status)
	}
	var m manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxManifestBytes)).Decode(&m); err != nil {
		return nil, fmt.Errorf("get manifest %s:%s: %w", repo, ref, err)
	}
	if m.MediaType == "" {
		m.MediaType = resp.Header.Get("Content-Type")
	}
	return &m, nil
}

// imageManifest returns the image manifest for ref, choosing this
// machine's linux platform from an index or manifest list.
func (s *session) imageManifest(ctx context.Context, repo, ref string) (*manifest, error) {
	m, err := s.fetchManifest(ctx, repo, ref)
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) == 0 {
		return m, nil
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == runtime.GOARCH {
			if !validDigest(d.Digest) { // it goes into the URL's path
				return nil, fmt.Errorf("get manifest %s:%s: the index names %q, not a digest", repo, ref, d.Digest)
			}
			return s.fetchManifest(ctx, repo, d.Digest)
		}
	}
	return nil, fmt.Errorf("get manifest %s:%s: no linux/%s image in the index", repo, ref, runtime.GOARCH)
}

// fetchBlob downloads the blob d, checks its digest and returns its size.
// A digest that is not sha256 or sha512 cannot be checked and is refused
// before anything is fetched, as podman refuses it: otherwise a registry
// could count any bytes as the image.
func (s *session) fetchBlob(ctx context.Context, repo string, d descriptor) (int64, error) {
	var h hash.Hash
	switch algo, _, _ := strings.Cut(d.Digest, ":"); {
	case !validDigest(d.Digest):
		return 0, fmt.Errorf("get blob %s@%s: not a digest", repo, d.Digest)
	case algo == "sha256":
		h = sha256.New()
	case algo == "sha512":
		h = sha512.New()
	default:
		return 0, fmt.Errorf("get blob %s@%s: unsupported digest algorithm %s", repo, d.Digest, algo)
	}
	resp, err := s.get(ctx, "/v2/"+repo+"/blobs/"+d.Digest, "")
	if err != nil {
		return 0, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("get blob %s@%s: %s", repo, d.Digest, resp.Status)
	}
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		return n, fmt.Errorf("get blob %s@%s: %w", repo, d.Digest, err)
	}
	if _, want, _ := strings.Cut(d.Digest, ":"); hex.EncodeToString(h.Sum(nil)) != want {
		return n, fmt.Errorf("get blob %s@%s: content does not match its digest", repo, d.Digest)
	}
	return n, nil
}

// drain reads what is left of a response body (so the connection can be
// reused) and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
