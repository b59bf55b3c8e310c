package hostagent

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

var testInventory = &wire.Inventory{Hostname: "tx-host-0", CPU: &wire.CPU{Architecture: "x86_64", Count: 2}}

func collectTestInventory(context.Context) (*wire.Inventory, error) { return testInventory, nil }

// harness runs an agent against a service URL.
type harness struct {
	a      *Agent
	log    *testLogger
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func startAgent(t *testing.T, serviceURL string, runner StepRunner, mod func(*Config)) *harness {
	t.Helper()
	h := prepareAgent(t, serviceURL, runner, mod)
	h.start()
	return h
}

func prepareAgent(t *testing.T, serviceURL string, runner StepRunner, mod func(*Config)) *harness {
	t.Helper()
	tl := &testLogger{t: t, errors: map[string][]string{}}
	cfg := Config{URL: serviceURL, InfraEnvID: testInfraEnv, AgentVersion: testVersion, Token: testToken,
		Interval: 20 * time.Millisecond, Logger: slog.New(tl)}
	if mod != nil {
		mod(&cfg)
	}
	if runner == nil {
		runner = NewSteps(collectTestInventory)
	}
	a, err := New(cfg, runner, func() (string, error) { return testHost, nil })
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	a.getBackoff = func() backoff.Backoff {
		return backoff.Backoff{Initial: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Max: 100 * time.Millisecond}
	}
	a.minPollGap = 2 * time.Millisecond
	h := &harness{a: a, log: tl, done: make(chan error, 1)}
	t.Cleanup(func() { h.stop(t) })
	return h
}

func (h *harness) start() {
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- h.a.Run(ctx) }()
}

// stop cancels the agent and waits for Run to return.
func (h *harness) stop(t *testing.T) error {
	t.Helper()
	h.once.Do(func() {
		if h.cancel == nil {
			return
		}
		h.cancel()
		select {
		case h.err = <-h.done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return 10 s after cancel")
		}
	})
	return h.err
}

// waitIdle waits until no step goroutine runs: its reply is posted (or
// suppressed) and the cache updated.
func (h *harness) waitIdle(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		h.a.mu.Lock()
		n := len(h.a.running)
		h.a.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Error("steps still running after 10 s")
}

func TestWireFormat(t *testing.T) {
	for _, wait := range []time.Duration{30 * time.Second, 0} {
		t.Run("wait="+wait.String(), func(t *testing.T) {
			f := newFakeService(t)
			f.steps = func(r *http.Request, n int) (int, any) {
				if n == 1 {
					return 200, stepsOf(0, wire.StepsPostStepActionContinue, inventoryStep("inventory-e3a3cd99"))
				}
				return 200, stepsOf(60, wire.StepsPostStepActionContinue)
			}
			srv := f.start()
			before := time.Now().Unix()
			h := startAgent(t, srv.URL+"/", nil, func(c *Config) { c.Wait = wait })
			rep := waitFor(t, f.replyCh, "inventory reply", func(reply) bool { return true })
			waitFor(t, f.getCh, "second GET", func(n int) bool { return n == 2 })
			if err := h.stop(t); err != nil {
				t.Fatalf("Run() = %v, want nil after cancel", err)
			}
			after := time.Now().Unix()
			regs, gets, _ := f.snapshot()

			reg := regs[0]
			if diff := cmp.Diff(map[string]any{"host_id": testHost, "discovery_agent_version": testVersion}, bodyOf(t, reg.Body)); diff != "" {
				t.Errorf("register body mismatch (-want +got):\n%s", diff)
			}
			checkHeaders(t, "register", reg.Header, "application/json")
			checkHeaders(t, "GET", gets[0].Header, "")

			q, _ := url.ParseQuery(gets[0].RawQuery)
			ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
			if err != nil || ts < before || ts > after {
				t.Errorf("timestamp = %q, want unix seconds in [%d, %d]", q.Get("timestamp"), before, after)
			}
			wantQuery := []string{"timestamp"}
			if wait > 0 {
				wantQuery = append(wantQuery, "wait")
				if got := q.Get("wait"); got != wait.String() {
					t.Errorf("wait = %q, want %q", got, wait.String())
				}
			}
			if got := slices.Sorted(mapKeys(q)); !slices.Equal(got, wantQuery) {
				t.Errorf("query keys = %v, want %v", got, wantQuery)
			}

			regID, getID, get2ID := reg.Header.Get("X-Request-Id"), gets[0].Header.Get("X-Request-Id"), gets[1].Header.Get("X-Request-Id")
			if rep.RequestID != getID {
				t.Errorf("reply X-Request-Id = %q, want the GET's %q (one id per session)", rep.RequestID, getID)
			}
			if regID == getID || getID == get2ID {
				t.Errorf("request ids register %q, GET1 %q, GET2 %q: want a new id per session", regID, getID, get2ID)
			}
			if got := slices.Sorted(mapKeys(rep.Raw)); !slices.Equal(got, []string{"output", "step_id", "step_type"}) {
				t.Errorf("reply fields = %v, want output, step_id, step_type (exit_code 0 and empty error omitted)", got)
			}
			var inv wire.Inventory
			if err := wire.DecodeStepOutput(rep.StepReply, &inv); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(testInventory, &inv); diff != "" {
				t.Errorf("inventory output mismatch (-want +got):\n%s", diff)
			}
			if rep.StepID != "inventory-e3a3cd99" {
				t.Errorf("reply step_id = %q, want inventory-e3a3cd99", rep.StepID)
			}
		})
	}
}

func checkHeaders(t *testing.T, what string, h http.Header, contentType string) {
	t.Helper()
	want := map[string]string{
		"X-Secret-Key":            testToken,
		"Discovery_agent_version": testVersion,
		"Accept":                  "application/json",
		"Content-Type":            contentType,
		"Authorization":           "",
	}
	for k, v := range want {
		if got := strings.Join(h[k], ","); got != v {
			t.Errorf("%s header %s = %q, want %q", what, k, got, v)
		}
	}
	if id := h.Get("X-Request-Id"); !isUUID(id) {
		t.Errorf("%s X-Request-Id = %q, want a UUID", what, id)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestRunHostID(t *testing.T) {
	f := newFakeService(t)
	srv := f.start()
	base := Config{URL: srv.URL, InfraEnvID: testInfraEnv, Interval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}

	t.Run("derive error", func(t *testing.T) {
		a, err := New(base, NewSteps(nil), func() (string, error) { return "", errors.New("no dmi") })
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no dmi") {
			t.Errorf("Run() = %v, want the derive error", err)
		}
	})
	t.Run("derived id not a UUID", func(t *testing.T) {
		a, _ := New(base, NewSteps(nil), func() (string, error) { return "deaddead", nil })
		if err := a.Run(context.Background()); err == nil {
			t.Error("Run() = nil, want an error for a non-UUID host id")
		}
	})
	t.Run("configured id wins", func(t *testing.T) {
		cfg := base
		cfg.HostID = "11111111-2222-4333-8444-555555555555"
		a, err := New(cfg, NewSteps(nil), func() (string, error) { t.Error("hostID func called"); return "", nil })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- a.Run(ctx) }()
		waitFor(t, f.getCh, "GET", func(int) bool { return true })
		cancel()
		<-done
		regs, _, _ := f.snapshot()
		if got := bodyOf(t, regs[len(regs)-1].Body)["host_id"]; got != cfg.HostID {
			t.Errorf("registered host_id = %v, want %s", got, cfg.HostID)
		}
	})
}

func TestNewRejectsBadConfig(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:8090", InfraEnvID: testInfraEnv}
	derive := func() (string, error) { return testHost, nil }
	tests := []struct {
		name   string
		mod    func(*Config)
		steps  StepRunner
		hostID func() (string, error)
	}{
		{"no steps", nil, nil, derive},
		{"bad infra-env", func(c *Config) { c.InfraEnvID = "x" }, NewSteps(nil), derive},
		{"bad host id", func(c *Config) { c.HostID = "x" }, NewSteps(nil), derive},
		{"no host id source", nil, NewSteps(nil), nil},
		{"negative wait", func(c *Config) { c.Wait = -time.Second }, NewSteps(nil), derive},
		{"bad url", func(c *Config) { c.URL = "127.0.0.1:8090" }, NewSteps(nil), derive},
		{"missing ca", func(c *Config) { c.CACert = "/nonexistent/ca.pem" }, NewSteps(nil), derive},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			if tc.mod != nil {
				tc.mod(&cfg)
			}
			if _, err := New(cfg, tc.steps, tc.hostID); err == nil {
				t.Error("New() = nil error, want one")
			}
		})
	}
	a, err := New(ok, NewSteps(nil), derive)
	if err != nil || a.cfg.Interval != DefaultInterval {
		t.Errorf("New(valid) = %v, interval %v; want nil, %v", err, a.cfg.Interval, DefaultInterval)
	}
}
