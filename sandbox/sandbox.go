package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodezero/nodezero/internal/hwtree"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sandbox/loopback"
	"github.com/nodezero/nodezero/testbed"
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
	kube       *kubeAPI         // nil: no kube API
	vmImage    string           // the factory image the VMs boot, with VM
	capture    *testbed.Capture // the bed's bridge, with VM

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
	makePayload := r.makePayload
	if r.o.VM {
		makePayload = func() error { return r.makeFactoryImage(ctx) }
	}
	if err := makePayload(); err != nil {
		return err
	}
	if err := r.makeConfigImage(ctx); err != nil {
		return err
	}
	if !r.o.VM {
		if err := r.setDisks(); err != nil {
			return err
		}
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
	if r.o.VM {
		if err := r.startVMs(ctx, &wg); err != nil {
			return err
		}
	} else {
		r.startHosts(ctx, &wg)
	}
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
	sum, werr := r.watch(ctx, c)
	if werr == nil && r.o.VM {
		for _, h := range r.hosts {
			if werr = r.inspect(ctx, PhaseInstalled, h); werr != nil {
				break
			}
		}
	}
	if r.capture != nil {
		account, err := trafficVerdict(r.capture.Stop(), r.capture.Dropped(), r.bed.Prefix)
		if werr == nil {
			werr = err
		}
		if err == nil {
			r.say("%s", account)
		}
	}
	if err := r.finish(ctx, c, url, sum, werr, consoleDone); err != nil {
		return err
	}
	if werr == nil && r.o.KeepRunning {
		fmt.Fprintln(r.o.Stdout, "hosts keep running; interrupt to stop them")
		<-ctx.Done()
	}
	return werr
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
	if r.o.VM {
		// VMs have real (virtual) hardware: no trees.
		return r.makeVMHosts(ctx)
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
		h.args = hostArgs(h, hostRun{ISO: r.iso, Listen: r.zero.Addr, Prefix: r.prefix, DNS: r.dnsAddr, NTP: r.ntpAddr,
			Payload: o.Payload, CheckInterval: o.CheckInterval, LogLevel: o.LogLevel})
		h.env = r.env
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
	r.say("started %s (%d control plane, %s); node zero is %s at %s", count(len(r.hosts), "host"), o.Masters, count(o.Workers, "worker"), r.zero.Name, r.zero.Addr)
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

// count is "1 host", "3 hosts".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// hostRun is what a loopback or namespace host's `nodezero run` is told
// besides its own directories.
type hostRun struct {
	ISO    string     // the config image
	Listen netip.Addr // node zero's API address (port 8090)
	// Prefix, DNS: on loopback every host shares lo, so it is told which
	// address is its own and which DNS server to ask ("" DNS: neither).
	Prefix        netip.Prefix
	DNS, NTP      string // ip:port ("" NTP: the default port)
	Payload       string
	CheckInterval time.Duration
	LogLevel      string
}

// hostArgs is host h's `nodezero run` command line.
func hostArgs(h *Host, c hostRun) []string {
	args := []string{"run", "--root", h.root, "--hardware-root", h.hw, "--config-image", c.ISO,
		"--listen", c.Listen.String() + ":8090"}
	if c.DNS != "" {
		args = append(args, "--host-address", netip.PrefixFrom(h.Addr, c.Prefix.Bits()).String(), "--dns-server", c.DNS)
	}
	if _, port, err := net.SplitHostPort(c.NTP); err == nil {
		args = append(args, "--ntp-port", port)
	}
	return append(args, "--payload", c.Payload, "--disks", h.disks,
		"--check-interval", c.CheckInterval.String(), "--node-zero-window", "10s", "--node-zero-interval", "250ms",
		"--config-interval", "1s", "--agent-interval", "1s", "--reboot-delay", "1ms", "--log-level", c.LogLevel)
}
