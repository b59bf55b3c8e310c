package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/node"
	"github.com/nodezero/nodezero/onhost"
)

// runService is `nodezero service`: the embedded assisted service alone
// (node.Serve), with its key from a file, the environment or its data
// directory.
func runService(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "service", "the embedded assisted service alone: the v2 REST API over SQLite", "[flags]",
		"nodezero service --dir out/service --listen 127.0.0.1:8090")
	dir := fs.String("dir", onhost.DataDir, "data directory: the SQLite file and auth/")
	listen := fs.String("listen", ":8090", "address to serve the v2 API on")
	publicKey := fs.String("public-key", "", "PEM (or base64 of PEM) P-256 public key file to verify tokens with; default: DIR/auth/public-key.pem, made with tokens when missing")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	monitor := fs.Duration("monitor-interval", 5*time.Second, "how often time-based rules (disconnection, timeouts) are checked")
	disconnect := fs.Duration("disconnection-timeout", 3*time.Minute, "a host that has not checked in for this long is disconnected")
	evalDelay := fs.Duration("evaluation-delay", 5*time.Millisecond, "window in which agents' changes share one cluster-wide evaluation (0: evaluate within each request)")
	hostConfigDir := fs.String("host-config-dir", "", "the config image's host configs (/etc/assisted/hostconfig on node zero): the installation disk follows their root device hints and the service validates them (off when empty)")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key (default: HTTP)")
	tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert")
	clusterTLSDir := fs.String("cluster-tls-dir", "", "the clusters' signers and kubeadmin password in a config image's /opt/agent/tls layout: every cluster's install files and admin kubeconfig use them (default: minted per cluster)")
	connsPerClient := fs.Int("conns-per-client", api.DefaultLimits.ConnsPerClient, "the most connections one client IP address may hold open (0: no cap; raise it when many hosts reach node zero through one NAT address)")
	pprofAddr := fs.String("pprof", "", "serve Go's net/http/pprof profiles on this address, e.g. 127.0.0.1:6060 (off by default; for load tests)")
	payload := fs.String("payload", "", "a factory image's payload directory: the install step names the release images its payload.json lists (the image flags below override them)")
	var images assisted.InstallImages
	fs.StringVar(&images.Installer, "installer-image", "", "the assisted-installer image the install step names (default: the payload's, else "+assisted.DefaultImages().Installer+")")
	fs.StringVar(&images.Controller, "controller-image", "", "the assisted-installer controller image (default: the payload's, else "+assisted.DefaultImages().Controller+")")
	fs.StringVar(&images.MCO, "mco-image", "", "the release's machine-config-operator image (default: the payload's, else none)")
	fs.StringVar(&images.MustGather, "must-gather-image", "", "the release's must-gather image (default: the payload's, else none)")
	fs.StringVar(&images.Agent, "agent-image", "", "the agent image next_step_runner_command names (default: the payload's, else the agent's own version)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *payload != "" {
		from, err := node.PayloadImages(*payload)
		if err != nil {
			return fmt.Errorf("--payload: %w", err)
		}
		images = node.OverrideImages(from, images)
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	node.TuneMemory()
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	var pem []byte
	if *publicKey != "" {
		if pem, err = os.ReadFile(*publicKey); err != nil {
			return fmt.Errorf("--public-key: %w", err)
		}
	} else if env := os.Getenv("EC_PUBLIC_KEY_PEM"); env != "" {
		pem = []byte(env)
	} else {
		authDir := filepath.Join(*dir, "auth")
		m, created, err := auth.LoadOrCreate(authDir)
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(stdout, "nodezero service: made a key pair and tokens in %s (agent.token, user.token, watcher.token, public-key.pem)\n", authDir)
		}
		pem = m.PublicKeyPEM
	}
	if *clusterTLSDir != "" {
		// Checked now, not when the first cluster prepares its install.
		if _, _, err := credentials.ReadTLSDir(*clusterTLSDir); err != nil {
			return fmt.Errorf("--cluster-tls-dir: %w", err)
		}
	}
	var hostConfigs []manifests.HostConfig
	if *hostConfigDir != "" {
		if hostConfigs, err = manifests.LoadHostConfigs(*hostConfigDir); err != nil {
			return fmt.Errorf("--host-config-dir: %w", err)
		}
		if hostConfigs == nil {
			hostConfigs = []manifests.HostConfig{} // configured, but none: still validated
		}
	}
	if *pprofAddr != "" {
		stop, err := api.ServePprof(*pprofAddr)
		if err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
		defer stop()
	}
	if *connsPerClient < 0 {
		return fmt.Errorf("--conns-per-client %d: want 0 (no cap) or more", *connsPerClient)
	}
	limits := api.Limits{ConnsPerClient: *connsPerClient}
	if *connsPerClient == 0 {
		limits.ConnsPerClient = -1 // no cap (zero would mean the default)
	}
	return node.Serve(ctx, node.ServiceConfig{
		Dir: *dir, Listen: *listen, PublicKeyPEM: pem, HostConfigs: hostConfigs, Logger: log, Limits: limits,
		MonitorInterval: *monitor, DisconnectionTimeout: *disconnect, EvaluationDelay: *evalDelay,
		TLSCertFile: *tlsCert, TLSKeyFile: *tlsKey, Images: images, ClusterTLSDir: *clusterTLSDir,
		Listening: func(addr net.Addr) {
			scheme := "http"
			if *tlsCert != "" {
				scheme = "https"
			}
			fmt.Fprintf(stdout, "nodezero service: listening on %s://%s%s\n", scheme, addr, api.Base)
		},
	})
}
