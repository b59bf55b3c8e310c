package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/wire"
)

// `nodezero loadtest` measures the embedded service the way issues #2 and
// #8 state their goals: a child `nodezero service` process (so its RSS and
// CPU are its own), a cluster and an infra-env, then either real `nodezero
// agent` processes on the test hardware trees or simulated agents
// (hostagent/simagent) speaking real HTTP, until every host is known and
// the cluster ready, and an idle window. Simulated agents then go on
// through a whole install (loadtest_install.go): roles, the install
// action, the real installer on simulated disks, the reboots and the
// completion, until the cluster is installed. Everything stays on
// 127.0.0.1.

// loadtestOptions are the command's flags.
type loadtestOptions struct {
	hosts    int
	agents   string // "real" or "sim"
	runs     int
	startups int
	idle     time.Duration
	cadence  string // ltLongPoll or ltUpstream
	wait     time.Duration
	poll     time.Duration
	ramp     time.Duration
	timeout  time.Duration
	bin      string
	dir      string
	hw       string
	json     bool
	pprof    string // the run services' --pprof address
	// The install after the idle window (simulated agents only).
	install        bool
	diskMiB        int
	write          time.Duration
	reboot         time.Duration
	installPoll    time.Duration
	installTimeout time.Duration
}

// The agents' cadences (--cadence).
const (
	// ltLongPoll: each instructions request carries ?wait=, as nodezero's
	// agent sends it; node zero answers when a step is due.
	ltLongPoll = "long-poll"
	// ltUpstream: no ?wait=; the agent sleeps next_instruction_seconds
	// between requests, as assisted-installer-agent does.
	ltUpstream = "upstream"
)

// ltHardware are the test hardware trees real agents run on, in start
// order: three control-plane hosts, then workers.
var ltHardware = []string{"master-0", "master-1", "master-2", "worker-0", "worker-1"}

const (
	ltMasters = 3
	// The real agents' VIPs: loopback addresses no agent takes (agents are
	// 127.0.0.11 and up, as in the issue).
	ltRealAPIVIP     = "127.0.0.100"
	ltRealIngressVIP = "127.0.0.101"
	// ltPullSecret passes the pull secret check; it opens nothing.
	ltPullSecret = `{"auths":{"quay.io":{"auth":"bG9hZHRlc3Q6bm90LWEtc2VjcmV0","email":"loadtest@example.com"}}}`
)

func runLoadtest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o loadtestOptions
	fs.IntVar(&o.hosts, "hosts", 1000, "number of agents")
	fs.StringVar(&o.agents, "agents", "sim", "real: nodezero agent processes on the test hardware trees (at most 5); sim: simulated agents")
	fs.IntVar(&o.runs, "runs", 1, "runs, each with a fresh service and data directory")
	fs.IntVar(&o.startups, "startups", 5, "extra service starts for the startup figure (process start to first /health answer)")
	fs.DurationVar(&o.idle, "idle", 30*time.Second, "how long to measure the service once every host is known and nothing changes")
	fs.StringVar(&o.cadence, "cadence", ltLongPoll, ltLongPoll+": the agents long-poll with ?wait= (--wait), as nodezero's agent does; "+
		ltUpstream+": they never long-poll and sleep next_instruction_seconds between requests, as assisted-installer-agent does (the same as --wait 0)")
	fs.DurationVar(&o.wait, "wait", 30*time.Second, "the agents' long-poll ?wait= (--cadence "+ltLongPoll+"); 0 is --cadence "+ltUpstream)
	fs.DurationVar(&o.ramp, "ramp", 0, "sim: spread the agents' starts evenly over this long (0: all at once)")
	fs.DurationVar(&o.poll, "poll", 250*time.Millisecond, "how often the host list is polled while hosts come up")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up on a run whose hosts are not all known by then")
	fs.StringVar(&o.bin, "bin", "", "nodezero binary to run as the service (and real agents); default: this binary")
	fs.StringVar(&o.dir, "dir", "", "work directory, kept afterwards; default: a temporary directory, removed")
	fs.StringVar(&o.hw, "hw", "testdata/hw", "directory of the hardware trees for --agents real")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
	fs.StringVar(&o.pprof, "service-pprof", "", "start each run's service with --pprof on this loopback address, to profile it")
	fs.BoolVar(&o.install, "install", true, "sim: after the idle window, give the hosts their roles and install the cluster until it is installed (false: stop at ready)")
	fs.IntVar(&o.diskMiB, "disk-mib", 1, "sim: MiB of image each host writes to its disk, a sparse file in the work directory (0: the ignition only)")
	fs.DurationVar(&o.write, "write", 2*time.Second, "sim: how long writing a disk takes (its progress reports are spread over it)")
	fs.DurationVar(&o.reboot, "reboot", time.Second, "sim: the delay from Rebooting to the reboot (a real host waits a minute)")
	fs.DurationVar(&o.installPoll, "install-poll", 5*time.Second, "sim: how often the installer's waits list the cluster's hosts (the real installer's 5 s)")
	fs.DurationVar(&o.installTimeout, "install-timeout", 10*time.Minute, "give up on an install whose cluster is not installed by then")
	if err := fs.Parse(args); err != nil {
		return err
	}
	waitSet := false
	fs.Visit(func(f *flag.Flag) { waitSet = waitSet || f.Name == "wait" })
	if err := o.check(waitSet); err != nil {
		return err
	}
	if o.bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("loadtest: --bin: %w", err)
		}
		o.bin = exe
	}
	temp := o.dir == ""
	if temp {
		d, err := os.MkdirTemp("", "nodezero-loadtest-")
		if err != nil {
			return fmt.Errorf("loadtest: %w", err)
		}
		o.dir = d
	}
	rep, err := loadtest(ctx, o, stderr)
	if err != nil {
		if temp {
			fmt.Fprintf(stderr, "loadtest: kept %s for its logs\n", o.dir)
		}
		return err
	}
	if temp {
		if err := os.RemoveAll(o.dir); err != nil {
			return fmt.Errorf("loadtest: %w", err)
		}
	}
	if o.json {
		return rep.writeJSON(stdout)
	}
	return rep.writeTable(stdout)
}

// check checks the flags and settles the cadence: --wait 0 is the upstream
// one, which never long-polls (waitSet: --wait was given).
func (o *loadtestOptions) check(waitSet bool) error {
	var probs []string
	switch {
	case o.cadence == ltUpstream && waitSet && o.wait != 0:
		probs = append(probs, fmt.Sprintf("--cadence %s --wait %s: upstream agents never long-poll; leave out --wait", ltUpstream, o.wait))
	case o.cadence == ltUpstream:
		o.wait = 0
	case o.cadence == ltLongPoll && o.wait == 0:
		o.cadence = ltUpstream
	case o.cadence != ltLongPoll:
		probs = append(probs, fmt.Sprintf("--cadence %q: want %s or %s", o.cadence, ltLongPoll, ltUpstream))
	}
	switch o.agents {
	case "sim":
	case "real":
		if o.hosts > len(ltHardware) {
			probs = append(probs, fmt.Sprintf("--hosts %d: real agents run on %d hardware trees at most", o.hosts, len(ltHardware)))
		}
	default:
		probs = append(probs, fmt.Sprintf("--agents %q: want real or sim", o.agents))
	}
	if o.agents == "real" && o.hosts <= len(ltHardware) {
		for _, hw := range ltHardware[:max(o.hosts, 0)] {
			if _, err := os.Stat(filepath.Join(o.hw, hw)); err != nil {
				probs = append(probs, fmt.Sprintf("--hw %s: %v (run from the repository root or pass --hw)", o.hw, err))
				break
			}
		}
	}
	if o.hosts < 1 {
		probs = append(probs, fmt.Sprintf("--hosts %d: want at least 1", o.hosts))
	}
	if o.runs < 1 || o.startups < 0 {
		probs = append(probs, fmt.Sprintf("--runs %d, --startups %d: want at least 1 run", o.runs, o.startups))
	}
	if o.pprof != "" {
		if ap, err := netip.ParseAddrPort(o.pprof); err != nil || !ap.Addr().IsLoopback() {
			probs = append(probs, fmt.Sprintf("--service-pprof %q: want a loopback address and port", o.pprof))
		}
	}
	if o.idle <= 0 || o.poll <= 0 || o.timeout <= 0 || o.wait < 0 || o.ramp < 0 {
		probs = append(probs, "--idle, --poll and --timeout must be positive, --wait and --ramp not negative")
	}
	if o.diskMiB < 0 || o.write < 0 || o.reboot < 0 || o.installPoll <= 0 || o.installTimeout <= 0 {
		probs = append(probs, "--disk-mib, --write and --reboot must not be negative, --install-poll and --install-timeout positive")
	}
	if len(probs) > 0 {
		return fmt.Errorf("loadtest: %s", strings.Join(probs, "; "))
	}
	return nil
}

// loadtest runs the startup samples and every run.
func loadtest(ctx context.Context, o loadtestOptions, progress io.Writer) (*ltReport, error) {
	rep := &ltReport{Mode: o.agents, Hosts: o.hosts, Cadence: o.cadence, Wait: o.wait.String(), Idle: o.idle.String(), Ramp: o.ramp.String(), Bin: o.bin}
	switch {
	case o.install && o.agents == "sim":
		rep.DiskMiB, rep.Write, rep.Reboot, rep.InstallPoll = o.diskMiB, o.write.String(), o.reboot.String(), o.installPoll.String()
	case o.install:
		// A hardware-tree host installs only under the sandbox, which
		// restarts it after its reboot.
		fmt.Fprintln(progress, "loadtest: the install runs with simulated agents only; real agents stop at ready")
		o.install = false
	}
	for i := range o.startups {
		svc, err := ltStartService(ctx, o.bin, filepath.Join(o.dir, fmt.Sprintf("startup-%d", i+1)))
		if err != nil {
			return nil, fmt.Errorf("loadtest: startup sample %d: %w", i+1, err)
		}
		rep.StartupSamplesMs = append(rep.StartupSamplesMs, ltMs(svc.firstAnswer))
		if err := svc.stop(); err != nil {
			return nil, fmt.Errorf("loadtest: startup sample %d: %w", i+1, err)
		}
	}
	for r := range o.runs {
		fmt.Fprintf(progress, "loadtest: run %d of %d: %d %s agents\n", r+1, o.runs, o.hosts, o.agents)
		run, err := loadtestRun(ctx, o, filepath.Join(o.dir, fmt.Sprintf("run-%d", r+1)), progress)
		if err != nil {
			return nil, fmt.Errorf("loadtest: run %d: %w", r+1, err)
		}
		rep.Runs = append(rep.Runs, run)
		rep.StartupSamplesMs = append(rep.StartupSamplesMs, run.StartupMs)
	}
	rep.summarise()
	return rep, nil
}

// ltImageFlags name the release images the load test's install steps
// carry, as a payload would (nothing pulls them: the simulated hosts write
// simulated disks).
var ltImageFlags = []string{
	"--installer-image", "registry.loadtest.invalid/ocp/agent-installer-orchestrator:4.18.0",
	"--controller-image", "registry.loadtest.invalid/ocp/agent-installer-csr-approver:4.18.0",
	"--mco-image", "registry.loadtest.invalid/ocp/machine-config-operator:4.18.0",
	"--must-gather-image", "registry.loadtest.invalid/ocp/must-gather:4.18.0",
}

// ltService is a `nodezero service` child process.
type ltService struct {
	cmd         *exec.Cmd
	dir         string
	url         string // http://127.0.0.1:port, without the API base
	firstAnswer time.Duration
	exited      chan struct{}
	waitErr     error
}

// ltStartService starts the service on a loopback port of its choosing and
// returns once /health answers. firstAnswer is process start to that
// answer.
func ltStartService(ctx context.Context, bin, dir string, extra ...string) (*ltService, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "service.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	lw := &ltListenWatcher{found: make(chan string, 1)}
	args := append([]string{"service", "--dir", dir, "--listen", "127.0.0.1:0"}, ltImageFlags...)
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Stdout, cmd.Stderr = lw, logf
	p := &ltService{cmd: cmd, dir: dir, exited: make(chan struct{})}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start service: %w", err)
	}
	go func() { // ends when the child exits; stop makes sure it does
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	fail := func(err error) (*ltService, error) {
		_ = p.stop()
		return nil, fmt.Errorf("start service (log in %s): %w", logf.Name(), err)
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	select {
	case p.url = <-lw.found:
	case <-p.exited:
		return fail(fmt.Errorf("service exited: %v", p.waitErr))
	case <-deadline.C:
		return fail(errors.New("no \"listening on\" line within 10s"))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	for {
		resp, err := hc.Get(p.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.firstAnswer = time.Since(start)
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return fail(fmt.Errorf("service exited: %v", p.waitErr))
		case <-deadline.C:
			return fail(fmt.Errorf("/health did not answer 200 within 10s: %v", err))
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

func (p *ltService) pid() int { return p.cmd.Process.Pid }

// alive fails once the service has exited.
func (p *ltService) alive() error {
	select {
	case <-p.exited:
		return fmt.Errorf("service exited: %v (log in %s)", p.waitErr, filepath.Join(p.dir, "service.log"))
	default:
		return nil
	}
}

// stop sends SIGTERM, and SIGKILL if the service is still there after 10 s.
func (p *ltService) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.New("service did not stop within 10s of SIGTERM; killed")
	}
}

// ltListenWatcher is the service's stdout: it finds the "listening on" line
// and reports the base URL once.
type ltListenWatcher struct {
	mu    sync.Mutex
	buf   []byte
	done  bool
	found chan string
}

func (w *ltListenWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(b), nil
	}
	w.buf = append(w.buf, b...)
	for {
		line, rest, ok := bytes.Cut(w.buf, []byte("\n"))
		if !ok {
			return len(b), nil
		}
		w.buf = rest
		if _, u, ok := strings.Cut(string(line), "listening on "); ok {
			w.done = true
			w.found <- strings.TrimSuffix(strings.TrimSpace(u), api.Base)
			return len(b), nil
		}
	}
}

// ltReadToken reads one of the tokens the service made in DIR/auth.
func ltReadToken(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "auth", name))
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// ltRegisterCluster creates the cluster of the test — three control-plane
// nodes, OpenShift 4.18, VIPs in the hosts' network — and its infra-env.
func ltRegisterCluster(ctx context.Context, c *wire.Client, apiVIP, ingressVIP string) (clusterID, infraEnvID string, err error) {
	cp := int64(ltMasters)
	cl, err := c.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "loadtest", OpenshiftVersion: "4.18", BaseDNSDomain: "loadtest.example.com",
		PullSecret: ltPullSecret, ControlPlaneCount: &cp,
		// The default 10.128.0.0/14 with /23 per node holds 512 nodes; a
		// /12 holds 2048, so a thousand-host cluster can become ready.
		ClusterNetworks: []*wire.ClusterNetwork{{CIDR: "10.128.0.0/12", HostPrefix: 23}},
		APIVIPs:         []*wire.APIVIP{{IP: wire.IP(apiVIP)}},
		IngressVIPs:     []*wire.IngressVIP{{IP: wire.IP(ingressVIP)}},
	})
	if err != nil {
		return "", "", err
	}
	ie, err := c.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{
		Name: "loadtest-infra-env", PullSecret: ltPullSecret, ClusterID: &cl.ID,
		OpenshiftVersion: "4.18", ImageType: wire.ImageTypeFullISO,
	})
	if err != nil {
		return "", "", err
	}
	return cl.ID, ie.ID, nil
}

// ltAgents are `nodezero agent` child processes.
type ltAgents struct {
	cmds   []*exec.Cmd
	logs   []string
	exited []chan struct{}
	dns    *exec.Cmd // the agents' resolver
}

// alive fails once an agent has exited: agents run until stopped.
func (ra *ltAgents) alive() error {
	for i, done := range ra.exited {
		select {
		case <-done:
			return fmt.Errorf("agent exited early: %s (log in %s)", ra.cmds[i].ProcessState, ra.logs[i])
		default:
		}
	}
	return nil
}

// ltStartAgents starts one agent per hardware tree, host i on
// 127.0.0.(11+i)/8.
func ltStartAgents(o loadtestOptions, dir, url, infraEnvID, token string) (*ltAgents, error) {
	ra := &ltAgents{}
	dns, err := ltStartDNS(dir)
	if err != nil {
		return nil, err
	}
	ra.dns = dns.cmd
	for i, hw := range ltHardware[:o.hosts] {
		logf, err := os.Create(filepath.Join(dir, "agent-"+hw+".log"))
		if err != nil {
			ra.stop()
			return nil, err
		}
		cmd := exec.Command(o.bin, "agent", "--url", url, "--infra-env-id", infraEnvID, "--token", token,
			"--root", filepath.Join(o.hw, hw), "--host-address", fmt.Sprintf("127.0.0.%d/8", 11+i),
			"--hostname", hw, "--wait", o.wait.String(), "--dns-server", dns.addr)
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		logf.Close()
		if err != nil {
			ra.stop()
			return nil, fmt.Errorf("start agent %s: %w", hw, err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }() // ends when the child exits; stop makes sure it does
		ra.cmds, ra.exited, ra.logs = append(ra.cmds, cmd), append(ra.exited, done), append(ra.logs, logf.Name())
	}
	return ra, nil
}

// cpu is the CPU the agents used so far.
func (ra *ltAgents) cpu() time.Duration {
	var sum time.Duration
	for _, c := range ra.cmds {
		if p, err := readProc(c.Process.Pid); err == nil {
			sum += p.cpu
		}
	}
	return sum
}

// ltDNS is the loopback hosts' resolver: dnsmasq on 127.0.0.1 that knows
// no names and asks nobody, so domain-resolution runs and every query
// stays on this machine (the cluster's VIPs need no records).
type ltDNS struct {
	cmd  *exec.Cmd
	addr string
}

func ltStartDNS(dir string) (*ltDNS, error) {
	bin, err := exec.LookPath("dnsmasq")
	if err != nil {
		return nil, fmt.Errorf("real agents need dnsmasq as their resolver (apt-get install dnsmasq-base): %w", err)
	}
	l, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.LocalAddr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	logf, err := os.Create(filepath.Join(dir, "dnsmasq.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "--no-daemon", "--conf-file=/dev/null", "--listen-address=127.0.0.1", "--bind-interfaces",
		"--port="+port, "--no-resolv", "--no-hosts", "--local=/#/", "--pid-file="+filepath.Join(dir, "dnsmasq.pid"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start dnsmasq: %w", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return &ltDNS{cmd: cmd, addr: addr}, nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("dnsmasq on %s did not answer: %w (log in %s)", addr, err, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends every agent: SIGTERM, then SIGKILL after 5 s.
func (ra *ltAgents) stop() {
	if ra.dns != nil {
		_ = ra.dns.Process.Kill()
		_ = ra.dns.Wait()
		ra.dns = nil
	}
	for _, c := range ra.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i, done := range ra.exited {
		select {
		case <-done:
		case <-time.After(time.Until(deadline)):
			_ = ra.cmds[i].Process.Kill()
			<-done
		}
	}
}
