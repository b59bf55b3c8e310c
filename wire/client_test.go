package wire

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testInfraEnv = "16618ffc-1111-4222-8333-444455556666"
	testHost     = "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03"
	testCluster  = "3fc2fd22-aaaa-4bbb-8ccc-ddddeeeeffff"
	testVersion  = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000"
	testToken    = "eyJhbGciOiJFUzI1NiJ9.eyJhdXRoX3NjaGVtZSI6ImFnZW50QXV0aCJ9.sig"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// seen is one request as the server received it.
type seen struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// recorder is the remote service: it records requests and answers each with
// status and body.
type recorder struct {
	mu     sync.Mutex
	reqs   []seen
	status int
	body   string
	delay  time.Duration
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, seen{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), b})
	status, body, delay := rec.status, rec.body, rec.delay
	rec.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (rec *recorder) last(t *testing.T) seen {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("server received no request")
	}
	return rec.reqs[len(rec.reqs)-1]
}

func newServer(t *testing.T, status int, body string) (*recorder, *httptest.Server) {
	t.Helper()
	rec := &recorder{status: status, body: body}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv
}

func newTestClient(t *testing.T, url string, opts ...ClientOption) *Client {
	t.Helper()
	c, err := NewClient(url, opts...)
	if err != nil {
		t.Fatalf("NewClient(%q) = %v", url, err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func bodyMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body %q is not a JSON object: %v", b, err)
	}
	return m
}

// The register response recorded in transcript §1.1 (ids shortened there,
// completed here).
const registerResponse = `{"checked_in_at":"2026-11-22T04:56:26.208Z","cluster_id":"3fc2fd22-aaaa-4bbb-8ccc-ddddeeeeffff","created_at":"0001-01-01T00:00:00Z","deleted_at":null,
 "discovery_agent_version":"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000","href":"/api/assisted-install/v2/infra-envs/16618ffc-1111-4222-8333-444455556666/hosts/5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03",
 "id":"5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03","infra_env_id":"16618ffc-1111-4222-8333-444455556666","kind":"Host",
 "logs_collected_at":"0001-01-01T00:00:00.000Z","logs_started_at":"0001-01-01T00:00:00.000Z",
 "next_step_runner_command":{"args":["{\"agent_version\":\"quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000\",\"host_id\":\"5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03\",\"infra_env_id\":\"16618ffc-1111-4222-8333-444455556666\"}"]},
 "progress_stages":[],"registered_at":"2026-11-22T04:56:26.208Z","requested_hostname":"5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03",
 "role":"auto-assign","stage_started_at":"0001-01-01T00:00:00.000Z","stage_updated_at":"0001-01-01T00:00:00.000Z",
 "status":null,"status_info":null,"status_updated_at":"0001-01-01T00:00:00.000Z",
 "suggested_role":"auto-assign","updated_at":"0001-01-01T00:00:00Z","user_name":"admin"}`

func TestRegisterHostWire(t *testing.T) {
	rec, srv := newServer(t, http.StatusCreated, registerResponse)
	c := newTestClient(t, srv.URL+"/", WithAgentToken(testToken), WithAgentVersion(testVersion))

	got, err := c.RegisterHost(context.Background(), testInfraEnv, HostCreateParams{HostID: testHost, DiscoveryAgentVersion: testVersion})
	if err != nil {
		t.Fatalf("RegisterHost() = %v", err)
	}
	req := rec.last(t)
	if want := "/api/assisted-install/v2/infra-envs/" + testInfraEnv + "/hosts"; req.Method != http.MethodPost || req.Path != want {
		t.Errorf("request = %s %s, want POST %s", req.Method, req.Path, want)
	}
	if req.RawQuery != "" {
		t.Errorf("query = %q, want none", req.RawQuery)
	}
	wantBody := map[string]any{"host_id": testHost, "discovery_agent_version": testVersion}
	if diff := cmp.Diff(wantBody, bodyMap(t, req.Body)); diff != "" {
		t.Errorf("register body mismatch (-want +got):\n%s", diff)
	}
	if got.NextStepRunnerCommand == nil || len(got.NextStepRunnerCommand.Args) != 1 {
		t.Fatalf("next_step_runner_command = %+v, want one arg", got.NextStepRunnerCommand)
	}
	var cmd NextStepCmdRequest
	if err := DecodeEmbedded(got.NextStepRunnerCommand.Args[0], &cmd); err != nil {
		t.Fatal(err)
	}
	want := NextStepCmdRequest{InfraEnvID: testInfraEnv, HostID: testHost, AgentVersion: testVersion}
	if cmd != want {
		t.Errorf("next step command = %+v, want %+v", cmd, want)
	}
	if got.ID != testHost || got.Status != "" || got.Role != HostRoleAutoAssign {
		t.Errorf("host = id %q status %q role %q, want %q, null status, auto-assign", got.ID, got.Status, got.Role, testHost)
	}
}

// TestAgentHeaders pins the headers of the three agent calls (transcript §1).
func TestAgentHeaders(t *testing.T) {
	rec, srv := newServer(t, http.StatusOK, `{}`)
	c := newTestClient(t, srv.URL, WithAgentToken(testToken), WithAgentVersion(testVersion))
	ctx := WithRequestID(context.Background(), "0d5cbd4c-70c6-4c8e-9d8f-9d0a3c1b2a11")

	calls := []struct {
		name        string
		call        func() error
		contentType string
	}{
		{"register", func() error {
			_, err := c.RegisterHost(ctx, testInfraEnv, HostCreateParams{HostID: testHost})
			return err
		}, "application/json"},
		{"next steps", func() error {
			_, err := c.NextSteps(ctx, testInfraEnv, testHost, 1795323446, 0)
			return err
		}, ""},
		{"step reply", func() error {
			return c.PostStepReply(ctx, testInfraEnv, testHost, StepReply{StepType: StepTypeInventory, StepID: "inventory-e3a3cd99", Output: "{}"})
		}, "application/json"},
	}
	for _, tc := range calls {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); err != nil {
				t.Fatal(err)
			}
			h := rec.last(t).Header
			want := map[string]string{
				"X-Secret-Key":            testToken,
				"Discovery_agent_version": testVersion,
				"X-Request-Id":            "0d5cbd4c-70c6-4c8e-9d8f-9d0a3c1b2a11",
				"Accept":                  "application/json",
				"Content-Type":            tc.contentType,
				"Authorization":           "",
				"Watcher-Authorization":   "",
			}
			for k, v := range want {
				// The raw map key, not Get: Go's canonical form is what the
				// real service received ("Discovery_agent_version").
				if got := strings.Join(h[k], ","); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestRequestIDPerRequestWithoutSession(t *testing.T) {
	rec, srv := newServer(t, http.StatusOK, `[]`)
	c := newTestClient(t, srv.URL)
	for range 2 {
		if _, err := c.ListClusters(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	a, b := rec.reqs[0].Header.Get("X-Request-Id"), rec.reqs[1].Header.Get("X-Request-Id")
	if !uuidRE.MatchString(a) || !uuidRE.MatchString(b) || a == b {
		t.Errorf("request ids = %q, %q, want two different v4 UUIDs", a, b)
	}
}

func TestAuthSchemes(t *testing.T) {
	tests := []struct {
		name   string
		opt    ClientOption
		header string
	}{
		{"agent", WithAgentToken("tok-a"), "X-Secret-Key"},
		{"user", WithUserToken("tok-u"), "Authorization"},
		{"watcher", WithWatcherToken("tok-w"), "Watcher-Authorization"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := newServer(t, http.StatusOK, `[]`)
			c := newTestClient(t, srv.URL, tc.opt)
			if _, err := c.ListClusters(context.Background()); err != nil {
				t.Fatal(err)
			}
			h := rec.last(t).Header
			for _, name := range []string{"X-Secret-Key", "Authorization", "Watcher-Authorization"} {
				got := h.Get(name)
				if name == tc.header {
					if want := "tok-" + tc.name[:1]; got != want {
						t.Errorf("%s = %q, want raw token %q (no Bearer)", name, got, want)
					}
				} else if got != "" {
					t.Errorf("%s = %q, want absent", name, got)
				}
			}
		})
	}
}

func TestNextStepsQuery(t *testing.T) {
	tests := []struct {
		name string
		wait time.Duration
		want url.Values
	}{
		{"plain assisted polling", 0, url.Values{"timestamp": {"1795323446"}}},
		{"long poll", 30 * time.Second, url.Values{"timestamp": {"1795323446"}, "wait": {"30s"}}},
		{"long poll minutes", 90 * time.Second, url.Values{"timestamp": {"1795323446"}, "wait": {"1m30s"}}},
	}
	steps := `{"instructions":[{"args":["5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03"],"step_id":"inventory-e3a3cd99","step_type":"inventory"}],"next_instruction_seconds":60,"post_step_action":"continue"}`
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := newServer(t, http.StatusOK, steps)
			c := newTestClient(t, srv.URL)
			got, err := c.NextSteps(context.Background(), testInfraEnv, testHost, 1795323446, tc.wait)
			if err != nil {
				t.Fatal(err)
			}
			req := rec.last(t)
			q, _ := url.ParseQuery(req.RawQuery)
			if diff := cmp.Diff(tc.want, q); diff != "" {
				t.Errorf("query mismatch (-want +got):\n%s", diff)
			}
			if want := "/api/assisted-install/v2/infra-envs/" + testInfraEnv + "/hosts/" + testHost + "/instructions"; req.Method != http.MethodGet || req.Path != want {
				t.Errorf("request = %s %s, want GET %s", req.Method, req.Path, want)
			}
			if len(req.Body) != 0 {
				t.Errorf("GET body = %q, want none", req.Body)
			}
			want := &Steps{NextInstructionSeconds: 60, PostStepAction: StepsPostStepActionContinue,
				Instructions: []*Step{{StepType: StepTypeInventory, StepID: "inventory-e3a3cd99", Args: []string{testHost}}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("steps mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPostStepReplyOmitsZeroFields(t *testing.T) {
	vipsOut := `[{"verification":"succeeded","vip":"192.168.111.5","vip_type":"api"}]`
	tests := []struct {
		name  string
		reply StepReply
		want  map[string]any
	}{
		{"success has no exit_code or error", StepReply{StepType: StepTypeVerifyVIPs, StepID: "verify-vips-a6084f12", Output: vipsOut},
			map[string]any{"step_type": "verify-vips", "step_id": "verify-vips-a6084f12", "output": vipsOut}},
		{"failure has no output", StepReply{StepType: StepTypeNTPSynchronizer, StepID: "ntp-synchronizer-7f46163a", ExitCode: -1, Error: "chronyc exited"},
			map[string]any{"step_type": "ntp-synchronizer", "step_id": "ntp-synchronizer-7f46163a", "exit_code": float64(-1), "error": "chronyc exited"}},
		{"stderr kept on success", StepReply{StepType: StepTypeInventory, StepID: "inventory-1", Output: "{}", Error: "WARN: x"},
			map[string]any{"step_type": "inventory", "step_id": "inventory-1", "output": "{}", "error": "WARN: x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := newServer(t, http.StatusNoContent, "")
			c := newTestClient(t, srv.URL)
			if err := c.PostStepReply(context.Background(), testInfraEnv, testHost, tc.reply); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, bodyMap(t, rec.last(t).Body)); diff != "" {
				t.Errorf("reply body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEndpoints pins method, path and query of every user-facing call
// against assisted-service-swagger.yaml.
func TestEndpoints(t *testing.T) {
	ctx := context.Background()
	api := "/api/assisted-install/v2"
	tests := []struct {
		name         string
		status       int
		body         string
		call         func(c *Client) error
		method, path string
		query        url.Values
		reqBody      bool
	}{
		{"RegisterCluster", 201, `{"id":"` + testCluster + `"}`, func(c *Client) error {
			_, err := c.RegisterCluster(ctx, ClusterCreateParams{Name: "tx", OpenshiftVersion: "4.18"})
			return err
		}, "POST", api + "/clusters", nil, true},
		{"ListClusters", 200, `[]`, func(c *Client) error { _, err := c.ListClusters(ctx); return err }, "GET", api + "/clusters", nil, false},
		{"GetCluster", 200, `{}`, func(c *Client) error { _, err := c.GetCluster(ctx, testCluster); return err }, "GET", api + "/clusters/" + testCluster, nil, false},
		{"UpdateCluster", 201, `{}`, func(c *Client) error {
			_, err := c.UpdateCluster(ctx, testCluster, V2ClusterUpdateParams{})
			return err
		}, "PATCH", api + "/clusters/" + testCluster, nil, true},
		{"InstallCluster", 202, `{}`, func(c *Client) error { _, err := c.InstallCluster(ctx, testCluster); return err }, "POST", api + "/clusters/" + testCluster + "/actions/install", nil, false},
		{"CancelInstallation", 202, `{}`, func(c *Client) error { _, err := c.CancelInstallation(ctx, testCluster); return err }, "POST", api + "/clusters/" + testCluster + "/actions/cancel", nil, false},
		{"ResetCluster", 202, `{}`, func(c *Client) error { _, err := c.ResetCluster(ctx, testCluster); return err }, "POST", api + "/clusters/" + testCluster + "/actions/reset", nil, false},
		{"DeregisterCluster", 204, ``, func(c *Client) error { return c.DeregisterCluster(ctx, testCluster) }, "DELETE", api + "/clusters/" + testCluster, nil, false},
		{"RegisterInfraEnv", 201, `{}`, func(c *Client) error {
			_, err := c.RegisterInfraEnv(ctx, InfraEnvCreateParams{Name: "tx"})
			return err
		}, "POST", api + "/infra-envs", nil, true},
		{"ListInfraEnvs", 200, `[]`, func(c *Client) error { _, err := c.ListInfraEnvs(ctx, ""); return err }, "GET", api + "/infra-envs", nil, false},
		{"ListInfraEnvs of cluster", 200, `[]`, func(c *Client) error { _, err := c.ListInfraEnvs(ctx, testCluster); return err }, "GET", api + "/infra-envs", url.Values{"cluster_id": {testCluster}}, false},
		{"DeregisterInfraEnv", 204, ``, func(c *Client) error { return c.DeregisterInfraEnv(ctx, testInfraEnv) }, "DELETE", api + "/infra-envs/" + testInfraEnv, nil, false},
		{"GetInfraEnv", 200, `{}`, func(c *Client) error { _, err := c.GetInfraEnv(ctx, testInfraEnv); return err }, "GET", api + "/infra-envs/" + testInfraEnv, nil, false},
		{"UpdateInfraEnv", 201, `{}`, func(c *Client) error {
			_, err := c.UpdateInfraEnv(ctx, testInfraEnv, InfraEnvUpdateParams{})
			return err
		}, "PATCH", api + "/infra-envs/" + testInfraEnv, nil, true},
		{"ListHosts", 200, `[]`, func(c *Client) error { _, err := c.ListHosts(ctx, testInfraEnv); return err }, "GET", api + "/infra-envs/" + testInfraEnv + "/hosts", nil, false},
		{"GetHost", 200, `{}`, func(c *Client) error { _, err := c.GetHost(ctx, testInfraEnv, testHost); return err }, "GET", api + "/infra-envs/" + testInfraEnv + "/hosts/" + testHost, nil, false},
		{"UpdateHost", 201, `{}`, func(c *Client) error {
			name := "master-0"
			_, err := c.UpdateHost(ctx, testInfraEnv, testHost, HostUpdateParams{HostName: &name})
			return err
		}, "PATCH", api + "/infra-envs/" + testInfraEnv + "/hosts/" + testHost, nil, true},
		{"DeregisterHost", 204, ``, func(c *Client) error { return c.DeregisterHost(ctx, testInfraEnv, testHost) }, "DELETE", api + "/infra-envs/" + testInfraEnv + "/hosts/" + testHost, nil, false},
		{"UpdateHostInstallProgress", 200, ``, func(c *Client) error {
			return c.UpdateHostInstallProgress(ctx, testInfraEnv, testHost, HostProgress{CurrentStage: HostStageWritingImageToDisk})
		}, "PUT", api + "/infra-envs/" + testInfraEnv + "/hosts/" + testHost + "/progress", nil, true},
		{"ListEvents", 200, `[]`, func(c *Client) error {
			_, err := c.ListEvents(ctx, EventsQuery{ClusterID: testCluster, HostIDs: []string{testHost, "h2"}, InfraEnvID: testInfraEnv,
				Severities: []EventSeverity{EventSeverityWarning, EventSeverityError}, Limit: 50, Offset: 10})
			return err
		}, "GET", api + "/events", url.Values{"cluster_id": {testCluster}, "host_ids": {testHost + ",h2"}, "infra_env_id": {testInfraEnv},
			"severities": {"warning,error"}, "limit": {"50"}, "offset": {"10"}}, false},
		{"ListEvents no filter", 200, `[]`, func(c *Client) error { _, err := c.ListEvents(ctx, EventsQuery{}); return err }, "GET", api + "/events", nil, false},
		{"Health", 200, ``, func(c *Client) error { return c.Health(ctx) }, "GET", "/health", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, srv := newServer(t, tc.status, tc.body)
			c := newTestClient(t, srv.URL, WithUserToken("tok"))
			if err := tc.call(c); err != nil {
				t.Fatalf("call = %v", err)
			}
			req := rec.last(t)
			if req.Method != tc.method || req.Path != tc.path {
				t.Errorf("request = %s %s, want %s %s", req.Method, req.Path, tc.method, tc.path)
			}
			q, _ := url.ParseQuery(req.RawQuery)
			if len(q) == 0 {
				q = nil
			}
			if diff := cmp.Diff(tc.query, q); diff != "" {
				t.Errorf("query mismatch (-want +got):\n%s", diff)
			}
			if gotBody := len(req.Body) > 0; gotBody != tc.reqBody {
				t.Errorf("request body %q present = %v, want %v", req.Body, gotBody, tc.reqBody)
			}
			if ct := req.Header.Get("Content-Type"); (ct == "application/json") != tc.reqBody {
				t.Errorf("Content-Type = %q with body = %v", ct, tc.reqBody)
			}
		})
	}
}

func TestBaseURLPrefixAndHealth(t *testing.T) {
	rec, srv := newServer(t, http.StatusOK, `{}`)
	c := newTestClient(t, srv.URL+"/proxy/")
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetHost(context.Background(), "a b", "c/d"); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.reqs[0].Path, "/proxy/health"; got != want {
		t.Errorf("health path = %q, want %q", got, want)
	}
	if got, want := rec.reqs[1].Path, "/proxy/api/assisted-install/v2/infra-envs/a%20b/hosts/c%2Fd"; got != want {
		t.Errorf("path = %q, want ids escaped: %q", got, want)
	}
}

func TestResponseSizeLimit(t *testing.T) {
	_, srv := newServer(t, http.StatusOK, `["`+strings.Repeat("x", 2000)+`"]`)
	c := newTestClient(t, srv.URL)
	c.maxBody = 1024
	_, err := c.ListClusters(context.Background())
	if !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("ListClusters() = %v, want ErrResponseTooLarge", err)
	}
}

func TestNextStepsTimeoutExtendedByWait(t *testing.T) {
	rec, srv := newServer(t, http.StatusOK, `{}`)
	rec.delay = 150 * time.Millisecond
	c := newTestClient(t, srv.URL, WithRequestTimeout(50*time.Millisecond))
	if _, err := c.NextSteps(context.Background(), testInfraEnv, testHost, 1, time.Second); err != nil {
		t.Errorf("NextSteps(wait 1s) with a 150ms answer = %v, want success", err)
	}
	if _, err := c.GetHost(context.Background(), testInfraEnv, testHost); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("GetHost with a 150ms answer and 50ms timeout = %v, want deadline exceeded", err)
	}
}

func TestTLS(t *testing.T) {
	srv := httptest.NewTLSServer(&recorder{status: http.StatusOK, body: `[]`})
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		opts   []ClientOption
		wantOK bool
	}{
		{"unknown authority", nil, false},
		{"insecure", []ClientOption{WithInsecure(true)}, true},
		{"ca file", []ClientOption{WithCACertFile(caFile)}, true},
		// httptest's certificate names 127.0.0.1, ::1 and example.com.
		{"server name in the certificate", []ClientOption{WithCACertFile(caFile), WithTLSServerName("example.com")}, true},
		{"server name not in the certificate", []ClientOption{WithCACertFile(caFile), WithTLSServerName("node-zero.invalid")}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, srv.URL, tc.opts...)
			_, err := c.ListClusters(context.Background())
			if (err == nil) != tc.wantOK {
				t.Errorf("ListClusters() = %v, want success %v", err, tc.wantOK)
			}
			var certErr *tls.CertificateVerificationError
			if err != nil && !errors.As(err, &certErr) {
				t.Errorf("ListClusters() = %v, want a certificate verification error", err)
			}
		})
	}
	if _, err := NewClient(srv.URL, WithCACertFile(filepath.Join(t.TempDir(), "missing.pem"))); err == nil {
		t.Error("NewClient with a missing CA file succeeded, want an error")
	}
}

func TestNewClientRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "192.168.111.80:8090", "ftp://host", "http://"} {
		if _, err := NewClient(u); err == nil {
			t.Errorf("NewClient(%q) succeeded, want an error", u)
		}
	}
}

// BenchmarkPostStepReply measures one agent reply round trip over loopback,
// client side included (encode, headers, 204).
func BenchmarkPostStepReply(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithAgentToken(testToken), WithAgentVersion(testVersion))
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	reply := StepReply{StepType: StepTypeInventory, StepID: "inventory-e3a3cd99", Output: strings.Repeat("x", 2400)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.PostStepReply(ctx, testInfraEnv, testHost, reply); err != nil {
			b.Fatal(err)
		}
	}
}
