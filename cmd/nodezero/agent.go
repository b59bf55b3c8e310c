package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/node"
)

// runAgent is `nodezero agent`: the host agent alone, with the flags of
// assisted-installer-agent's `agent` plus ours.
func runAgent(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags(stderr, "agent", "the host agent alone: register this host with an assisted v2 service and run the steps it hands out", "[flags]",
		"nodezero agent --url http://127.0.0.1:8090 --infra-env-id ID --root testdata/hw/master-0 --host-address 127.0.0.10/8 \\\n    --hostname master-0 --dns-server 127.0.0.1:5353 --disks /var/tmp/nz/disks-0 --payload /var/tmp/nz/payload")
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
	payload := fs.String("payload", "", "with --root (a hardware tree): the payload directory (payload.json and its OS image) the built-in writer installs onto the --disks files; without it the disk speed check fails, saying so")
	rebootDelayArg := rebootDelayFlag(fs)
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
	return node.RunAgent(ctx, node.AgentOptions{
		Agent: hostagent.Config{
			URL: *url, InfraEnvID: *infraEnv, AgentVersion: *agentVersion, Token: *token,
			Interval: time.Duration(*interval) * time.Second, Insecure: *insecure, CACert: *cacert,
			Wait: *wait, HostID: *hostID,
		},
		Logger: log, Root: *root, Hostname: *hostname, Addresses: addresses,
		DNSServer: *dnsServer, Disks: *disks, PullSecretFile: *pullSecretFile,
		Payload: *payload, RebootDelay: rebootDelay,
	})
}
