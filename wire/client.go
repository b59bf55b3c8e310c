package wire

// The HTTP client for the assisted-service v2 API. The wire format (headers,
// query, bodies) follows docs/reference/agent-protocol-transcript.md §1, a
// recorded exchange between the real agent and the real service; the paths
// and status codes follow assisted-service's swagger.yaml (openshift/assisted-service).

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// APIBasePath is appended to a client's base URL (the swagger basePath
// /api/assisted-install plus the v2 prefix of every path).
const APIBasePath = "/api/assisted-install/v2"

// Header names. Go sends discovery_agent_version in its canonical form
// Discovery_agent_version; receivers match header names case-insensitively.
const (
	HeaderAgentToken   = "X-Secret-Key"          // agentAuth: the agent JWT, raw
	HeaderUserToken    = "Authorization"         // userAuth: the user JWT, raw, no "Bearer "
	HeaderWatcherToken = "Watcher-Authorization" // watcherAuth: the read-only JWT, raw
	HeaderAgentVersion = "discovery_agent_version"
	HeaderRequestID    = "X-Request-Id"
)

const (
	// DefaultRequestTimeout bounds one request when the caller's context has
	// no earlier deadline. NextSteps adds its wait on top.
	DefaultRequestTimeout = 60 * time.Second
	// MaxResponseBytes bounds a response body the client reads. A cluster
	// list with a thousand hosts and their inventories stays well below it.
	MaxResponseBytes = 32 << 20
	// maxErrorBytes bounds an error body.
	maxErrorBytes = 64 << 10
)

// ErrResponseTooLarge is returned when a response body exceeds the limit.
var ErrResponseTooLarge = errors.New("response body too large")

// Client talks to an assisted-service v2 API: node zero's embedded service or
// a real assisted-service. It is safe for concurrent use.
type Client struct {
	base string // scheme://host[:port][/prefix], no trailing slash
	http *http.Client

	agentToken, userToken, watcherToken string
	agentVersion                        string
	timeout                             time.Duration
	maxBody                             int64

	insecure   bool
	caFile     string
	serverName string
}

// ClientOption configures a Client.
type ClientOption func(*Client)

// WithAgentToken authenticates as an agent: header X-Secret-Key.
func WithAgentToken(token string) ClientOption { return func(c *Client) { c.agentToken = token } }

// WithUserToken authenticates as a user: header Authorization, raw JWT.
func WithUserToken(token string) ClientOption { return func(c *Client) { c.userToken = token } }

// WithWatcherToken authenticates as a watcher: header Watcher-Authorization.
func WithWatcherToken(token string) ClientOption {
	return func(c *Client) { c.watcherToken = token }
}

// WithAgentVersion sends the agent version (its image reference) in header
// discovery_agent_version on every request, as the real agent does.
func WithAgentVersion(version string) ClientOption {
	return func(c *Client) { c.agentVersion = version }
}

// WithInsecure skips TLS certificate verification (the agent's --insecure).
// It applies to the client's own transport, not to one given WithHTTPClient.
func WithInsecure(insecure bool) ClientOption { return func(c *Client) { c.insecure = insecure } }

// WithCACertFile trusts the PEM certificates in path in addition to the
// system pool (the agent's --cacert). It applies to the client's own transport.
func WithCACertFile(path string) ClientOption { return func(c *Client) { c.caFile = path } }

// WithTLSServerName checks the service's certificate against name instead
// of the URL's host: node zero reaches its own API over loopback while the
// certificate names the rendezvous IP. It applies to the client's own
// transport.
func WithTLSServerName(name string) ClientOption { return func(c *Client) { c.serverName = name } }

// WithHTTPClient replaces the HTTP client; WithInsecure, WithCACertFile and
// WithTLSServerName are then ignored.
func WithHTTPClient(hc *http.Client) ClientOption { return func(c *Client) { c.http = hc } }

// WithRequestTimeout replaces DefaultRequestTimeout; 0 means no timeout.
func WithRequestTimeout(d time.Duration) ClientOption { return func(c *Client) { c.timeout = d } }

// NewClient returns a client for the service at baseURL, e.g.
// "http://192.168.111.80:8090" (a trailing slash is allowed: the ABI's
// SERVICE_BASE_URL ends with one). APIBasePath is appended.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("new client: parse url %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("new client: url %q: want http(s)://host[:port]", baseURL)
	}
	u.RawQuery, u.Fragment = "", ""
	c := &Client{
		base:    strings.TrimRight(u.String(), "/"),
		timeout: DefaultRequestTimeout,
		maxBody: MaxResponseBytes,
	}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tlsConf, err := TLSConfig(c.caFile, c.serverName, c.insecure)
		if err != nil {
			return nil, fmt.Errorf("new client: %w", err)
		}
		tr.TLSClientConfig = tlsConf
		c.http = &http.Client{Transport: tr}
	}
	return c, nil
}

// TLSConfig is a client's TLS configuration: the system pool plus the PEM
// certificates in caFile (none when ""), the certificate checked against
// serverName instead of the URL's host when not "", and no check at all
// with insecure (the agent's --insecure, only on request). For callers
// that build their own transport.
func TLSConfig(caFile, serverName string, insecure bool) (*tls.Config, error) {
	conf := &tls.Config{InsecureSkipVerify: insecure, ServerName: serverName}
	if caFile != "" {
		pool, err := certPool(caFile)
		if err != nil {
			return nil, err
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// certPool returns the system pool plus the PEM certificates in path.
func certPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ca cert: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca cert %s: no PEM certificate found", path)
	}
	return pool, nil
}

// BaseURL returns the service URL the client was built with, without
// APIBasePath.
func (c *Client) BaseURL() string { return c.base }

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport, so a stopped caller leaves no goroutine behind.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

type requestIDKey struct{}

// WithRequestID returns a context whose requests carry id in X-Request-Id.
// The agent uses one id per session: a GET for instructions and the replies
// that follow from it (transcript §1, headers).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the id set by WithRequestID, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewRequestID returns a random (version 4) UUID.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// call is one API request.
type call struct {
	method string
	path   string     // under APIBasePath unless raw
	raw    bool       // path is relative to the base URL, not APIBasePath
	query  url.Values // may be nil
	body   any        // JSON-encoded when non-nil
	out    any        // JSON-decoded from a 2xx body when non-nil
	outRaw *[]byte    // a 2xx body as sent (a file download), when non-nil
	extra  time.Duration

	// rawBody is sent as it is, with header contentType, instead of body
	// (a multipart upload, streamed).
	rawBody     io.Reader
	contentType string
	// outWriter receives a 2xx body as it arrives, without the size limit
	// of outRaw (a large download).
	outWriter io.Writer
}

// do performs c and decodes the answer. A non-2xx answer is an *APIError.
func (c *Client) do(ctx context.Context, cl call) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout+cl.extra)
		defer cancel()
	}
	target := c.base + APIBasePath + cl.path
	if cl.raw {
		target = c.base + cl.path
	}
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	var body io.Reader
	if cl.rawBody != nil {
		body = cl.rawBody
	} else if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return err
	}
	if cl.outRaw != nil || cl.outWriter != nil {
		req.Header.Set("Accept", "application/octet-stream, application/json")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if cl.rawBody != nil {
		req.Header.Set("Content-Type", cl.contentType)
	} else if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.agentToken != "" {
		req.Header.Set(HeaderAgentToken, c.agentToken)
	}
	if c.userToken != "" {
		req.Header.Set(HeaderUserToken, c.userToken)
	}
	if c.watcherToken != "" {
		req.Header.Set(HeaderWatcherToken, c.watcherToken)
	}
	if c.agentVersion != "" {
		req.Header.Set(HeaderAgentVersion, c.agentVersion)
	}
	id := RequestID(ctx)
	if id == "" {
		id = NewRequestID()
	}
	req.Header.Set(HeaderRequestID, id)

	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
		return decodeAPIError(resp.StatusCode, b)
	}
	if cl.outWriter != nil {
		if _, err := io.Copy(cl.outWriter, resp.Body); err != nil {
			return fmt.Errorf("read response: %w", err)
		}
		return nil
	}
	if cl.out == nil && cl.outRaw == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if int64(len(b)) > c.maxBody {
		return fmt.Errorf("read response: %w (over %d bytes)", ErrResponseTooLarge, c.maxBody)
	}
	if cl.outRaw != nil {
		*cl.outRaw = b
		return nil
	}
	if err := json.Unmarshal(b, cl.out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}
