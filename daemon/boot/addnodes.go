package boot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/daemon/register"
	"github.com/nodezero/nodezero/onhost"
)

// ErrTokenExpired ends the add-nodes flow of a host whose node config
// image's tokens have expired (AUTH_TOKEN_EXPIRY is past).
var ErrTokenExpired = errors.New("the authentication token has expired")

// MsgTokenExpired is agent-auth-token-status's 65_token line
// (docs/reference/abi-on-host.md §3.7).
const MsgTokenExpired = `The authentication token has expired. Please generate a new ISO using the "oc adm node-image create" command, then reboot the node.`

// ReadAddNodesEnv reads /etc/assisted/add-nodes.env under root; ok is
// false when the file is absent (a day-1 host).
func ReadAddNodesEnv(root string) (env onhost.AddNodesEnv, ok bool, err error) {
	path := filepath.Join(root, onhost.AddNodesEnvPath)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return env, false, nil
	}
	if err != nil {
		return env, false, fmt.Errorf("config: %w", err)
	}
	env, err = onhost.ParseAddNodesEnv(path, b)
	if err != nil {
		return env, false, fmt.Errorf("config: %w", err)
	}
	return env, true, nil
}

// TokenWatch is agent-auth-token-status: it compares AUTH_TOKEN_EXPIRY
// with the clock every 5 s and, once it is past, shows MsgTokenExpired in
// 65_token.
type TokenWatch struct {
	Expiry time.Time
	Board  *issue.Board
	// Now is the clock (nil: time.Now); Tick, when set, replaces the 5 s
	// ticker (tests drive the watch with it).
	Now    func() time.Time
	Tick   <-chan time.Time
	Logger *slog.Logger
}

// Expired checks the token once, showing the 65_token line when it has
// expired.
func (w TokenWatch) Expired(ctx context.Context) bool {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	if now().Before(w.Expiry) {
		return false
	}
	if _, err := w.Board.Set(ctx, issue.KeyToken, issue.LightRed, MsgTokenExpired); err != nil && w.Logger != nil {
		w.Logger.Warn("console status", "err", err)
	}
	return true
}

// Run checks the token at once and then at every tick; it returns
// ErrTokenExpired once the token has expired, or the context's error.
func (w TokenWatch) Run(ctx context.Context) error {
	tick := w.Tick
	if tick == nil {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		tick = t.C
	}
	for {
		if w.Expired(ctx) {
			return ErrTokenExpired
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
		}
	}
}

// AddNodes is the add-nodes workflow of a host booted from a node config
// image, on its own node zero (docs/reference/abi-on-host.md §1.4, §3.7):
// agent-auth-token-status beside agent-import-cluster,
// agent-register-infraenv, apply-host-config and agent-add-node
// (register.AddNode), with their status lines.
type AddNodes struct {
	Register register.AddNodeConfig // its Status is AddNodes'
	Token    TokenWatch
	Board    *issue.Board
	Status   func(string) // systemd's STATUS; nil = none
	Logger   *slog.Logger
}

// Run checks the token first: an expired one stops the flow before the
// import, with the 65_token line, and so does a token that expires while
// the flow waits (no import, no install: the host stays up showing the
// line). It returns ErrTokenExpired then, register.AddNode's result
// otherwise.
func (a AddNodes) Run(ctx context.Context) error {
	if a.Logger == nil {
		a.Logger = slog.New(slog.DiscardHandler)
	}
	if a.Token.Logger == nil {
		a.Token.Logger = a.Logger
	}
	if a.Token.Board == nil {
		a.Token.Board = a.Board
	}
	if a.Token.Expired(ctx) {
		a.expired(ctx)
		return ErrTokenExpired
	}
	flow, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go func() {
		if err := a.Token.Run(flow); errors.Is(err, ErrTokenExpired) {
			stop(ErrTokenExpired)
		}
	}()
	cfg := a.Register
	cfg.Status = func(st register.AddNodeStatus) {
		if flow.Err() != nil {
			return // the token expired: its line is the one to read
		}
		line := st.Line
		if st.Err != nil && !strings.Contains(line, st.Err.Error()) {
			line += ": " + st.Err.Error()
		}
		a.Logger.Info(line, "stage", "add-node", "step", st.Step)
		var failures []string
		if cfg.FailuresFile != "" {
			b, err := os.ReadFile(cfg.FailuresFile)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				a.Logger.Warn("host config failures", "err", err)
			}
			failures = strings.Split(string(b), "\n")
		}
		if err := ShowAddNodeStatus(ctx, a.Board, st, failures); err != nil {
			a.Logger.Warn("console status", "err", err)
		}
		if a.Status != nil {
			a.Status(line) // after the console: what systemd says is shown
		}
	}
	id, err := register.AddNode(flow, cfg)
	if errors.Is(context.Cause(flow), ErrTokenExpired) {
		a.expired(ctx)
		return ErrTokenExpired
	}
	if err == nil {
		a.Logger.Info("add-nodes flow done", "host", id, "stage", "add-node")
	}
	return err
}

// expired leaves the token's line alone on the console.
func (a AddNodes) expired(ctx context.Context) {
	a.Logger.Error(MsgTokenExpired, "stage", "add-node", "expiry", a.Token.Expiry.UTC().Format(time.RFC3339))
	if a.Status != nil {
		a.Status(MsgTokenExpired)
	}
	for _, k := range []issue.Key{issue.KeyAddNode, issue.KeyAgentServices} {
		if err := a.Board.Clear(ctx, k); err != nil {
			a.Logger.Warn("console status", "err", err)
		}
	}
}

// ShowAddNodeStatus puts one turn of the add-nodes flow on the console:
//   - 90_add-node, as add-node.sh writes it: yellow "Waiting for the host
//     to be ready" until the host is known, followed by what keeps it
//     from known (its failing validations' messages); green once its
//     install runs or it was added; light red when the install failed;
//   - 70_agent-services, as install-status.sh lists the add-nodes units
//     that are not active: "Waiting for services:" and the step being
//     retried with its error, cleared once it succeeds;
//   - 80_host-config: this host's host config failures under
//     "Installation cannot proceed:" as day 1 shows them
//     (ShowInstallStatus), cleared once the install runs.
func ShowAddNodeStatus(ctx context.Context, b *issue.Board, st register.AddNodeStatus, failures []string) error {
	var errs []error
	set := func(k issue.Key, c issue.Color, lines ...string) {
		if _, err := b.Set(ctx, k, c, lines...); err != nil {
			errs = append(errs, err)
		}
	}
	clear := func(k issue.Key) {
		if err := b.Clear(ctx, k); err != nil {
			errs = append(errs, err)
		}
	}
	var lines []string
	for _, f := range failures {
		if f = strings.TrimSpace(f); f != "" && !notRegistered(f) {
			lines = append(lines, f)
		}
	}
	retrying := st.Err != nil && (st.Step == register.StepImportCluster || st.Step == register.StepRegisterInfraEnv)
	if retrying {
		set(issue.KeyAgentServices, issue.Yellow, "Waiting for services:", "[retrying] "+st.Step+": "+st.Err.Error())
	} else {
		clear(issue.KeyAgentServices)
	}
	switch {
	case st.Failed:
		set(issue.KeyAddNode, issue.LightRed, st.Line)
	case st.Installing, st.Added:
		set(issue.KeyAddNode, issue.Green, st.Line)
	case st.Err != nil && !retrying:
		set(issue.KeyAddNode, issue.LightRed, st.Line)
	default:
		// The reasons 80_host-config shows already are not repeated.
		show := []string{st.Line}
		for _, r := range st.Reasons {
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, r) }) {
				show = append(show, r)
			}
		}
		set(issue.KeyAddNode, issue.Yellow, show...)
	}
	if len(lines) == 0 || st.Installing || st.Added {
		clear(issue.KeyHostConfig)
	} else {
		set(issue.KeyHostConfig, issue.LightRed, append([]string{"Installation cannot proceed:"}, lines...)...)
	}
	return errors.Join(errs...)
}
