package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/wire"
)

// keyCheck is a slog handler that notes every record whose attributes,
// the logger's included, hold a key twice.
type keyCheck struct {
	attrs []string
	state *keyState
}

type keyState struct {
	mu      sync.Mutex
	dups    []string
	records []string // "message subsystem=…" of each record
	got     chan struct{}
}

func newKeyCheck() keyCheck {
	return keyCheck{state: &keyState{got: make(chan struct{}, 1)}}
}

func (h keyCheck) Enabled(context.Context, slog.Level) bool { return true }

func (h keyCheck) Handle(_ context.Context, r slog.Record) error {
	keys := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool { keys = append(keys, a.Key); return true })
	s := h.state
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			s.dups = append(s.dups, fmt.Sprintf("%q: key %s twice in %q", r.Message, k, keys))
		}
		seen[k] = true
	}
	s.records = append(s.records, r.Message)
	select {
	case s.got <- struct{}{}:
	default:
	}
	return nil
}

func (h keyCheck) WithAttrs(as []slog.Attr) slog.Handler {
	out := keyCheck{attrs: slices.Clone(h.attrs), state: h.state}
	for _, a := range as {
		out.attrs = append(out.attrs, a.Key)
	}
	return out
}

func (h keyCheck) WithGroup(string) slog.Handler { return h }

// TestAgentLogKeysOnce runs the host agent as a host wires it (the run's
// logger, the agent's config) against a service that answers 503, until
// it has logged its registration attempts: no record holds a key twice
// ("subsystem=agent subsystem=hostagent" was every agent record).
func TestAgentLogKeysOnce(t *testing.T) {
	h := newKeyCheck()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"code":"503","reason":"starting"}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	root := t.TempDir()
	hw, err := filepath.Abs(filepath.Join("..", "testdata", "hw", "master-0"))
	if err != nil {
		t.Fatal(err)
	}
	rt := &runtime{o: Options{Root: root, HardwareRoot: hw, Logger: slog.New(h), AgentInterval: time.Millisecond}.withDefaults()}
	rt.disks = DiskFiles{HardwareRoot: hw, Dir: rt.o.Disks}
	env := boot.Env{Root: root, ServiceBaseURL: srv.URL, AgentToken: "agent"}
	a, err := NewAgent(rt.agentConfig(env, srv.URL, &wire.InfraEnv{ID: "0d8f5f0e-7f0e-4f3c-9d84-32b3e7a1c2f1"}, InstallOptions{Root: root, Disks: rt.disks}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	// Two records at least: the first registration attempt and its failure.
	for n := 0; ; {
		select {
		case <-h.state.got:
		case <-ctx.Done():
			t.Fatal("the agent logged nothing within a minute")
		}
		h.state.mu.Lock()
		n = len(h.state.records)
		h.state.mu.Unlock()
		if n >= 2 {
			break
		}
	}
	cancel()
	<-done
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	if len(h.state.dups) > 0 {
		t.Errorf("records with a key twice:\n%s", h.state.dups)
	}
}

// TestStoppedQuietly: a host whose context was cancelled (a signal) ends
// with nil, whatever its parts made of the cancellation; a reboot of the
// fake firmware and a live host's errors are returned.
func TestStoppedQuietly(t *testing.T) {
	live := context.Background()
	stoppedCtx, cancel := context.WithCancel(context.Background())
	cancel()
	failed := errors.New("agent: register: 401")
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"stopped, the context's error", stoppedCtx, context.Canceled, nil},
		{"stopped, wrapped", stoppedCtx, fmt.Errorf("report stage Configuring: %w", context.Canceled), nil},
		{"stopped, as text", stoppedCtx, fmt.Errorf("serve: %v", context.Canceled), nil},
		{"stopped, rebooting", stoppedCtx, sim.ErrReboot, sim.ErrReboot},
		{"running, failed", live, failed, failed},
		{"running, done", live, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stopped(tc.ctx, tc.err, nil); !errors.Is(got, tc.want) || (tc.want == nil) != (got == nil) {
				t.Errorf("stopped(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
