package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	ghwsnapshot "github.com/jaypipes/ghw/pkg/snapshot"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/hostagent/logsgather"
	"github.com/nodezero/nodezero/wire"
)

// runAgent is `nodezero agent`: the host agent alone, with the flags of
// assisted-installer-agent's `agent` plus ours.
func runAgent(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "assisted service base URL, e.g. http://192.168.111.80:8090 (required)")
	infraEnv := fs.String("infra-env-id", "", "infra-env the host registers to (required)")
	agentVersion := fs.String("agent-version", "", "agent version (image reference), sent as discovery_agent_version")
	interval := fs.Int("interval", 60, "seconds between registration attempts")
	insecure := fs.Bool("insecure", false, "skip TLS certificate verification (testing only)")
	cacert := fs.String("cacert", "", "PEM file of a CA to trust besides the system pool")
	textLog := fs.Bool("with-text-logging", false, "also write logs to /var/log/agent.log")
	journalLog := fs.Bool("with-journal-logging", true, "log for the journal: under systemd stderr is the journal stream")
	token := fs.String("token", "", "agent token (default: $PULL_SECRET_TOKEN)")
	hostID := fs.String("host-id", "", "use this host id instead of deriving it from the hardware")
	wait := fs.Duration("wait", hostagent.DefaultWait, "long-poll the service with ?wait= for this long; 0 polls as assisted-installer-agent does")
	root := fs.String("root", "", "root to read hardware from (default: $GHW_CHROOT, else $GHW_SNAPSHOT_PATH unpacked, else /)")
	addrs := fs.String("host-address", "", "comma-separated CIDRs: report them on the hardware tree's first NIC instead of live addresses (sandbox hosts sharing loopback)")
	hostname := fs.String("hostname", "", "hostname to report (default: the system's)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	dnsServer := fs.String("dns-server", "", "host:port of the DNS server domain-resolution asks (default: the host's resolver; required for --host-address hosts, which have none of their own)")
	disks := fs.String("disks", "", "with --root (a hardware tree): directory of files standing in for the tree's disks, which the disk speed check writes")
	pullSecretFile := fs.String("pull-secret-file", configimage.PullSecretPath, "the pull secret container-image-availability pulls with (skipped when missing)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var missing []string
	if *url == "" {
		missing = append(missing, "--url")
	}
	if *infraEnv == "" {
		missing = append(missing, "--infra-env-id")
	}
	if len(missing) > 0 {
		return fmt.Errorf("agent: %s required", strings.Join(missing, " and "))
	}
	if *token == "" {
		*token = os.Getenv("PULL_SECRET_TOKEN")
	}
	logOut := stderr
	if *textLog {
		f, err := os.OpenFile("/var/log/agent.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("--with-text-logging: %w", err)
		}
		defer f.Close()
		logOut = io.MultiWriter(stderr, f)
	}
	_ = journalLog // stderr is the journal under systemd; native journald fields come with the daemon (issue #4)
	log, err := newLogger(logOut, *logLevel)
	if err != nil {
		return err
	}
	if *token == "" {
		log.Warn("no agent token: set PULL_SECRET_TOKEN or --token; the service will answer 401")
	}
	// ghw's snapshot variable: a tarball of a host's /proc, /sys and /run
	// trees. ghw itself ignores it since v0.26, so it is unpacked here and
	// read as a root.
	if snap := os.Getenv("GHW_SNAPSHOT_PATH"); *root == "" && os.Getenv("GHW_CHROOT") == "" && snap != "" {
		dir, err := ghwsnapshot.Unpack(snap)
		if err != nil {
			return fmt.Errorf("GHW_SNAPSHOT_PATH %s: %w", snap, err)
		}
		defer os.RemoveAll(dir)
		*root = dir
	}
	var addresses []netip.Prefix
	if *addrs != "" {
		for _, a := range strings.Split(*addrs, ",") {
			p, err := netip.ParsePrefix(strings.TrimSpace(a))
			if err != nil {
				return fmt.Errorf("--host-address %q: want CIDRs like 127.0.0.11/8: %w", a, err)
			}
			addresses = append(addresses, p)
		}
	}
	live := (*root == "" || *root == "/") && os.Getenv("GHW_CHROOT") == "" && len(addresses) == 0
	a, err := newAgent(agentConfig{
		Config: hostagent.Config{
			URL: *url, InfraEnvID: *infraEnv, AgentVersion: *agentVersion, Token: *token,
			Interval: time.Duration(*interval) * time.Second, Insecure: *insecure, CACert: *cacert,
			Wait: *wait, HostID: *hostID, Logger: log.With("subsystem", "agent"),
		},
		Inventory: inventory.Options{Root: *root, Hostname: *hostname, Addresses: addresses, Logger: log.With("subsystem", "inventory")},
		// The host's files are read where its hardware is; the journal is
		// the machine's, so only a live host sends it.
		Logs: logsgather.Options{Root: *root, Journal: live},
		Checks: checkOptions{
			Live:     live,
			Loopback: len(addresses) > 0, DNSServer: *dnsServer, PullSecret: readOptional(*pullSecretFile),
			TrustBundle: readOptional(*cacert), Disks: diskFiles{hwRoot: *root, dir: *disks},
			Logger: log.With("subsystem", "checks"),
		},
	})
	if err != nil {
		return err
	}
	return a.Run(ctx)
}

// agentConfig is the host agent's configuration and where its inventory
// reads the hardware from.
type agentConfig struct {
	hostagent.Config
	Inventory inventory.Options
	Checks    checkOptions
	Logs      logsgather.Options // Service is set by newAgent
	Install   installOptions
}

// newAgent builds the host agent with its steps: `nodezero agent` and
// `nodezero run` share it.
func newAgent(cfg agentConfig) (*hostagent.Agent, error) {
	opts := cfg.Inventory
	steps := hostagent.NewSteps(func(ctx context.Context) (*wire.Inventory, error) {
		return inventory.Collect(ctx, opts)
	})
	addChecks(steps, cfg.Checks)
	c, err := wire.NewClient(cfg.URL,
		wire.WithAgentToken(cfg.Token), wire.WithAgentVersion(cfg.AgentVersion),
		wire.WithInsecure(cfg.Insecure), wire.WithCACertFile(cfg.CACert))
	if err != nil {
		return nil, err
	}
	addFailureSteps(steps, c, cfg)
	addInstallStep(steps, c, cfg.Install)
	if cfg.Config.Resume == nil {
		cfg.Config.Resume = func(ctx context.Context) bool { return resumeInstall(ctx, c, cfg.Install) }
	}
	return hostagent.New(cfg.Config, steps, func() (string, error) { return inventory.HostID(opts) })
}

// readOptional reads a file that may be absent (nil then).
func readOptional(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}
