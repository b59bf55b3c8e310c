package main

// The flags of `nodezero wait-for` and the logger it prints with.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

func runWaitFor(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("wait-for", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: nodezero wait-for bootstrap-complete|install-complete (--dir DIR | (--url URL | --rendezvous-ip IP) (--token T | --token-file F)) [flags]")
		fs.PrintDefaults()
	}
	dir := fs.String("dir", "", "the install directory of 'nodezero create config-image --dir': node zero's address (DIR/"+rendezvousIPFile+"), the watcher token (DIR/"+watcherTokenFile+"), node zero's CA (DIR/tls) and, to follow the cluster once node zero has rebooted, DIR/"+kubeconfigFile+"; the other flags override it")
	kubeconfig := fs.String("kubeconfig", "", "the installed cluster's admin kubeconfig: after the bootstrap, the install is followed through its Kubernetes API (ClusterVersion, cluster operators); default DIR/"+kubeconfigFile)
	url := fs.String("url", "", "node zero's service, e.g. http://192.168.111.80:8090 (default: from --rendezvous-ip)")
	rendezvousIP := fs.String("rendezvous-ip", "", "node zero's address; the service is at http://IP:"+nodeZeroPort)
	token := fs.String("token", "", "the watcher token (header Watcher-Authorization)")
	tokenFile := fs.String("token-file", "", "file holding the watcher token, e.g. auth/watcher.token")
	timeout := fs.Duration("timeout", 0, "give up after this long (default: 60m for the bootstrap, then 90m for the install, as openshift-install)")
	interval := fs.Duration("interval", defaultWaitInterval, "how often node zero is asked")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	cacert := fs.String("cacert", "", "PEM file of the CA node zero's HTTPS certificate is checked with (the install directory's tls/ca.crt, else tls/api.crt); with it, --rendezvous-ip means https://")

	// The target may come before, between or after the flags.
	var target string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if target != "" {
			return fmt.Errorf("wait-for: unexpected arguments %q", fs.Args())
		}
		target, args = fs.Arg(0), fs.Args()[1:]
	}
	cfg := defaultWaitConfig()
	switch waitTarget(target) {
	case waitBootstrap, waitInstall:
		cfg.target = waitTarget(target)
	case "":
		fs.Usage()
		return errors.New("wait-for: which target? bootstrap-complete or install-complete")
	default:
		return fmt.Errorf("wait-for: unknown target %q: bootstrap-complete or install-complete", target)
	}
	if *interval <= 0 || *timeout < 0 {
		return fmt.Errorf("wait-for: --interval %s, --timeout %s: want an interval above 0 and a timeout of 0 or more", *interval, *timeout)
	}
	cfg.interval, cfg.timeout = *interval, *timeout

	if *dir != "" {
		d, err := readInstallDir(*dir)
		if err != nil {
			return err
		}
		if *url == "" && *rendezvousIP == "" {
			*rendezvousIP = d.rendezvousIP
		}
		if *token == "" && *tokenFile == "" {
			*tokenFile = d.tokenFile
		}
		if *cacert == "" {
			*cacert = d.cacert
		}
		if *kubeconfig == "" {
			*kubeconfig = d.kubeconfig
		}
		cfg.passwordFile = d.passwordFile
	}
	cfg.kubeconfigPath = *kubeconfig
	base, err := waitURL(*url, *rendezvousIP)
	if err != nil {
		return err
	}
	if *cacert != "" && *url == "" {
		base = "https" + strings.TrimPrefix(base, "http")
	}
	tok := *token
	if *tokenFile != "" {
		if tok != "" {
			return errors.New("wait-for: --token and --token-file: give one")
		}
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("wait-for: --token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return err
	}
	// No proxy: node zero is on the machine network, and the environment's
	// proxy is for the cluster's way out, not for reaching it.
	tlsConf, err := wire.TLSConfig(*cacert, "", false)
	if err != nil {
		return fmt.Errorf("wait-for: --cacert: %w", err)
	}
	tr := &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: waitRequestTimeout}).DialContext, TLSClientConfig: tlsConf}
	client, err := wire.NewClient(base, wire.WithWatcherToken(tok), wire.WithRequestTimeout(waitRequestTimeout),
		wire.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return fmt.Errorf("wait-for: %w", err)
	}
	defer client.CloseIdleConnections()
	cfg.client, cfg.log, cfg.tokenGiven = client, waitLogger(stderr, level), tok != ""
	if cfg.kubeconfigPath != "" {
		if cfg.kube, err = newKubeFollower(cfg.kubeconfigPath, cfg.log); err != nil {
			return err
		}
	}
	return waitForTarget(ctx, cfg)
}

// waitURL is --url, or the URL of the service on --rendezvous-ip.
func waitURL(url, ip string) (string, error) {
	switch {
	case url != "" && ip != "":
		return "", errors.New("wait-for: --url and --rendezvous-ip: give one")
	case url != "":
		return url, nil
	case ip != "":
		if net.ParseIP(ip) == nil {
			return "", fmt.Errorf("wait-for: --rendezvous-ip %q is not an IP address", ip)
		}
		return "http://" + net.JoinHostPort(ip, nodeZeroPort), nil
	}
	return "", errors.New("wait-for: where is node zero? give --url or --rendezvous-ip")
}

// waitLogger writes logrus' text form without a timestamp: level=info
// msg="Cluster is ready for install", warnings as level=warning.
func waitLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.Attr{}
			case slog.LevelKey:
				l, _ := a.Value.Any().(slog.Level)
				if l == slog.LevelWarn {
					return slog.String(slog.LevelKey, "warning")
				}
				return slog.String(slog.LevelKey, strings.ToLower(l.String()))
			}
			return a
		}}))
}
