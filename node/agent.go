package node

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"

	ghwsnapshot "github.com/jaypipes/ghw/pkg/snapshot"

	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/wire"
)

// AgentConfig is the host agent's configuration, where its inventory
// reads the hardware from, and how far its steps may reach.
type AgentConfig struct {
	hostagent.Config
	Inventory inventory.Options
	Checks    CheckOptions
	Logs      logsgather.Options // Service is set by Steps
	Install   InstallOptions
}

// Steps is the agent's step set for a host: inventory, the host checks,
// the steps of a failed or cancelled host and install, each reaching only
// as far as cfg allows. c is the agent's client of the service, which
// logs-gather and the installer report through.
func Steps(c *wire.Client, cfg AgentConfig) *hostagent.Steps {
	opts := cfg.Inventory
	steps := hostagent.NewSteps(func(ctx context.Context) (*wire.Inventory, error) {
		return inventory.Collect(ctx, opts)
	})
	addChecks(steps, cfg.Checks)
	addFailureSteps(steps, c, cfg)
	addInstallStep(steps, c, cfg.Install)
	return steps
}

// NewAgent builds the host agent with its steps: `nodezero agent` and
// `nodezero run` share it.
func NewAgent(cfg AgentConfig) (*hostagent.Agent, error) {
	c, err := wire.NewClient(cfg.URL,
		wire.WithAgentToken(cfg.Token), wire.WithAgentVersion(cfg.AgentVersion),
		wire.WithInsecure(cfg.Insecure), wire.WithCACertFile(cfg.CACert))
	if err != nil {
		return nil, err
	}
	steps := Steps(c, cfg)
	if cfg.Config.Resume == nil {
		cfg.Config.Resume = func(ctx context.Context) bool { return resumeInstall(ctx, c, cfg.Install) }
	}
	opts := cfg.Inventory
	return hostagent.New(cfg.Config, steps, func() (string, error) { return inventory.HostID(opts) })
}

// AgentOptions are `nodezero agent`'s: the host agent alone, against any
// assisted v2 service.
type AgentOptions struct {
	// Agent is the agent's configuration but for its Logger, which is
	// Logger's with the agent's subsystem.
	Agent  hostagent.Config
	Logger *slog.Logger
	// Root is the root the hardware is read from; "": $GHW_CHROOT, else
	// $GHW_SNAPSHOT_PATH unpacked, else /.
	Root string
	// Hostname is reported instead of the system's when set.
	Hostname string
	// Addresses are reported on the hardware tree's first NIC instead of
	// live addresses (sandbox hosts sharing loopback).
	Addresses []netip.Prefix
	// DNSServer, "host:port", is what domain-resolution asks ("": the
	// host's resolver).
	DNSServer string
	// Disks holds the files standing in for a hardware tree's disks.
	Disks string
	// PullSecretFile is what container-image-availability pulls with
	// (the step is skipped when it is missing).
	PullSecretFile string
}

// RunAgent runs the host agent of `nodezero agent` until ctx ends.
func RunAgent(ctx context.Context, o AgentOptions) error {
	root := o.Root
	// ghw's snapshot variable: a tarball of a host's /proc, /sys and /run
	// trees. ghw itself ignores it since v0.26, so it is unpacked here and
	// read as a root.
	if snap := os.Getenv("GHW_SNAPSHOT_PATH"); root == "" && os.Getenv("GHW_CHROOT") == "" && snap != "" {
		dir, err := ghwsnapshot.Unpack(snap)
		if err != nil {
			return fmt.Errorf("GHW_SNAPSHOT_PATH %s: %w", snap, err)
		}
		defer os.RemoveAll(dir)
		root = dir
	}
	live := (root == "" || root == "/") && os.Getenv("GHW_CHROOT") == "" && len(o.Addresses) == 0
	log := o.Logger
	cfg := o.Agent
	cfg.Logger = log // hostagent names its subsystem itself
	a, err := NewAgent(AgentConfig{
		Config:    cfg,
		Inventory: inventory.Options{Root: root, Hostname: o.Hostname, Addresses: o.Addresses, Logger: log},
		// The host's files are read where its hardware is; the journal is
		// the machine's, so only a live host sends it.
		Logs: logsgather.Options{Root: root, Journal: live},
		Checks: CheckOptions{
			Live:     live,
			Loopback: len(o.Addresses) > 0, DNSServer: o.DNSServer, PullSecret: readOptional(o.PullSecretFile),
			TrustBundle: readOptional(cfg.CACert), Disks: DiskFiles{HardwareRoot: root, Dir: o.Disks},
			Logger: log.With("subsystem", "checks"),
		},
	})
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// readOptional reads a file that may be absent (nil then).
func readOptional(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}
