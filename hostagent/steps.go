package hostagent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// StepRunner runs one instruction. output is the step's stdout (usually a
// JSON document), stderr its diagnostics, exitCode 0 on success. Run must
// return soon after ctx is cancelled.
type StepRunner interface {
	Run(ctx context.Context, stepType wire.StepType, args []string) (output string, stderr string, exitCode int)
}

// Steps is a StepRunner that maps step types to StepFuncs. It is safe for
// concurrent use. It knows which steps are running, so that one step can
// stop another (Cancel, StopInstallationStep).
type Steps struct {
	mu      sync.RWMutex
	funcs   map[wire.StepType]step.Func
	running map[wire.StepType]map[*run]bool
}

// run is one running step: cancel stops it, done closes once it returned.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSteps returns a registry holding the inventory step, which calls
// inventory to collect the host's hardware (nil leaves it out).
func NewSteps(inventory func(ctx context.Context) (*wire.Inventory, error)) *Steps {
	s := &Steps{funcs: map[wire.StepType]step.Func{}, running: map[wire.StepType]map[*run]bool{}}
	if inventory != nil {
		s.Handle(wire.StepTypeInventory, InventoryStep(inventory))
	}
	return s
}

// Handle registers f for stepType, replacing any earlier func.
func (s *Steps) Handle(stepType wire.StepType, f step.Func) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.funcs[stepType] = f
}

// Run implements StepRunner. An unknown step type answers step.ExitNotRun with
// the real agent's message; a panicking step answers step.ExitNotRun too rather
// than take the daemon down. The step runs with a context Cancel can end.
func (s *Steps) Run(ctx context.Context, stepType wire.StepType, args []string) (output, stderr string, exitCode int) {
	s.mu.Lock()
	f, ok := s.funcs[stepType]
	var r *run
	if ok {
		ctx, r = s.track(ctx, stepType)
	}
	s.mu.Unlock()
	if !ok {
		return "", fmt.Sprintf("failed to find action for step type %s", stepType), step.ExitNotRun
	}
	defer s.untrack(stepType, r) // after the recover below: a panicking step has returned too
	defer func() {
		if r := recover(); r != nil {
			output, stderr, exitCode = "", fmt.Sprintf("step %s panicked: %v", stepType, r), step.ExitNotRun
		}
	}()
	return f(ctx, args)
}

// track records a run of stepType. Callers hold s.mu.
func (s *Steps) track(ctx context.Context, stepType wire.StepType) (context.Context, *run) {
	ctx, cancel := context.WithCancel(ctx)
	r := &run{cancel: cancel, done: make(chan struct{})}
	if s.running[stepType] == nil {
		s.running[stepType] = map[*run]bool{}
	}
	s.running[stepType][r] = true
	return ctx, r
}

func (s *Steps) untrack(stepType wire.StepType, r *run) {
	s.mu.Lock()
	delete(s.running[stepType], r)
	s.mu.Unlock()
	r.cancel()
	close(r.done)
}

// Cancel cancels every running step of stepType and waits until they have
// returned or ctx ends. It returns how many were running; the error is
// ctx's when some had not returned by then. Each cancelled step still
// answers, with whatever its step.Func returns once its context is done.
func (s *Steps) Cancel(ctx context.Context, stepType wire.StepType) (int, error) {
	s.mu.Lock()
	runs := make([]*run, 0, len(s.running[stepType]))
	for r := range s.running[stepType] {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return len(runs), ctx.Err()
		}
	}
	return len(runs), nil
}

// DefaultStopWait is how long stop-installation waits for the install
// step to return (assisted's `podman stop -t 5` kills after 5 s; a Go step
// cannot be killed, only asked).
const DefaultStopWait = 30 * time.Second

// StopInstallationStep returns the stop-installation step: it cancels a
// running install step, as the real agent's `podman stop -i -t 5
// assisted-installer` stops the installer container, and answers 0 once
// it has returned; nothing running is 0 too (podman's -i). An install
// step still running after wait (0: DefaultStopWait) is exit code 1. The
// step takes no args.
func StopInstallationStep(s *Steps, wait time.Duration) step.Func {
	if wait <= 0 {
		wait = DefaultStopWait
	}
	return func(ctx context.Context, _ []string) (string, string, int) {
		ctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		if _, err := s.Cancel(ctx, wire.StepTypeInstall); err != nil {
			return "", fmt.Sprintf("stop installation: the install step is still running %s after it was cancelled", wait), 1
		}
		return "", "", 0
	}
}

// InventoryStep returns the inventory step: its single arg is the host id,
// which must be a UUID (docs/reference/agent-protocol-transcript.md §2); its output is the
// inventory as compact JSON.
func InventoryStep(collect func(ctx context.Context) (*wire.Inventory, error)) step.Func {
	return func(ctx context.Context, args []string) (string, string, int) {
		if len(args) != 1 || !isUUID(args[0]) {
			// The real agent's wording (inventory_cmd.go Validate).
			return "", fmt.Sprintf("inventory cmd accepts only 1 params in args and it should be UUID, given args %v", args), step.ExitNotRun
		}
		inv, err := collect(ctx)
		if err != nil {
			return "", fmt.Sprintf("collect inventory: %v", err), 1
		}
		if inv == nil {
			return "", "collect inventory: no inventory returned", 1
		}
		out, err := wire.EncodeEmbedded(inv)
		if err != nil {
			return "", err.Error(), 1
		}
		return out, "", 0
	}
}

// isUUID reports whether s is a UUID in the 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// replyCache remembers the last successfully posted output per step type,
// so an identical output is not posted again (the real agent's
// reply_cache.go: a go-cache with a 1 h TTL; transcript §4). The service
// reads a missing reply as "unchanged".
type replyCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[wire.StepType]cached
}

type cached struct {
	output string
	at     time.Time
}

func newReplyCache(ttl time.Duration, now func() time.Time) *replyCache {
	return &replyCache{ttl: ttl, now: now, m: map[wire.StepType]cached{}}
}

// has reports whether output was the last one posted for stepType, within
// the TTL.
func (c *replyCache) has(stepType wire.StepType, output string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[stepType]
	return ok && e.output == output && c.now().Sub(e.at) < c.ttl
}

func (c *replyCache) store(stepType wire.StepType, output string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[stepType] = cached{output: output, at: c.now()}
}

// clear forgets everything: after a failed GET the service may have lost
// state, so the next round re-sends every output.
func (c *replyCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}
