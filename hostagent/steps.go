package hostagent

import (
	"context"
	"fmt"
	"sync"
	"time"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// ExitNotRun is the exit code of a step that could not run: an unknown step
// type or invalid args. The real agent replies -1 in both cases
// (agent-and-installer.md §1.7).
const ExitNotRun = -1

// StepRunner runs one instruction. output is the step's stdout (usually a
// JSON document), stderr its diagnostics, exitCode 0 on success. Run must
// return soon after ctx is cancelled.
type StepRunner interface {
	Run(ctx context.Context, stepType v2.StepType, args []string) (output string, stderr string, exitCode int)
}

// StepFunc runs one step type. It validates its own args and answers
// ExitNotRun with the reason in stderr when they are invalid.
type StepFunc func(ctx context.Context, args []string) (output string, stderr string, exitCode int)

// Steps is a StepRunner that maps step types to StepFuncs. It is safe for
// concurrent use.
type Steps struct {
	mu    sync.RWMutex
	funcs map[v2.StepType]StepFunc
}

// NewSteps returns a registry holding the inventory step, which calls
// inventory to collect the host's hardware (nil leaves it out).
func NewSteps(inventory func(ctx context.Context) (*v2.Inventory, error)) *Steps {
	s := &Steps{funcs: map[v2.StepType]StepFunc{}}
	if inventory != nil {
		s.Handle(v2.StepTypeInventory, InventoryStep(inventory))
	}
	return s
}

// Handle registers f for stepType, replacing any earlier func.
func (s *Steps) Handle(stepType v2.StepType, f StepFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.funcs[stepType] = f
}

// Run implements StepRunner. An unknown step type answers ExitNotRun with
// the real agent's message; a panicking step answers ExitNotRun too rather
// than take the daemon down.
func (s *Steps) Run(ctx context.Context, stepType v2.StepType, args []string) (output, stderr string, exitCode int) {
	s.mu.RLock()
	f, ok := s.funcs[stepType]
	s.mu.RUnlock()
	if !ok {
		return "", fmt.Sprintf("failed to find action for step type %s", stepType), ExitNotRun
	}
	defer func() {
		if r := recover(); r != nil {
			output, stderr, exitCode = "", fmt.Sprintf("step %s panicked: %v", stepType, r), ExitNotRun
		}
	}()
	return f(ctx, args)
}

// InventoryStep returns the inventory step: its single arg is the host id,
// which must be a UUID (agent-protocol-transcript.md §2); its output is the
// inventory as compact JSON.
func InventoryStep(collect func(ctx context.Context) (*v2.Inventory, error)) StepFunc {
	return func(ctx context.Context, args []string) (string, string, int) {
		if len(args) != 1 || !isUUID(args[0]) {
			// The real agent's wording (inventory_cmd.go Validate).
			return "", fmt.Sprintf("inventory cmd accepts only 1 params in args and it should be UUID, given args %v", args), ExitNotRun
		}
		inv, err := collect(ctx)
		if err != nil {
			return "", fmt.Sprintf("collect inventory: %v", err), 1
		}
		if inv == nil {
			return "", "collect inventory: no inventory returned", 1
		}
		out, err := v2.EncodeEmbedded(inv)
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
	m  map[v2.StepType]cached
}

type cached struct {
	output string
	at     time.Time
}

func newReplyCache(ttl time.Duration, now func() time.Time) *replyCache {
	return &replyCache{ttl: ttl, now: now, m: map[v2.StepType]cached{}}
}

// has reports whether output was the last one posted for stepType, within
// the TTL.
func (c *replyCache) has(stepType v2.StepType, output string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[stepType]
	return ok && e.output == output && c.now().Sub(e.at) < c.ttl
}

func (c *replyCache) store(stepType v2.StepType, output string) {
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
