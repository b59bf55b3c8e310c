package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/auth"
)

// TestBodyLimitClasses pins the limit of the operations whose bodies are
// not small, so a renamed operation cannot fall back to SmallBody
// unnoticed.
func TestBodyLimitClasses(t *testing.T) {
	want := map[string]int64{
		"v2PostStepReply":              api.DefaultMaxBody,
		"V2CreateClusterManifest":      api.DefaultMaxBody,
		"V2UpdateClusterManifest":      api.DefaultMaxBody,
		"RegisterInfraEnv":             api.DefaultMaxBody,
		"UpdateInfraEnv":               api.DefaultMaxBody,
		"v2RegisterCluster":            api.MediumBody,
		"V2UpdateCluster":              api.MediumBody,
		"v2UpdateHost":                 api.MediumBody,
		"v2UpdateClusterInstallConfig": api.MediumBody,
		"v2RegisterHost":               api.SmallBody,
		"v2UpdateHostInstallProgress":  api.SmallBody,
		"V2CompleteInstallation":       api.SmallBody,
		"v2InstallCluster":             api.SmallBody,
	}
	seen := map[string]bool{}
	for _, rt := range api.Routes() {
		seen[rt.Operation] = true
		if w, ok := want[rt.Operation]; ok && rt.BodyLimit() != w {
			t.Errorf("%s: BodyLimit() = %d, want %d", rt.Operation, rt.BodyLimit(), w)
		}
		if rt.Operation == "V2UploadLogs" && rt.BodyLimit() <= api.DefaultMaxLogsSize {
			t.Errorf("V2UploadLogs: BodyLimit() = %d, want above the largest bundle, %d", rt.BodyLimit(), api.DefaultMaxLogsSize)
		}
	}
	for op := range want {
		if !seen[op] {
			t.Errorf("operation %s is not in the route table", op)
		}
	}
}

// testMaxBody is TestBodyLimits' Config.MaxBody: the large operations
// take it, the medium ones too (it is below MediumBody), so the test
// sends little.
const testMaxBody = 128 << 10

// TestBodyLimits sends every route the body the auth matrix sends, padded
// with JSON whitespace to exactly its limit: the route answers as it does
// without padding. One byte more is a 413 in assisted's error shape,
// whether Content-Length announces it or a chunked body reaches it, and
// the service's state is what it was. TestBodyLimitClasses checks the
// limits of the default Config.
func TestBodyLimits(t *testing.T) {
	h := newHarness(t)
	lim := httptest.NewServer(api.New(api.Config{
		Service: h.svc, Verifier: auth.NewVerifier(&h.key.PublicKey, nil),
		LogsDir: h.logsDir, MaxLogsSize: testMaxLogsSize, MaxBody: testMaxBody,
	}))
	t.Cleanup(lim.Close)
	for _, rt := range api.Routes() {
		if rt.Operation == "V2UploadLogs" {
			continue // its limit follows MaxLogsSize: logs_test.go
		}
		key := rt.Method + " " + rt.Pattern
		spec, ok := specs[key]
		if !ok {
			t.Fatalf("no routeSpec for %s", key)
		}
		t.Run(rt.Operation+"/"+rt.Method, func(t *testing.T) {
			f := h.newFixture(t)
			headers := map[string]string{}
			if len(rt.Schemes) > 0 {
				headers[rt.Schemes[0].Header()] = h.tokens[rt.Schemes[0]]
			}
			path := f.path(rt.Pattern)
			if spec.query != "" {
				path += "?" + spec.query
			}
			body := spec.body(f)
			limit := int64(testMaxBody)
			if rt.BodyLimit() == api.SmallBody {
				limit = api.SmallBody
			}

			before := h.state(t, f)
			over := body + strings.Repeat(" ", int(limit)-len(body)+1)
			if r := send(t, lim, rt.Method, path, over, false, headers); r.status != http.StatusRequestEntityTooLarge {
				t.Errorf("%d-byte body with Content-Length = %d %.200s, want 413", len(over), r.status, r.body)
			} else {
				checkLimitError(t, r)
			}
			// A route that takes no body never reads one: a chunked body
			// is not held, only drained or cut off by the server.
			if body != "" {
				r := send(t, lim, rt.Method, path, over, true, headers)
				if r.status != http.StatusRequestEntityTooLarge {
					t.Errorf("%d-byte chunked body = %d %.200s, want 413", len(over), r.status, r.body)
				} else {
					checkLimitError(t, r)
				}
			}
			if after := h.state(t, f); !bytes.Equal(after, before) {
				t.Errorf("state changed by refused bodies:\nbefore %.2000s\nafter  %.2000s", before, after)
			}

			if body == "" {
				return // nothing to pad: whitespace alone is not the same request
			}
			at := body + strings.Repeat(" ", int(limit)-len(body))
			if r := send(t, lim, rt.Method, path, at, false, headers); r.status != spec.ok {
				t.Errorf("%d-byte body (the limit) = %d %.200s, want %d", len(at), r.status, r.body, spec.ok)
			}
		})
	}
}

// send sends one request to srv; a chunked body goes without a
// Content-Length, so the server learns its size only by reading it.
func send(tb testing.TB, srv *httptest.Server, method, path, body string, chunked bool, headers map[string]string) response {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // not a type NewRequest takes the length of
		}
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
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

// state is what the service holds about f's cluster, infra-env, host and
// manifests, as JSON.
func (h *harness) state(tb testing.TB, f fixture) []byte {
	tb.Helper()
	ctx := context.Background()
	c, err := h.client.GetCluster(ctx, f.clusterID)
	if err != nil {
		tb.Fatal(err)
	}
	ie, err := h.client.GetInfraEnv(ctx, f.infraEnvID)
	if err != nil {
		tb.Fatal(err)
	}
	hosts, err := h.client.ListHosts(ctx, f.infraEnvID)
	if err != nil {
		tb.Fatal(err)
	}
	ms, err := h.client.ListClusterManifests(ctx, f.clusterID)
	if err != nil {
		tb.Fatal(err)
	}
	clusters, err := h.client.ListClusters(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal([]any{c, ie, hosts, ms, len(clusters)})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func checkLimitError(tb testing.TB, r response) {
	tb.Helper()
	if reason := checkErrorBody(tb, r.status, r.header, r.body); !strings.Contains(reason, "larger than") {
		tb.Errorf("413 reason %q does not say the body is larger than the limit", reason)
	}
}
