package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/daemon/notify"
	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/wire"
)

// DataDir is where a host keeps nodezero's own state under its root:
// node zero's service data, and the disks of a host read from a hardware
// tree.
const DataDir = onhost.DataDir

// Options are `nodezero run`'s: the boot sequence of a host (DESIGN §4).
type Options struct {
	// Root is the host's root directory, absolute; anything but / is a
	// test or sandbox host and leaves the live system alone.
	Root string
	// ConfigImages are files to look for a config image in besides block
	// devices, which are scanned when ScanDevices.
	ConfigImages []string
	ScanDevices  bool
	// Listen is node zero's API address; DataDir its service's directory
	// ("": Root/var/lib/nodezero).
	Listen, DataDir string
	// HardwareRoot is where the inventory reads the hardware ("": Root).
	HardwareRoot string
	// Disks holds the files standing in for a hardware tree's disks ("":
	// Root/var/lib/nodezero/disks).
	Disks string
	// Payload is the factory image's payload directory ("": the one
	// under Root).
	Payload string
	// NodeZeroWindow and NodeZeroInterval: how long and how often the
	// rendezvous IP is looked for among this host's addresses.
	NodeZeroWindow, NodeZeroInterval time.Duration
	ConfigInterval                   time.Duration // how often a config image is looked for while unconfigured
	AgentInterval                    time.Duration // the longest wait between the agent's registration attempts
	DisconnectionTimeout             time.Duration // node zero's service
	CheckInterval                    time.Duration // how often hosts repeat their inventory and host checks
	// HostAddresses are this host's instead of its live addresses (sandbox
	// hosts sharing loopback); they need DNSServer, "host:port", which the
	// host checks ask.
	HostAddresses []netip.Prefix
	DNSServer     string
	// NTPPort is the port of the NTP sources the time check asks (0: 123).
	NTPPort int
	// RebootDelay overrides the installer's delay before the reboot
	// (negative: the installer's); ControlPlaneTimeout bounds the
	// bootstrap host's wait for the control plane (0: the installer's).
	RebootDelay, ControlPlaneTimeout time.Duration
	// Version is the agent's, reported as nodezero-<Version>.
	Version string
	// NeverJoin and Settle are the simulated in-cluster controller's on a
	// host booted from its installed disk (sim.Controller): a fault for
	// tests (the host never reports Joined), and how long it stays in
	// Configuring and in Joined.
	NeverJoin bool
	Settle    time.Duration
	Logger    *slog.Logger
}

// withDefaults fills the directories under Root that were not given.
func (o Options) withDefaults() Options {
	if o.DataDir == "" {
		o.DataDir = filepath.Join(o.Root, DataDir)
	}
	if o.HardwareRoot == "" {
		o.HardwareRoot = o.Root
	}
	if o.Disks == "" {
		o.Disks = filepath.Join(o.Root, DataDir, "disks")
	}
	if o.Payload == "" {
		o.Payload = filepath.Join(o.Root, diskwrite.DefaultPayloadDir)
	}
	return o
}

// runtime is one run of a host: its options and the parts it wires.
type runtime struct {
	o     Options
	live  bool // the host's root is the machine's
	sd    *notify.Notifier
	board *issue.Board
	nz    *NodeZero
	disks DiskFiles
}

// Run runs the boot sequence of a host until ctx ends: config, network,
// hostname, the node-zero decision, node zero's service, the agent, and
// the status lines all along. A host read from a hardware tree whose fake
// firmware boots its installed disk runs the simulated controller instead
// (sim); when the fake firmware reboots the host, Run returns
// sim.ErrReboot. Stopped by its context (SIGTERM or SIGINT in cmd), it
// ends quietly: nil, not the context's error.
func Run(ctx context.Context, o Options) error {
	err := run(ctx, o)
	return stopped(ctx, err, o.Logger)
}

// stopped is Run's end: a host stopped through its context (a signal)
// returns nil, whatever its parts made of the cancellation ("context
// canceled", wrapped or not), unless the fake firmware rebooted it. An
// error that was not the cancellation's is still logged.
func stopped(ctx context.Context, err error, log *slog.Logger) error {
	if err == nil || ctx.Err() == nil || errors.Is(err, sim.ErrReboot) {
		return err
	}
	if !errors.Is(err, context.Canceled) && log != nil {
		log.Warn("stopped while failing", "err", err)
	}
	return nil
}

func run(ctx context.Context, o Options) error {
	o = o.withDefaults()
	rt := &runtime{o: o, live: o.Root == "/", sd: notify.New(o.Logger), board: issue.NewBoard(o.Root)}
	rt.disks = DiskFiles{HardwareRoot: o.HardwareRoot, Dir: o.Disks}
	rt.nz = &NodeZero{Root: o.Root, Listen: o.Listen, DataDir: o.DataDir, Payload: o.Payload,
		DisconnectionTimeout: o.DisconnectionTimeout, CheckInterval: o.CheckInterval,
		Board: rt.board, Status: rt.sd.Status, Logger: o.Logger}
	if !rt.live {
		bd, err := sim.ReadBootDisk(o.Root)
		if err != nil {
			return err
		}
		if bd != nil {
			rt.sd.Ready()
			return rt.runInstalled(ctx, bd)
		}
	}
	runCtx, endRun := context.WithCancelCause(ctx)
	defer endRun(nil)
	seq, err := rt.sequence(runCtx, endRun)
	if err != nil {
		return err
	}
	rt.sd.Ready()
	go rt.sd.Watchdog(runCtx, rt.nz.Healthy)
	err = seq.Run(runCtx)
	rt.sd.Stopping()
	if cause := context.Cause(runCtx); errors.Is(cause, sim.ErrReboot) {
		return sim.ErrReboot
	}
	if errors.Is(err, context.Canceled) && runCtx.Err() != nil {
		return nil // stopped by a signal
	}
	return err
}

// sequence is the boot sequence of the host, its node zero and its agent
// wired in; end ends the run (the fake firmware's reboot).
func (rt *runtime) sequence(ctx context.Context, end context.CancelCauseFunc) (*boot.Sequence, error) {
	o := rt.o
	seq := &boot.Sequence{
		Root:             o.Root,
		Links:            boot.SystemLinks{},
		Board:            rt.board,
		Images:           rt.images,
		Hostname:         boot.RootHostname{Root: o.Root, Live: rt.live},
		NodeZeroWindow:   o.NodeZeroWindow,
		NodeZeroInterval: o.NodeZeroInterval,
		ConfigInterval:   o.ConfigInterval,
		Status:           rt.sd.Status,
		Logger:           o.Logger,
		Service:          rt.nz.Run,
	}
	if rt.live {
		seq.ApplyNetwork = applyWithNetworkManager(o.Root)
	}
	if len(o.HostAddresses) > 0 {
		links, err := loopbackLinks(ctx, o.HardwareRoot, o.HostAddresses)
		if err != nil {
			return nil, err
		}
		seq.Links = links
	}
	install := rt.install(end)
	seq.Agent = func(ctx context.Context, env boot.Env) error { return rt.runAgent(ctx, env, install) }
	return seq, nil
}

// images lists the config image files that exist, and the block devices
// labelled as one when devices are scanned.
func (rt *runtime) images() ([]string, error) {
	var out []string
	for _, f := range rt.o.ConfigImages {
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	if rt.o.ScanDevices {
		devs, err := boot.SystemImages()
		if err != nil {
			return out, err
		}
		out = append(out, devs...)
	}
	return out, nil
}

// install wires the install step: the real disk and logind on a live
// host, the stand-in files and the fake firmware's reboot (sim.Rebooter)
// on a host read from a hardware tree.
func (rt *runtime) install(end context.CancelCauseFunc) InstallOptions {
	o := rt.o
	install := InstallOptions{
		Root: o.Root, Live: rt.live && o.HardwareRoot == "/", Payload: o.Payload, Disks: rt.disks,
		RebootDelay: o.RebootDelay, ControlPlaneTimeout: o.ControlPlaneTimeout, Logger: o.Logger, // the installer names itself
	}
	if !install.Live {
		install.Rebooter = func(req wire.InstallCmdRequest) (installer.Rebooter, error) {
			disk, err := rt.disks.Path(req.BootDevice)
			if err != nil {
				return nil, err
			}
			return &sim.Rebooter{Root: o.Root, End: end, Log: o.Logger, Disk: onhost.BootDisk{
				Disk: disk, BootDevice: req.BootDevice, ClusterID: req.ClusterID, InfraEnvID: req.InfraEnvID,
				HostID: req.HostID, Role: string(req.Role), ControlPlaneCount: req.ControlPlaneCount,
			}}, nil
		}
	}
	return install
}

// runAgent is the agent of every host: it waits for node zero's
// infra-env, as ABI's start-agent.sh does with the user token, then runs
// the host agent with the agent token. A hub service's agent
// (INFRA_ENV_ID) has its infra-env already and no user token: it
// registers into that infra-env at once.
func (rt *runtime) runAgent(ctx context.Context, env boot.Env, install InstallOptions) error {
	status, log := rt.sd.Status, rt.o.Logger
	base := strings.TrimSuffix(env.ServiceBaseURL, "/")
	if env.InfraEnvID != "" {
		if _, err := url.Parse(base); err != nil {
			return fmt.Errorf("agent: SERVICE_BASE_URL: %w", err)
		}
		status("Agent registering with " + base + " (infra-env " + env.InfraEnvID + ")")
		a, err := NewAgent(rt.agentConfig(env, base, &wire.InfraEnv{ID: env.InfraEnvID}, install))
		if err != nil {
			return err
		}
		return a.Run(ctx)
	}
	if env.NodeZero && env.OwnService() {
		// A loopback rendezvous means this host's own service, wherever
		// it listens (Options.Listen), not what SERVICE_BASE_URL's
		// loopback port happens to hold.
		own, err := rt.nz.URL(ctx)
		if err != nil {
			return err
		}
		log.Info("the rendezvous address is a loopback one: the agent uses this host's own service", "url", own, "stage", "agent")
		base = own
	}
	if _, err := url.Parse(base); err != nil {
		return fmt.Errorf("agent: SERVICE_BASE_URL: %w", err)
	}
	uc, err := wire.NewClient(base, wire.WithUserToken(env.UserToken), wire.WithCACertFile(env.ServiceCACert))
	if err != nil {
		return err
	}
	var infraEnv *wire.InfraEnv
	for first := true; ; first = false {
		ies, err := uc.ListInfraEnvs(ctx, "")
		if err == nil && len(ies) > 0 && ies[0].ID != "" {
			infraEnv = ies[0]
			break
		}
		if first {
			status("Waiting for the infra-env at " + base)
		}
		log.Debug("waiting for the infra-env", "url", base, "err", err, "stage", "agent")
		// start-agent.sh polls every 5 s; a GET of a short list costs node
		// zero next to nothing, and a second sooner is a second sooner.
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	status("Agent registering with " + base)
	a, err := NewAgent(rt.agentConfig(env, base, infraEnv, install))
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// agentConfig is the host agent of this host against node zero at base.
//
// Loggers: a package that logs names its own subsystem (hostagent,
// inventory, installer, localapi: log.With("subsystem", …) in their
// constructors), so the logger is passed to them as it is; only parts
// that do not name themselves get one here (checks). Naming it on both
// sides wrote every record with the key twice ("subsystem=agent
// subsystem=hostagent").
func (rt *runtime) agentConfig(env boot.Env, base string, infraEnv *wire.InfraEnv, install InstallOptions) AgentConfig {
	o, disks, live, log := rt.o, rt.disks, rt.live, rt.o.Logger
	hostname := ""
	if !live {
		// A test or sandbox host: its hostname is the one the hostname
		// stage wrote under its root, not the machine's.
		if b, err := os.ReadFile(filepath.Join(env.Root, "etc/hostname")); err == nil {
			hostname = strings.TrimSpace(string(b))
		}
	}
	return AgentConfig{
		Config: hostagent.Config{
			URL: base, InfraEnvID: infraEnv.ID, AgentVersion: "nodezero-" + o.Version, Token: env.AgentToken, CACert: env.ServiceCACert,
			Interval: o.AgentInterval, Wait: hostagent.DefaultWait, Logger: log,
		},
		Inventory: inventory.Options{Root: disks.HardwareRoot, Hostname: hostname, Addresses: o.HostAddresses, LiveRoutes: disks.HardwareRoot != "/" && len(o.HostAddresses) == 0, Logger: log},
		Logs:      logsgather.Options{Root: env.Root, HardwareRoot: disks.HardwareRoot, Journal: live && disks.HardwareRoot == "/"},
		Checks: CheckOptions{
			Live:       live && disks.HardwareRoot == "/",
			Loopback:   len(o.HostAddresses) > 0,
			DNSServer:  o.DNSServer,
			NTPPort:    o.NTPPort,
			PullSecret: readOptional(filepath.Join(env.Root, configimage.PullSecretPath)),
			// The discovery image trusts the infra-env's bundle (assisted
			// writes it to the host's CA anchors).
			TrustBundle: []byte(infraEnv.AdditionalTrustBundle),
			Disks:       disks,
			Logger:      log.With("subsystem", "checks"),
		},
		Install: install,
	}
}

// runInstalled is a sandbox host booted from its installed disk d: the
// simulated in-cluster controller, with node zero's service again on the
// host that was node zero (the bootstrap host).
func (rt *runtime) runInstalled(ctx context.Context, d *onhost.BootDisk) error {
	o := rt.o
	env, err := boot.ReadEnv(o.Root)
	if err != nil {
		return err
	}
	in := sim.Installed{
		Root: o.Root, Payload: o.Payload,
		ServiceURL: env.ServiceBaseURL, AgentToken: env.AgentToken, ServiceCACert: env.ServiceCACert,
		NeverJoin: o.NeverJoin, Settle: o.Settle, Status: rt.sd.Status, Log: o.Logger,
		DNSServer: o.DNSServer, Addresses: o.HostAddresses, // a day-2 host resolves and names itself with them
	}
	if d.Live {
		// A real machine booted its written disk: this process runs on
		// the installed OS, whose Ignition applied the host's config to
		// its own root; Root is the factory disk, mounted.
		in.AppliedRoot = "/"
	}
	switch {
	case wire.HostRole(d.Role) != wire.HostRoleBootstrap:
	case env.InfraEnvID != "":
		// A hub service's host: the service runs elsewhere; the
		// bootstrap host completes the install with its agent token, as
		// the in-cluster controller does.
		in.Service = func(context.Context) (*wire.Client, <-chan error, error) {
			c, err := wire.NewClient(strings.TrimSuffix(env.ServiceBaseURL, "/"), wire.WithAgentToken(env.AgentToken), wire.WithCACertFile(env.ServiceCACert))
			return c, nil, err
		}
	default:
		in.Service = func(ctx context.Context) (*wire.Client, <-chan error, error) { return rt.nz.Serve(ctx, env) }
	}
	return sim.RunInstalled(ctx, d, in)
}
