package main

// `nodezero wait-for bootstrap-complete|install-complete`: its flags, read
// into a watch.WaitOptions; package watch follows the install.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/nodezero/nodezero/watch"
)

// The install directory's files, as `create config-image` writes them and
// wait-for reads them (package watch owns their names).
const (
	rendezvousIPFile = watch.RendezvousIPFile
	watcherTokenFile = watch.WatcherTokenFile
	kubeconfigFile   = watch.KubeconfigFile
	kubeadminFile    = watch.KubeadminFile
)

// nodeZeroPort is the port of node zero's service.
const nodeZeroPort = "8090"

func runWaitFor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "add-nodes" {
		return runWaitForAddNodes(ctx, args[1:], stdout, stderr)
	}
	o, err := waitForOptions(args, stderr)
	if err != nil {
		return err
	}
	return watch.WaitFor(ctx, o)
}

// waitForOptions reads wait-for's flags; the lines go to stderr.
func waitForOptions(args []string, stderr io.Writer) (watch.WaitOptions, error) {
	var o watch.WaitOptions
	fs := newFlags(stderr, "wait-for", "follow an install through node zero's API, then the cluster's, as openshift-install agent wait-for does", "bootstrap-complete|install-complete (--dir DIR | (--url URL | --rendezvous-ip IP) (--token T | --token-file F)) [flags]",
		"nodezero wait-for install-complete --dir ./mycluster",
		"nodezero wait-for bootstrap-complete --rendezvous-ip 192.168.111.80 --token-file ./mycluster/auth/watcher.token")
	dir := fs.String("dir", "", "the install directory of 'nodezero create config-image --dir': node zero's address (DIR/"+rendezvousIPFile+"), the watcher token (DIR/"+watcherTokenFile+"), node zero's CA (DIR/tls) and, to follow the cluster once node zero has rebooted, DIR/"+kubeconfigFile+"; the other flags override it")
	kubeconfig := fs.String("kubeconfig", "", "the installed cluster's admin kubeconfig: after the bootstrap, the install is followed through its Kubernetes API (ClusterVersion, cluster operators); default DIR/"+kubeconfigFile)
	url := fs.String("url", "", "node zero's service, e.g. http://192.168.111.80:8090 (default: from --rendezvous-ip)")
	rendezvousIP := fs.String("rendezvous-ip", "", "node zero's address; the service is at http://IP:"+nodeZeroPort)
	token := fs.String("token", "", "the watcher token (header Watcher-Authorization)")
	tokenFile := fs.String("token-file", "", "file holding the watcher token, e.g. auth/watcher.token")
	timeout := fs.Duration("timeout", 0, "give up after this long (default: 60m for the bootstrap, then 90m for the install, as openshift-install)")
	interval := fs.Duration("interval", watch.DefaultInterval, "how often node zero is asked")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	cacert := fs.String("cacert", "", "PEM file of the CA node zero's HTTPS certificate is checked with (the install directory's tls/ca.crt, else tls/api.crt); with it, --rendezvous-ip means https://")

	// The target may come before, between or after the flags.
	var target string
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		if target != "" {
			return o, fmt.Errorf("wait-for: unexpected arguments %q", fs.Args())
		}
		target, args = fs.Arg(0), fs.Args()[1:]
	}
	switch watch.Target(target) {
	case watch.BootstrapComplete, watch.InstallComplete:
		o.Target = watch.Target(target)
	case "":
		fs.Usage()
		return o, errors.New("wait-for: which target? bootstrap-complete or install-complete")
	default:
		return o, fmt.Errorf("wait-for: unknown target %q: bootstrap-complete or install-complete", target)
	}
	if *interval <= 0 || *timeout < 0 {
		return o, fmt.Errorf("wait-for: --interval %s, --timeout %s: want an interval above 0 and a timeout of 0 or more", *interval, *timeout)
	}
	o.Interval, o.Timeout = *interval, *timeout

	if *dir != "" {
		d, err := watch.ReadInstallDir(*dir)
		if err != nil {
			return o, err
		}
		if *url == "" && *rendezvousIP == "" {
			*rendezvousIP = d.RendezvousIP
		}
		if *token == "" && *tokenFile == "" {
			*tokenFile = d.TokenFile
		}
		if *cacert == "" {
			*cacert = d.CACert
		}
		if *kubeconfig == "" {
			*kubeconfig = d.Kubeconfig
		}
		o.PasswordFile = d.PasswordFile
	}
	o.Kubeconfig, o.CACert = *kubeconfig, *cacert
	base, err := waitURL(*url, *rendezvousIP)
	if err != nil {
		return o, err
	}
	if *cacert != "" && *url == "" {
		base = "https" + strings.TrimPrefix(base, "http")
	}
	o.URL, o.Token = base, *token
	if *tokenFile != "" {
		if o.Token != "" {
			return o, errors.New("wait-for: --token and --token-file: give one")
		}
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return o, fmt.Errorf("wait-for: --token-file: %w", err)
		}
		o.Token = strings.TrimSpace(string(b))
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return o, err
	}
	o.Log = watch.Logger(stderr, level)
	return o, nil
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
