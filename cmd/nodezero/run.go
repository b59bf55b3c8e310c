package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/daemon/journal"
	"github.com/nodezero/nodezero/daemon/notify"
	"github.com/nodezero/nodezero/daemon/register"
	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/node"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/wire"
)

// Paths under the host root that `run` uses besides the config image's.
const (
	dataDirPath      = "/var/lib/nodezero"
	failuresFilePath = "/var/run/agent-installer/host-config-failures"
)

// runRun is `nodezero run`: the boot sequence of a host (DESIGN §4), as
// nodezero.service starts it on every host booted from the factory image.
func runRun(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "/", "the host's root directory; anything but / is a test or sandbox host and leaves the live system alone")
	stage := fs.String("stage", "all", `"all" runs the whole sequence; "network" only installs the static network keyfiles (nodezero-network.service, before NetworkManager)`)
	images := fs.String("config-image", "", "comma-separated config image files to look for besides block devices labelled "+boot.ConfigImageLabel)
	scan := fs.Bool("scan-devices", false, "look for the config image on block devices (default: only when --root is /)")
	listen := fs.String("listen", ":8090", "node zero: address to serve the v2 API on")
	dataDir := fs.String("data-dir", "", "node zero: the service's data directory (default ROOT"+dataDirPath+")")
	hwRoot := fs.String("hardware-root", "", "root to read the inventory's hardware from (default: ROOT)")
	window := fs.Duration("node-zero-window", 30*time.Second, "how long to look for the rendezvous IP among this host's addresses")
	every := fs.Duration("node-zero-interval", 5*time.Second, "how often to look for it in that window")
	configEvery := fs.Duration("config-interval", 5*time.Second, "how often to look for a config image while unconfigured")
	agentEvery := fs.Duration("agent-interval", 10*time.Second, "the longest wait between the agent's registration attempts")
	disconnect := fs.Duration("disconnection-timeout", 3*time.Minute, "node zero: a host that has not checked in for this long is disconnected")
	checkEvery := fs.Duration("check-interval", time.Minute, "node zero: how often hosts repeat their inventory and host checks")
	disks := fs.String("disks", "", "a host read from a hardware tree: directory of files standing in for its disks, which the disk speed check writes (default ROOT"+dataDirPath+"/disks)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	hostAddrs := fs.String("host-address", "", "sandbox hosts sharing loopback: comma-separated CIDRs that are this host's (node-zero decision, inventory) instead of its live addresses")
	dnsServer := fs.String("dns-server", "", "host:port of the DNS server the host checks ask (required with --host-address: loopback hosts have no resolver of their own)")
	payload := fs.String("payload", "", "the factory image's payload directory: payload.json and the OS image (default ROOT"+payloadPath+")")
	rebootDelay := fs.Duration("reboot-delay", -1, "delay between the install and the reboot (default: the installer's, 1m for control-plane hosts and workers, none for a single node)")
	cpTimeout := fs.Duration("control-plane-timeout", 0, "how long the bootstrap host waits for the other control-plane hosts to join before it gives up without rebooting (default 60m)")
	neverJoin := fs.Bool("fault-never-join", false, "tests: once installed, this host never reports Joined")
	settle := fs.Duration("settle", 0, "sandbox: how long a host booted from its installed disk stays in Configuring and in Joined (the in-cluster work the sandbox simulates)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected argument %q", fs.Arg(0))
	}
	r, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	live := r == "/"
	log, err := runLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	links := boot.SystemLinks{}

	if *stage == "network" {
		return runNetworkStage(r, links, log)
	} else if *stage != "all" {
		return fmt.Errorf(`run: --stage %q: want "all" or "network"`, *stage)
	}

	var files []string
	for _, f := range strings.Split(*images, ",") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	scanDevices := *scan || live
	if *dataDir == "" {
		*dataDir = filepath.Join(r, dataDirPath)
	}
	if *hwRoot == "" {
		*hwRoot = r
	}
	if *disks == "" {
		*disks = filepath.Join(r, dataDirPath, "disks")
	}
	if *payload == "" {
		*payload = filepath.Join(r, payloadPath)
	}
	addresses, err := parsePrefixes("--host-address", *hostAddrs)
	if err != nil {
		return err
	}
	if len(addresses) > 0 && *dnsServer == "" {
		return errors.New("run: --host-address needs --dns-server: a loopback host has no resolver of its own, and the machine's must not be asked")
	}
	dfiles := node.DiskFiles{HardwareRoot: *hwRoot, Dir: *disks}
	sd := notify.New(log)
	board := issue.NewBoard(r)
	nz := &nodeZero{root: r, listen: *listen, dataDir: *dataDir, disconnect: *disconnect, checkEvery: *checkEvery, board: board, status: sd.Status, log: log, payload: *payload}

	if !live {
		bd, err := sim.ReadBootDisk(r)
		if err != nil {
			return err
		}
		if bd != nil {
			sd.Ready()
			env, err := boot.ReadEnv(r)
			if err != nil {
				return err
			}
			o := sim.Installed{Root: r, Payload: *payload, NeverJoin: *neverJoin, Settle: *settle, Status: sd.Status, Log: log,
				ServiceURL: env.ServiceBaseURL, AgentToken: env.AgentToken, ServiceCACert: env.ServiceCACert}
			if bd.Role == wire.HostRoleBootstrap {
				o.Service = func(ctx context.Context) (*wire.Client, <-chan error, error) { return nz.serve(ctx, env) }
			}
			return sim.RunInstalled(ctx, bd, o)
		}
	}
	ctx, endRun := context.WithCancelCause(ctx)
	defer endRun(nil)
	install := node.InstallOptions{
		Root: r, Live: live && *hwRoot == "/", Payload: *payload, Disks: dfiles,
		RebootDelay: *rebootDelay, ControlPlaneTimeout: *cpTimeout, Logger: log.With("subsystem", "installer"),
	}
	if !install.Live {
		install.Rebooter = func(req wire.InstallCmdRequest) (installer.Rebooter, error) {
			disk, err := dfiles.Path(req.BootDevice)
			if err != nil {
				return nil, err
			}
			return &sim.Rebooter{Root: r, End: endRun, Log: log, Disk: sim.BootDisk{
				Disk: disk, BootDevice: req.BootDevice, ClusterID: req.ClusterID, InfraEnvID: req.InfraEnvID,
				HostID: req.HostID, Role: req.Role, ControlPlaneCount: req.ControlPlaneCount,
			}}, nil
		}
	}
	seq := &boot.Sequence{
		Root:  r,
		Links: links,
		Board: board,
		Images: func() ([]string, error) {
			var out []string
			for _, f := range files {
				if _, err := os.Stat(f); err == nil {
					out = append(out, f)
				}
			}
			if scanDevices {
				devs, err := boot.SystemImages()
				if err != nil {
					return out, err
				}
				out = append(out, devs...)
			}
			return out, nil
		},
		Hostname:         boot.RootHostname{Root: r, Live: live},
		NodeZeroWindow:   *window,
		NodeZeroInterval: *every,
		ConfigInterval:   *configEvery,
		Status:           sd.Status,
		Logger:           log,
	}
	if live {
		seq.ApplyNetwork = applyWithNetworkManager(r)
	}
	if len(addresses) > 0 {
		links, err := loopbackLinks(ctx, *hwRoot, addresses)
		if err != nil {
			return err
		}
		seq.Links = links
	}
	seq.Service = nz.run
	seq.Agent = func(ctx context.Context, env boot.Env) error {
		return runHostAgent(ctx, env, hostAgentOptions{
			disks: dfiles, live: live, interval: *agentEvery, addresses: addresses, dnsServer: *dnsServer, install: install,
		}, sd.Status, log)
	}

	sd.Ready()
	go sd.Watchdog(ctx, nz.healthy)
	err = seq.Run(ctx)
	sd.Stopping()
	if cause := context.Cause(ctx); errors.Is(cause, sim.ErrReboot) {
		return sim.ErrReboot
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // stopped by a signal
	}
	return err
}

// payloadPath is where the factory image carries the payload.
const payloadPath = "/usr/share/nodezero/payload"

// parsePrefixes reads a comma-separated CIDR flag.
func parsePrefixes(flagName, v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, a := range strings.Split(v, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return nil, fmt.Errorf("%s %q: want CIDRs like 127.0.0.11/8: %w", flagName, a, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// staticLinks are a loopback host's links: the hardware tree's NICs, the
// first holding the host's addresses.
type staticLinks []boot.Link

func (l staticLinks) Links() ([]boot.Link, error) { return l, nil }

func loopbackLinks(ctx context.Context, hwRoot string, addrs []netip.Prefix) (staticLinks, error) {
	inv, err := inventory.Collect(ctx, inventory.Options{Root: hwRoot, Addresses: addrs})
	if err != nil {
		return nil, fmt.Errorf("the links of %s: %w", hwRoot, err)
	}
	var out staticLinks
	for _, nic := range inv.Interfaces {
		l := boot.Link{Name: nic.Name, MAC: strings.ToLower(nic.MACAddress)}
		for _, a := range append(nic.IPv4Addresses, nic.IPv6Addresses...) {
			if p, err := netip.ParsePrefix(a); err == nil {
				l.Addrs = append(l.Addrs, p)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// runLogger logs to the journal with fields when stderr is the journal,
// and as text on stderr otherwise.
func runLogger(stderr io.Writer, level string) (*slog.Logger, error) {
	text, err := newLogger(stderr, level)
	if err != nil {
		return nil, err
	}
	if !journal.Use() {
		return text, nil
	}
	l, _ := parseLevel(level) // checked by newLogger
	return slog.New(journal.NewHandler(journal.Options{Level: l, Fallback: text.Handler()})), nil
}

// runNetworkStage is nodezero-network.service: before NetworkManager starts,
// install this host's keyfiles when the config image is already there. A
// host configured later gets them from the full sequence instead.
func runNetworkStage(root string, links boot.Links, log *slog.Logger) error {
	ok, err := boot.Configured(root)
	if err != nil || !ok {
		log.Info("network: not configured yet; the keyfiles are installed when the config image arrives", "err", err)
		return err
	}
	ls, err := links.Links()
	if err != nil {
		return err
	}
	res, err := boot.InstallNetwork(root, ls)
	if err != nil {
		return err
	}
	log.Info(res.Status(), "stage", "network")
	return nil
}

// nodeZero runs node zero's part: the embedded service, and beside it what
// ABI's register-cluster, register-infraenv, apply-host-config and
// start-cluster-installation units do.
type nodeZero struct {
	root, listen, dataDir  string
	payload                string                 // openshift-install is looked for here
	images                 assisted.InstallImages // from the payload (run); zero: assisted's defaults
	disconnect, checkEvery time.Duration
	board                  *issue.Board
	status                 func(string)
	log                    *slog.Logger

	client atomic.Pointer[wire.Client] // set once the service listens; read by healthy
}

func (nz *nodeZero) run(ctx context.Context, env boot.Env) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := os.Stat(filepath.Join(nz.payload, diskwrite.PayloadFile)); errors.Is(err, os.ErrNotExist) {
		// A host without a factory image's payload (a development or test
		// host) installs with coreos-installer, if at all: its install
		// steps name assisted-service's default images.
		nz.log.Warn("no payload: the install steps name assisted-service's default images", "payload", nz.payload, "stage", "service")
	} else {
		images, err := node.PayloadImages(nz.payload)
		if err != nil {
			return fmt.Errorf("node zero: %w", err)
		}
		nz.images = images
	}
	c, served, err := nz.serve(ctx, env)
	if err != nil {
		return err
	}
	set, err := manifests.LoadFrom(filepath.Join(nz.root, configimage.ManifestsDir), filepath.Join(nz.root, configimage.ExtraManifestsDir))
	if err != nil {
		return fmt.Errorf("node zero: %w", err)
	}
	hcDir := filepath.Join(nz.root, configimage.HostConfigDir)
	failures := filepath.Join(nz.root, failuresFilePath)
	registered := make(chan error, 1)
	go func() {
		id, err := register.Run(ctx, register.RunConfig{
			Client: c, Set: set, HostConfigDir: hcDir, FailuresFile: failures,
			Status: func(s string) { nz.installStatus(ctx, s, failures) },
			Logger: nz.log.With("subsystem", "register"),
		})
		if err == nil {
			nz.log.Info("installation started", "cluster", id, "stage", "service")
		}
		registered <- err
	}()
	for {
		select {
		case err := <-served:
			return err
		case err := <-registered:
			if err != nil && ctx.Err() == nil {
				// The service goes on: the console and the API say why the
				// install cannot start, and a person can fix it through them.
				nz.log.Error("registration stopped", "err", err, "stage", "service")
				nz.setIssue(ctx, issue.KeyStartInstall, issue.LightRed, "Installation cannot proceed: "+err.Error())
			}
			registered = nil
		}
	}
}

// serve starts node zero's service and returns a client with the user
// token once it listens, and a channel that gets the service's end.
func (nz *nodeZero) serve(ctx context.Context, env boot.Env) (*wire.Client, <-chan error, error) {
	svcEnvPath := filepath.Join(nz.root, configimage.AssistedServiceEnvPath)
	b, err := os.ReadFile(svcEnvPath)
	if err != nil {
		return nil, nil, fmt.Errorf("node zero: %w", err)
	}
	svcEnv, err := configimage.ParseEnv(svcEnvPath, b)
	if err != nil {
		return nil, nil, err
	}
	if svcEnv["EC_PUBLIC_KEY_PEM"] == "" {
		return nil, nil, fmt.Errorf("node zero: %s: EC_PUBLIC_KEY_PEM is missing", svcEnvPath)
	}
	hcDir := filepath.Join(nz.root, configimage.HostConfigDir)
	hostConfigs, err := manifests.LoadHostConfigs(hcDir)
	if err != nil {
		return nil, nil, fmt.Errorf("node zero: %w", err)
	}
	if hostConfigs == nil {
		hostConfigs = []manifests.HostConfig{}
	}
	if err := os.MkdirAll(nz.dataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("node zero: %w", err)
	}
	node.TuneMemory()
	installer := filepath.Join(nz.payload, "openshift-install")
	if _, err := os.Stat(installer); err != nil {
		installer = "" // the built-in Ignition generator
	}
	// The config image's signers and kubeadmin password, which the
	// install files use whichever generator runs (installfiles.Input.TLSDir),
	// rooted as every host path is.
	var tlsDir string
	if d := svcEnv["EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR"]; d != "" {
		tlsDir = filepath.Join(nz.root, d)
	}
	mac := env.BootstrapMAC
	if mac == "" {
		// Installed mode: node zero's record of itself.
		mac = readNode0MAC(nz.root)
	}

	// HTTPS when the config image made SERVICE_BASE_URL https:// (it then
	// carries the certificate and key): every client follows that URL.
	var certFile, keyFile string
	https := strings.HasPrefix(strings.ToLower(env.ServiceBaseURL), "https:")
	if https {
		certFile, keyFile = filepath.Join(nz.root, configimage.APICertPath), filepath.Join(nz.root, configimage.APIKeyPath)
	}

	listening := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- node.Serve(ctx, node.ServiceConfig{
			Dir: nz.dataDir, Listen: nz.listen, PublicKeyPEM: []byte(svcEnv["EC_PUBLIC_KEY_PEM"]),
			HostConfigs: hostConfigs, Logger: nz.log, MonitorInterval: 5 * time.Second,
			DisconnectionTimeout: nz.disconnect, EvaluationDelay: 5 * time.Millisecond, StepInterval: nz.checkEvery,
			Listening: func(a net.Addr) { listening <- a }, Installer: installer, ClusterTLSDir: tlsDir, BootstrapMAC: mac,
			TLSCertFile: certFile, TLSKeyFile: keyFile, Images: nz.images,
		})
	}()
	var addr net.Addr
	select {
	case err := <-served:
		return nil, nil, err
	case addr = <-listening:
	}
	local, opts := localURL(addr), []wire.ClientOption{wire.WithUserToken(env.UserToken)}
	if https {
		// Over loopback, to a certificate that names the rendezvous IP.
		local = "https" + strings.TrimPrefix(local, "http")
		opts = append(opts, wire.WithCACertFile(env.ServiceCACert), wire.WithTLSServerName(env.NodeZeroIP.String()))
	}
	c, err := wire.NewClient(local, opts...)
	if err != nil {
		return nil, nil, err
	}
	nz.client.Store(c)
	nz.log.Info("service listening", "addr", addr.String(), "stage", "service")
	return c, served, nil
}

// payloadImages reads the release's images that node zero's service names
// in every install step from the factory image's payload: a payload
// without them is an error naming payload.json and the field, and so is a
// missing payload.
func payloadImages(dir string) (assisted.InstallImages, error) {
	p, err := diskwrite.LoadPayload(dir)
	if err == nil {
		err = p.CheckReleaseImages()
	}
	if err != nil {
		return assisted.InstallImages{}, err
	}
	return assisted.InstallImages{Installer: p.Images.Installer, Controller: p.Images.Controller,
		MCO: p.Images.MCO, MustGather: p.Images.MustGather, Agent: p.Images.Agent}, nil
}

// readNode0MAC reads BOOTSTRAP_HOST_MAC from node zero's record.
func readNode0MAC(root string) string {
	b, err := os.ReadFile(filepath.Join(root, boot.Node0Path))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "BOOTSTRAP_HOST_MAC="); ok {
			return v
		}
	}
	return ""
}

// installStatus shows register.Run's status and the host config failures
// it wrote on the console and in systemd's status.
func (nz *nodeZero) installStatus(ctx context.Context, s, failuresFile string) {
	nz.status(s)
	b, err := os.ReadFile(failuresFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		nz.log.Warn("host config failures", "err", err)
	}
	if err := boot.ShowInstallStatus(ctx, nz.board, s, strings.Split(string(b), "\n")); err != nil {
		nz.log.Warn("console status", "err", err)
	}
}

func (nz *nodeZero) setIssue(ctx context.Context, k issue.Key, c issue.Color, lines ...string) {
	if _, err := nz.board.Set(ctx, k, c, lines...); err != nil {
		nz.log.Warn("console status", "key", k, "err", err)
	}
}

// healthy is the watchdog's check: on node zero the API must answer; on
// other hosts, and before the service listens, the process being
// scheduled is enough.
func (nz *nodeZero) healthy(ctx context.Context) error {
	if c := nz.client.Load(); c != nil {
		return c.Health(ctx)
	}
	return nil
}

// localURL is the service's base URL from this host: the listener's own
// address, or loopback when it listens on all addresses.
func localURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// runHostAgent is the agent of every host: it waits for node zero's
// infra-env, as ABI's start-agent.sh does with the user token, then runs
// the host agent with the agent token.
// hostAgentOptions are run's flags that the agent needs.
type hostAgentOptions struct {
	disks     node.DiskFiles
	live      bool
	interval  time.Duration
	addresses []netip.Prefix // loopback sandbox hosts
	dnsServer string
	install   node.InstallOptions
}

func runHostAgent(ctx context.Context, env boot.Env, o hostAgentOptions, status func(string), log *slog.Logger) error {
	disks, live := o.disks, o.live
	base := strings.TrimSuffix(env.ServiceBaseURL, "/")
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
	hostname := ""
	if !live {
		// A test or sandbox host: its hostname is the one the hostname
		// stage wrote under its root, not the machine's.
		if b, err := os.ReadFile(filepath.Join(env.Root, "etc/hostname")); err == nil {
			hostname = strings.TrimSpace(string(b))
		}
	}
	status("Agent registering with " + base)
	a, err := node.NewAgent(node.AgentConfig{
		Config: hostagent.Config{
			URL: base, InfraEnvID: infraEnv.ID, AgentVersion: "nodezero-" + version, Token: env.AgentToken, CACert: env.ServiceCACert,
			Interval: o.interval, Wait: hostagent.DefaultWait, Logger: log.With("subsystem", "agent"),
		},
		Inventory: inventory.Options{Root: disks.HardwareRoot, Hostname: hostname, Addresses: o.addresses, LiveRoutes: disks.HardwareRoot != "/" && len(o.addresses) == 0, Logger: log.With("subsystem", "inventory")},
		Logs:      logsgather.Options{Root: env.Root, HardwareRoot: disks.HardwareRoot, Journal: live && disks.HardwareRoot == "/"},
		Checks: node.CheckOptions{
			Live:       live && disks.HardwareRoot == "/",
			Loopback:   len(o.addresses) > 0,
			DNSServer:  o.dnsServer,
			PullSecret: readOptional(filepath.Join(env.Root, configimage.PullSecretPath)),
			// The discovery image trusts the infra-env's bundle (assisted
			// writes it to the host's CA anchors).
			TrustBundle: []byte(infraEnv.AdditionalTrustBundle),
			Disks:       disks,
			Logger:      log.With("subsystem", "checks"),
		},
		Install: o.install,
	})
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// applyWithNetworkManager makes the running NetworkManager read the keyfiles
// nodezero installed and bring each connection up, as ABI's
// load-config-iso.sh does after copying a late config image. Only the live
// host (--root /) does this.
func applyWithNetworkManager(root string) func(context.Context, boot.NetworkResult) error {
	return func(ctx context.Context, r boot.NetworkResult) error {
		nmcli, err := exec.LookPath("nmcli")
		if err != nil {
			return fmt.Errorf("apply network: %w", err)
		}
		run := func(args ...string) error {
			out, err := exec.CommandContext(ctx, nmcli, args...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("nmcli %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
			}
			return nil
		}
		if err := run("connection", "reload"); err != nil {
			return err
		}
		var errs []error
		for _, name := range r.Installed {
			uuid, err := keyfileUUID(filepath.Join(root, boot.SystemConnectionsDir, name))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, run("connection", "up", "uuid", uuid))
		}
		return errors.Join(errs...)
	}
}

// keyfileUUID reads the uuid= of a keyfile's [connection] section.
func keyfileUUID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("apply network: %w", err)
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		if v, ok := strings.CutPrefix(line, "uuid="); ok && section == "[connection]" {
			return v, nil
		}
	}
	return "", fmt.Errorf("apply network: %s: no uuid in [connection]", path)
}

// readOptional reads a file that may be absent (nil then).
func readOptional(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}
