package simagent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// Request kinds: the rows of a load test's latency table. A GET for
// instructions with ?wait= is held by node zero until a step is due, so its
// latency is the hold, not the service's speed: calls that brought
// instructions and calls that came back empty are kept apart. A GET
// without ?wait= (Config.Wait 0) is answered at once: its latency is the
// service's.
const (
	KindRegister      = "register"
	KindNextSteps     = "next-steps (immediate)" // the answer held instructions, at once or when work woke the hold
	KindNextStepsHeld = "next-steps (held)"      // the answer was empty: the wait ran out
	KindNextStepsPoll = "next-steps (poll)"      // no ?wait=: answered at once, with or without instructions
	KindStepReply     = "step-reply"
	// KindStepReplyConnectivity is a connectivity-check reply: the one
	// that grows with the cluster (a report names every other host).
	KindStepReplyConnectivity = "step-reply (connectivity)"
)

// Observer receives the latency and outcome of every request an agent
// makes. It must be safe for concurrent use.
type Observer interface {
	Observe(kind string, d time.Duration, err error)
}

// Config is one simulated agent.
type Config struct {
	// Client is the v2 client the agent speaks through, usually shared by
	// a whole fleet: it carries the agent token, the agent version and the
	// transport.
	Client *wire.Client
	// AgentVersion goes into the registration body, as the real agent
	// sends it there and in the header (transcript §7.9); give the client
	// the same value with wire.WithAgentVersion.
	AgentVersion string
	InfraEnvID   string
	Host         Host
	// Wait is the ?wait= of instruction requests. 0 never long-polls: the
	// agent sleeps next_instruction_seconds between requests, timed from
	// each answer, as assisted-installer-agent does (the upstream cadence).
	Wait time.Duration
	// APIVIP and IngressVIP are what the cluster's names resolve to in
	// domain-resolution answers; zero leaves them unresolved.
	APIVIP, IngressVIP netip.Addr
	// RetryInterval caps the wait between failed registrations (the
	// agent's --interval); 0 means 60 s.
	RetryInterval time.Duration
	Observer      Observer // nil: none
	// Install is how the host runs the install step; its zero value
	// refuses it.
	Install InstallConfig
}

// Agent is one simulated host agent.
type Agent struct {
	cfg       Config
	inventory string // the inventory step's output, encoded once
	sess      session
	now       func() time.Time
	// minPollGap is the floor between two GETs, as hostagent keeps.
	minPollGap time.Duration
	// pause is the wait for next_instruction_seconds (tests record it).
	pause func(ctx context.Context, d time.Duration) bool

	instMu sync.Mutex
	inst   *installation // the install step, once started
}

// session holds the ids a registration hands out (next_step_runner_command).
type session struct{ infraEnvID, hostID string }

// New returns an agent for cfg.
func New(cfg Config) (*Agent, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("new sim agent: no client")
	case cfg.InfraEnvID == "":
		return nil, errors.New("new sim agent: no infra-env id")
	case cfg.Host.ID == "" || !cfg.Host.Address.IsValid():
		return nil, errors.New("new sim agent: host has no id or address")
	case cfg.Wait < 0:
		return nil, fmt.Errorf("new sim agent: negative wait %s", cfg.Wait)
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = time.Minute
	}
	inv, err := wire.EncodeEmbedded(cfg.Host.Inventory())
	if err != nil {
		return nil, fmt.Errorf("new sim agent: %w", err)
	}
	return &Agent{cfg: cfg, inventory: inv, now: time.Now, minPollGap: 50 * time.Millisecond, pause: backoff.Sleep}, nil
}

// Host returns the agent's host.
func (a *Agent) Host() Host { return a.cfg.Host }

// Run registers the host and answers instructions until ctx is done; when
// the service ends a session (post_step_action "exit", a 404) it registers
// again. When the install step reboots the host, the discovery agent is
// gone: Run plays the installed host (installed) and returns. It returns
// nil once ctx is cancelled or the installed host is done.
func (a *Agent) Run(ctx context.Context) error {
	short := backoff.Backoff{Initial: time.Second, Factor: 2, Jitter: 0.25, Max: a.cfg.RetryInterval}
	for {
		if err := a.register(ctx); err != nil {
			return nil // ctx done
		}
		started := a.now()
		end, disk := a.instructionLoop(ctx)
		switch end {
		case endCancelled:
			return nil
		case endRebooted:
			a.installed(ctx, disk)
			return nil
		}
		// A session that ends at once is not repeated in a hot loop.
		var delay time.Duration
		if a.now().Sub(started) < time.Minute {
			delay = short.Next()
		} else {
			short.Reset()
		}
		if !backoff.Sleep(ctx, delay) {
			return nil
		}
	}
}

// register posts the host until the service accepts it or ctx is done.
func (a *Agent) register(ctx context.Context) error {
	retry := backoff.Backoff{Initial: time.Second, Factor: 2, Jitter: 0.25, Max: a.cfg.RetryInterval}
	params := wire.HostCreateParams{HostID: a.cfg.Host.ID, DiscoveryAgentVersion: a.cfg.AgentVersion}
	for {
		start := a.now()
		resp, err := a.cfg.Client.RegisterHost(wire.WithRequestID(ctx, wire.NewRequestID()), a.cfg.InfraEnvID, params)
		if err == nil {
			a.sess, err = sessionOf(resp)
		}
		if !a.record(ctx, KindRegister, start, err) {
			return ctx.Err()
		}
		if err == nil {
			return nil
		}
		if !backoff.Sleep(ctx, retry.Next()) {
			return ctx.Err()
		}
	}
}

// sessionOf validates next_step_runner_command.args[0], as the real agent
// does before starting its step runner (transcript §1.1).
func sessionOf(resp *wire.HostRegistrationResponse) (session, error) {
	cmd := resp.NextStepRunnerCommand
	if cmd == nil || len(cmd.Args) == 0 {
		return session{}, errors.New("registration answer has no next_step_runner_command args")
	}
	var req wire.NextStepCmdRequest
	if err := wire.DecodeEmbedded(cmd.Args[0], &req); err != nil {
		return session{}, fmt.Errorf("next_step_runner_command: %w", err)
	}
	if req.HostID == "" || req.InfraEnvID == "" {
		return session{}, errors.New("next_step_runner_command: no host_id or infra_env_id")
	}
	return session{infraEnvID: req.InfraEnvID, hostID: req.HostID}, nil
}

func (a *Agent) sessionHostID() string { return a.sess.hostID }

// endReason is why an instruction loop ended.
type endReason int

const (
	endCancelled endReason = iota // ctx is done
	endSession                    // the service ended the session: register again
	endRebooted                   // the install step rebooted the host
)

// instructionLoop asks for instructions and answers them until the session
// ends. The install step runs beside it, as every step of the real agent
// runs in its own goroutine; when it reboots the host the loop ends with
// endRebooted and the disk the host boots.
func (a *Agent) instructionLoop(parent context.Context) (endReason, *bootDisk) {
	ctx, stop := context.WithCancel(parent)
	defer stop()
	var mu sync.Mutex
	var booted *bootDisk
	reboot := func(d *bootDisk) {
		mu.Lock()
		booted = d
		mu.Unlock()
		stop()
	}
	end := func(r endReason) (endReason, *bootDisk) {
		stop()
		a.waitInstall()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case booted != nil && parent.Err() == nil:
			return endRebooted, booted
		case parent.Err() != nil:
			return endCancelled, nil
		}
		return r, nil
	}
	// A fresh reply cache per session, as each real step runner has.
	cache := map[wire.StepType]string{}
	retry := backoff.Backoff{Initial: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.25, Max: time.Minute}
	var lastGet time.Time
	for {
		if gap := a.minPollGap - a.now().Sub(lastGet); gap > 0 && !backoff.Sleep(ctx, gap) {
			return end(endCancelled)
		}
		lastGet = a.now()
		// One request id per session: the GET and the replies it causes.
		sctx := wire.WithRequestID(ctx, wire.NewRequestID())
		steps, err := a.cfg.Client.NextSteps(sctx, a.sess.infraEnvID, a.sess.hostID, lastGet.Unix(), a.cfg.Wait)
		took := a.now().Sub(lastGet)
		if ctx.Err() != nil {
			return end(endCancelled)
		}
		if err != nil {
			a.observe(a.nextStepsKind(nil), took, err)
			clear(cache) // the service may have lost state: send everything again
			if wire.IsStatus(err, http.StatusNotFound) {
				return end(endSession) // register again
			}
			if !backoff.Sleep(ctx, retry.Next()) {
				return end(endCancelled)
			}
			continue
		}
		retry.Reset()
		a.observe(a.nextStepsKind(steps), took, nil)
		for _, st := range steps.Instructions {
			switch {
			case st == nil:
			case st.StepType == wire.StepTypeInstall:
				a.installStep(sctx, st, reboot)
			case st.StepType == wire.StepTypeStopInstallation:
				stderr, code := a.stopInstall()
				a.post(sctx, st, "", stderr, code, cache)
			default:
				a.reply(sctx, st, cache)
			}
		}
		if ctx.Err() != nil {
			return end(endCancelled)
		}
		if steps.PostStepAction == wire.StepsPostStepActionExit {
			return end(endSession)
		}
		// A long-polling agent is told 0 and asks again at once. One that
		// does not sleeps next_instruction_seconds from the answer: the
		// upstream agent runs the steps beside and sleeps at once, so the
		// time spent answering them here comes off the sleep.
		next := time.Duration(min(max(steps.NextInstructionSeconds, 0), 3600)) * time.Second
		if !a.pause(ctx, next-a.now().Sub(lastGet.Add(took))) {
			return end(endCancelled)
		}
	}
}

// nextStepsKind is the request kind of an instructions GET that brought
// steps (nil: failed).
func (a *Agent) nextStepsKind(steps *wire.Steps) string {
	switch {
	case a.cfg.Wait == 0:
		return KindNextStepsPoll
	case steps != nil && len(steps.Instructions) == 0:
		return KindNextStepsHeld
	}
	return KindNextSteps
}

// reply answers st and posts the result, unless it repeats the last
// successful output of its step type (the real agent's reply cache). A
// failed post leaves the cache alone, so the next round sends it again.
func (a *Agent) reply(ctx context.Context, st *wire.Step, cache map[wire.StepType]string) {
	output, stderr, code := a.answer(st)
	a.post(ctx, st, output, stderr, code, cache)
}

// post sends a step's result unless cache (nil: none) holds the same
// successful output of its type.
func (a *Agent) post(ctx context.Context, st *wire.Step, output, stderr string, code int, cache map[wire.StepType]string) {
	if code == 0 && cache != nil {
		if last, ok := cache[st.StepType]; ok && last == output {
			return
		}
	}
	start := a.now()
	err := a.cfg.Client.PostStepReply(ctx, a.sess.infraEnvID, a.sess.hostID,
		wire.StepReply{StepType: st.StepType, StepID: st.StepID, ExitCode: int64(code), Output: output, Error: stderr})
	kind := KindStepReply
	if st.StepType == wire.StepTypeConnectivityCheck {
		kind = KindStepReplyConnectivity
	}
	if !a.record(ctx, kind, start, err) {
		return
	}
	if err == nil && code == 0 && cache != nil {
		cache[st.StepType] = output
	}
}

func (a *Agent) observe(kind string, d time.Duration, err error) {
	if a.cfg.Observer != nil {
		a.cfg.Observer.Observe(kind, d, err)
	}
}

// record observes a request that started at start, unless it failed
// because ctx ended (the agent stopping is no error of the service's); an
// answer that arrived is recorded even when ctx ended meanwhile. It
// reports whether ctx is still going.
func (a *Agent) record(ctx context.Context, kind string, start time.Time, err error) bool {
	if err == nil || ctx.Err() == nil {
		a.observe(kind, a.now().Sub(start), err)
	}
	return ctx.Err() == nil
}
