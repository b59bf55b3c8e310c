package hostagent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// The remote service for the agent tests: a scripted assisted-service that
// records every request. Scripts get the 1-based index of the request of
// their kind.

const (
	testInfraEnv = "16618ffc-1111-4222-8333-444455556666"
	testHost     = "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03"
	testVersion  = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0000"
	testToken    = "agent-jwt"
	apiPrefix    = "/api/assisted-install/v2"
)

type request struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	At                     time.Time
}

type reply struct {
	wire.StepReply
	Raw       map[string]any
	RequestID string
}

type fakeService struct {
	t *testing.T

	// register answers the n-th registration; nil means 201.
	register func(n int, body wire.HostCreateParams) (status int, answer any)
	// steps answers the n-th GET for instructions; nil means "come back in
	// 60 s". It may block (as a long poll) until r's context ends.
	steps func(r *http.Request, n int) (status int, answer any)

	mu        sync.Mutex
	registers []request
	gets      []request
	replies   []reply
	replyCh   chan reply
	getCh     chan int
	regCh     chan int
}

func newFakeService(t *testing.T) *fakeService {
	return &fakeService{t: t, replyCh: make(chan reply, 1000), getCh: make(chan int, 1000), regCh: make(chan int, 1000)}
}

func (f *fakeService) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+apiPrefix+"/infra-envs/{ie}/hosts", f.serveRegister)
	mux.HandleFunc("GET "+apiPrefix+"/infra-envs/{ie}/hosts/{host}/instructions", f.serveSteps)
	mux.HandleFunc("POST "+apiPrefix+"/infra-envs/{ie}/hosts/{host}/instructions", f.serveReply)
	return mux
}

func (f *fakeService) start() *httptest.Server {
	srv := httptest.NewServer(f.handler())
	f.t.Cleanup(srv.Close)
	return srv
}

func record(r *http.Request) request {
	b, _ := io.ReadAll(r.Body)
	return request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), b, time.Now()}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func (f *fakeService) serveRegister(w http.ResponseWriter, r *http.Request) {
	req := record(r)
	f.mu.Lock()
	f.registers = append(f.registers, req)
	n := len(f.registers)
	f.mu.Unlock()
	f.regCh <- n
	var body wire.HostCreateParams
	_ = json.Unmarshal(req.Body, &body)
	if f.register != nil {
		if status, answer := f.register(n, body); status != http.StatusCreated || answer != nil {
			writeJSON(w, status, answer)
			return
		}
	}
	args := wire.MustEncodeEmbedded(wire.NextStepCmdRequest{AgentVersion: body.DiscoveryAgentVersion, HostID: body.HostID, InfraEnvID: r.PathValue("ie")})
	writeJSON(w, http.StatusCreated, wire.HostRegistrationResponse{
		Host:                  wire.Host{Kind: wire.HostKindHost, ID: body.HostID, InfraEnvID: r.PathValue("ie"), Status: wire.HostStatusDiscovering},
		NextStepRunnerCommand: &wire.HostRegistrationResponseNextStepRunnerCommand{Args: []string{args}},
	})
}

func (f *fakeService) serveSteps(w http.ResponseWriter, r *http.Request) {
	req := record(r)
	f.mu.Lock()
	f.gets = append(f.gets, req)
	n := len(f.gets)
	f.mu.Unlock()
	f.getCh <- n
	status, answer := http.StatusOK, any(wire.Steps{NextInstructionSeconds: 60, PostStepAction: wire.StepsPostStepActionContinue})
	if f.steps != nil {
		status, answer = f.steps(r, n)
	}
	writeJSON(w, status, answer)
}

func (f *fakeService) serveReply(w http.ResponseWriter, r *http.Request) {
	req := record(r)
	rep := reply{RequestID: req.Header.Get("X-Request-Id")}
	var err error
	if rep.StepReply, err = wire.ParseStepReply(req.Body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"code": "400", "reason": err.Error()})
		return
	}
	_ = json.Unmarshal(req.Body, &rep.Raw)
	f.mu.Lock()
	f.replies = append(f.replies, rep)
	f.mu.Unlock()
	f.replyCh <- rep
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeService) snapshot() (registers, gets []request, replies []reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.registers...), append([]request(nil), f.gets...), append([]reply(nil), f.replies...)
}

func bodyOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", b, err)
	}
	return m
}

// waitFor receives from ch until pred holds, failing after a timeout.
func waitFor[T any](t *testing.T, ch <-chan T, what string, pred func(T) bool) T {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case v := <-ch:
			if pred(v) {
				return v
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// blockUntilDone is a long-poll answer: hold the GET until the client goes.
func blockUntilDone(r *http.Request) (int, any) {
	<-r.Context().Done()
	return http.StatusServiceUnavailable, nil
}

func stepsOf(next int64, action wire.StepsPostStepAction, steps ...*wire.Step) wire.Steps {
	return wire.Steps{NextInstructionSeconds: next, PostStepAction: action, Instructions: steps}
}

func inventoryStep(id string) *wire.Step {
	return &wire.Step{StepType: wire.StepTypeInventory, StepID: id, Args: []string{testHost}}
}

// testLogger logs to t, and counts error records by message.
type testLogger struct {
	t      *testing.T
	mu     sync.Mutex
	errors map[string][]string // message -> err attrs
}

func (l *testLogger) Enabled(context.Context, slog.Level) bool { return true }
func (l *testLogger) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *testLogger) WithGroup(string) slog.Handler            { return l }
func (l *testLogger) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	var errText string
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		if a.Key == keyErr {
			errText = a.Value.String()
		}
		return true
	})
	l.t.Logf("%s %s%s", r.Level, r.Message, b.String())
	if r.Level >= slog.LevelError {
		l.mu.Lock()
		l.errors[r.Message] = append(l.errors[r.Message], errText)
		l.mu.Unlock()
	}
	return nil
}

func (l *testLogger) errorsFor(msg string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors[msg]...)
}
