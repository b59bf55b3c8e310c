package installer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// Retry policy for calls to the service: the first retry after a second
// (less when the whole window is shorter), doubling up to half a minute.
const (
	retryFirst = time.Second
	retryMax   = 30 * time.Second
)

// percentStep is how far the write progress must grow before it is
// reported again (assisted's coreos-installer log writer).
const percentStep = 5

// serviceError is a call to the service that kept failing for the whole
// retry window: the service is gone, so the Failed report that follows is
// tried once only.
type serviceError struct {
	op  string
	err error
}

func (e *serviceError) Error() string { return e.op + ": " + e.err.Error() }
func (e *serviceError) Unwrap() error { return e.err }

// retry calls f until it succeeds, ctx ends, or window has passed since the
// first call. A window of 0 calls f once.
func retry(ctx context.Context, window time.Duration, log *slog.Logger, op string, f func(context.Context) error) error {
	deadline := time.Now().Add(window)
	delay := min(retryFirst, window/10)
	for attempt := 1; ; attempt++ {
		err := f(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", op, ctx.Err())
		}
		if window <= 0 || time.Now().Add(delay).After(deadline) {
			return &serviceError{op: op, err: fmt.Errorf("%w (gave up after %d attempts)", err, attempt)}
		}
		log.Warn(op+" failed; retrying", slog.Any(keyErr, err), slog.Int(keyAttempt, attempt), slog.Duration(keyRetryIn, delay))
		if !backoff.Sleep(ctx, delay) {
			return fmt.Errorf("%s: %w", op, ctx.Err())
		}
		delay = min(delay*2, retryMax)
	}
}

// reporter sends the host's progress. It holds the stages the role may
// report, in order, and refuses to go back: a stage out of order is a bug
// here, and the service would answer it 409.
type reporter struct {
	svc    Service
	log    *slog.Logger
	window time.Duration // how long a failing stage report is retried
	stages []wire.HostStage

	mu      sync.Mutex
	cur     int // index in stages of the last stage reported, -1 before
	lastPct int // last percent reported in the current stage
	// reported is the index of the stage the service had when this
	// installation was resumed (-1: none): stages up to it were reported
	// before the restart and are not sent again.
	reported int
	// console gets each stage as a line (Config.Console); nil: none.
	console func(string)
}

func newReporter(svc Service, log *slog.Logger, window time.Duration, stages []wire.HostStage) *reporter {
	return &reporter{svc: svc, log: log, window: window, stages: stages, cur: -1, reported: -1}
}

// resumeAt tells the reporter the service already has the host at stage
// (a resumed installation); "" or a stage not in the list changes nothing.
func (r *reporter) resumeAt(stage wire.HostStage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reported = slices.Index(r.stages, stage)
}

// stage reports the next stage with info, retrying for the window.
func (r *reporter) stage(ctx context.Context, stage wire.HostStage, info string) error {
	r.mu.Lock()
	i := slices.Index(r.stages, stage)
	if i >= 0 && i <= r.reported && i > r.cur {
		// Reported before this process restarted: the installation
		// passes it again without telling the service twice.
		r.cur, r.lastPct = i, 0
		r.mu.Unlock()
		r.log.Info("install stage already reported before the restart", slog.String(keyStage, string(stage)))
		return nil
	}
	if i <= r.cur {
		r.mu.Unlock()
		return fmt.Errorf("report stage %q: not after %q in %q", stage, r.current(), r.stages)
	}
	r.cur, r.lastPct = i, 0
	r.mu.Unlock()
	r.log.Info("install stage", slog.String(keyStage, string(stage)), slog.String(keyInfo, info))
	if err := r.send(ctx, r.window, stage, info); err != nil {
		return err
	}
	r.say(stage, info)
	return nil
}

func (r *reporter) current() wire.HostStage {
	if r.cur < 0 {
		return ""
	}
	return r.stages[r.cur]
}

// percent returns the progress callback of the current stage: it re-reports
// the stage with info "NN%" when the percentage grew by percentStep points
// since the last report, and at 100 %. These reports are tried once and
// their failures only logged, as assisted's log writer does: they are news,
// and the write must not wait on the service.
func (r *reporter) percent(ctx context.Context) func(int) {
	return func(p int) {
		p = min(max(p, 0), 100)
		r.mu.Lock()
		send := p >= r.lastPct+percentStep || p == 100 && r.lastPct < 100
		if send {
			r.lastPct = p
		}
		stage := r.current()
		r.mu.Unlock()
		if !send || stage == "" {
			return
		}
		if err := r.send(ctx, 0, stage, strconv.Itoa(p)+"%"); err != nil {
			r.log.Warn("report write progress failed", slog.Any(keyErr, err))
		}
	}
}

// failed reports stage Failed with the error text, as assisted-installer
// does before it exits 1. When the service itself was what failed, one
// attempt is enough.
func (r *reporter) failed(ctx context.Context, cause error) error {
	window := r.window
	var se *serviceError
	if errors.As(cause, &se) {
		window = 0
	}
	return r.send(ctx, window, wire.HostStageFailed, cause.Error())
}

// send puts one progress report. A 409 answer means the service has the
// host past this stage already (a retried report that got through, a
// service that moved the host on): nothing to do.
func (r *reporter) send(ctx context.Context, window time.Duration, stage wire.HostStage, info string) error {
	return retry(ctx, window, r.log, "report stage "+string(stage), func(ctx context.Context) error {
		err := r.svc.UpdateProgress(ctx, stage, info)
		if wire.IsStatus(err, http.StatusConflict) {
			r.log.Info("service refused the progress report as stale; going on", slog.String(keyStage, string(stage)), slog.Any(keyErr, err))
			return nil
		}
		return err
	})
}

// say writes a stage to the console, when there is one.
func (r *reporter) say(stage wire.HostStage, info string) {
	if r.console == nil {
		return
	}
	line := "install: " + string(stage)
	if info != "" {
		line += ": " + info
	}
	r.console(line)
}
