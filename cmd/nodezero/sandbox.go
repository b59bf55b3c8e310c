package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/template"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nodezero/nodezero/cmd/nodezero/internal/loopback"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/node/console"
	"github.com/nodezero/nodezero/tui"
	"github.com/nodezero/nodezero/wire"
)

// `nodezero sandbox` installs a whole cluster on this machine (DESIGN §9):
// one `nodezero run` process per host, each with its own root directory,
// hardware tree (testdata/hw), sparse-file disk and loopback address; a
// config image made from the input set in testdata/sandbox and loaded the
// way a host loads it; a generated OS image with a known digest as the
// payload; DNS and a registry of its own on loopback for the host checks.
// A host's reboot ends its process (sim.ExitReboot), and the sandbox starts it
// again, booting its disk: from there on OpenShift is simulated
// (installed.go). Nothing leaves loopback.

//go:embed testdata/sandbox/*.yaml
var sandboxInputs embed.FS

const (
	sandboxCluster = "sandbox"
	sandboxDomain  = "nodezero.test"
	sandboxRelease = "ocp/release"
	sandboxTag     = "4.18.0-x86_64"
)

type sandboxOptions struct {
	dir, hw, payload, bin, logLevel string
	disks                           string // the hosts' disk files, DISKS/<host>/<device>
	masters, workers                int
	imageSize                       int64
	timeout, checkEvery, cpTimeout  time.Duration
	keepRunning, netns              bool
	neverJoin                       string // a host that never joins (tests)
	settle                          time.Duration
	apiTLS                          bool // node zero's API over HTTPS, with certificates made here
	// kubeAPI runs the installed cluster's Kubernetes API after node
	// zero's reboot (sandbox_kube.go): "yes", "no", or "auto" (when the
	// tools are found; the flag's default). The zero value, for callers
	// that build options themselves, is no.
	kubeAPI string
	// started, when set, is called once every host has started, with the
	// API client and the hosts (the crash tests kill processes through it).
	started        func(c *wire.Client, hosts []*sandboxHost)
	console        bool // show the dashboard (tui) while it runs
	stdout, errOut io.Writer
}

func (o sandboxOptions) stderr() io.Writer {
	if o.errOut == nil {
		return io.Discard
	}
	return o.errOut
}

// sandboxSummary is what a sandbox run leaves in DIR/summary.json.
type sandboxSummary struct {
	ClusterID      string               `json:"cluster_id"`
	Status         wire.ClusterStatus   `json:"status"`
	StatusInfo     string               `json:"status_info"`
	WallSeconds    float64              `json:"wall_seconds"`
	WritingSeconds float64              `json:"writing_seconds"` // time with at least one disk being written
	Hosts          []sandboxHostSummary `json:"hosts"`
	URL            string               `json:"url"`
	UserToken      string               `json:"user_token"`
	// KubeAPI is the installed cluster's Kubernetes API, Kubeconfig the
	// admin kubeconfig that opens it (empty when the step was skipped).
	KubeAPI    string `json:"kube_api,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
}

type sandboxHostSummary struct {
	Name       string          `json:"name"`
	HostID     string          `json:"host_id"`
	Role       wire.HostRole   `json:"role"`
	Bootstrap  bool            `json:"bootstrap"`
	Status     wire.HostStatus `json:"status"`
	StatusInfo string          `json:"status_info"`
	Boots      int             `json:"boots"`
	Root       string          `json:"root"`
	Disks      string          `json:"disks"`
	Log        string          `json:"log"`
}

func runSandbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := sandboxOptions{stdout: stdout, errOut: stderr}
	fs.StringVar(&o.dir, "dir", "", "work directory, kept afterwards (default: a new directory under /var/tmp)")
	fs.IntVar(&o.masters, "masters", 3, "control-plane hosts (1: single node, 3: compact or with workers)")
	fs.IntVar(&o.workers, "workers", 2, "worker hosts (0-2)")
	fs.StringVar(&o.hw, "hw", "testdata/hw", "directory of the hosts' hardware trees")
	fs.StringVar(&o.disks, "disks", "", "directory of the hosts' disk files (default: /dev/shm/nodezero-sandbox-*: the disk speed check's 10 ms sync threshold measures the machine's own disk otherwise)")
	fs.StringVar(&o.payload, "payload", "", "a payload directory to install (default: generate a small OS image with a known digest)")
	sizeMiB := fs.Int64("image-size", 64, "size of the generated OS image, MiB")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up when the cluster is not installed by then")
	fs.DurationVar(&o.checkEvery, "check-interval", 10*time.Second, "how often hosts repeat their host checks")
	fs.DurationVar(&o.cpTimeout, "control-plane-timeout", 0, "how long the bootstrap host waits for the other control-plane hosts to join (default 60m)")
	fs.BoolVar(&o.keepRunning, "keep-running", false, "leave the hosts running after the install (node zero keeps serving the API) until interrupted")
	fs.BoolVar(&o.netns, "netns", false, "run the hosts in network namespaces (root)")
	fs.BoolVar(&o.apiTLS, "api-tls", false, "serve node zero's API over HTTPS: a CA and a certificate for the rendezvous IP go into the install directory's tls/, and from there into the config image")
	fs.StringVar(&o.bin, "bin", "", "the nodezero binary the hosts run (default: this one)")
	fs.StringVar(&o.logLevel, "log-level", "info", "the hosts' log level")
	fs.StringVar(&o.neverJoin, "fault-never-join", "", "tests: this host, once installed, never joins")
	fs.DurationVar(&o.settle, "settle", 0, "how long a host booted from its installed disk stays in Configuring and in Joined")
	fs.StringVar(&o.kubeAPI, "kube-api", "auto", "after node zero's reboot, run the installed cluster's Kubernetes API (kube-apiserver and etcd on the API VIP, opened by install/auth/kubeconfig): yes, no, or auto (when the tools are found: make deps)")
	console := fs.String("console", "auto", "show node zero's dashboard while the install runs: yes, no, or auto (when stdout is a terminal)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *console {
	case "yes":
		o.console = true
	case "auto":
		o.console = isTerminal(stdout)
	case "no":
	default:
		return fmt.Errorf("sandbox: --console %q: want yes, no or auto", *console)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("sandbox: unexpected arguments %q", fs.Args())
	}
	switch o.kubeAPI {
	case "yes", "no", "auto":
	default:
		return fmt.Errorf("sandbox: --kube-api %q: want yes, no or auto", o.kubeAPI)
	}
	if o.netns {
		return errors.New("sandbox: --netns is not in this build yet; the namespaces test bed runs in the tests (go test ./cmd/nodezero -run Netns, as root)")
	}
	if o.masters != 1 && o.masters != 3 {
		return fmt.Errorf("sandbox: --masters %d: want 1 (single node) or 3", o.masters)
	}
	if o.workers < 0 || o.workers > 2 || (o.masters == 1 && o.workers > 0) {
		return fmt.Errorf("sandbox: --workers %d: want 0-2, and 0 with a single node", o.workers)
	}
	o.imageSize = *sizeMiB << 20
	if o.bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		o.bin = exe
	}
	return sandbox(ctx, o)
}

func sandbox(ctx context.Context, o sandboxOptions) (err error) {
	start := time.Now()
	lines := &switchWriter{w: o.stdout}
	say := func(format string, a ...any) {
		fmt.Fprintf(lines, "%s %s\n", time.Since(start).Round(100*time.Millisecond).String(), fmt.Sprintf(format, a...))
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("/var/tmp", "nodezero-sandbox-"); err != nil {
			return err
		}
	}
	if o.dir, err = filepath.Abs(o.dir); err != nil {
		return err
	}
	if o.hw, err = filepath.Abs(o.hw); err != nil {
		return err
	}
	if o.disks == "" {
		// Sparse files on a tmpfs: their sync is memory's, as fast as the
		// check wants a real install disk to be.
		if o.disks, err = os.MkdirTemp("/dev/shm", "nodezero-sandbox-"); err != nil {
			o.disks = filepath.Join(o.dir, "disks")
		}
	}
	say("sandbox in %s", o.dir)

	// A /24 of loopback of its own: two sandboxes (or tests) side by side
	// never meet.
	prefix := randomLoopbackPrefix()
	base := prefix.Addr().As4()
	addr := func(last byte) netip.Addr { a := base; a[3] = last; return netip.AddrFrom4(a) }

	var hosts []*sandboxHost
	for i := range o.masters {
		hosts = append(hosts, &sandboxHost{Name: fmt.Sprintf("master-%d", i), Role: "master"})
	}
	for i := range o.workers {
		hosts = append(hosts, &sandboxHost{Name: fmt.Sprintf("worker-%d", i), Role: "worker"})
	}
	for i, h := range hosts {
		h.Addr = addr(byte(10 + i))
		h.hw = filepath.Join(o.hw, h.Name)
		if h.NIC, h.MAC, err = firstNIC(h.hw); err != nil {
			return err
		}
		hd := filepath.Join(o.dir, "hosts", h.Name)
		h.root, h.disks, h.log = filepath.Join(hd, "root"), filepath.Join(o.disks, h.Name), filepath.Join(hd, "run.log")
		if err := os.MkdirAll(h.root, 0o755); err != nil {
			return err
		}
	}
	zero := hosts[0]

	// The responders the host checks ask: the cluster's names and the
	// release image's registry.
	// The release image is named by address: the image check resolves
	// names with the machine's resolver, which must not be asked.
	reg, err := loopback.StartRegistryTLS(ctx, addr(2).String()+":0", []loopback.Image{{
		Repo: sandboxRelease, Tag: sandboxTag,
		Config: []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"io.openshift.release":"4.18.0"}}}`),
		Layers: [][]byte{bytes.Repeat([]byte("nodezero sandbox release payload\n"), 4096)},
	}}, nil)
	if err != nil {
		return fmt.Errorf("sandbox: registry: %w", err)
	}
	defer reg.Close()
	registryHost := reg.Addr
	clusterDomain := sandboxCluster + "." + sandboxDomain
	// With platform none the cluster's names point at the user's load
	// balancer: an address of the sandbox's own where nothing listens (the
	// cluster is simulated), never a host's, as the validations demand.
	lb := addr(3)
	dns, err := loopback.StartDNS(ctx, addr(1).String()+":0", []loopback.Record{
		{Name: "api." + clusterDomain, Addrs: []netip.Addr{lb}},
		{Name: "api-int." + clusterDomain, Addrs: []netip.Addr{lb}},
	}, []loopback.Record{{Name: "apps." + clusterDomain, Addrs: []netip.Addr{lb}}})
	if err != nil {
		return fmt.Errorf("sandbox: dns: %w", err)
	}
	defer dns.Close()
	say("DNS on %s, release image %s/%s:%s", dns.Addr, registryHost, sandboxRelease, sandboxTag)

	// The payload every host's factory image carries.
	if o.payload == "" {
		o.payload = filepath.Join(o.dir, "payload")
		digest, err := makeSandboxPayload(o.payload, o.imageSize, registryHost+"/"+sandboxRelease+":"+sandboxTag)
		if err != nil {
			return err
		}
		say("payload: a %d MiB OS image, sha256 %s", o.imageSize>>20, digest)
	}

	// The config image, made from the input set the way a user makes it.
	installDir := filepath.Join(o.dir, "install")
	if err := writeSandboxInputs(installDir, o, prefix, hosts, registryHost, reg.CA()); err != nil {
		return err
	}
	if o.apiTLS {
		certs, err := makeAPICerts(zero.Addr, time.Now())
		if err != nil {
			return fmt.Errorf("sandbox: api tls: %w", err)
		}
		if err := certs.write(installDir); err != nil {
			return fmt.Errorf("sandbox: api tls: %w", err)
		}
	}
	var created bytes.Buffer
	if err := runCreateConfigImage(ctx, []string{"--dir", installDir, "--release-image", registryHost + "/" + sandboxRelease + ":" + sandboxTag}, &created, &created); err != nil {
		return fmt.Errorf("sandbox: config image: %w\n%s", err, created.String())
	}
	iso := filepath.Join(installDir, "agentconfig.noarch.iso")
	st, err := loadOrCreateState(installDir)
	if err != nil {
		return err
	}
	userToken := st.Tokens["userAuth"]
	say("config image %s", iso)
	kapi, err := prepareSandboxKube(o, installDir, lb, zero, say)
	if err != nil {
		return err
	}
	// Stopped after the hosts (the deferred stop below runs first).
	defer kapi.close()

	for _, h := range hosts {
		h.args = []string{"run", "--root", h.root, "--hardware-root", h.hw, "--config-image", iso,
			"--listen", zero.Addr.String() + ":8090", "--host-address", netip.PrefixFrom(h.Addr, prefix.Bits()).String(),
			"--dns-server", dns.Addr, "--payload", o.payload, "--disks", h.disks,
			"--check-interval", o.checkEvery.String(), "--node-zero-window", "10s", "--node-zero-interval", "250ms",
			"--config-interval", "1s", "--agent-interval", "1s", "--reboot-delay", "1ms", "--log-level", o.logLevel}
		if o.cpTimeout > 0 {
			h.args = append(h.args, "--control-plane-timeout", o.cpTimeout.String())
		}
		if h.Name == o.neverJoin {
			h.args = append(h.args, "--fault-never-join")
		}
		if o.settle > 0 {
			h.args = append(h.args, "--settle", o.settle.String())
		}
	}

	ctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	if kapi != nil {
		zero.onReboot = func() { kapi.start(ctx, &wg, zero) }
	}
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			superviseHost(ctx, o.bin, h, func(format string, a ...any) { say(format, a...) })
		}()
	}
	say("started %d hosts (%d control plane, %d workers); node zero is %s at %s", len(hosts), o.masters, o.workers, zero.Name, zero.Addr)

	url, opts := "http://"+zero.Addr.String()+":8090", []wire.ClientOption{wire.WithUserToken(userToken)}
	if o.apiTLS {
		url = "https://" + zero.Addr.String() + ":8090"
		opts = append(opts, wire.WithCACertFile(apiCAFile(installDir)))
	}
	c, err := wire.NewClient(url, opts...)
	if err != nil {
		return err
	}
	if o.started != nil {
		o.started(c, hosts)
	}
	consoleDone := make(chan error, 1)
	if o.console {
		// The progress lines go to a log while the dashboard owns the
		// terminal, and back to stdout when the person leaves it (q).
		logPath := filepath.Join(o.dir, "sandbox.log")
		f, err := os.Create(logPath)
		if err != nil {
			return err
		}
		defer f.Close()
		lines.set(f)
		go func() {
			err := tui.Run(ctx, tui.Config{
				Mono:     console.MonoWanted("auto"),
				Source:   tui.NewHTTPSource(c, ""),
				NetState: func(context.Context) (tui.NetState, error) { return console.NetState(nil, "/") },
			})
			lines.set(o.stdout)
			consoleDone <- err
		}()
	} else {
		close(consoleDone)
	}
	sum, werr := watchSandbox(ctx, c, hosts, o.timeout, say, kapi.failure)
	sum.URL, sum.UserToken = url, userToken
	if sum.KubeAPI = kapi.url(); sum.KubeAPI != "" {
		sum.Kubeconfig = kapi.kubeconfig
	}
	sum.WallSeconds = time.Since(start).Seconds()
	if sum.ClusterID != "" {
		sum.WritingSeconds = writingSeconds(ctx, c, sum.ClusterID)
	}
	for i := range sum.Hosts {
		for _, h := range hosts {
			if h.Name == sum.Hosts[i].Name {
				h.mu.Lock()
				sum.Hosts[i].Boots, sum.Hosts[i].Root, sum.Hosts[i].Disks, sum.Hosts[i].Log = h.boots, h.root, h.disks, h.log
				h.mu.Unlock()
			}
		}
	}
	b, _ := json.MarshalIndent(sum, "", "  ")
	// 0600: it carries the user token, as the state file does.
	if err := os.WriteFile(filepath.Join(o.dir, "summary.json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	// The dashboard shows the end of the install until the person leaves
	// it; the summary follows on the terminal.
	if cerr := <-consoleDone; cerr != nil {
		fmt.Fprintf(o.stderr(), "sandbox: console: %v\n", cerr)
	}
	fmt.Fprintf(o.stdout, "\ncluster %s: %s — %s\n", sum.ClusterID, sum.Status, sum.StatusInfo)
	fmt.Fprintf(o.stdout, "wall time %.1f s, disks being written %.1f s (%.0f%%)\n", sum.WallSeconds, sum.WritingSeconds, 100*sum.WritingSeconds/max(sum.WallSeconds, 0.001))
	for _, h := range sum.Hosts {
		fmt.Fprintf(o.stdout, "  %-9s %-7s %-10s disks %s, log %s\n", h.Name, h.Role, h.Status, h.Disks, h.Log)
	}
	fmt.Fprintf(o.stdout, "summary %s; API %s (user token in %s)\n", filepath.Join(o.dir, "summary.json"), url, filepath.Join(installDir, stateFile))
	switch {
	case sum.KubeAPI != "":
		fmt.Fprintf(o.stdout, "kube API %s (etcd and kube-apiserver logs in %s): kubectl --kubeconfig %s get clusterversion\n", sum.KubeAPI, kapi.cfg.Dir, sum.Kubeconfig)
	case kapi == nil:
		fmt.Fprintln(o.stdout, "kube API: none (skipped)")
	}
	if werr == nil && o.keepRunning {
		fmt.Fprintln(o.stdout, "hosts keep running; interrupt to stop them")
		<-ctx.Done()
	}
	return werr
}

// switchWriter writes to one writer at a time; set changes it.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

// isTerminal tells whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// watchSandbox follows the install through node zero's API, printing what
// changes, until the cluster is installed, fails, or the time is up.
func watchSandbox(ctx context.Context, c *wire.Client, hosts []*sandboxHost, timeout time.Duration, say func(string, ...any), failed func() error) (sandboxSummary, error) {
	deadline := time.Now().Add(timeout)
	var sum sandboxSummary
	seen := map[string]string{}
	var errorSince time.Time
	for {
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		if time.Now().After(deadline) {
			return sum, fmt.Errorf("sandbox: the cluster is not installed after %s: %s (%s)", timeout, sum.Status, sum.StatusInfo)
		}
		for _, h := range hosts {
			h.mu.Lock()
			exit := h.exit
			h.mu.Unlock()
			if exit != nil {
				return sum, fmt.Errorf("sandbox: host %s stopped: %v (log %s)", h.Name, exit, h.log)
			}
		}
		if err := failed(); err != nil {
			return sum, err
		}
		if cl, err := c.ListClusters(ctx); err == nil && len(cl) > 0 {
			cluster, err := c.GetCluster(ctx, cl[0].ID)
			if err == nil {
				sum = summarize(cluster)
				line := fmt.Sprintf("cluster %s: %s", cluster.Status, cluster.StatusInfo)
				if cluster.Progress != nil && cluster.Progress.TotalPercentage > 0 {
					line += fmt.Sprintf(" (%d%%)", cluster.Progress.TotalPercentage)
				}
				if seen["cluster"] != line {
					seen["cluster"] = line
					say("%s", line)
				}
				for _, h := range cluster.Hosts {
					name := h.RequestedHostname
					l := fmt.Sprintf("%s: %s", name, h.Status)
					if h.Progress != nil && h.Progress.CurrentStage != "" {
						l += " — " + string(h.Progress.CurrentStage)
						if h.Progress.ProgressInfo != "" {
							l += " " + h.Progress.ProgressInfo
						}
					}
					if seen[h.ID] != l {
						seen[h.ID] = l
						say("  %s", l)
					}
				}
				switch cluster.Status {
				case wire.ClusterStatusInstalled:
					return sum, nil
				case wire.ClusterStatusError, wire.ClusterStatusCancelled:
					// Hosts still settle (logs, stage reports) for a moment.
					if errorSince.IsZero() {
						errorSince = time.Now()
					} else if time.Since(errorSince) > 3*time.Second {
						return sum, fmt.Errorf("sandbox: the installation failed: %s: %s%s", cluster.Status, cluster.StatusInfo, hostReasons(cluster))
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return sum, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func summarize(c *wire.Cluster) sandboxSummary {
	s := sandboxSummary{ClusterID: c.ID, Status: c.Status, StatusInfo: c.StatusInfo}
	for _, h := range c.Hosts {
		s.Hosts = append(s.Hosts, sandboxHostSummary{Name: h.RequestedHostname, HostID: h.ID, Role: h.Role, Bootstrap: h.Bootstrap, Status: h.Status, StatusInfo: h.StatusInfo})
	}
	sort.Slice(s.Hosts, func(i, j int) bool { return s.Hosts[i].Name < s.Hosts[j].Name })
	return s
}

func hostReasons(c *wire.Cluster) string {
	var b strings.Builder
	for _, h := range c.Hosts {
		if h.Status == wire.HostStatusError || h.Status == wire.HostStatusCancelled {
			fmt.Fprintf(&b, "\n  %s: %s: %s", h.RequestedHostname, h.Status, h.StatusInfo)
		}
	}
	return b.String()
}

// writingSeconds is how long at least one disk was being written: the union
// of each host's "Writing image to disk" stage, from the progress events.
func writingSeconds(ctx context.Context, c *wire.Client, clusterID string) float64 {
	evs, err := c.ListEvents(ctx, wire.EventsQuery{ClusterID: clusterID})
	if err != nil {
		return 0
	}
	type span struct{ from, to time.Time }
	open := map[string]time.Time{}
	var spans []span
	for _, e := range evs {
		if e.Name != "host_install_progress_updated" || e.HostID == nil {
			continue
		}
		id, at := *e.HostID, e.EventTime.Time()
		if from, ok := open[id]; ok {
			spans = append(spans, span{from, at})
			delete(open, id)
		}
		if strings.Contains(e.Message, string(wire.HostStageWritingImageToDisk)) {
			open[id] = at
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from.Compare(b.from) })
	var total time.Duration
	var cur span
	for _, s := range spans {
		switch {
		case cur.to.IsZero():
			cur = s
		case s.from.After(cur.to):
			total += cur.to.Sub(cur.from)
			cur = s
		case s.to.After(cur.to):
			cur.to = s.to
		}
	}
	if !cur.to.IsZero() {
		total += cur.to.Sub(cur.from)
	}
	return total.Seconds()
}

// randomLoopbackPrefix picks a /24 in 127.0.0.0/8 away from 127.0.0.x.
func randomLoopbackPrefix() netip.Prefix {
	n, _ := rand.Int(rand.Reader, big.NewInt(250*250))
	v := n.Int64()
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{127, byte(2 + v/250), byte(2 + v%250), 0}), 24)
}

// firstNIC is a hardware tree's first network interface (not lo), the one
// a loopback host's address is reported on.
func firstNIC(hw string) (name, mac string, err error) {
	ents, err := os.ReadDir(filepath.Join(hw, "sys/class/net"))
	if err != nil {
		return "", "", fmt.Errorf("sandbox: hardware tree %s: %w (run from the repository's root, or give --hw)", hw, err)
	}
	for _, e := range ents {
		if e.Name() == "lo" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(hw, "sys/class/net", e.Name(), "address"))
		if err != nil {
			return "", "", err
		}
		return e.Name(), strings.TrimSpace(string(b)), nil
	}
	return "", "", fmt.Errorf("sandbox: hardware tree %s has no network interface", hw)
}

// makeSandboxPayload generates the OS image (zstd-compressed) and its
// payload.json, whose release images lie beside the release on its
// registry (nothing pulls them: the sandbox's hosts install with the
// built-in writer); it returns the image's digest.
func makeSandboxPayload(dir string, size int64, release string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var raw bytes.Buffer
	img, err := diskwrite.BuildImage(&raw, diskwrite.ImageSpec{Size: size, Seed: 1, IgnitionPartition: "ignition", IgnitionSize: 1 << 20})
	if err != nil {
		return "", fmt.Errorf("sandbox: OS image: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "os.raw.zst"))
	if err != nil {
		return "", err
	}
	if err := diskwrite.CompressZstd(f, &raw); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	img.File = "os.raw.zst"
	registry, _, ok := strings.Cut(release, "/")
	if !ok {
		registry = "localhost"
	}
	at := func(repo string) string { return registry + "/ocp/" + repo + ":4.18.0" }
	p := &diskwrite.Payload{ReleaseImage: release, OpenshiftVersion: "4.18.0", OS: img, Images: diskwrite.ReleaseImages{
		Installer: at("agent-installer-orchestrator"), Controller: at("agent-installer-csr-approver"),
		MCO: at("machine-config-operator"), MustGather: at("must-gather"), Agent: at("agent-installer-node-agent"),
	}}
	return img.SHA256, diskwrite.WritePayload(dir, p)
}

// writeSandboxInputs renders the input set in testdata/sandbox.
func writeSandboxInputs(dir string, o sandboxOptions, prefix netip.Prefix, hosts []*sandboxHost, registry string, ca []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bundle := ""
	if len(ca) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(ca)), "\n") {
			bundle += "  " + l + "\n"
		}
		bundle = strings.TrimRight(bundle, "\n")
	}
	data := map[string]any{
		"Masters": o.masters, "Workers": o.workers, "Prefix": prefix.String(), "TrustBundle": bundle,
		"Registry": registry, "RendezvousIP": hosts[0].Addr.String(), "Hosts": hosts,
	}
	for _, name := range []string{"install-config.yaml", "agent-config.yaml"} {
		t, err := template.ParseFS(sandboxInputs, "testdata/sandbox/"+name)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return err
		}
		// 0600: install-config.yaml carries the pull secret.
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600); err != nil {
			return err
		}
	}
	return nil
}
