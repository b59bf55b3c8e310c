package boot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/onhost"
)

// Env is what the stages learned, handed to the service and the agent.
type Env struct {
	Root           string
	NodeZero       bool
	NodeZeroIP     netip.Addr
	BootstrapMAC   string // node zero's, when NodeZero
	ServiceBaseURL string // SERVICE_BASE_URL, e.g. http://192.168.111.20:8090/
	AgentToken     string // PULL_SECRET_TOKEN: the agentAuth token
	UserToken      string // USER_AUTH_TOKEN
	// ServiceCACert is the CA file the API's clients trust when
	// SERVICE_BASE_URL is https:// and the config image carried one
	// (configimage.APICAPath under Root); "" otherwise.
	ServiceCACert string
	// Workflow is WORKFLOW_TYPE; AddNodes is add-nodes.env when the host
	// was booted from a node config image (day 2), nil otherwise.
	Workflow string
	AddNodes *onhost.AddNodesEnv
	// InfraEnvID is INFRA_ENV_ID: set, the host is an agent of a hub
	// service (the Cluster API providers'); it never decides to be node
	// zero, and its agent registers into this infra-env with the agent
	// token alone.
	InfraEnvID string
	// MACs are this host's NICs' (lower case), as the links listed them.
	MACs []string
}

// OwnService reports whether the rendezvous address is every host's own
// (SelfRendezvous; ABI day 2: NODE_ZERO_IP=127.0.0.1), so this host is
// its own node zero, and its agent, registration and status talk to the
// service it runs itself, wherever that listens.
func (e Env) OwnService() bool { return SelfRendezvous(e.NodeZeroIP) }

// Sequence is the boot sequence of one host. The service and the agent
// are given as functions so that this package does not import the host
// agent (DESIGN §10): cmd wires them.
type Sequence struct {
	Root     string
	Links    Links
	Board    *issue.Board
	Images   func() ([]string, error) // candidate config images (ConfigWait.Images)
	Hostname HostnameSetter

	// NodeZeroWindow and NodeZeroInterval: how long and how often to look
	// for the rendezvous IP among the host's addresses (30 s and 5 s).
	NodeZeroWindow, NodeZeroInterval time.Duration
	// ConfigInterval: how often to look for a config image (5 s).
	ConfigInterval time.Duration

	// Service runs node zero's service until ctx ends; Agent runs the host
	// agent until ctx ends. Either returning ends the sequence.
	Service func(ctx context.Context, env Env) error
	Agent   func(ctx context.Context, env Env) error

	// ApplyNetwork, when set, makes a running NetworkManager take keyfiles
	// installed after it started (a config image inserted late), as ABI's
	// load-config-iso.sh restarts NetworkManager and brings the
	// connections up. It runs once per set of keyfiles: NetworkAppliedPath
	// records what was applied, so neither a restart of the daemon nor a
	// reboot (where nodezero-network.service installs the same keyfiles
	// before NetworkManager starts) applies them again.
	ApplyNetwork func(ctx context.Context, r NetworkResult) error

	// Status, when set, gets every stage's status line (sd_notify STATUS).
	Status func(string)
	Logger *slog.Logger
}

// Run carries the host through the stages and then runs the service (node
// zero) and the agent until ctx ends or one of them fails. Every stage is
// idempotent: run again after a crash or a reboot, it finds its work done
// on disk or does it again to the same result.
func (s *Sequence) Run(ctx context.Context) error {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.NodeZeroWindow <= 0 {
		s.NodeZeroWindow = 30 * time.Second
	}
	if s.NodeZeroInterval <= 0 {
		s.NodeZeroInterval = 5 * time.Second
	}
	say := func(stage, line string) {
		s.Logger.Info(line, "stage", stage)
		if s.Status != nil {
			s.Status(line)
		}
	}

	say("config", "Waiting for the configuration (rendezvous-host.env)")
	if err := (ConfigWait{Root: s.Root, Images: s.Images, Board: s.Board, Interval: s.ConfigInterval, Logger: s.Logger}).Run(ctx); err != nil {
		return err
	}
	env, err := ReadEnv(s.Root)
	if err != nil {
		return err
	}

	links, err := s.Links.Links()
	if err != nil {
		return err
	}
	for _, l := range links {
		if l.MAC != "" && l.MAC != "00:00:00:00:00:00" {
			env.MACs = append(env.MACs, l.MAC)
		}
	}
	// A static network that cannot be installed does not stop the host:
	// it may still reach node zero over DHCP, and the console says what is
	// wrong so that a person can fix the config image.
	if nw, err := InstallNetwork(s.Root, links); err != nil {
		s.Logger.Error("static network not installed", "stage", "network", "err", err)
		if _, serr := s.Board.Set(ctx, issue.KeyNetwork, issue.LightRed, "Static network configuration failed: "+err.Error()); serr != nil {
			s.Logger.Warn("console status", "err", serr)
		}
		say("network", "Static network configuration failed: "+err.Error())
	} else {
		if err := s.Board.Clear(ctx, issue.KeyNetwork); err != nil {
			s.Logger.Warn("console status", "err", err)
		}
		say("network", nw.Status())
		if nw.HostDir != "" && s.ApplyNetwork != nil {
			if err := s.applyOnce(ctx, nw); err != nil {
				// The keyfiles are in place for the next boot; say so and go
				// on, as with any network failure.
				s.Logger.Error("static network not applied", "stage", "network", "err", err)
				if _, serr := s.Board.Set(ctx, issue.KeyNetwork, issue.LightRed, "Static network installed but not applied (reboot to apply): "+err.Error()); serr != nil {
					s.Logger.Warn("console status", "err", serr)
				}
			}
		}
	}

	if name, mac, ok, err := ConfiguredHostname(s.Root, links); err != nil {
		return err
	} else if ok && s.Hostname != nil {
		if err := s.Hostname.SetHostname(ctx, name); err != nil {
			return err
		}
		say("hostname", fmt.Sprintf("Hostname %s (by MAC %s)", name, mac))
	}

	d, err := s.decide(ctx, env)
	if err != nil {
		return err
	}
	if err := WriteNode0(s.Root, d); err != nil {
		return err
	}
	env.NodeZero, env.BootstrapMAC = d.NodeZero, d.MAC
	if _, err := s.Board.Set(ctx, issue.KeyRendezvousHost, issue.None, d.Status()); err != nil {
		s.Logger.Warn("console status", "err", err)
	}
	say("node-zero", d.Status())

	return s.runServices(ctx, env)
}

// decide is the node-zero stage: a hub agent (INFRA_ENV_ID) is never node
// zero and looks for no rendezvous address; any other host polls for it.
func (s *Sequence) decide(ctx context.Context, env Env) (Decision, error) {
	if env.InfraEnvID != "" {
		return Decision{Hub: env.ServiceBaseURL}, nil
	}
	return DecideNodeZero(ctx, s.Links, env.NodeZeroIP, s.NodeZeroWindow, s.NodeZeroInterval)
}

// runServices runs the service (node zero only) and the agent side by
// side; the first to return ends both.
func (s *Sequence) runServices(ctx context.Context, env Env) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	start := func(name string, fn func(context.Context, Env) error) {
		if fn == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fn(ctx, env)
			if err == nil && ctx.Err() == nil {
				err = fmt.Errorf("%s stopped", name)
			}
			errs <- err
			cancel()
		}()
	}
	if env.NodeZero {
		start("service", s.Service)
	}
	start("agent", s.Agent)
	wg.Wait()
	close(errs)
	var out error
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			out = errors.Join(out, err)
		}
	}
	if out == nil {
		return ctx.Err()
	}
	return out
}

// ReadEnv reads /etc/assisted/rendezvous-host.env under root.
func ReadEnv(root string) (Env, error) {
	path := filepath.Join(root, onhost.RendezvousEnvPath)
	b, err := os.ReadFile(path)
	if err != nil {
		return Env{}, fmt.Errorf("config: %w", err)
	}
	rv, err := onhost.ParseRendezvous(path, b)
	if err != nil {
		return Env{}, fmt.Errorf("config: %w", err)
	}
	env := Env{Root: root, NodeZeroIP: rv.NodeZeroIP, ServiceBaseURL: rv.ServiceBaseURL,
		AgentToken: rv.AgentToken, UserToken: rv.UserToken, Workflow: rv.Workflow, InfraEnvID: rv.InfraEnvID}
	an, ok, err := ReadAddNodesEnv(root)
	switch {
	case err != nil:
		return Env{}, err
	case ok:
		env.AddNodes = &an
	case rv.Workflow == onhost.WorkflowAddNodes:
		return Env{}, fmt.Errorf("config: %s: WORKFLOW_TYPE is %s but %s is missing", path, onhost.WorkflowAddNodes, filepath.Join(root, onhost.AddNodesEnvPath))
	}
	if strings.HasPrefix(strings.ToLower(env.ServiceBaseURL), "https:") {
		ca := filepath.Join(root, configimage.APICAPath)
		if _, err := os.Stat(ca); err == nil {
			env.ServiceCACert = ca
		}
	}
	return env, nil
}

// NetworkAppliedPath records the digest of the keyfiles ApplyNetwork last
// applied.
const NetworkAppliedPath = onhost.NetworkAppliedPath

// applyOnce runs ApplyNetwork unless the installed keyfiles are the ones
// applied before, and records them once applied.
func (s *Sequence) applyOnce(ctx context.Context, nw NetworkResult) error {
	h := sha256.New()
	for _, name := range nw.Installed {
		b, err := os.ReadFile(filepath.Join(s.Root, SystemConnectionsDir, name))
		if err != nil {
			return fmt.Errorf("apply network: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	digest := hex.EncodeToString(h.Sum(nil)) + "\n"
	marker := filepath.Join(s.Root, NetworkAppliedPath)
	if old, err := os.ReadFile(marker); err == nil && string(old) == digest {
		return nil
	}
	if err := s.ApplyNetwork(ctx, nw); err != nil {
		return err
	}
	if err := atomicfile.Write(marker, []byte(digest), 0o644); err != nil {
		return fmt.Errorf("apply network: %w", err)
	}
	return nil
}
