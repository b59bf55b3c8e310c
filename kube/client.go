package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Client talks to one Kubernetes API with one set of credentials. It is
// safe for concurrent use.
type Client struct {
	server string
	token  string
	hc     *http.Client
}

// Option changes a Client.
type Option func(*Client)

// WithTimeout bounds each request (30 s by default).
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.hc.Timeout = d } }

// NewClient makes a client from a Config: TLS 1.2 or later, the serving
// certificate verified against CAData (for TLSServerName when set), the
// client certificate presented, never a proxy.
func NewClient(cfg *Config, opts ...Option) (*Client, error) {
	if cfg == nil || cfg.Server == "" {
		return nil, errors.New("kube client: no server")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CAData) {
		return nil, errors.New("kube client: the CA data holds no PEM certificate")
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: cfg.TLSServerName}
	if len(cfg.CertData) > 0 {
		kp, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
		if err != nil {
			return nil, fmt.Errorf("kube client: client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{kp}
	}
	tr := &http.Transport{
		Proxy:               nil, // never the environment's proxy: the API is named by the kubeconfig alone
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	c := &Client{server: strings.TrimSuffix(cfg.Server, "/"), token: cfg.Token, hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Server is the API's URL.
func (c *Client) Server() string { return c.server }

// Close drops the client's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Sentinels an *APIError matches with errors.Is, by HTTP status.
var (
	ErrNotFound      = errors.New("not found")                // 404
	ErrConflict      = errors.New("conflict")                 // 409, reason Conflict
	ErrAlreadyExists = errors.New("already exists")           // 409, reason AlreadyExists
	ErrUnauthorized  = errors.New("unauthorized")             // 401
	ErrForbidden     = errors.New("forbidden")                // 403
	ErrUnavailable   = errors.New("the api is not available") // 429, 502, 503, 504
)

// APIError is an answer other than 2xx, with the Status object's reason
// and message when the API sent one.
type APIError struct {
	Method, Path string
	StatusCode   int
	Reason       string // Status.reason: NotFound, AlreadyExists, Conflict, Unauthorized…
	Message      string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.StatusCode, msg)
}

// Is matches the sentinels above.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrConflict:
		return e.StatusCode == http.StatusConflict && e.Reason != "AlreadyExists"
	case ErrAlreadyExists:
		return e.StatusCode == http.StatusConflict && e.Reason == "AlreadyExists"
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrUnavailable:
		switch e.StatusCode {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
	}
	return false
}

// maxBody bounds an answer read into memory.
const maxBody = 32 << 20

// Do sends a request to path (absolute, e.g. /apis/config.openshift.io/v1/
// clusterversions) with in as its JSON body (nil: none) and decodes a 2xx
// answer into out (nil: drop it). Other answers are *APIError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("User-Agent", "nodezero")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &APIError{Method: method, Path: path, StatusCode: resp.StatusCode}
		var st struct {
			Kind    string `json:"kind"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
			e.Reason, e.Message = st.Reason, st.Message
		} else if s := strings.TrimSpace(string(b)); len(s) > 0 && len(s) < 512 {
			e.Message = s
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// Ready returns nil once the API answers /readyz with "ok".
func (c *Client) Ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+"/readyz", nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "ok" {
		return &APIError{Method: http.MethodGet, Path: "/readyz", StatusCode: resp.StatusCode, Message: strings.TrimSpace(string(b))}
	}
	return nil
}

// call does one request whose answer is a T.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (*T, error) {
	var out T
	if err := c.Do(ctx, method, path, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// list reads a collection's items (an empty list is [], never nil).
func list[T any](ctx context.Context, c *Client, path string) ([]T, error) {
	var l struct {
		Items []T `json:"items"`
	}
	if err := c.Do(ctx, http.MethodGet, path, nil, &l); err != nil {
		return nil, err
	}
	if l.Items == nil {
		l.Items = []T{}
	}
	return l.Items, nil
}
