package simagent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

const (
	testInfraEnv = "16618ffc-1111-4222-8333-444455556666"
	testToken    = "agent-jwt"
	testVersion  = "quay.io/example/agent@sha256:1234"
	apiPrefix    = "/api/assisted-install/v2"
)

// fakeService is a scripted assisted service that records what agents
// send. steps answers the n-th GET for instructions of a host (1-based);
// returning nil holds the request for its ?wait= and answers no steps.
type fakeService struct {
	t     *testing.T
	steps func(host string, n int) (status int, steps *wire.Steps)

	mu        sync.Mutex
	registers []registration
	gets      map[string]int
	queries   []string
	replies   []wire.StepReply
	replyCh   chan wire.StepReply
}

type registration struct {
	Body                  wire.HostCreateParams
	Token, Version, ReqID string
}

func newFakeService(t *testing.T, steps func(host string, n int) (int, *wire.Steps)) (*fakeService, *httptest.Server) {
	f := &fakeService{t: t, steps: steps, gets: map[string]int{}, replyCh: make(chan wire.StepReply, 10000)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+apiPrefix+"/infra-envs/{ie}/hosts", f.register)
	mux.HandleFunc("GET "+apiPrefix+"/infra-envs/{ie}/hosts/{host}/instructions", f.instructions)
	mux.HandleFunc("POST "+apiPrefix+"/infra-envs/{ie}/hosts/{host}/instructions", f.reply)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeService) register(w http.ResponseWriter, r *http.Request) {
	var body wire.HostCreateParams
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"reason": err.Error()})
		return
	}
	f.mu.Lock()
	f.registers = append(f.registers, registration{body, r.Header.Get(wire.HeaderAgentToken), r.Header.Get(wire.HeaderAgentVersion), r.Header.Get(wire.HeaderRequestID)})
	f.mu.Unlock()
	args := wire.MustEncodeEmbedded(wire.NextStepCmdRequest{AgentVersion: body.DiscoveryAgentVersion, HostID: body.HostID, InfraEnvID: r.PathValue("ie")})
	writeJSON(w, http.StatusCreated, wire.HostRegistrationResponse{
		Host:                  wire.Host{ID: body.HostID, Status: wire.HostStatusDiscovering},
		NextStepRunnerCommand: &wire.HostRegistrationResponseNextStepRunnerCommand{Args: []string{args}},
	})
}

func (f *fakeService) instructions(w http.ResponseWriter, r *http.Request) {
	host := r.PathValue("host")
	f.mu.Lock()
	f.gets[host]++
	n := f.gets[host]
	f.queries = append(f.queries, r.URL.RawQuery)
	f.mu.Unlock()
	status, steps := f.steps(host, n)
	if steps == nil && status == http.StatusOK {
		wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
		select {
		case <-r.Context().Done():
			return
		case <-time.After(wait):
		}
		steps = &wire.Steps{PostStepAction: wire.StepsPostStepActionContinue}
	}
	writeJSON(w, status, steps)
}

func (f *fakeService) reply(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rep, err := wire.ParseStepReply(b)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"reason": err.Error()})
		return
	}
	f.mu.Lock()
	f.replies = append(f.replies, rep)
	f.mu.Unlock()
	f.replyCh <- rep
	w.WriteHeader(http.StatusNoContent)
}

// waitReplies waits until n replies have arrived.
func (f *fakeService) waitReplies(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for range n {
		select {
		case <-f.replyCh:
		case <-timeout:
			f.mu.Lock()
			defer f.mu.Unlock()
			t.Fatalf("timed out waiting for %d step replies; got %d: %+v", n, len(f.replies), f.replies)
		}
	}
}

func steps(sts ...*wire.Step) *wire.Steps {
	return &wire.Steps{PostStepAction: wire.StepsPostStepActionContinue, Instructions: sts}
}

func TestAgentSpeaksTheProtocol(t *testing.T) {
	h, err := NewHost(0, DefaultNetwork, Master)
	if err != nil {
		t.Fatal(err)
	}
	inventory := &wire.Step{StepType: wire.StepTypeInventory, StepID: "inventory-1", Args: []string{h.ID}}
	vips := &wire.Step{StepType: wire.StepTypeVerifyVIPs, StepID: "verify-vips-1",
		Args: []string{`[{"vip":"198.18.0.100","vip_type":"api"}]`}}
	f, srv := newFakeService(t, func(_ string, n int) (int, *wire.Steps) {
		switch n {
		case 1:
			return http.StatusOK, steps(inventory)
		case 2: // the inventory again: unchanged, so not posted
			return http.StatusOK, steps(inventory, vips)
		case 3: // the host is gone: register again
			return http.StatusNotFound, &wire.Steps{}
		case 4: // a fresh session: the inventory is posted again
			return http.StatusOK, steps(inventory)
		}
		return http.StatusOK, nil
	})
	c, err := wire.NewClient(srv.URL, wire.WithAgentToken(testToken), wire.WithAgentVersion(testVersion))
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder()
	a, err := New(Config{Client: c, AgentVersion: testVersion, InfraEnvID: testInfraEnv, Host: h,
		Wait: 20 * time.Millisecond, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	a.minPollGap = 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	f.waitReplies(t, 3)
	time.Sleep(100 * time.Millisecond) // a few held polls
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v after cancel, want nil", err)
	}
	c.CloseIdleConnections()

	f.mu.Lock()
	defer f.mu.Unlock()
	var got []string
	for _, r := range f.replies {
		got = append(got, r.StepID)
	}
	if diff := cmp.Diff([]string{"inventory-1", "verify-vips-1", "inventory-1"}, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	if len(f.registers) != 2 {
		t.Fatalf("%d registrations, want 2 (the second after the 404)", len(f.registers))
	}
	for _, r := range f.registers {
		want := registration{wire.HostCreateParams{HostID: h.ID, DiscoveryAgentVersion: testVersion}, testToken, testVersion, r.ReqID}
		if r != want || len(r.ReqID) != 36 {
			t.Errorf("registration = %+v, want %+v with a request id", r, want)
		}
	}
	if q := f.queries[0]; !regexp.MustCompile(`^timestamp=[0-9]{10}&wait=20ms$`).MatchString(q) {
		t.Errorf("first GET query = %q, want timestamp=<unix seconds>&wait=20ms", q)
	}
	counts := map[string][2]int{}
	for _, s := range rec.Summaries() {
		counts[s.Kind] = [2]int{s.Count, s.Errors}
	}
	if c := counts[KindNextStepsHeld]; c[0] == 0 {
		t.Errorf("no held next-steps recorded: %v", counts)
	}
	delete(counts, KindNextStepsHeld)
	want := map[string][2]int{KindRegister: {2, 0}, KindNextSteps: {3, 1}, KindStepReply: {3, 0}}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("recorded requests [count errors] (-want +got):\n%s", diff)
	}
}

// TestAgentUpstreamCadence: with Wait 0 the agent never long-polls (no
// ?wait=) and sleeps what each answer's next_instruction_seconds says, as
// assisted-installer-agent does; its GETs are recorded as polls. The
// agent's clock stands still, so the time it spent answering takes
// nothing off the sleeps.
func TestAgentUpstreamCadence(t *testing.T) {
	h, err := NewHost(0, DefaultNetwork, Master)
	if err != nil {
		t.Fatal(err)
	}
	inventory := &wire.Step{StepType: wire.StepTypeInventory, StepID: "inventory-1", Args: []string{h.ID}}
	nexts := []int64{7, 3, 5}
	f, srv := newFakeService(t, func(_ string, n int) (int, *wire.Steps) {
		s := steps()
		s.NextInstructionSeconds = nexts[min(n, len(nexts))-1]
		if n == 1 {
			s.Instructions = []*wire.Step{inventory}
		}
		return http.StatusOK, s
	})
	c, err := wire.NewClient(srv.URL, wire.WithAgentToken(testToken), wire.WithAgentVersion(testVersion))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	rec := NewRecorder()
	a, err := New(Config{Client: c, AgentVersion: testVersion, InfraEnvID: testInfraEnv, Host: h, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	a.minPollGap = 0
	stopped := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	a.now = func() time.Time { return stopped }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pauses []time.Duration // only the agent's goroutine, this one, appends
	a.pause = func(_ context.Context, d time.Duration) bool {
		pauses = append(pauses, d)
		if len(pauses) == len(nexts) {
			cancel()
			return false
		}
		return true
	}
	if err := a.Run(ctx); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second, 3 * time.Second, 5 * time.Second}, pauses); diff != "" {
		t.Errorf("pauses between GETs (-want +got):\n%s", diff)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.queries {
		if !regexp.MustCompile(`^timestamp=[0-9]{10}$`).MatchString(q) {
			t.Errorf("GET query = %q, want timestamp=<unix seconds> and no wait", q)
		}
	}
	if len(f.replies) != 1 || f.replies[0].StepID != "inventory-1" {
		t.Errorf("replies = %+v, want the inventory", f.replies)
	}
	counts := map[string]int{}
	for _, s := range rec.Summaries() {
		counts[s.Kind] = s.Count
	}
	if diff := cmp.Diff(map[string]int{KindRegister: 1, KindNextStepsPoll: len(nexts), KindStepReply: 1}, counts); diff != "" {
		t.Errorf("recorded requests (-want +got):\n%s", diff)
	}
}

func TestFleet(t *testing.T) {
	f, srv := newFakeService(t, func(host string, n int) (int, *wire.Steps) {
		if n == 1 {
			return http.StatusOK, steps(&wire.Step{StepType: wire.StepTypeInventory, StepID: "inventory-1", Args: []string{host}})
		}
		return http.StatusOK, nil
	})
	const hosts, masters = 12, 3
	fleet, err := StartFleet(context.Background(), FleetConfig{URL: srv.URL, Token: testToken, InfraEnvID: testInfraEnv,
		Hosts: hosts, Masters: masters, Wait: time.Second, Ramp: 120 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.waitReplies(t, hosts)
	fleet.Stop()

	f.mu.Lock()
	defer f.mu.Unlock()
	cores := map[string]int64{}
	for _, r := range f.replies {
		var inv wire.Inventory
		if err := wire.DecodeEmbedded(r.Output, &inv); err != nil {
			t.Fatal(err)
		}
		cores[inv.Hostname] = inv.CPU.Count
	}
	if len(cores) != hosts {
		t.Fatalf("%d distinct hosts replied, want %d", len(cores), hosts)
	}
	for i, h := range fleet.Hosts() {
		want := int64(4)
		if i < masters {
			want = 8
		}
		if cores[h.Hostname] != want {
			t.Errorf("host %d (%s) has %d cores, want %d", i, h.Hostname, cores[h.Hostname], want)
		}
	}
	if f.registers[0].Version != DefaultAgentVersion {
		t.Errorf("agent version header = %q, want DefaultAgentVersion", f.registers[0].Version)
	}
}

func TestStartFleetRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  FleetConfig
	}{
		{"no hosts", FleetConfig{URL: "http://127.0.0.1:1", InfraEnvID: testInfraEnv}},
		{"more hosts than the network holds", FleetConfig{URL: "http://127.0.0.1:1", InfraEnvID: testInfraEnv, Hosts: 600,
			Network: netipMust("10.0.0.0/22")}},
		{"no URL", FleetConfig{InfraEnvID: testInfraEnv, Hosts: 1}},
		{"a negative ramp", FleetConfig{URL: "http://127.0.0.1:1", InfraEnvID: testInfraEnv, Hosts: 1, Ramp: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f, err := StartFleet(context.Background(), tt.cfg); err == nil {
				f.Stop()
				t.Errorf("StartFleet(%+v) succeeded, want an error", tt.cfg)
			}
		})
	}
}
