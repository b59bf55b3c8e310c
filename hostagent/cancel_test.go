package hostagent

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// blockingStep runs until its context ends, then answers as a cancelled
// installer does; started is closed once it runs.
func blockingStep(started chan struct{}) step.Func {
	return func(ctx context.Context, _ []string) (string, string, int) {
		close(started)
		<-ctx.Done()
		return "", "installer stopped: " + ctx.Err().Error(), 2
	}
}

func TestStopInstallationCancelsInstall(t *testing.T) {
	steps := NewSteps(nil)
	started, otherStarted := make(chan struct{}), make(chan struct{})
	steps.Handle(wire.StepTypeInstall, blockingStep(started))
	steps.Handle(wire.StepTypeLogsGather, blockingStep(otherStarted))
	steps.Handle(wire.StepTypeStopInstallation, StopInstallationStep(steps, 0))

	type result struct {
		stderr string
		code   int
	}
	install, other := make(chan result, 1), make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, stderr, code := steps.Run(ctx, wire.StepTypeInstall, nil)
		install <- result{stderr, code}
	}()
	go func() {
		_, stderr, code := steps.Run(ctx, wire.StepTypeLogsGather, nil)
		other <- result{stderr, code}
	}()
	<-started
	<-otherStarted

	out, stderr, code := steps.Run(context.Background(), wire.StepTypeStopInstallation, nil)
	if out != "" || stderr != "" || code != 0 {
		t.Errorf("stop-installation = %q, %q, %d; want 0 and nothing else", out, stderr, code)
	}
	// Stop answers once install has returned: its result is already there.
	select {
	case r := <-install:
		if r.code != 2 || !strings.Contains(r.stderr, "context canceled") {
			t.Errorf("cancelled install = %q, %d; want its own answer to the cancel", r.stderr, r.code)
		}
	default:
		t.Fatal("stop-installation answered before the install step returned")
	}
	// Other steps go on.
	select {
	case r := <-other:
		t.Fatalf("logs-gather returned %v when install was stopped", r)
	default:
	}
	if n, err := steps.Cancel(context.Background(), wire.StepTypeInstall); n != 0 || err != nil {
		t.Errorf("Cancel(install) after it returned = %d, %v; want 0, nil", n, err)
	}
	cancel()
	<-other
}

func TestStopInstallationNothingRunning(t *testing.T) {
	steps := NewSteps(nil)
	steps.Handle(wire.StepTypeStopInstallation, StopInstallationStep(steps, 0))
	if out, stderr, code := steps.Run(context.Background(), wire.StepTypeStopInstallation, nil); out != "" || stderr != "" || code != 0 {
		t.Errorf("stop-installation with nothing running = %q, %q, %d; want 0", out, stderr, code)
	}
}

// TestStopInstallationStubbornInstall: an install step that ignores its
// context is reported, not waited for forever.
func TestStopInstallationStubbornInstall(t *testing.T) {
	steps := NewSteps(nil)
	started, release := make(chan struct{}), make(chan struct{})
	steps.Handle(wire.StepTypeInstall, func(context.Context, []string) (string, string, int) {
		close(started)
		<-release
		return "", "", 0
	})
	steps.Handle(wire.StepTypeStopInstallation, StopInstallationStep(steps, 10*time.Millisecond))
	returned := make(chan struct{})
	go func() {
		steps.Run(context.Background(), wire.StepTypeInstall, nil)
		close(returned)
	}()
	<-started
	_, stderr, code := steps.Run(context.Background(), wire.StepTypeStopInstallation, nil)
	if code != 1 || !strings.Contains(stderr, "still running") {
		t.Errorf("stop-installation of a stubborn install = %q, %d; want 1 saying it still runs", stderr, code)
	}
	close(release)
	<-returned
}

// TestStopInstallationThroughTheLoop: the service hands out install, then
// stop-installation; both answer, the install with its cancelled result.
func TestStopInstallationThroughTheLoop(t *testing.T) {
	f := newFakeService(t)
	started := make(chan struct{})
	f.steps = func(r *http.Request, n int) (int, any) {
		switch n {
		case 1:
			return 200, stepsOf(0, wire.StepsPostStepActionContinue,
				&wire.Step{StepType: wire.StepTypeInstall, StepID: "install-1", Args: []string{"{}"}})
		case 2:
			<-started
			return 200, stepsOf(60, wire.StepsPostStepActionContinue,
				&wire.Step{StepType: wire.StepTypeStopInstallation, StepID: "stop-installation-1"})
		}
		return blockUntilDone(r)
	}
	steps := NewSteps(nil)
	steps.Handle(wire.StepTypeInstall, blockingStep(started))
	steps.Handle(wire.StepTypeStopInstallation, StopInstallationStep(steps, 0))
	h := startAgent(t, f.start().URL, steps, nil)
	got := map[string]reply{}
	for range 2 {
		r := waitFor(t, f.replyCh, "step reply", func(reply) bool { return true })
		got[r.StepID] = r
	}
	h.stop(t)
	if r := got["stop-installation-1"]; r.StepType != wire.StepTypeStopInstallation || r.ExitCode != 0 {
		t.Errorf("stop-installation reply = %+v, want exit 0", r.StepReply)
	}
	if r := got["install-1"]; r.StepType != wire.StepTypeInstall || r.ExitCode != 2 || !strings.Contains(r.Error, "installer stopped") {
		t.Errorf("install reply = %+v, want its cancelled answer (exit 2)", r.StepReply)
	}
}
