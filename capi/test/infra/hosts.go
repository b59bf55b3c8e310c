package infra

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/internal/hwtree"
	"github.com/nodezero/nodezero/sim"
)

// Config is what every host of a Hosts shares: the sandbox's loopback
// world (its /24, DNS, NTP, payload) and the workload cluster's
// kubeconfig.
type Config struct {
	// Bin is the nodezero binary.
	Bin string
	// Dir holds the hardware trees (hw/) and one folder per host
	// (hosts/<namespace>.<name>/: root/, disks/, config.iso, run.log).
	Dir string
	// Prefix is the hosts' /24 of loopback: host n stands on .10+n.
	Prefix netip.Prefix
	// DNS is the hosts' resolver ("ip:port"); NTP their time source.
	DNS, NTP string
	// Payload is the factory image's payload directory (its OS image and
	// release).
	Payload string
	// Kubeconfig is the workload cluster's admin kubeconfig: each host
	// keeps it at sim.KubeconfigPath under its root, where the simulated
	// in-cluster part finds it (nil: no workload API).
	Kubeconfig []byte
	// Disks is where each host's disk files lie, in a folder per host
	// (on a tmpfs the disk-speed check passes assisted's 10 ms); "" is the
	// host's own folder.
	Disks string
	// Args are added to each host's `nodezero run` command line (e.g.
	// --settle, to keep an install running long enough to act in it).
	Args []string
	// Env is added to each host process's environment.
	Env []string
	// CheckInterval is how often hosts repeat their checks (10 s when 0).
	CheckInterval time.Duration
	LogLevel      string // debug when ""
	// Logf, when set, is told what happens to the hosts.
	Logf func(format string, args ...any)
}

// Hardware classes of NodezeroHostMachine.spec.hardware and the trees
// each draws from, in order.
var classTrees = map[string][]string{
	"master": {"master-0", "master-1", "master-2"},
	"worker": append([]string{"worker-0", "worker-1"}, extraWorkers(20)...),
}

func extraWorkers(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s%d", hwtree.ExtraWorkerPrefix, i))
	}
	return out
}

// Hosts runs the host processes of one test: each a `nodezero run`
// process on its own loopback address, started again when it reboots
// into its installed disk (sim.ExitReboot) or is killed, as systemd's
// Restart=always does. Close stops every one; no process outlives it
// (each also dies with the test process: Pdeathsig).
type Hosts struct {
	cfg Config

	mu     sync.Mutex
	hosts  map[string]*Host
	trees  map[string]string // tree name → the key of the host using it
	next   int               // the next address's offset from .10
	closed bool
}

// Host is one running host.
type Host struct {
	Key  string // <namespace>/<name>
	Tree string // its hardware tree's name
	Addr netip.Addr
	Dir  string // its folder
	Log  string // its processes' output, one after the other

	root, disks, iso string
	cancel           context.CancelFunc
	done             chan struct{}

	mu    sync.Mutex
	boots int
	proc  *os.Process
	exit  error // why the supervisor gave up, nil while it runs
}

// New makes a Hosts; Close ends it.
func New(cfg Config) (*Hosts, error) {
	if !cfg.Prefix.Addr().Is4() || !cfg.Prefix.Addr().IsLoopback() || cfg.Prefix.Bits() != 24 {
		return nil, fmt.Errorf("infra hosts: prefix %s: want a /24 of 127.0.0.0/8", cfg.Prefix)
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = 10 * time.Second
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "debug"
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "hosts"), 0o755); err != nil {
		return nil, err
	}
	return &Hosts{cfg: cfg, hosts: map[string]*Host{}, trees: map[string]string{}}, nil
}

func (hs *Hosts) logf(format string, args ...any) {
	if hs.cfg.Logf != nil {
		hs.cfg.Logf(format, args...)
	}
}

// Get returns the host of key, nil when none runs.
func (hs *Hosts) Get(key string) *Host {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.hosts[key]
}

// Keys lists the running hosts' keys.
func (hs *Hosts) Keys() []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	var out []string
	for k := range hs.hosts {
		out = append(out, k)
	}
	return out
}

// Ensure starts the host of key with a tree of hardware class and the
// config image iso, unless it runs already (the image is then left as
// the host loaded it). It returns the host.
func (hs *Hosts) Ensure(key, class string, iso []byte) (*Host, error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return nil, errors.New("infra hosts: closed")
	}
	if h := hs.hosts[key]; h != nil {
		return h, nil
	}
	trees, ok := classTrees[class]
	if !ok {
		return nil, fmt.Errorf("infra hosts: %s: hardware %q: want master or worker", key, class)
	}
	tree := ""
	for _, t := range trees {
		if _, used := hs.trees[t]; !used {
			tree = t
			break
		}
	}
	if tree == "" {
		return nil, fmt.Errorf("infra hosts: %s: every %s hardware tree is in use (%d)", key, class, len(trees))
	}
	if hs.next > 240 {
		return nil, fmt.Errorf("infra hosts: %s: no address left in %s", key, hs.cfg.Prefix)
	}
	a := hs.cfg.Prefix.Addr().As4()
	a[3] = byte(10 + hs.next)
	dir := filepath.Join(hs.cfg.Dir, "hosts", dirName(key))
	h := &Host{Key: key, Tree: tree, Addr: netip.AddrFrom4(a), Dir: dir, Log: filepath.Join(dir, "run.log"),
		root: filepath.Join(dir, "root"), disks: filepath.Join(dir, "disks"), iso: filepath.Join(dir, "config.iso"), done: make(chan struct{})}
	if hs.cfg.Disks != "" {
		h.disks = filepath.Join(hs.cfg.Disks, dirName(key))
	}
	if err := hs.prepare(h, iso); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("infra hosts: %s: %w", key, err)
	}
	hs.next++
	hs.trees[tree] = key
	hs.hosts[key] = h
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		hs.supervise(ctx, h)
	}()
	hs.logf("host %s started on %s (hardware %s, log %s)", key, h.Addr, tree, h.Log)
	return h, nil
}

// dirName is key (<namespace>/<name>) as one folder name.
func dirName(key string) string { return strings.Replace(key, "/", ".", 1) }

// prepare makes the host's folder: its hardware tree, root (with the
// workload kubeconfig), disks and config image.
func (hs *Hosts) prepare(h *Host, iso []byte) error {
	for _, d := range []string{h.Dir, h.disks} { // an earlier host of the same name
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	for _, d := range []string{h.root, h.disks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	hw := filepath.Join(hs.cfg.Dir, "hw")
	if _, err := os.Stat(filepath.Join(hw, h.Tree)); errors.Is(err, os.ErrNotExist) {
		if err := hwtree.Write(hw, h.Tree); err != nil {
			return err
		}
	}
	if len(hs.cfg.Kubeconfig) > 0 {
		p := filepath.Join(h.root, sim.KubeconfigPath)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, hs.cfg.Kubeconfig, 0o600); err != nil {
			return err
		}
	}
	return os.WriteFile(h.iso, iso, 0o600)
}

// args is the host's `nodezero run` command line: the sandbox's loopback
// host (sandbox/sandbox.go hostArgs), with the Machine's config image.
func (hs *Hosts) args(h *Host) []string {
	c := hs.cfg
	args := []string{"run", "--root", h.root, "--hardware-root", filepath.Join(c.Dir, "hw", h.Tree), "--config-image", h.iso,
		"--listen", h.Addr.String() + ":8090", "--host-address", netip.PrefixFrom(h.Addr, c.Prefix.Bits()).String()}
	if c.DNS != "" {
		args = append(args, "--dns-server", c.DNS)
	}
	if _, port, err := net.SplitHostPort(c.NTP); err == nil {
		args = append(args, "--ntp-port", port)
	}
	args = append(args, "--payload", c.Payload, "--disks", h.disks,
		"--check-interval", c.CheckInterval.String(), "--config-interval", "1s", "--agent-interval", "1s",
		"--reboot-delay", "1ms", "--log-level", c.LogLevel)
	return append(args, c.Args...)
}

// supervise runs the host's process until ctx ends: again after each
// reboot into its installed disk and after a kill; any other end is the
// host's failure (Host.Err).
func (hs *Hosts) supervise(ctx context.Context, h *Host) {
	for {
		err := hs.runOnce(ctx, h)
		if ctx.Err() != nil {
			return
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() == sim.ExitReboot:
			hs.logf("host %s rebooted into its installed disk", h.Key)
			continue
		case errors.As(err, &ee) && signaled(ee):
			hs.logf("host %s: its process was killed; starting it again as systemd would", h.Key)
			t := time.NewTimer(restartDelay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		if err == nil {
			err = errors.New("exited")
		}
		h.mu.Lock()
		h.exit = err
		h.mu.Unlock()
		hs.logf("host %s: its process ended: %v (log %s)", h.Key, err, h.Log)
		return
	}
}

// runOnce runs one process of the host until it ends or ctx does (then
// SIGTERM, and SIGKILL after 10 s).
func (hs *Hosts) runOnce(ctx context.Context, h *Host) error {
	logf, err := os.OpenFile(h.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	h.mu.Lock()
	h.boots++
	fmt.Fprintf(logf, "==== boot %d ====\n", h.boots)
	h.mu.Unlock()
	cmd := exec.Command(hs.cfg.Bin, hs.args(h)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = append(os.Environ(), hs.cfg.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	h.mu.Lock()
	h.proc = cmd.Process
	h.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		h.mu.Lock()
		h.proc = nil
		h.mu.Unlock()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(10 * time.Second)
		defer t.Stop()
		select {
		case err := <-done:
			return err
		case <-t.C:
			_ = cmd.Process.Kill()
			return <-done
		}
	}
}

// restartDelay is the pause before a killed host's process starts again
// (the unit's RestartSec is 3 s; a test is in a hurry).
const restartDelay = 200 * time.Millisecond

func signaled(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// Boots is how many processes the host has started.
func (h *Host) Boots() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.boots
}

// Running reports whether a process of the host runs now.
func (h *Host) Running() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.proc != nil
}

// Err is why the host's supervisor gave up; nil while it runs.
func (h *Host) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exit
}

// Root is the host's root directory.
func (h *Host) Root() string { return h.root }

// Stop ends the host of key and removes its folder; it reports whether
// one ran.
func (hs *Hosts) Stop(key string) (bool, error) {
	hs.mu.Lock()
	h := hs.hosts[key]
	if h != nil {
		delete(hs.hosts, key)
		delete(hs.trees, h.Tree)
	}
	hs.mu.Unlock()
	if h == nil {
		return false, nil
	}
	h.cancel()
	<-h.done
	hs.logf("host %s stopped", key)
	if err := os.RemoveAll(h.disks); err != nil {
		return true, err
	}
	return true, os.RemoveAll(h.Dir)
}

// Close stops every host (their folders stay, for the test's logs).
func (hs *Hosts) Close() {
	hs.mu.Lock()
	hs.closed = true
	var all []*Host
	for _, h := range hs.hosts {
		all = append(all, h)
	}
	hs.mu.Unlock()
	for _, h := range all {
		h.cancel()
	}
	for _, h := range all {
		<-h.done
		if hs.cfg.Disks != "" {
			os.RemoveAll(h.disks) // memory, on a tmpfs
		}
	}
}
