package main

import (
	"bufio"
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/tui"
	"github.com/nodezero/nodezero/wire"
)

// runConsole is `nodezero console`, started by nodezero-console.service on
// the graphical VT and nodezero-console-serial@.service on a serial line:
// the tview console of package tui — rendezvous IP (interactive flow),
// connectivity checks, network, and the install dashboard read from node
// zero's service. q leaves it and the login prompt follows. --once prints
// the host's status lines (the ones /etc/issue.d holds) and exits; without
// a terminal the console falls back to refreshing those lines.
func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "/", "the host's root directory")
	once := fs.Bool("once", false, "print the status lines once and exit")
	every := fs.Duration("interval", 2*time.Second, "how often the dashboard asks node zero")
	checkEvery := fs.Duration("check-interval", 5*time.Second, "how often the connectivity checks run")
	countdown := fs.Duration("countdown", 20*time.Second, "how long the 'checks passed' dialog waits before going on")
	mono := fs.String("mono", "auto", "draw without colour: yes, no, or auto (serial terminals: TERM vt*, dumb, or NO_COLOR set)")
	url := fs.String("url", "", "node zero's service (default: SERVICE_BASE_URL of rendezvous-host.env)")
	tokenFile := fs.String("token-file", "", "file holding the user token (default: USER_AUTH_TOKEN of rendezvous-host.env)")
	release := fs.String("release-image", "", "the release image the checks pull (default: the host's cluster-image-set.yaml, else its payload)")
	payload := fs.String("payload", "", "the factory image's payload directory (default ROOT"+payloadPath+")")
	caFile := fs.String("ca-file", "", "PEM CAs the checks trust for the registry besides the system's")
	dnsServer := fs.String("dns-server", "", "host:port of the DNS server the checks ask instead of the host's resolver")
	noChecks := fs.Bool("no-checks", false, "skip the connectivity checks")
	hwRoot := fs.String("hardware-root", "", "root to read this host's id from (default: ROOT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("console: unexpected argument %q", fs.Arg(0))
	}
	if *once {
		_, err := io.WriteString(stdout, consoleText(*root))
		return err
	}
	r, err := filepath.Abs(*root)
	if err != nil {
		return err
	}
	if *payload == "" {
		*payload = filepath.Join(r, payloadPath)
	}
	if *hwRoot == "" {
		*hwRoot = r
	}
	cfg := tui.Config{CheckInterval: *checkEvery, Countdown: *countdown, Refresh: *every, Mono: monoWanted(*mono)}
	cfg.NetState = func(context.Context) (tui.NetState, error) { return netState(nil, r) }
	if nmtui, err := exec.LookPath("nmtui"); err == nil && r == "/" {
		cfg.ConfigureNetwork = func() error {
			c := exec.Command(nmtui)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
			return c.Run()
		}
	}
	if _, err := os.Stat(filepath.Join(r, interactiveUIPath)); err == nil {
		rz := &tui.Rendezvous{Root: r, LocalAddrs: localAddrs}
		if env, err := boot.ReadEnv(r); err == nil {
			rz.Prefill = env.NodeZeroIP
		}
		cfg.Rendezvous = rz
	}
	if !*noChecks && !exists(filepath.Join(r, registryEnvPath)) {
		o := consoleCheckOptions{Image: *release, DNSServer: *dnsServer, PullSecret: readOptional(filepath.Join(r, configimage.PullSecretPath))}
		if o.Image == "" {
			if o.Image, err = hostReleaseImage(r, *payload); err != nil {
				return fmt.Errorf("console: the release image to check: %w (give --release-image, or --no-checks)", err)
			}
		}
		if *caFile != "" {
			if o.CAs, err = caPool(*caFile); err != nil {
				return fmt.Errorf("console: --ca-file: %w", err)
			}
		}
		cfg.ReleaseImage = o.Image
		if cfg.Checks, err = consoleChecks(o); err != nil {
			return fmt.Errorf("console: %w", err)
		}
	}
	token := ""
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("console: --token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	thisHost, _ := inventory.HostID(inventory.Options{Root: *hwRoot})
	cfg.Source = &nodeZeroSource{root: r, url: *url, token: token, thisHost: thisHost}

	if !isTerminal(os.Stdout) {
		fmt.Fprintln(stderr, "console: standard output is no terminal; showing the status lines instead")
		return plainConsole(ctx, r, stdout)
	}
	defer switchToOwnVT()()
	return tui.Run(ctx, cfg)
}

// interactiveUIPath marks the interactive flow: the console asks for the
// rendezvous IP (agent-tui's interactive mode).
const interactiveUIPath = "/etc/assisted/interactive-ui"

// monoWanted decides colour: serial terminals (TERM vt100, vt220, …),
// dumb ones and NO_COLOR get none.
func monoWanted(flagValue string) bool {
	switch flagValue {
	case "yes", "true":
		return true
	case "no", "false":
		return false
	}
	if _, ok := os.LookupEnv("NO_COLOR"); ok {
		return true
	}
	term := os.Getenv("TERM")
	return strings.HasPrefix(term, "vt") || term == "dumb" || term == ""
}

func caPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate", path)
	}
	return pool, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// nodeZeroSource is the dashboard's source on a host: node zero's service
// at SERVICE_BASE_URL with USER_AUTH_TOKEN, both read from
// rendezvous-host.env once it exists (in the interactive flow the console
// itself writes it), unless flags gave them.
type nodeZeroSource struct {
	root, url, token, thisHost string

	mu  sync.Mutex
	src *tui.HTTPSource
}

func (s *nodeZeroSource) Snapshot(ctx context.Context) tui.Snapshot {
	s.mu.Lock()
	src := s.src
	s.mu.Unlock()
	if src == nil {
		url, token, ca := s.url, s.token, ""
		if url == "" || token == "" {
			env, err := boot.ReadEnv(s.root)
			if err != nil {
				return tui.Snapshot{At: time.Now(), ThisHost: s.thisHost, Err: fmt.Errorf("no node zero yet: %w", err)}
			}
			if url == "" {
				url, ca = env.ServiceBaseURL, env.ServiceCACert
			}
			if token == "" {
				token = env.UserToken
			}
		}
		c, err := wire.NewClient(strings.TrimSuffix(url, "/"), wire.WithUserToken(token), wire.WithCACertFile(ca))
		if err != nil {
			return tui.Snapshot{At: time.Now(), ThisHost: s.thisHost, Err: err}
		}
		src = tui.NewHTTPSource(c, s.thisHost)
		s.mu.Lock()
		s.src = src
		s.mu.Unlock()
	}
	return src.Snapshot(ctx)
}

// plainConsole refreshes the status lines every few seconds until ctx
// ends or "q" and Enter: the console on a line that is no terminal.
func plainConsole(ctx context.Context, root string, stdout io.Writer) error {
	quit := make(chan struct{})
	go func() { // ends with the process: stdin is the console's tty
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "q" {
				break
			}
		}
		close(quit)
	}()
	t := time.NewTicker(3 * time.Second)
	defer t.Stop()
	for {
		// Clear the screen and home the cursor; works on the Linux VT and
		// on vt220 serial terminals.
		if _, err := io.WriteString(stdout, "\x1b[H\x1b[2J"+consoleText(root)+"\nPress q and Enter for a login prompt.\n"); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-quit:
			return nil
		case <-t.C:
		}
	}
}

// consoleText is the status lines of the host, in the issue keys' order.
func consoleText(root string) string {
	dir := filepath.Join(root, issue.MotdDir)
	ents, err := os.ReadDir(dir)
	var b strings.Builder
	b.WriteString("nodezero " + version + "\n\n")
	if err != nil && !os.IsNotExist(err) {
		fmt.Fprintf(&b, "cannot read the status: %v\n", err)
		return b.String()
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		b.WriteString("Starting…\n")
	}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue // replaced as we read: the next refresh shows it
		}
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
