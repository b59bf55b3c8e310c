package hostagent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestReplyCache(t *testing.T) {
	f := newFakeService(t)
	ntp := &wire.Step{StepType: wire.StepTypeNTPSynchronizer, StepID: "ntp", Args: []string{`{"ntp_source":""}`}}
	var h *harness
	f.steps = func(r *http.Request, n int) (int, any) {
		if n > 1 {
			h.waitIdle(t) // the previous round's replies are posted
		}
		switch n {
		case 1, 2, 4:
			return 200, stepsOf(0, wire.StepsPostStepActionContinue, inventoryStep(fmt.Sprintf("inventory-%d", n)), ntp)
		case 3:
			return 500, map[string]any{"code": "500", "reason": "database is locked"}
		}
		return 200, stepsOf(60, wire.StepsPostStepActionContinue)
	}
	srv := f.start()
	steps := NewSteps(collectTestInventory)
	steps.Handle(wire.StepTypeNTPSynchronizer, func(context.Context, []string) (string, string, int) {
		return "", "chronyc: not found", -1
	})
	h = prepareAgent(t, srv.URL, steps, nil)
	h.start()
	waitFor(t, f.getCh, "fifth GET", func(n int) bool { return n == 5 })
	h.waitIdle(t)
	h.stop(t)

	_, _, replies := f.snapshot()
	var got []string
	for _, r := range replies {
		got = append(got, fmt.Sprintf("%s exit=%d", r.StepID, r.ExitCode))
	}
	slices.Sort(got)
	// inventory-2 is identical to inventory-1 and not posted; the failed GET
	// clears the cache, so inventory-4 is posted again. Failures always are.
	want := []string{"inventory-1 exit=0", "inventory-4 exit=0", "ntp exit=-1", "ntp exit=-1", "ntp exit=-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("posted replies mismatch (-want +got):\n%s", diff)
	}
}

func TestExitRegistersAgainWithFreshCache(t *testing.T) {
	f := newFakeService(t)
	var h *harness
	f.steps = func(r *http.Request, n int) (int, any) {
		switch n {
		case 1:
			return 200, stepsOf(0, wire.StepsPostStepActionExit, inventoryStep("inventory-1"))
		case 2:
			h.waitIdle(t)
			return 200, stepsOf(60, wire.StepsPostStepActionContinue, inventoryStep("inventory-2"))
		}
		return blockUntilDone(r)
	}
	srv := f.start()
	h = prepareAgent(t, srv.URL, nil, nil)
	h.start()
	waitFor(t, f.replyCh, "reply after re-registration", func(r reply) bool { return r.StepID == "inventory-2" })
	h.stop(t)
	regs, gets, replies := f.snapshot()
	if len(regs) != 2 || len(gets) != 2 {
		t.Errorf("registrations, GETs = %d, %d, want 2, 2 (exit → register again → GET)", len(regs), len(gets))
	}
	if len(replies) != 2 {
		t.Errorf("replies = %d, want 2: a new registration starts with an empty cache", len(replies))
	}
}

func TestConnectionRefusedThenRecovery(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens: connection refused

	f := newFakeService(t)
	h := startAgent(t, "http://"+addr, nil, nil)
	time.Sleep(200 * time.Millisecond) // several attempts at 20 ms → capped at Interval

	var srv *httptest.Server
	for i := 0; ; i++ {
		ln, err = net.Listen("tcp", addr)
		if err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("re-listen on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv = httptest.NewUnstartedServer(f.handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	started := time.Now()

	waitFor(t, f.getCh, "first GET after the service came up", func(int) bool { return true })
	if took := time.Since(started); took > 2*time.Second {
		t.Errorf("agent took %s to register after the service came up, want about Interval (20ms)", took)
	}
	h.stop(t)
	errs := h.log.errorsFor("registration failed")
	if len(errs) == 0 || !strings.Contains(errs[0], "connection refused") {
		t.Errorf("logged registration errors = %q, want one naming connection refused", errs)
	}
	if len(errs) > 2 {
		t.Errorf("logged %d identical registration errors in 200ms, want them rate-limited", len(errs))
	}
}

func TestRegisterRejectionsAreRetried(t *testing.T) {
	tests := []struct {
		name   string
		status int
		answer any
	}{
		{"401", 401, map[string]any{"code": 401, "message": "Unauthorized"}},
		{"403", 403, map[string]any{"code": 403, "message": "Forbidden"}},
		{"404 infra-env", 404, map[string]any{"code": "404", "kind": "Error", "id": 404, "reason": "infra-env not found"}},
		{"409 not accepting hosts", 409, map[string]any{"code": "409", "kind": "Error", "id": 409, "reason": "Cluster is not accepting hosts"}},
		{"500", 500, map[string]any{"code": "500", "reason": "boom"}},
		{"201 without runner command", 201, wire.Host{ID: testHost}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeService(t)
			f.register = func(n int, _ wire.HostCreateParams) (int, any) {
				if n <= 2 {
					return tc.status, tc.answer
				}
				return http.StatusCreated, nil
			}
			srv := f.start()
			h := startAgent(t, srv.URL, nil, nil)
			waitFor(t, f.getCh, "GET after the third registration", func(int) bool { return true })
			h.stop(t)
			regs, _, _ := f.snapshot()
			if len(regs) != 3 {
				t.Errorf("registrations = %d, want 3", len(regs))
			}
			if len(h.log.errorsFor("registration failed")) == 0 {
				t.Error("no registration failure logged")
			}
		})
	}
}

func TestGetFailures(t *testing.T) {
	t.Run("backoff then recovery", func(t *testing.T) {
		f := newFakeService(t)
		f.steps = func(r *http.Request, n int) (int, any) {
			if n <= 4 {
				return 503, map[string]any{"code": "503", "reason": "unavailable"}
			}
			return 200, stepsOf(60, wire.StepsPostStepActionContinue, inventoryStep("inventory-5"))
		}
		h := startAgent(t, f.start().URL, nil, nil)
		waitFor(t, f.replyCh, "inventory after recovery", func(reply) bool { return true })
		h.stop(t)
		regs, gets, _ := f.snapshot()
		if len(regs) != 1 {
			t.Errorf("registrations = %d, want 1: GET failures retry without re-registering", len(regs))
		}
		ids := map[string]bool{}
		for i, g := range gets {
			ids[g.Header.Get("X-Request-Id")] = true
			if i > 0 {
				if gap := g.At.Sub(gets[i-1].At); gap < 4*time.Millisecond {
					t.Errorf("GET %d came %s after the previous one, want a backoff delay", i+1, gap)
				}
			}
		}
		if len(ids) != len(gets) {
			t.Errorf("%d GETs used %d request ids, want a new id per retry", len(gets), len(ids))
		}
	})
	t.Run("404 registers again", func(t *testing.T) {
		f := newFakeService(t)
		f.steps = func(r *http.Request, n int) (int, any) {
			if n == 1 {
				return 404, map[string]any{"code": "404", "reason": "host not found"}
			}
			return 200, stepsOf(60, wire.StepsPostStepActionContinue)
		}
		h := startAgent(t, f.start().URL, nil, nil)
		waitFor(t, f.getCh, "GET after re-registration", func(n int) bool { return n == 2 })
		h.stop(t)
		if regs, _, _ := f.snapshot(); len(regs) != 2 {
			t.Errorf("registrations = %d, want 2", len(regs))
		}
	})
	t.Run("give up after failing too long", func(t *testing.T) {
		f := newFakeService(t)
		var regs atomic.Int32
		f.register = func(n int, _ wire.HostCreateParams) (int, any) { regs.Store(int32(n)); return 201, nil }
		f.steps = func(r *http.Request, n int) (int, any) {
			if regs.Load() < 2 {
				return 500, nil
			}
			return 200, stepsOf(60, wire.StepsPostStepActionContinue)
		}
		h := prepareAgent(t, f.start().URL, nil, nil)
		h.a.giveUpAfter = 100 * time.Millisecond
		h.start()
		waitFor(t, f.regCh, "second registration", func(n int) bool { return n == 2 })
		h.stop(t)
	})
}

// TestStepsRunConcurrently fails if the two steps run one after the other:
// each waits for the other to start.
func TestStepsRunConcurrently(t *testing.T) {
	f := newFakeService(t)
	f.steps = func(r *http.Request, n int) (int, any) {
		if n == 1 {
			return 200, stepsOf(60, wire.StepsPostStepActionContinue,
				&wire.Step{StepType: wire.StepTypeVerifyVIPs, StepID: "a", Args: []string{"[]"}},
				&wire.Step{StepType: wire.StepTypeDomainResolution, StepID: "b", Args: []string{"{}"}})
		}
		return blockUntilDone(r)
	}
	var barrier sync.WaitGroup
	barrier.Add(2)
	step := func(ctx context.Context, _ []string) (string, string, int) {
		barrier.Done()
		done := make(chan struct{})
		go func() { barrier.Wait(); close(done) }()
		select {
		case <-done:
			return "[]", "", 0
		case <-time.After(5 * time.Second):
			return "", "the other step never started", 1
		}
	}
	steps := NewSteps(nil)
	steps.Handle(wire.StepTypeVerifyVIPs, step)
	steps.Handle(wire.StepTypeDomainResolution, step)
	h := startAgent(t, f.start().URL, steps, nil)
	for range 2 {
		r := waitFor(t, f.replyCh, "step reply", func(reply) bool { return true })
		if r.ExitCode != 0 {
			t.Errorf("step %s: exit %d %q, want both steps running at once", r.StepID, r.ExitCode, r.Error)
		}
	}
	h.stop(t)
}

func TestUnknownAndInvalidSteps(t *testing.T) {
	f := newFakeService(t)
	f.steps = func(r *http.Request, n int) (int, any) {
		if n == 1 {
			return 200, stepsOf(60, wire.StepsPostStepActionContinue,
				&wire.Step{StepType: wire.StepTypeExecute, StepID: "execute-1", Args: []string{"ls"}},
				&wire.Step{StepType: "no-such-step", StepID: "x-1"},
				&wire.Step{StepType: wire.StepTypeInventory, StepID: "inventory-1", Args: []string{"not-a-uuid"}})
		}
		return blockUntilDone(r)
	}
	h := startAgent(t, f.start().URL, nil, nil)
	got := map[string]map[string]any{}
	for range 3 {
		r := waitFor(t, f.replyCh, "step reply", func(reply) bool { return true })
		got[r.StepID] = r.Raw
	}
	h.stop(t)
	want := map[string]map[string]any{
		"execute-1": {"step_type": "execute", "step_id": "execute-1", "exit_code": float64(-1),
			"error": "failed to find action for step type execute"},
		"x-1": {"step_type": "no-such-step", "step_id": "x-1", "exit_code": float64(-1),
			"error": "failed to find action for step type no-such-step"},
		"inventory-1": {"step_type": "inventory", "step_id": "inventory-1", "exit_code": float64(-1),
			"error": "inventory cmd accepts only 1 params in args and it should be UUID, given args [not-a-uuid]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replies mismatch (-want +got):\n%s", diff)
	}
}

// TestCancelStopsEverything cancels the agent while a step runs and a long
// poll is held: Run must wait for the step, post nothing for it, and leave
// no goroutine behind.
func TestCancelStopsEverything(t *testing.T) {
	baseline := runtime.NumGoroutine()
	f := newFakeService(t)
	f.steps = func(r *http.Request, n int) (int, any) {
		if n == 1 {
			return 200, stepsOf(0, wire.StepsPostStepActionContinue, &wire.Step{StepType: wire.StepTypeInstall, StepID: "install-1"})
		}
		return blockUntilDone(r)
	}
	srv := httptest.NewServer(f.handler())
	started, stopped := make(chan struct{}), make(chan struct{})
	steps := NewSteps(nil)
	steps.Handle(wire.StepTypeInstall, func(ctx context.Context, _ []string) (string, string, int) {
		close(started)
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // cleanup work Run must wait for
		close(stopped)
		return "", "cancelled", 1
	})
	h := startAgent(t, srv.URL, steps, func(c *Config) { c.Wait = time.Minute })
	<-started
	waitFor(t, f.getCh, "the held long poll", func(n int) bool { return n == 2 })
	if err := h.stop(t); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	select {
	case <-stopped:
	default:
		t.Error("Run returned before the running step finished")
	}
	srv.Close()
	if _, _, replies := f.snapshot(); len(replies) != 0 {
		t.Errorf("replies after cancel = %+v, want none", replies)
	}
	var n int
	for range 500 {
		if n = runtime.NumGoroutine(); n <= baseline {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	t.Errorf("goroutines = %d after stop, want <= %d as before the test:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
}
