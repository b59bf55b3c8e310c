package api_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/auth"
)

// leaks are fragments of SQLite and database/sql errors a client must
// never see.
var leaks = []string{"sql", "database", "closed", "nodezero.db", "no such"}

// TestInternalErrorHidden closes the store under a running service: the
// writes and reads that need it fail as 500 with a reason that names the
// operation and nothing of the cause, the cause goes to the log, and the
// daemon keeps answering.
func TestInternalErrorHidden(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	var logBuf syncBuffer
	logged := api.New(api.Config{
		Service: h.svc, Verifier: auth.NewVerifier(&h.key.PublicKey, nil),
		Logger: slog.New(slog.NewTextHandler(&logBuf, nil)),
	})
	h.srv.Close()
	h.srv = httptest.NewServer(logged) // h.do now goes through the logging handler; h.close closes it

	if err := h.store.Close(); err != nil {
		t.Fatalf("close store: %v", err)
	}
	cases := []struct {
		name, method, path, body string
		agent                    bool
	}{
		{"register cluster", "POST", b + "/clusters", validCluster, false},
		{"update cluster", "PATCH", f.path(clusterPat), `{"name":"renamed"}`, false},
		{"create manifest", "POST", f.path(clusterPat + "/manifests"), `{"file_name":"a.yaml","content":"YTogMQ=="}`, false},
		{"download manifest", "GET", f.path(clusterPat+"/manifests/files") + "?file_name=" + fixtureManifest, ``, false},
		{"install config", "PATCH", f.path(clusterPat + "/install-config"), `"{}"`, false},
		{"list events", "GET", b + "/events", ``, false},
		{"step reply", "POST", f.path(hostPat + "/instructions"), inventoryReply(), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r response
			if c.agent {
				r = h.agent(t, c.method, c.path, c.body)
			} else {
				r = h.user(t, c.method, c.path, c.body)
			}
			if r.status != http.StatusInternalServerError {
				t.Fatalf("%s %s on a closed store = %d %s, want 500", c.method, c.path, r.status, r.body)
			}
			reason := checkErrorBody(t, r.status, r.header, r.body)
			t.Logf("reason: %q", reason)
			for _, l := range leaks {
				if strings.Contains(strings.ToLower(reason), l) {
					t.Errorf("reason %q leaks %q of the cause", reason, l)
				}
			}
			h.checkHealthy(t)
		})
	}
	if log := logBuf.String(); !strings.Contains(log, "database is closed") {
		t.Errorf("the log does not carry the cause; log:\n%s", log)
	}
}

// syncBuffer is a bytes.Buffer the handler goroutines may write while the
// test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
