package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/node/console"
)

// runConsole is `nodezero console`, started by nodezero-console.service on
// the graphical VT and nodezero-console-serial@.service on a serial line:
// the tview console of package tui — rendezvous IP (interactive flow),
// connectivity checks, network, and the install dashboard read from node
// zero's service. q leaves it and the login prompt follows. --once prints
// the host's status lines (the ones /etc/issue.d holds) and exits; without
// a terminal the console falls back to refreshing those lines.
func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "console", "the terminal console: connectivity checks, network, rendezvous IP and the install dashboard", "[flags]",
		"nodezero console --url http://192.168.111.80:8090 --token-file ~/auth/token", "nodezero console --once --root /")
	root := fs.String("root", "/", "the host's root directory")
	once := fs.Bool("once", false, "print the status lines once and exit")
	every := fs.Duration("interval", 2*time.Second, "how often the dashboard asks node zero")
	checkEvery := fs.Duration("check-interval", 5*time.Second, "how often the connectivity checks run")
	countdown := fs.Duration("countdown", 20*time.Second, "how long the 'checks passed' dialog waits before going on")
	mono := fs.String("mono", "auto", "draw without colour: yes, no, or auto (serial terminals: TERM vt*, dumb, or NO_COLOR set)")
	url := fs.String("url", "", "node zero's service (default: SERVICE_BASE_URL of rendezvous-host.env)")
	tokenFile := fs.String("token-file", "", "file holding the user token (default: USER_AUTH_TOKEN of the environment, else of rendezvous-host.env)")
	release := fs.String("release-image", "", "the release image the checks pull (default: the host's cluster-image-set.yaml, else its payload)")
	payload := fs.String("payload", "", "the factory image's payload directory (default ROOT"+diskwrite.DefaultPayloadDir+")")
	caFile := fs.String("ca-file", "", "PEM CAs the checks trust for the registry besides the system's")
	dnsServer := fs.String("dns-server", "", "host:port of the DNS server the checks ask instead of the host's resolver")
	noChecks := fs.Bool("no-checks", false, "skip the connectivity checks")
	hwRoot := fs.String("hardware-root", "", "root to read this host's id from (default: ROOT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *once {
		_, err := io.WriteString(stdout, console.Text(*root, version))
		return err
	}
	r, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	return console.Run(ctx, console.Options{
		Root: r, Version: version, Refresh: *every, CheckInterval: *checkEvery, Countdown: *countdown, Mono: console.MonoWanted(*mono),
		URL: *url, TokenFile: *tokenFile, Token: os.Getenv("USER_AUTH_TOKEN"), ReleaseImage: *release, Payload: *payload, CAFile: *caFile, DNSServer: *dnsServer,
		NoChecks: *noChecks, HardwareRoot: *hwRoot,
	}, stdout, stderr)
}
