// Package console is the runtime of `nodezero console` on a host: the
// sources the tview console of package tui renders (node zero's service
// through the v2 client, the host's network over netlink, the
// connectivity checks run in-process), the plain console for a line that
// is no terminal, and the virtual terminal switch. tui stays pure
// rendering; everything that reads the host or the network is here.
//
// console may import any project package but cmd and node; only cmd
// imports it (and the sandbox, for the network page).
package console

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/inventory"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/tui"
	"github.com/nodezero/nodezero/wire"
)

// Options are `nodezero console`'s.
type Options struct {
	Root          string        // the host's root directory, absolute
	Version       string        // shown above the status lines
	Refresh       time.Duration // how often the dashboard asks node zero
	CheckInterval time.Duration // how often the connectivity checks run
	Countdown     time.Duration // how long the 'checks passed' dialog waits
	Mono          bool          // draw without colour (MonoWanted)
	// URL and the user token reach node zero's service. The token is
	// TokenFile's content, else Token (cmd passes USER_AUTH_TOKEN of the
	// environment), else USER_AUTH_TOKEN of rendezvous-host.env; the URL
	// is SERVICE_BASE_URL of rendezvous-host.env when "". The env file is
	// read once it exists.
	URL, TokenFile, Token string
	// ReleaseImage is what the checks pull; "": the host's
	// cluster-image-set.yaml, else its payload's (Payload; "": the
	// factory image's under Root).
	ReleaseImage, Payload string
	// CAFile holds PEM CAs the checks trust for the registry besides the
	// system's.
	CAFile string
	// DNSServer, "host:port", is asked by the checks instead of the
	// host's resolver.
	DNSServer string
	NoChecks  bool
	// HardwareRoot is where this host's id is read ("": Root).
	HardwareRoot string
}

// Run is the console until ctx ends or the user leaves it: the tview
// console on a terminal, else the status lines refreshed on stdout.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	if !IsTerminal(os.Stdout) {
		if _, err := tuiConfig(o); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "console: standard output is no terminal; showing the status lines instead")
		return plainConsole(ctx, o.Root, o.Version, stdout)
	}
	// A factory-image host without its configuration yet: nothing the
	// checks or the dashboard show can work, and the one thing to do is
	// to insert the config image, which the status lines say.
	if o.URL == "" {
		// Node zero's URL comes from rendezvous-host.env: wait for it.
		if err := awaitConfig(ctx, o.Root, o.Version, stdout, time.Second); err != nil || ctx.Err() != nil {
			return err
		}
	}
	cfg, err := tuiConfig(o)
	if err != nil {
		return err
	}
	defer switchToOwnVT()()
	return tui.Run(ctx, cfg)
}

// tuiConfig is the console of o: its pages' sources and checks. What only
// keeps a page from showing (no release image to check) is said on the
// dashboard (tui.Config.Notice); an error is a flag that cannot be
// followed, naming the flag and the file.
func tuiConfig(o Options) (tui.Config, error) {
	r := o.Root
	payload, hwRoot := o.Payload, o.HardwareRoot
	if payload == "" {
		payload = filepath.Join(r, diskwrite.DefaultPayloadDir)
	}
	if hwRoot == "" {
		hwRoot = r
	}
	cfg := tui.Config{CheckInterval: o.CheckInterval, Countdown: o.Countdown, Refresh: o.Refresh, Mono: o.Mono}
	cfg.NetState = func(context.Context) (tui.NetState, error) {
		st, err := NetState(nil, r)
		if r != "/" {
			// A host under another root (a sandbox or test host) has no
			// links of its own: netlink shows the machine's.
			st.Shared = "this host runs under " + r + " on the machine, whose links these are"
		}
		return st, err
	}
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
	if !o.NoChecks && !exists(filepath.Join(r, registryEnvPath)) {
		var err error
		co := CheckOptions{Image: o.ReleaseImage, DNSServer: o.DNSServer}
		if b, err := os.ReadFile(filepath.Join(r, configimage.PullSecretPath)); err == nil {
			co.PullSecret = b
		}
		if co.Image == "" {
			co.Image, err = hostReleaseImage(r, payload)
		}
		switch {
		case err != nil:
			// The checks need an image to pull; without one the console
			// still shows the install, and says why the checks are missing.
			cfg.Notice = "Connectivity checks not run: no release image to check (" + noImageReason(r, payload, err) + "); give --release-image, or --no-checks to skip them."
		default:
			if o.CAFile != "" {
				if co.CAs, err = caPool(o.CAFile); err != nil {
					return cfg, fmt.Errorf("console: --ca-file: %w", err)
				}
			} else if bundle := hostTrustBundle(r); bundle != nil {
				// The cluster's own trust bundle: what the agents'
				// image check trusts too (the infra-env's).
				co.CAs, _ = x509.SystemCertPool()
				if co.CAs == nil {
					co.CAs = x509.NewCertPool()
				}
				co.CAs.AppendCertsFromPEM(bundle)
			}
			cfg.ReleaseImage = co.Image
			if cfg.Checks, err = Checks(co); err != nil {
				return cfg, fmt.Errorf("console: %w", err)
			}
		}
	}
	token := o.Token
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return cfg, fmt.Errorf("console: --token-file: %s does not exist (give the file holding the user token, or set USER_AUTH_TOKEN)", o.TokenFile)
		case err != nil:
			return cfg, fmt.Errorf("console: --token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return cfg, fmt.Errorf("console: --token-file: %s is empty (want the user token)", o.TokenFile)
		}
	}
	thisHost, _ := inventory.HostID(inventory.Options{Root: hwRoot})
	src := &nodeZeroSource{root: r, url: o.URL, token: token, thisHost: thisHost}
	cfg.Source, cfg.Reset = src, src.reset
	return cfg, nil
}

// noImageReason says why hostReleaseImage found no image: neither file
// exists (the usual case on a host before its config image), or err.
func noImageReason(root, payload string, err error) string {
	cis := filepath.Join(root, configimage.ClusterImageSetPath)
	pj := filepath.Join(payload, diskwrite.PayloadFile)
	if !exists(cis) && !exists(pj) {
		return "neither " + cis + " nor " + pj + " exists"
	}
	return err.Error()
}

// interactiveUIPath marks the interactive flow: the console asks for the
// rendezvous IP (agent-tui's interactive mode).
const interactiveUIPath = "/etc/assisted/interactive-ui"

// MonoWanted decides colour: serial terminals (TERM vt100, vt220, …),
// dumb ones and NO_COLOR get none.
func MonoWanted(flagValue string) bool {
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
// itself writes it), unless flags or the environment gave them.
type nodeZeroSource struct {
	root, url, token, thisHost string

	mu     sync.Mutex
	client *wire.Client
	src    *tui.HTTPSource
}

func (s *nodeZeroSource) Snapshot(ctx context.Context) tui.Snapshot {
	src, err := s.source()
	if err != nil {
		// Not connected, nothing known: the snapshot has no time, so the
		// dashboard claims no data ("no cluster") it never had.
		return tui.Snapshot{ThisHost: s.thisHost, Err: err}
	}
	return src.Snapshot(ctx)
}

// source connects once what node zero's address and the token come from
// is there; until then the error says what is missing (a *tui.SetupError).
func (s *nodeZeroSource) source() (*tui.HTTPSource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.src != nil {
		return s.src, nil
	}
	url, token, ca := s.url, s.token, ""
	if url == "" || token == "" {
		envPath := filepath.Join(s.root, onhost.RendezvousEnvPath)
		env, err := boot.ReadEnv(s.root)
		switch {
		case errors.Is(err, fs.ErrNotExist) && url == "":
			return nil, &tui.SetupError{Reason: envPath + " does not exist yet: it names node zero and is written when the config image is loaded (or give --url)"}
		case errors.Is(err, fs.ErrNotExist):
			return nil, &tui.SetupError{Reason: "no user token for " + url + ": give --token-file or set USER_AUTH_TOKEN (" + envPath + ", which would hold one, does not exist)"}
		case err != nil:
			return nil, &tui.SetupError{Reason: err.Error()}
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
		return nil, &tui.SetupError{Reason: err.Error()}
	}
	s.client, s.src = c, tui.NewHTTPSource(c, s.thisHost)
	return s.src, nil
}

// reset asks node zero's service to reset the cluster (tui.Config.Reset).
func (s *nodeZeroSource) reset(ctx context.Context, clusterID string) error {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c == nil {
		return errors.New("not connected to node zero")
	}
	_, err := c.ResetCluster(ctx, clusterID)
	return err
}

// plainConsole refreshes the status lines every few seconds until ctx
// ends or "q" and Enter: the console on a line that is no terminal.
func plainConsole(ctx context.Context, root, version string, stdout io.Writer) error {
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
		if _, err := io.WriteString(stdout, "\x1b[H\x1b[2J"+Text(root, version)+"\nPress q and Enter for a login prompt.\n"); err != nil {
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

// Text is the status lines of the host under root, in the issue keys'
// order, below the version: what /etc/issue.d holds.
func Text(root, version string) string {
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

// decideWait bounds how long awaitConfig goes on showing the status
// lines once the configuration arrived: the network is applied and node
// zero decided within it on a healthy host.
const decideWait = 2 * time.Minute

// awaitConfig shows the status lines (/etc/issue.d, as the login prompt
// would) while the host under root has no configuration, that is no
// rendezvous-host.env, and the interactive flow is off: on a factory-image
// host before its config image. They are printed again each time they
// change, until the host has decided whether it is node zero (its
// rendezvous line) or decideWait after the configuration arrived; then it
// returns. It returns at once on a host that is configured or
// interactive.
func awaitConfig(ctx context.Context, root, version string, stdout io.Writer, poll time.Duration) error {
	configured := func() bool {
		return exists(filepath.Join(root, onhost.RendezvousEnvPath)) || exists(filepath.Join(root, interactiveUIPath))
	}
	if configured() {
		return nil
	}
	decided := func() bool {
		return exists(filepath.Join(root, issue.IssueDir, string(issue.KeyRendezvousHost)+".issue"))
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	last := ""
	var since time.Time
	for {
		if since.IsZero() && configured() {
			since = time.Now()
		}
		done := !since.IsZero() && (decided() || time.Since(since) > decideWait)
		text := Text(root, version)
		if text != last || done {
			if _, err := io.WriteString(stdout, "\r\n"+strings.ReplaceAll(text, "\n", "\r\n")); err != nil {
				return err
			}
			last = text
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
