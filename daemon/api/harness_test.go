package api_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/assisted/assistedtest"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// The tests in this package run the real stack: a SQLite store in a temp
// dir, the embedded assisted service with its monitor off, and the API
// handler with token checks, served over loopback HTTP.

const pullSecret = `{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`

// harness is one running service.
type harness struct {
	store   *store.Store
	svc     *assisted.Service
	logsDir string // where uploaded log bundles go
	handler http.Handler
	srv     *httptest.Server
	key     *ecdsa.PrivateKey

	// Valid day-1 tokens, one per scheme.
	tokens map[auth.Scheme]string
	// client carries all three tokens.
	client *wire.Client
	close  func()
}

// newHarness starts a service in a temp dir of tb and stops it at cleanup.
func newHarness(tb testing.TB) *harness {
	tb.Helper()
	h, err := startHarness(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.close)
	return h
}

// startHarness starts a service whose store lives in dir. The ?wait= cap
// is one millisecond, so a long-poll from a test or a fuzz input never
// holds a request for long.
func startHarness(dir string) (*harness, error) {
	return startHarnessWith(dir, nil, nil)
}

// startHarnessWith is startHarness with the service's config changed by mod
// and the API's handler wrapped by wrap (either may be nil).
func startHarnessWith(dir string, mod func(*assisted.Config), wrap func(http.Handler) http.Handler) (*harness, error) {
	st, err := store.Open(context.Background(), filepath.Join(dir, "nodezero.db"), store.Options{})
	if err != nil {
		return nil, fmt.Errorf("store.Open: %w", err)
	}
	cfg := assisted.Config{Store: st, MonitorInterval: -1, MaxWait: time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	svc, err := assisted.New(cfg)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("assisted.New: %w", err)
	}
	h := &harness{store: st, svc: svc, logsDir: filepath.Join(dir, "logs"), tokens: map[auth.Scheme]string{}}
	h.srv = httptest.NewUnstartedServer(nil)
	h.close = func() {
		h.srv.Close()
		svc.Close()
		st.Close() // a test may have closed it already; a second Close is harmless
	}
	if h.key, err = auth.GenerateKey(); err != nil {
		h.close()
		return nil, err
	}
	for _, s := range auth.Schemes {
		if h.tokens[s], err = auth.Sign(h.key, s, time.Time{}); err != nil {
			h.close()
			return nil, err
		}
	}
	h.handler = api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(&h.key.PublicKey, nil), LogsDir: h.logsDir, MaxLogsSize: testMaxLogsSize})
	h.srv.Config.Handler = h.handler
	if wrap != nil {
		h.srv.Config.Handler = wrap(h.handler)
	}
	h.srv.Start()
	h.client, err = wire.NewClient(h.srv.URL, wire.WithAgentToken(h.tokens[auth.Agent]),
		wire.WithUserToken(h.tokens[auth.User]), wire.WithWatcherToken(h.tokens[auth.Watcher]),
		wire.WithHTTPClient(h.srv.Client()))
	if err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// testMaxLogsSize is the harness's bound on an uploaded log bundle: small,
// so the oversize case sends little.
const testMaxLogsSize = 1 << 20

func signToken(tb testing.TB, key *ecdsa.PrivateKey, s auth.Scheme, exp time.Time) string {
	tb.Helper()
	tok, err := auth.Sign(key, s, exp)
	if err != nil {
		tb.Fatalf("Sign(%s): %v", s, err)
	}
	return tok
}

// fixture is a cluster with one custom manifest (manifests/fixture.yaml),
// an infra-env bound to it and one registered host.
type fixture struct {
	clusterID, infraEnvID, hostID string
}

func (h *harness) newFixture(tb testing.TB) fixture {
	tb.Helper()
	f, err := h.makeFixture()
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func (h *harness) makeFixture() (fixture, error) {
	ctx := context.Background()
	c, err := h.client.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "fixture", OpenshiftVersion: "4.18", PullSecret: pullSecret, BaseDNSDomain: "example.com",
	})
	if err != nil {
		return fixture{}, fmt.Errorf("RegisterCluster: %w", err)
	}
	cid := c.ID
	ie, err := h.client.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: "fixture", PullSecret: pullSecret, ClusterID: &cid})
	if err != nil {
		return fixture{}, fmt.Errorf("RegisterInfraEnv: %w", err)
	}
	hostID := uuid.NewString()
	if _, err := h.client.RegisterHost(ctx, ie.ID, wire.HostCreateParams{HostID: hostID}); err != nil {
		return fixture{}, fmt.Errorf("RegisterHost: %w", err)
	}
	if _, err := h.client.CreateClusterManifest(ctx, cid, wire.CreateManifestParams{FileName: fixtureManifest, Content: fixtureManifestB64}); err != nil {
		return fixture{}, fmt.Errorf("CreateClusterManifest: %w", err)
	}
	return fixture{clusterID: cid, infraEnvID: ie.ID, hostID: hostID}, nil
}

// The fixture's manifest, in folder "manifests": "kind: ConfigMap\n".
const (
	fixtureManifest    = "fixture.yaml"
	fixtureManifestB64 = "a2luZDogQ29uZmlnTWFwCg=="
)

// path fills a route pattern's parameters with the fixture's ids.
func (f fixture) path(pattern string) string {
	return strings.NewReplacer("{cluster_id}", f.clusterID, "{infra_env_id}", f.infraEnvID, "{host_id}", f.hostID).Replace(pattern)
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request over HTTP to the served handler, with headers set
// as given.
func (h *harness) do(tb testing.TB, method, path, body string, headers map[string]string) response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		tb.Fatalf("NewRequest %s %s: %v", method, path, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// user sends a request with the user token, the one most routes take.
func (h *harness) user(tb testing.TB, method, path, body string) response {
	tb.Helper()
	return h.do(tb, method, path, body, map[string]string{"Authorization": h.tokens[auth.User]})
}

// agent sends a request with the agent token.
func (h *harness) agent(tb testing.TB, method, path, body string) response {
	tb.Helper()
	return h.do(tb, method, path, body, map[string]string{"X-Secret-Key": h.tokens[auth.Agent]})
}

// serve runs one request through the handler in-process (fuzz targets:
// no socket per input, and a raw query string the client would refuse).
func (h *harness) serve(method, path, rawQuery string, body []byte, headers map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.URL.RawQuery = rawQuery
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	return rec
}

// checkErrorBody asserts body is assisted-service's "error" definition for
// status: exactly the keys code, href, id, kind, reason, with kind Error,
// id the status and code its decimal text. It returns the reason.
func checkErrorBody(tb testing.TB, status int, header http.Header, body []byte) string {
	tb.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("error %d: Content-Type = %q, want application/json", status, ct)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		tb.Fatalf("error %d: body %q is not a JSON object: %v", status, body, err)
	}
	got := make([]string, 0, len(keys))
	for k := range keys {
		got = append(got, k)
	}
	sort.Strings(got)
	if want := "code,href,id,kind,reason"; strings.Join(got, ",") != want {
		tb.Errorf("error %d: body keys = %v, want %s (body %s)", status, got, want, body)
	}
	var e wire.Error
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		tb.Fatalf("error %d: body %s does not decode as wire.Error: %v", status, body, err)
	}
	if e.Kind != wire.ErrorKindError || int(e.ID) != status || e.Code != strconv.Itoa(status) || e.Reason == "" {
		tb.Errorf("error %d: body = %+v, want kind Error, id %d, code %q and a reason", status, e, status, strconv.Itoa(status))
	}
	return e.Reason
}

// checkInfraErrorBody asserts body is the "infra_error" definition for
// status: {"code":<status>,"message":"..."} and nothing else.
func checkInfraErrorBody(tb testing.TB, status int, header http.Header, body []byte) {
	tb.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("infra error %d: Content-Type = %q, want application/json", status, ct)
	}
	var e wire.InfraError
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		tb.Fatalf("infra error %d: body %s does not decode as wire.InfraError: %v", status, body, err)
	}
	if int(e.Code) != status || e.Message == "" {
		tb.Errorf("infra error %d: body = %+v, want code %d and a message", status, e, status)
	}
}

// checkHealthy asserts the daemon still answers /health.
func (h *harness) checkHealthy(tb testing.TB) {
	tb.Helper()
	if r := h.do(tb, "GET", "/health", "", nil); r.status != http.StatusOK {
		tb.Fatalf("GET /health = %d %s, want 200", r.status, r.body)
	}
}

// inventoryJSON is a host's inventory as the agent sends it (shape of
// docs/reference/agent-protocol-transcript.md §3), large enough for any role.
const inventoryJSON = `{"bmc_address":"0.0.0.0","bmc_v6address":"::/0",` +
	`"boot":{"current_boot_mode":"uefi"},` +
	`"cpu":{"architecture":"x86_64","count":8,"flags":["fpu","vmx"],"model_name":"test cpu"},` +
	`"disks":[{"drive_type":"SSD","id":"/dev/vda","installation_eligibility":{"eligible":true},` +
	`"name":"vda","path":"/dev/vda","size_bytes":274877906944}],` +
	`"hostname":"node-0",` +
	`"interfaces":[{"flags":["up","broadcast","multicast","running"],"ipv4_addresses":["192.168.111.10/24"],` +
	`"mac_address":"52:54:00:aa:bb:01","mtu":1500,"name":"eth0","type":"physical","has_carrier":true}],` +
	`"memory":{"physical_bytes":34359738368,"usable_bytes":34359738368},` +
	`"routes":[{"destination":"0.0.0.0","family":2,"gateway":"192.168.111.1","interface":"eth0"}],` +
	`"system_vendor":{"manufacturer":"test","product_name":"test","virtual":true},"tpm_version":"none"}`

// inventoryReply is a step reply carrying inventoryJSON.
func inventoryReply() string {
	b, _ := json.Marshal(wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-00000001", Output: inventoryJSON})
	return string(b)
}

// domainReply is a domain-resolution reply for cluster c as healthy agents
// give it (assistedtest.Resolutions).
func domainReply(c *wire.Cluster) string {
	out, _ := json.Marshal(assistedtest.Resolutions(c))
	b, _ := json.Marshal(wire.StepReply{StepType: wire.StepTypeDomainResolution, StepID: "domain-resolution-00000001", Output: string(out)})
	return string(b)
}
