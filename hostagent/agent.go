package hostagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// Defaults for the command's flags.
const (
	// DefaultInterval is the agent's --interval default: the longest wait
	// between registration attempts.
	DefaultInterval = 60 * time.Second
	// DefaultWait is how long node zero may hold a GET for instructions.
	DefaultWait = 30 * time.Second
)

// Log keys.
const (
	keyHost      = "host_id"
	keyInfraEnv  = "infra_env_id"
	keyStepType  = "step_type"
	keyStepID    = "step_id"
	keyExitCode  = "exit_code"
	keyDuration  = "duration"
	keyRetryIn   = "retry_in"
	keyErr       = "err"
	keySuppress  = "suppressed"
	keyStatus    = "status"
	keyAttempt   = "attempt"
	keyURL       = "url"
	keyEndReason = "reason"
)

// Config is the agent's configuration; the fields mirror the real agent's
// flags (docs/reference/agent-and-installer.md §1.2).
type Config struct {
	URL          string // service base URL; the client appends /api/assisted-install/v2
	InfraEnvID   string
	AgentVersion string // sent as discovery_agent_version
	Token        string // agent JWT, sent raw in X-Secret-Key
	// Interval caps the wait between registration attempts; 0 means
	// DefaultInterval. Polling is paced by the service, not by Interval.
	Interval time.Duration
	Insecure bool
	CACert   string
	// Wait is the long-poll wait sent as ?wait= (our extension); 0 means
	// plain assisted polling. The command's flag defaults to DefaultWait.
	Wait time.Duration
	// HostID is the host's id; "" means derive it with the hostID func.
	HostID string
	Logger *slog.Logger
	// Resume, when set, runs once before the first registration: it
	// continues work a restart of this process cut short (an install in
	// progress, see hostagent/installer's journal). When it reports that
	// it resumed something, the agent does not register (the service
	// would take it for a restart during installation) and Run waits for
	// ctx; otherwise the agent starts as usual.
	Resume func(ctx context.Context) (resumed bool)
}

// Agent registers a host and runs the instructions the service hands out.
type Agent struct {
	cfg    Config
	client *wire.Client
	steps  StepRunner
	hostID func() (string, error)
	log    *slog.Logger
	errLog *logLimiter
	now    func() time.Time

	// Tunables, shortened by tests.
	getBackoff  func() backoff.Backoff
	giveUpAfter time.Duration // failing GETs for this long: re-register
	stableAfter time.Duration // a session this long resets the re-register backoff
	minPollGap  time.Duration // floor between two GETs, against a hot loop
	cacheTTL    time.Duration

	wg      sync.WaitGroup // step goroutines
	mu      sync.Mutex
	running map[wire.StepType]bool
}

// New checks cfg and returns an agent. hostID derives the host id when
// cfg.HostID is "".
func New(cfg Config, steps StepRunner, hostID func() (string, error)) (*Agent, error) {
	switch {
	case steps == nil:
		return nil, errors.New("new agent: no step runner")
	case !isUUID(cfg.InfraEnvID):
		return nil, fmt.Errorf("new agent: infra-env id %q is not a UUID", cfg.InfraEnvID)
	case cfg.HostID != "" && !isUUID(cfg.HostID):
		return nil, fmt.Errorf("new agent: host id %q is not a UUID", cfg.HostID)
	case cfg.HostID == "" && hostID == nil:
		return nil, errors.New("new agent: no host id and no way to derive one")
	case cfg.Interval < 0 || cfg.Wait < 0:
		return nil, fmt.Errorf("new agent: negative interval %s or wait %s", cfg.Interval, cfg.Wait)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	client, err := wire.NewClient(cfg.URL,
		wire.WithAgentToken(cfg.Token), wire.WithAgentVersion(cfg.AgentVersion),
		wire.WithInsecure(cfg.Insecure), wire.WithCACertFile(cfg.CACert))
	if err != nil {
		return nil, fmt.Errorf("new agent: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Agent{
		cfg:         cfg,
		client:      client,
		steps:       steps,
		hostID:      hostID,
		log:         log.With(slog.String("subsystem", "hostagent")),
		errLog:      newLogLimiter(30 * time.Second),
		now:         time.Now,
		getBackoff:  backoff.Agent,
		giveUpAfter: 15 * time.Minute,
		stableAfter: time.Minute,
		minPollGap:  50 * time.Millisecond,
		cacheTTL:    time.Hour,
		running:     map[wire.StepType]bool{},
	}, nil
}

// session is what a registration yields: the ids the instruction loop uses,
// taken from next_step_runner_command.args[0] as the real agent does.
type session struct {
	infraEnvID, hostID string
}

// endReason says why an instruction loop ended.
type endReason string

const (
	endCancelled endReason = "cancelled"
	endExit      endReason = "service asked to exit"
	endNotFound  endReason = "host or infra-env not found"
	endGaveUp    endReason = "instructions unreachable for too long"
)

// Run registers the host and runs the instruction loop until ctx is
// cancelled; whenever the loop ends (post_step_action "exit", a 404, 15 min
// of failures) it registers again. It returns nil once ctx is cancelled and
// every step goroutine has finished, and an error only when the host id
// cannot be derived.
func (a *Agent) Run(ctx context.Context) error {
	defer a.client.CloseIdleConnections() // runs last: after the steps posted
	defer a.wg.Wait()

	hostID := a.cfg.HostID
	if hostID == "" {
		id, err := a.hostID()
		if err != nil {
			return fmt.Errorf("derive host id: %w", err)
		}
		if !isUUID(id) {
			return fmt.Errorf("derive host id: %q is not a UUID", id)
		}
		hostID = id
	}
	if a.cfg.Resume != nil && a.cfg.Resume(ctx) {
		a.log.Info("resumed the work of the previous process; not registering again")
		<-ctx.Done()
		return nil
	}
	// Consecutive short sessions (the service answering "exit" at once, a
	// 404 right after registering) back off; the real agent is slowed there
	// by starting a container.
	reRegister := backoff.Backoff{Initial: min(time.Second, a.cfg.Interval), Factor: 2, Jitter: 0.5, Max: a.cfg.Interval}
	for {
		s, err := a.register(ctx, hostID)
		if err != nil {
			return nil // ctx cancelled
		}
		started := a.now()
		reason := a.instructionLoop(ctx, s)
		if reason == endCancelled {
			return nil
		}
		var delay time.Duration
		if a.now().Sub(started) >= a.stableAfter {
			reRegister.Reset()
		} else {
			delay = reRegister.Next()
		}
		a.log.Info("instruction loop ended, registering again",
			slog.String(keyEndReason, string(reason)), slog.Duration(keyRetryIn, delay))
		if !backoff.Sleep(ctx, delay) {
			return nil
		}
	}
}

// register posts the host until the service accepts it or ctx is done.
func (a *Agent) register(ctx context.Context, hostID string) (session, error) {
	// Transient failures (connection refused, 5xx, 400) retry quickly at
	// first, never slower than Interval, as --interval does for the agent.
	transient := backoff.Backoff{Initial: min(time.Second, a.cfg.Interval), Factor: 2, Jitter: 0.5, Max: a.cfg.Interval}
	// 401, 403, 404 and 409 make the real agent block forever until it is
	// restarted (register_node.go). We keep retrying, slower, because here
	// the cause is often fixed without touching the host: node zero's
	// service comes up with the infra-env, a cluster reset reopens
	// registration, a token is replaced.
	rejected := backoff.Backoff{Initial: a.cfg.Interval, Factor: 2, Jitter: 0.2, Max: 10 * a.cfg.Interval}
	params := wire.HostCreateParams{HostID: hostID, DiscoveryAgentVersion: a.cfg.AgentVersion}
	log := a.log.With(slog.String(keyHost, hostID), slog.String(keyInfraEnv, a.cfg.InfraEnvID))
	for attempt := 1; ; attempt++ {
		level := slog.LevelDebug
		if attempt == 1 {
			level = slog.LevelInfo
		}
		log.Log(ctx, level, "registering host", slog.String(keyURL, a.client.BaseURL()), slog.Int(keyAttempt, attempt))
		rctx := wire.WithRequestID(ctx, wire.NewRequestID())
		resp, err := a.client.RegisterHost(rctx, a.cfg.InfraEnvID, params)
		if err == nil {
			var s session
			if s, err = runnerSession(resp); err == nil {
				a.errLog.forget("register")
				if s.hostID != hostID {
					log.Warn("service assigned another host id; using it", slog.String("assigned", s.hostID))
				}
				log.Info("host registered", slog.Int(keyAttempt, attempt))
				return s, nil
			}
		}
		if ctx.Err() != nil {
			return session{}, ctx.Err()
		}
		var delay time.Duration
		var hint string
		switch status := wire.StatusCode(err); status {
		case http.StatusUnauthorized:
			hint = "the service refused the agent token (X-Secret-Key)"
		case http.StatusForbidden:
			hint = "the agent token may not register hosts"
		case http.StatusNotFound:
			hint = "the infra-env does not exist (yet)"
		case http.StatusConflict:
			hint = "the cluster is not accepting hosts"
		case 0:
			if errors.Is(err, errIncompatible) {
				hint = "the service's answer is not one this agent understands"
			}
		}
		if hint != "" {
			delay = rejected.Next()
		} else {
			delay = transient.Next()
		}
		a.logError(log, "register", "registration failed", err, delay, slog.String("hint", hint), slog.Int(keyAttempt, attempt))
		if !backoff.Sleep(ctx, delay) {
			return session{}, ctx.Err()
		}
	}
}

// errIncompatible marks a 201 answer without a usable next-step command.
var errIncompatible = errors.New("incompatible service version")

// runnerSession validates next_step_runner_command of a registration
// answer: args[0] is JSON {agent_version, host_id, infra_env_id}
// (transcript §1.1).
func runnerSession(resp *wire.HostRegistrationResponse) (session, error) {
	cmd := resp.NextStepRunnerCommand
	if cmd == nil || len(cmd.Args) == 0 {
		return session{}, fmt.Errorf("registration answer has no next_step_runner_command args: %w", errIncompatible)
	}
	var req wire.NextStepCmdRequest
	if err := wire.DecodeEmbedded(cmd.Args[0], &req); err != nil {
		return session{}, fmt.Errorf("next_step_runner_command: %w: %w", err, errIncompatible)
	}
	if !isUUID(req.HostID) || !isUUID(req.InfraEnvID) {
		return session{}, fmt.Errorf("next_step_runner_command: host_id %q or infra_env_id %q is not a UUID: %w",
			req.HostID, req.InfraEnvID, errIncompatible)
	}
	return session{infraEnvID: req.InfraEnvID, hostID: req.HostID}, nil
}

// logError logs a failure at error level, rate-limited per key.
func (a *Agent) logError(log *slog.Logger, key, msg string, err error, retryIn time.Duration, attrs ...any) {
	ok, suppressed := a.errLog.allow(key, err.Error(), a.now())
	if !ok {
		return
	}
	attrs = append(attrs, slog.Any(keyErr, err))
	if retryIn > 0 {
		attrs = append(attrs, slog.Duration(keyRetryIn, retryIn))
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Int(keySuppress, suppressed))
	}
	log.Error(msg, attrs...)
}
