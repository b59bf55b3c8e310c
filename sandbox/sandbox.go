package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/nodezero/nodezero/node/console"
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
// and a summary on o.Stdout, leaves DIR/summary.json, and returns nil once
// the cluster is installed (after ctx ends, with KeepRunning).
func Run(ctx context.Context, o Options) error {
	r := &run{o: o, start: time.Now(), lines: &switchWriter{w: o.Stdout}}
	if err := r.dirs(); err != nil {
		return err
	}
	r.say("sandbox in %s", r.o.Dir)
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
	var err error
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
	sum, werr := watch(ctx, c, r.hosts, r.o.Timeout, r.say, r.kube.failure)
	if err := r.finish(ctx, c, url, sum, consoleDone); err != nil {
		return err
	}
	if werr == nil && r.o.KeepRunning {
		fmt.Fprintln(r.o.Stdout, "hosts keep running; interrupt to stop them")
		<-ctx.Done()
	}
	return werr
}

// dirs makes the work directory and settles the paths.
func (r *run) dirs() error {
	o := &r.o
	var err error
	if o.Dir == "" {
		if o.Dir, err = os.MkdirTemp("/var/tmp", "nodezero-sandbox-"); err != nil {
			return err
		}
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return err
	}
	if o.HW, err = filepath.Abs(o.HW); err != nil {
		return err
	}
	if o.Disks == "" {
		// Sparse files on a tmpfs: their sync is memory's, as fast as the
		// check wants a real install disk to be.
		if o.Disks, err = os.MkdirTemp("/dev/shm", "nodezero-sandbox-"); err != nil {
			o.Disks = filepath.Join(o.Dir, "disks")
		}
	}
	r.installDir = filepath.Join(o.Dir, "install")
	return nil
}

// makeHosts names the hosts, masters first (node zero is master-0), on
// the run's own /24 (of loopback, or of a test bed with NetNS): two
// sandboxes (or tests) side by side never meet.
func (r *run) makeHosts(ctx context.Context) error {
	r.prefix = randomLoopbackPrefix()
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
	for i, h := range r.hosts {
		h.Addr = r.addr(byte(10 + i))
		h.hw = filepath.Join(r.o.HW, h.Name)
		var err error
		if h.NIC, h.MAC, err = firstNIC(h.hw); err != nil {
			return err
		}
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
// release image's registry and the cluster's names.
func (r *run) startResponders(ctx context.Context) error {
	// The release image is named by address: the image check resolves
	// names with the machine's resolver, which must not be asked.
	reg, err := loopback.StartRegistryTLS(ctx, r.addr(2).String()+":0", []loopback.Image{{
		Repo: releaseRepo, Tag: releaseTag,
		Config: []byte(`{"architecture":"amd64","os":"linux","config":{"Labels":{"io.openshift.release":"4.18.0"}}}`),
		Layers: [][]byte{releaseLayer()},
	}}, nil)
	if err != nil {
		return fmt.Errorf("sandbox: registry: %w", err)
	}
	clusterDomain := ClusterName + "." + BaseDomain
	// With platform none the cluster's names point at the user's load
	// balancer: an address of the sandbox's own where nothing listens (the
	// cluster is simulated), never a host's, as the validations demand.
	r.lb = r.addr(3)
	dns, err := loopback.StartDNS(ctx, r.addr(1).String()+":0", []loopback.Record{
		{Name: "api." + clusterDomain, Addrs: []netip.Addr{r.lb}},
		{Name: "api-int." + clusterDomain, Addrs: []netip.Addr{r.lb}},
	}, []loopback.Record{{Name: "apps." + clusterDomain, Addrs: []netip.Addr{r.lb}}})
	if err != nil {
		reg.Close()
		return fmt.Errorf("sandbox: dns: %w", err)
	}
	r.closers = append(r.closers, func() { reg.Close() }, func() { dns.Close() })
	r.dnsAddr, r.registry, r.registryCA = dns.Addr, reg.Addr, reg.CA()
	r.release = reg.Addr + "/" + releaseRepo + ":" + releaseTag
	r.say("DNS on %s, release image %s", dns.Addr, r.release)
	return nil
}

// makePayload generates the payload every host's factory image carries,
// unless one was given.
func (r *run) makePayload() error {
	if r.o.Payload != "" {
		return nil
	}
	r.o.Payload = filepath.Join(r.o.Dir, "payload")
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
	if err := writeInputs(r.installDir, r.o, r.prefix, r.hosts, r.registry, r.registryCA); err != nil {
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
	r.iso = filepath.Join(r.installDir, "agentconfig.noarch.iso")
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
	go func() {
		err := tui.Run(ctx, tui.Config{
			Mono:     console.MonoWanted("auto"),
			Source:   tui.NewHTTPSource(c, ""),
			NetState: func(context.Context) (tui.NetState, error) { return console.NetState(nil, "/") },
		})
		r.lines.set(r.o.Stdout)
		done <- err
	}()
	return done, func() { f.Close() }, nil
}

// finish completes the summary, writes summary.json and, once the
// dashboard is left, prints it.
func (r *run) finish(ctx context.Context, c *wire.Client, url string, sum Summary, consoleDone <-chan error) error {
	o := r.o
	sum.URL, sum.UserToken = url, r.userToken
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
	b, _ := json.MarshalIndent(sum, "", "  ")
	// 0600: it carries the user token, as the state file does.
	if err := os.WriteFile(filepath.Join(o.Dir, "summary.json"), append(b, '\n'), 0o600); err != nil {
		return err
	}
	// The dashboard shows the end of the install until the person leaves
	// it; the summary follows on the terminal.
	if cerr := <-consoleDone; cerr != nil {
		fmt.Fprintf(o.stderr(), "sandbox: console: %v\n", cerr)
	}
	fmt.Fprintf(o.Stdout, "\ncluster %s: %s — %s\n", sum.ClusterID, sum.Status, sum.StatusInfo)
	fmt.Fprintf(o.Stdout, "wall time %.1f s, disks being written %.1f s (%.0f%%)\n", sum.WallSeconds, sum.WritingSeconds, 100*sum.WritingSeconds/max(sum.WallSeconds, 0.001))
	for _, h := range sum.Hosts {
		fmt.Fprintf(o.Stdout, "  %-9s %-7s %-10s disks %s, log %s\n", h.Name, h.Role, h.Status, h.Disks, h.Log)
	}
	fmt.Fprintf(o.Stdout, "summary %s; API %s (user token in %s)\n", filepath.Join(o.Dir, "summary.json"), url, filepath.Join(r.installDir, o.ConfigImage.StateFile))
	if r.bed != nil && o.KeepRunning {
		cacert := ""
		if o.APITLS {
			cacert = " --cacert " + APICAFile(r.installDir)
		}
		fmt.Fprintf(o.Stdout, "the API answers inside node zero's namespace: ip netns exec %s curl%s %s%s/clusters -H \"Authorization: $(jq -r .user_token %s)\"\n",
			r.zero.ns, cacert, url, wire.APIBasePath, filepath.Join(o.Dir, "summary.json"))
	}
	switch {
	case sum.KubeAPI != "":
		fmt.Fprintf(o.Stdout, "kube API %s (etcd and kube-apiserver logs in %s): kubectl --kubeconfig %s get clusterversion\n", sum.KubeAPI, r.kube.cfg.Dir, sum.Kubeconfig)
	case r.kube == nil:
		fmt.Fprintln(o.Stdout, "kube API: none (skipped)")
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
