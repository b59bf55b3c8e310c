package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/daemon/journal"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/node"
)

// dataDirPath is where a host keeps nodezero's state under its root.
const dataDirPath = node.DataDir

// runRun is `nodezero run`: the boot sequence of a host (DESIGN §4), as
// nodezero.service starts it on every host booted from the factory image.
func runRun(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags(stderr, "run", "the boot sequence of a host: config image, network, hostname, node zero, then the service and the agent (started by nodezero.service)", "[flags]",
		"nodezero run                       # on a host booted from the factory image (the unit runs this)",
		"nodezero run --root /var/tmp/host0 --hardware-root testdata/hw/master-0 --config-image agentconfig.noarch.iso")
	root := fs.String("root", "/", "the host's root directory; anything but / is a test or sandbox host and leaves the live system alone")
	stage := fs.String("stage", "all", `"all" runs the whole sequence; "network" only installs the static network keyfiles (nodezero-network.service, before NetworkManager)`)
	images := fs.String("config-image", "", "comma-separated config image files to look for besides block devices labelled "+boot.ConfigImageLabel)
	scan := fs.Bool("scan-devices", false, "look for the config image on block devices (default: only when --root is /)")
	listen := fs.String("listen", ":8090", "node zero: address to serve the v2 API on")
	dataDir := fs.String("data-dir", "", "node zero: the service's data directory (default ROOT"+node.DataDir+")")
	hwRoot := fs.String("hardware-root", "", "root to read the inventory's hardware from (default: ROOT)")
	window := fs.Duration("node-zero-window", 30*time.Second, "how long to look for the rendezvous IP among this host's addresses")
	every := fs.Duration("node-zero-interval", 5*time.Second, "how often to look for the rendezvous IP during --node-zero-window")
	configEvery := fs.Duration("config-interval", 5*time.Second, "how often to look for a config image while unconfigured")
	agentEvery := fs.Duration("agent-interval", 10*time.Second, "the longest wait between the agent's registration attempts")
	disconnect := fs.Duration("disconnection-timeout", 3*time.Minute, "node zero: a host that has not checked in for this long is disconnected")
	checkEvery := fs.Duration("check-interval", time.Minute, "node zero: how often hosts repeat their inventory and host checks")
	disks := fs.String("disks", "", "a host read from a hardware tree: directory of files standing in for its disks, which the disk speed check writes (default ROOT"+node.DataDir+"/disks)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	hostAddrs := fs.String("host-address", "", "sandbox hosts sharing loopback: comma-separated CIDRs that are this host's (node-zero decision, inventory) instead of its live addresses")
	dnsServer := fs.String("dns-server", "", "host:port of the DNS server the host checks ask (required with --host-address: loopback hosts have no resolver of their own)")
	ntpPort := fs.Int("ntp-port", 0, "the port of the NTP sources the time check asks (default 123; a loopback sandbox's own server cannot have 123 without privileges)")
	payload := fs.String("payload", "", "the factory image's payload directory: payload.json and the OS image (default ROOT"+diskwrite.DefaultPayloadDir+")")
	rebootDelayArg := rebootDelayFlag(fs)
	cpTimeout := fs.Duration("control-plane-timeout", 0, "how long the bootstrap host waits for the other control-plane hosts to join before it gives up without rebooting (default 60m)")
	neverJoin := fs.Bool("fault-never-join", false, "tests: once installed, this host never reports Joined")
	settle := fs.Duration("settle", 0, "sandbox: how long a host booted from its installed disk stays in Configuring and in Joined (the in-cluster work the sandbox simulates)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	rebootDelay, err := rebootDelayArg()
	if err != nil {
		return err
	}
	r, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	log, err := runLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	if *stage == "network" {
		return node.NetworkStage(r, boot.SystemLinks{}, log)
	} else if *stage != "all" {
		return fmt.Errorf(`run: --stage %q: want "all" or "network"`, *stage)
	}
	var files []string
	for _, f := range strings.Split(*images, ",") {
		if f = strings.TrimSpace(f); f != "" {
			files = append(files, f)
		}
	}
	addresses, err := parsePrefixes("--host-address", *hostAddrs)
	if err != nil {
		return err
	}
	if len(addresses) > 0 && *dnsServer == "" {
		return errors.New("run: --host-address needs --dns-server: a loopback host has no resolver of its own, and the machine's must not be asked")
	}
	return node.Run(ctx, node.Options{
		Root: r, ConfigImages: files, ScanDevices: *scan || r == "/", Listen: *listen, DataDir: *dataDir,
		HardwareRoot: *hwRoot, Disks: *disks, Payload: *payload,
		NodeZeroWindow: *window, NodeZeroInterval: *every, ConfigInterval: *configEvery, AgentInterval: *agentEvery,
		DisconnectionTimeout: *disconnect, CheckInterval: *checkEvery, HostAddresses: addresses, DNSServer: *dnsServer, NTPPort: *ntpPort,
		RebootDelay: rebootDelay, ControlPlaneTimeout: *cpTimeout, NeverJoin: *neverJoin, Settle: *settle,
		Version: version, Logger: log,
	})
}

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
