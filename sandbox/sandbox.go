package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/internal/hwtree"
	"github.com/nodezero/nodezero/node/console"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sandbox/loopback"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/tui"
	"github.com/nodezero/nodezero/wire"
)

// run is one sandbox run's state, step by step.
type run struct {
	o     Options
	start time.Time
	lines *switchWriter // where say writes: stdout, or a log under the console
	// consoleUp: the dashboard is on screen; a failed install stays there
	// for the person (r resets it, q ends the run).
	consoleUp atomic.Bool

	prefix     netip.Prefix // a /24 of its own: of loopback, or the bed's
	hosts      []*Host
	zero       *Host
	bed        *testbed.Bed // with NetNS
	closers    []func()     // the responders' and the bed's, last first
	dnsAddr    string       // the DNS the hosts ask on loopback ("": their resolv.conf)
	release    string       // the release image
	registry   string       // its registry, as the pull secret names it
	registryCA []byte
	lb         netip.Addr // the cluster's names: the user's load balancer
	installDir string
	iso        string
	userToken  string
	kube       *kubeAPI // nil: no kube API

	state   *State // DIR/sandbox.json: the earlier run's with Resume
	resumed bool
	ntpAddr string   // the hosts' NTP source, ip:port ("": none)
	env     []string // the hosts' processes' environment, beside this one's
	// resetting: hosts rebooted into discovery while they wait in
	// resetting-pending-user-action (by host id).
	resetting map[string]bool
}

func (r *run) say(format string, a ...any) {
	fmt.Fprintf(r.lines, "%s %s\n", time.Since(r.start).Round(100*time.Millisecond).String(), fmt.Sprintf(format, a...))
}

// addr is the address ending in last in the run's /24.
func (r *run) addr(last byte) netip.Addr {
	a := r.prefix.Addr().As4()
	a[3] = last
	return netip.AddrFrom4(a)
}

// Run installs a cluster on this machine as o says: it prints its progress
// and a summary on o.Stdout, leaves DIR/summary.json and DIR/sandbox.json,
// and returns nil once the cluster is installed (after ctx ends, with
// KeepRunning). With Resume and an installed cluster in DIR it only says
// so.
func Run(ctx context.Context, o Options) (err error) {
	r := &run{o: o, start: time.Now(), lines: &switchWriter{w: o.Stdout}}
	created, err := r.dirs()
	if err != nil {
		return err
	}
	unlock, err := lockDir(r.o.Dir)
	if err != nil {
		return err
	}
	defer unlock()
	started := false
	defer func() {
		// A run that fails before any host started leaves nothing it
		// made: no empty directories.
		if err != nil && !started && created {
			os.RemoveAll(r.o.Dir)
		}
	}()
	if r.resumed && r.state.Status == wire.ClusterStatusInstalled {
		return r.alreadyInstalled()
	}
	switch {
	case r.resumed:
		r.say("sandbox in %s, resuming cluster %s (%s) at %s", r.o.Dir, r.state.ClusterID, r.state.Status, r.state.Prefix)
	default:
		r.say("sandbox in %s", r.o.Dir)
	}
	defer func() {
		for _, c := range slices.Backward(r.closers) {
			c()
		}
	}()
	if err := r.makeHosts(ctx); err != nil {
		return err
	}
	respond := r.startResponders
	if r.o.NetNS {
		respond = r.startBedResponders
	}
	if err := respond(ctx); err != nil {
		return err
	}
	if err := r.makePayload(); err != nil {
		return err
	}
	if err := r.makeConfigImage(ctx); err != nil {
		return err
	}
	if err := r.setDisks(); err != nil {
		return err
	}
	if err := r.saveState("", ""); err != nil {
		return err
	}
	if r.kube, err = prepareKube(r.o, r.installDir, r.lb, r.zero, r.say); err != nil {
		return err
	}
	// Stopped after the hosts (the deferred stop below runs first).
	defer r.kube.close()

	ctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	started = true
	r.startHosts(ctx, &wg)
	url, c, err := r.client()
	if err != nil {
		return err
	}
	if r.o.Started != nil {
		r.o.Started(c, r.hosts)
	}
	consoleDone, closeLog, err := r.startConsole(ctx, c)
	if err != nil {
		return err
	}
	defer closeLog()
	if r.resumed && retryable(r.state.Status) {
		if err := r.resetFailed(ctx, c); err != nil {
			return err
		}
	}
	sum, werr := watch(ctx, c, r.hosts, r.o.Timeout, r.say, r.checks, r.rebootResetHosts, r.consoleUp.Load)
	if err := r.finish(ctx, c, url, sum, werr, consoleDone); err != nil {
		return err
	}
	if werr == nil && r.o.KeepRunning {
		fmt.Fprintln(r.o.Stdout, "hosts keep running; interrupt to stop them")
		<-ctx.Done()
	}
	return werr
}

// dirs settles the work directory (refused when an earlier run used it,
// unless Resume or Fresh) and the paths. created says whether this run
// made the directory.
func (r *run) dirs() (created bool, err error) {
	o := &r.o
	if o.Resume && o.Fresh {
		return false, errors.New("sandbox: --resume and --fresh: give one (continue the earlier install, or wipe it)")
	}
	if o.Dir == "" {
		if o.Resume {
			return false, errors.New("sandbox: --resume needs the --dir of the sandbox to continue")
		}
		if o.Dir, err = os.MkdirTemp("/var/tmp", "nodezero-sandbox-"); err != nil {
			return false, err
		}
		created = true
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return created, err
	}
	what, notSandbox, err := usedDir(o.Dir)
	if err != nil {
		return created, err
	}
	switch {
	case notSandbox:
		return created, fmt.Errorf("sandbox: %s is not empty and holds no sandbox: give a new or empty --dir", o.Dir)
	case what == "" && o.Resume:
		return created, fmt.Errorf("sandbox: --resume: %s holds no sandbox to continue", o.Dir)
	case what == "":
		if !created && !exists(o.Dir) {
			created = true
		}
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return created, err
		}
	case o.Fresh:
		if locked(o.Dir) {
			return false, fmt.Errorf("sandbox: --fresh: a sandbox runs in %s: stop it first", o.Dir)
		}
		if err := wipe(o.Dir); err != nil {
			return false, fmt.Errorf("sandbox: --fresh: %w", err)
		}
	case o.Resume:
		st, err := readState(o.Dir)
		if err != nil {
			return false, fmt.Errorf("sandbox: --resume: %s was made by an older nodezero (no %s to resume from): give --fresh to install anew (%w)", o.Dir, StateFile, err)
		}
		if o.NetNS {
			return false, errors.New("sandbox: --resume runs on loopback only: a --netns sandbox's test bed is gone with it (give --fresh)")
		}
		r.state, r.resumed = st, true
		o.Masters, o.Workers, o.APITLS = st.Masters, st.Workers, st.APITLS
		o.Disks, o.DisksTmpfs = st.Disks, st.DisksTmpfs
	default:
		return false, fmt.Errorf("sandbox: %w: %s holds %s; give --resume to continue it at the same addresses, --fresh to wipe it and install anew, or another --dir", ErrUsedDir, o.Dir, what)
	}
	if o.HW != "" {
		if o.HW, err = filepath.Abs(o.HW); err != nil {
			return created, err
		}
	}
	switch {
	case o.Disks != "":
		if o.Disks, err = filepath.Abs(o.Disks); err != nil {
			return created, err
		}
	case o.DisksTmpfs:
		o.Disks = tmpfsDisks(o.Dir)
	default:
		o.Disks = filepath.Join(o.Dir, "disks")
	}
	r.installDir = filepath.Join(o.Dir, "install")
	return created, nil
}

// alreadyInstalled is --resume of an installed sandbox: it says so and
// what comes next, and starts nothing.
func (r *run) alreadyInstalled() error {
	o := r.o
	sum, _ := readSummary(o.Dir)
	fmt.Fprintf(o.Stdout, "sandbox in %s: cluster %s is installed; nothing to resume\n", o.Dir, r.state.ClusterID)
	api := "http://" + netip.MustParsePrefix(r.state.Prefix).Addr().Next().String() + ":8090"
	kubeAPI := ""
	if sum != nil {
		api, kubeAPI = sum.URL, sum.KubeAPI
	}
	nextSteps(o.Dir, r.installDir, filepath.Join(r.installDir, o.ConfigImage.StateFile), api, kubeAPI, false, false).print(o.Stdout)
	return nil
}

// setDisks makes the hosts' disk directories and says where they are:
// on a tmpfs the disk-speed check measures memory; on a real disk the
// sandbox's node zero judges it against a threshold of its own.
func (r *run) setDisks() error {
	o := r.o
	if err := os.MkdirAll(o.Disks, 0o755); err != nil {
		return fmt.Errorf("sandbox: disks: %w", err)
	}
	if isSandboxShm(o.Disks) {
		if err := os.WriteFile(filepath.Join(o.Disks, ownerFile), []byte(o.Dir+"\n"), 0o644); err != nil {
			return err
		}
	}
	r.env = []string{"DISABLED_STEPS=" + disabledSteps}
	if onTmpfs(o.Disks) {
		r.say("disks in %s: a tmpfs, memory (%d hosts × up to %d MiB; removed after an install unless --keep)", o.Disks, len(r.hosts), o.ImageSize>>20)
		return nil
	}
	r.env = append(r.env, "HW_VALIDATOR_REQUIREMENTS="+sandboxRequirements)
	r.say("disks in %s; disk-speed threshold %d ms for the sandbox (assisted's 10 ms is an etcd disk's, not a file on this machine's disk written by %d hosts at once; --disks-tmpfs keeps 10 ms)", o.Disks, sandboxDiskSpeedMs, len(r.hosts))
	return nil
}

// saveState writes DIR/sandbox.json with the cluster as last seen.
func (r *run) saveState(clusterID string, status wire.ClusterStatus) error {
	st := r.state
	if st == nil {
		st = &State{}
		r.state = st
	}
	st.Prefix, st.Masters, st.Workers, st.APITLS = r.prefix.String(), r.o.Masters, r.o.Workers, r.o.APITLS
	st.DNS, st.Registry, st.NTP = r.dnsAddr, r.registry, r.ntpAddr
	st.Disks, st.DisksTmpfs = r.o.Disks, r.o.DisksTmpfs
	if clusterID != "" {
		st.ClusterID, st.Status = clusterID, status
	}
	return writeState(r.o.Dir, st)
}

// makeHosts names the hosts, masters first (node zero is master-0), on
// the run's own /24 (of loopback, or of a test bed with NetNS): two
// sandboxes (or tests) side by side never meet.
func (r *run) makeHosts(ctx context.Context) error {
	r.prefix = randomLoopbackPrefix()
	if r.resumed {
		var err error
		if r.prefix, err = netip.ParsePrefix(r.state.Prefix); err != nil {
			return fmt.Errorf("sandbox: %s: prefix: %w", StateFile, err)
		}
	}
	if r.o.NetNS {
		var err error
		if r.prefix, err = freeBedPrefix(ctx); err != nil {
			return err
		}
	}
	for i := range r.o.Masters {
		r.hosts = append(r.hosts, &Host{Name: fmt.Sprintf("master-%d", i), Role: "master"})
	}
	for i := range r.o.Workers {
		r.hosts = append(r.hosts, &Host{Name: fmt.Sprintf("worker-%d", i), Role: "worker"})
	}
	if r.o.HW == "" {
		// The trees ship in the binary, as code: written at start, the
		// same bytes as testdata/hw's.
		r.o.HW = filepath.Join(r.o.Dir, "hw")
		var names []string
		for _, h := range r.hosts {
			names = append(names, h.Name)
		}
		if err := hwtree.Write(r.o.HW, names...); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	// Every tree is read before any directory is made for a host.
	for _, h := range r.hosts {
		h.hw = filepath.Join(r.o.HW, h.Name)
		var err error
		if h.NIC, h.MAC, err = firstNIC(h.hw); err != nil {
			return err
		}
	}
	for i, h := range r.hosts {
		h.Addr = r.addr(byte(10 + i))
		hd := filepath.Join(r.o.Dir, "hosts", h.Name)
		h.root, h.disks, h.log = filepath.Join(hd, "root"), filepath.Join(r.o.Disks, h.Name), filepath.Join(hd, "run.log")
		if err := os.MkdirAll(h.root, 0o755); err != nil {
			return err
		}
	}
	r.zero = r.hosts[0]
	if r.o.NetNS {
		return r.startBed(ctx)
	}
	return nil
}

// startResponders starts what the host checks ask, on loopback: the
// release image's registry, the cluster's names and an NTP server; a
// resumed run starts them again at the same addresses, the registry with
// the same certificate.
func (r *run) startResponders(ctx context.Context) error {
	regAt, dnsAt, ntpAt := r.addr(2).String()+":0", r.addr(1).String()+":0", r.addr(4).String()+":0"
	if r.resumed {
		regAt, dnsAt, ntpAt = r.state.Registry, r.state.DNS, r.state.NTP
	}
	// The release image is named by address: the image check resolves
	// names with the machine's resolver, which must not be asked.
	images := []loopback.Image{{
		Repo: releaseRepo, Tag: releaseTag,
		Config: []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"io.openshift.release":"4.18.0"}}}`),
		Layers: [][]byte{releaseLayer()},
	}}
	var reg *loopback.Registry
	var err error
	if r.resumed {
		var pair loopback.KeyPair
		if pair, err = readKeyPair(r.o.Dir); err == nil {
			reg, err = loopback.StartRegistryTLSWith(ctx, regAt, images, pair)
		}
	} else if reg, err = loopback.StartRegistryTLS(ctx, regAt, images, nil); err == nil {
		err = writeKeyPair(r.o.Dir, reg.KeyPair())
	}
	if err != nil {
		return fmt.Errorf("sandbox: registry: %w", err)
	}
	r.closers = append(r.closers, func() { reg.Close() })
	clusterDomain := ClusterName + "." + BaseDomain
	// With platform none the cluster's names point at the user's load
	// balancer: an address of the sandbox's own where nothing listens (the
	// cluster is simulated), never a host's, as the validations demand.
	r.lb = r.addr(3)
	dns, err := loopback.StartDNS(ctx, dnsAt, []loopback.Record{
		{Name: "api." + clusterDomain, Addrs: []netip.Addr{r.lb}},
		{Name: "api-int." + clusterDomain, Addrs: []netip.Addr{r.lb}},
	}, []loopback.Record{{Name: "apps." + clusterDomain, Addrs: []netip.Addr{r.lb}}})
	if err != nil {
		return fmt.Errorf("sandbox: dns: %w", err)
	}
	r.closers = append(r.closers, func() { dns.Close() })
	ntp, err := loopback.StartNTP(ctx, ntpAt)
	if err != nil {
		return fmt.Errorf("sandbox: ntp: %w", err)
	}
	r.closers = append(r.closers, func() { ntp.Close() })
	r.dnsAddr, r.registry, r.registryCA, r.ntpAddr = dns.Addr, reg.Addr, reg.CA(), ntp.Addr
	r.release = reg.Addr + "/" + releaseRepo + ":" + releaseTag
	r.say("DNS on %s, NTP on %s, release image %s", dns.Addr, ntp.Addr, r.release)
	return nil
}

// makePayload generates the payload every host's factory image carries,
// unless one was given.
func (r *run) makePayload() error {
	if r.o.Payload != "" {
		return nil
	}
	r.o.Payload = filepath.Join(r.o.Dir, "payload")
	if r.resumed && exists(filepath.Join(r.o.Payload, "payload.json")) {
		return nil
	}
	digest, err := MakePayload(r.o.Payload, r.o.ImageSize, r.release)
	if err != nil {
		return err
	}
	r.say("payload: a %d MiB OS image, sha256 %s", r.o.ImageSize>>20, digest)
	return nil
}

// makeConfigImage makes the config image from the input set, the way a
// user makes it, with the API's certificates under --api-tls.
func (r *run) makeConfigImage(ctx context.Context) error {
	r.iso = filepath.Join(r.installDir, "agentconfig.noarch.iso")
	if r.resumed {
		// The hosts loaded it at their first boot; the same one stays.
		st, err := r.o.ConfigImage.State(r.installDir)
		if err != nil {
			return err
		}
		r.userToken = st.Tokens["userAuth"]
		return nil
	}
	if err := writeInputs(r.installDir, r.o, r.prefix, r.hosts, r.registry, r.registryCA, r.ntpAddr); err != nil {
		return err
	}
	if r.o.APITLS {
		certs, err := MakeAPICerts(r.zero.Addr, time.Now())
		if err != nil {
			return fmt.Errorf("sandbox: api tls: %w", err)
		}
		if err := certs.Write(r.installDir); err != nil {
			return fmt.Errorf("sandbox: api tls: %w", err)
		}
	}
	if err := r.o.ConfigImage.Create(ctx, r.installDir, r.release); err != nil {
		return fmt.Errorf("sandbox: config image: %w", err)
	}
	st, err := r.o.ConfigImage.State(r.installDir)
	if err != nil {
		return err
	}
	r.userToken = st.Tokens["userAuth"]
	r.say("config image %s", r.iso)
	return nil
}

// startHosts starts every host's supervisor; wg counts them.
func (r *run) startHosts(ctx context.Context, wg *sync.WaitGroup) {
	o := r.o
	for _, h := range r.hosts {
		h.args = []string{"run", "--root", h.root, "--hardware-root", h.hw, "--config-image", r.iso,
			"--listen", r.zero.Addr.String() + ":8090"}
		if r.dnsAddr != "" {
			// On loopback every host shares lo: it is told which address
			// is its own, and which DNS to ask.
			h.args = append(h.args, "--host-address", netip.PrefixFrom(h.Addr, r.prefix.Bits()).String(), "--dns-server", r.dnsAddr)
		}
		if _, port, err := net.SplitHostPort(r.ntpAddr); err == nil {
			h.args = append(h.args, "--ntp-port", port)
		}
		h.env = r.env
		h.args = append(h.args, "--payload", o.Payload, "--disks", h.disks,
			"--check-interval", o.CheckInterval.String(), "--node-zero-window", "10s", "--node-zero-interval", "250ms",
			"--config-interval", "1s", "--agent-interval", "1s", "--reboot-delay", "1ms", "--log-level", o.LogLevel)
		if o.ControlPlaneTimeout > 0 {
			h.args = append(h.args, "--control-plane-timeout", o.ControlPlaneTimeout.String())
		}
		if h.Name == o.NeverJoin {
			h.args = append(h.args, "--fault-never-join")
		}
		if o.Settle > 0 {
			h.args = append(h.args, "--settle", o.Settle.String())
		}
	}
	if r.kube != nil {
		r.zero.onReboot = func() { r.kube.start(ctx, wg, r.zero) }
	}
	for _, h := range r.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			supervise(ctx, o.Bin, h, r.say)
		}()
	}
	r.say("started %d hosts (%d control plane, %d workers); node zero is %s at %s", len(r.hosts), o.Masters, o.Workers, r.zero.Name, r.zero.Addr)
}

// client is node zero's API with the user token (from inside node zero's
// namespace with NetNS).
func (r *run) client() (string, *wire.Client, error) {
	url, opts := "http://"+r.zero.Addr.String()+":8090", []wire.ClientOption{wire.WithUserToken(r.userToken)}
	if r.o.APITLS {
		url = "https://" + r.zero.Addr.String() + ":8090"
		opts = append(opts, wire.WithCACertFile(APICAFile(r.installDir)))
	}
	if r.bed != nil {
		hc, err := r.bedHTTPClient()
		if err != nil {
			return "", nil, err
		}
		opts = append(opts, wire.WithHTTPClient(hc))
	}
	c, err := wire.NewClient(url, opts...)
	return url, c, err
}

// startConsole shows the dashboard, when asked: the progress lines go to
// a log while it owns the terminal, and back to stdout when the person
// leaves it (q). The channel gets the dashboard's end (closed at once
// without one); closeLog closes the log.
func (r *run) startConsole(ctx context.Context, c *wire.Client) (<-chan error, func(), error) {
	done := make(chan error, 1)
	if !r.o.Console {
		close(done)
		return done, func() {}, nil
	}
	f, err := os.Create(filepath.Join(r.o.Dir, "sandbox.log"))
	if err != nil {
		return nil, nil, err
	}
	r.lines.set(f)
	r.consoleUp.Store(true)
	go func() {
		defer r.consoleUp.Store(false)
		err := tui.Run(ctx, tui.Config{
			Mono:   console.MonoWanted("auto"),
			Source: tui.NewHTTPSource(c, ""),
			// r resets a failed cluster; the watch then reboots the hosts
			// into discovery and the install runs again.
			Reset: func(ctx context.Context, id string) error {
				_, err := c.ResetCluster(ctx, id)
				return err
			},
			HostsRebootAfterReset: true,
			NetState: func(context.Context) (tui.NetState, error) {
				st, err := console.NetState(nil, "/")
				st.Shared = "the sandbox's hosts run on this machine's loopback; they have no links of their own"
				return st, err
			},
		})
		r.lines.set(r.o.Stdout)
		done <- err
	}()
	return done, func() { f.Close() }, nil
}

// finish completes the summary, writes summary.json (never over an
// earlier one with a run that saw no cluster), removes or keeps the disks
// and, once the dashboard is left, prints the end: the cluster, the hosts,
// the space used and the next steps.
func (r *run) finish(ctx context.Context, c *wire.Client, url string, sum Summary, werr error, consoleDone <-chan error) error {
	o := r.o
	tokenFile := filepath.Join(r.installDir, o.ConfigImage.StateFile)
	sum.URL, sum.UserTokenFile = url, tokenFile
	if sum.KubeAPI = r.kube.url(); sum.KubeAPI != "" {
		sum.Kubeconfig = r.kube.kubeconfig
	}
	sum.WallSeconds = time.Since(r.start).Seconds()
	if sum.ClusterID != "" {
		sum.WritingSeconds = writingSeconds(ctx, c, sum.ClusterID)
	}
	for i := range sum.Hosts {
		for _, h := range r.hosts {
			if h.Name == sum.Hosts[i].Name {
				h.mu.Lock()
				sum.Hosts[i].Boots, sum.Hosts[i].Root, sum.Hosts[i].Disks, sum.Hosts[i].Log = h.boots, h.root, h.disks, h.log
				sum.Hosts[i].Namespace = h.ns
				h.mu.Unlock()
			}
		}
	}
	sum.NextSteps = nextSteps(o.Dir, r.installDir, tokenFile, url, sum.KubeAPI, o.KeepRunning && werr == nil, true)
	sum.NextSteps.Retry = retryable(sum.Status)
	// The space, before the disks go.
	disksUsed, dirUsed := usage(o.Disks), usage(o.Dir)
	if strings.HasPrefix(o.Disks, o.Dir+string(filepath.Separator)) {
		dirUsed -= disksUsed
	}
	removeDisks := werr == nil && !o.Keep && !o.KeepRunning
	if sum.ClusterID != "" {
		if err := r.saveState(sum.ClusterID, sum.Status); err != nil {
			return err
		}
	}
	if err := writeSummary(o.Dir, sum); err != nil {
		return err
	}
	// The dashboard shows the end of the install until the person leaves
	// it; the summary follows on the terminal.
	if cerr := <-consoleDone; cerr != nil {
		fmt.Fprintf(o.stderr(), "sandbox: console: %v\n", cerr)
	}
	if sum.ClusterID == "" {
		fmt.Fprintf(o.Stdout, "\nno cluster: node zero's API at %s never listed one (node zero's log: %s)\n", url, r.zero.log)
	} else {
		fmt.Fprintf(o.Stdout, "\ncluster %s: %s — %s\n", sum.ClusterID, sum.Status, sum.StatusInfo)
	}
	fmt.Fprintf(o.Stdout, "wall time %.1f s, disks being written %.1f s (%.0f%%)\n", sum.WallSeconds, sum.WritingSeconds, 100*sum.WritingSeconds/max(sum.WallSeconds, 0.001))
	for _, h := range sum.Hosts {
		fmt.Fprintf(o.Stdout, "  %-9s %-7s %-10s log %s\n", h.Name, h.Role, h.Status, h.Log)
	}
	disks := "kept (--keep)"
	switch {
	case removeDisks:
		disks = "removed"
		for _, h := range r.hosts {
			if err := os.RemoveAll(h.disks); err != nil {
				return err
			}
		}
		if o.Disks == tmpfsDisks(o.Dir) || o.Disks == filepath.Join(o.Dir, "disks") {
			if err := os.RemoveAll(o.Disks); err != nil {
				return err
			}
		}
	case o.KeepRunning && werr == nil:
		disks = "kept while the hosts run"
	case werr != nil:
		disks = "kept for a look or --resume"
	}
	fmt.Fprintf(o.Stdout, "space: disks %s in %s (%s), the rest %s in %s\n", mib(disksUsed), o.Disks, disks, mib(dirUsed), o.Dir)
	fmt.Fprintf(o.Stdout, "summary %s\n", filepath.Join(o.Dir, "summary.json"))
	if r.bed != nil && o.KeepRunning {
		cacert := ""
		if o.APITLS {
			cacert = " --cacert " + APICAFile(r.installDir)
		}
		fmt.Fprintf(o.Stdout, "the API answers inside node zero's namespace: ip netns exec %s curl%s %s%s/clusters -H \"Authorization: $(jq -r .tokens.userAuth %s)\"\n",
			r.zero.ns, cacert, url, wire.APIBasePath, tokenFile)
	}
	switch {
	case sum.KubeAPI != "":
		fmt.Fprintf(o.Stdout, "kube API %s (etcd and kube-apiserver logs in %s): kubectl --kubeconfig %s get clusterversion\n", sum.KubeAPI, r.kube.cfg.Dir, sum.Kubeconfig)
	case r.kube == nil:
		fmt.Fprintln(o.Stdout, "kube API: none (skipped)")
	}
	sum.NextSteps.print(o.Stdout)
	return nil
}

// writeSummary writes DIR/summary.json, unless sum saw no cluster and an
// earlier run's summary is there: that one says more.
func writeSummary(dir string, sum Summary) error {
	p := filepath.Join(dir, "summary.json")
	if sum.ClusterID == "" && exists(p) {
		return nil
	}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	// 0600 as the install directory's auth files: it names them.
	return atomicfile.Write(p, append(b, '\n'), 0o600)
}

// checks is what can fail beside the cluster: the kube API, and a node
// zero that can never become one (its config image names another
// rendezvous address than the one it stands on).
func (r *run) checks() error {
	if err := r.kube.failure(); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(r.zero.root, onhost.RendezvousEnvPath))
	if err != nil {
		return nil // not loaded yet
	}
	rv, err := onhost.ParseRendezvous(onhost.RendezvousEnvPath, b)
	if err != nil {
		return nil // being written
	}
	if rv.NodeZeroIP != r.zero.Addr {
		return fmt.Errorf("sandbox: no host can become node zero: the config image's rendezvous IP is %s, but %s, meant to be node zero, stands on %s (its root %s is from another run: give --fresh)", rv.NodeZeroIP, r.zero.Name, r.zero.Addr, r.zero.root)
	}
	return nil
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
