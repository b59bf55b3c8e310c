package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	ghwsnapshot "github.com/jaypipes/ghw/pkg/snapshot"

	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sim"
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
	// Payload is the factory image's payload directory the built-in
	// writer installs from (payload.json and the OS image): a host read
	// from a hardware tree has no coreos-installer and needs one.
	Payload string
	// RebootDelay overrides the installer's delay before the reboot;
	// negative: the installer's (a minute on a multi-node cluster).
	RebootDelay time.Duration
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
	disks := DiskFiles{HardwareRoot: root, Dir: o.Disks}
	runCtx, end := context.WithCancelCause(ctx)
	defer end(nil)
	install := InstallOptions{Root: "/", Live: true, Payload: o.Payload, RebootDelay: o.RebootDelay, Logger: log}
	var checkInstall func() error
	if !live {
		// A host read from a hardware tree installs onto its stand-in
		// disk file and "reboots" into it in this process (sim): its
		// installer's state lives in a directory of its own, fresh for
		// each run, as a discovery image's is after a boot.
		dir, err := os.MkdirTemp("", "nodezero-agent-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := writeHostname(dir, o.Hostname); err != nil {
			return err
		}
		install = InstallOptions{Root: dir, Payload: o.Payload, Disks: disks, RebootDelay: o.RebootDelay, Logger: log,
			Rebooter: func(req wire.InstallCmdRequest) (installer.Rebooter, error) {
				disk, err := disks.Path(req.BootDevice)
				if err != nil {
					return nil, err
				}
				return &sim.Rebooter{Root: dir, End: end, Log: log, Disk: onhost.BootDisk{
					Disk: disk, BootDevice: req.BootDevice, ClusterID: req.ClusterID, InfraEnvID: req.InfraEnvID,
					HostID: req.HostID, Role: string(req.Role), ControlPlaneCount: req.ControlPlaneCount,
				}}, nil
			}}
		checkInstall = func() error { return payloadReady(o.Payload) }
	}
	a, err := NewAgent(AgentConfig{
		Config:    cfg,
		Inventory: inventory.Options{Root: root, Hostname: o.Hostname, Addresses: o.Addresses, Logger: log},
		// The host's files are read where its hardware is; the journal is
		// the machine's, so only a live host sends it.
		Logs: logsgather.Options{Root: root, Journal: live},
		Checks: CheckOptions{
			Live:     live,
			Loopback: len(o.Addresses) > 0, DNSServer: o.DNSServer, PullSecret: readOptional(o.PullSecretFile),
			TrustBundle: readOptional(cfg.CACert), Disks: disks, InstallReady: checkInstall,
			Logger: log.With("subsystem", "checks"),
		},
		Install: install,
	})
	if err != nil {
		return err
	}
	err = a.Run(runCtx)
	if !errors.Is(context.Cause(runCtx), sim.ErrReboot) {
		return err
	}
	// The install step wrote the stand-in disk and rebooted: this process
	// plays the host booted from it (sim.RunInstalled), reporting the
	// stages the in-cluster controller would; the bootstrap host also
	// completes the installation once the cluster is finalizing.
	bd, err := sim.ReadBootDisk(install.Root)
	if err != nil || bd == nil {
		return fmt.Errorf("the host rebooted, but its boot disk record is unreadable: %v", err)
	}
	in := sim.Installed{Root: install.Root, Payload: o.Payload, ServiceURL: cfg.URL, AgentToken: cfg.Token, ServiceCACert: cfg.CACert,
		Status: func(s string) { log.Info(s, "stage", "installed") }, Log: log, DNSServer: o.DNSServer, Addresses: o.Addresses}
	if wire.HostRole(bd.Role) == wire.HostRoleBootstrap {
		in.Service = func(context.Context) (*wire.Client, <-chan error, error) {
			c, err := wire.NewClient(cfg.URL, wire.WithAgentToken(cfg.Token), wire.WithCACertFile(cfg.CACert), wire.WithInsecure(cfg.Insecure))
			return c, nil, err
		}
	}
	return sim.RunInstalled(ctx, bd, in)
}

// payloadReady says whether the built-in writer has a payload to install
// from: the disk speed check of a host read from a hardware tree fails
// with this reason, so a missing payload shows while the cluster
// prepares, not when the disk is written.
func payloadReady(dir string) error {
	if dir == "" {
		return errors.New("the built-in writer has no payload to install from: give the agent --payload DIR (a payload.json and its OS image)")
	}
	if _, err := diskwrite.LoadPayload(dir); err != nil {
		return fmt.Errorf("the built-in writer cannot install from --payload %s: %w", dir, err)
	}
	return nil
}

// writeHostname writes root/etc/hostname: the installed disk's Ignition
// names the host, and the host booted from it checks that name against
// its own.
func writeHostname(root, name string) error {
	if name == "" {
		var err error
		if name, err = os.Hostname(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "etc/hostname"), []byte(name+"\n"), 0o644)
}

// readOptional reads a file that may be absent (nil then).
func readOptional(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}
