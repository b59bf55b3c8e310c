package testbed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The bed's own servers, all in the switch namespace on the bridge's
// address (the gateway): dnsmasq for DHCP and the cluster's DNS records, a
// registry v2 (Debian's docker-registry, in registry.go) and an NTP source
// (chronyd in server mode that never touches the clock). Hosts reach them through
// their NIC; nothing listens in the root namespace and no server has an
// upstream, so no query leaves the bed.

// service is a server process of the bed.
type service struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startService starts argv in the switch namespace, logging to dir/name.log.
// It is stopped by Stop or by Bed.Close (which kills every process inside
// the bed's namespaces).
func (b *Bed) startService(ctx context.Context, dir, name string, argv ...string) (*service, error) {
	log := filepath.Join(dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer f.Close()
	cmd := b.SwitchCommand(context.WithoutCancel(ctx), argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &service{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	return s, nil
}

// stop kills the server's process group and waits for it.
func (s *service) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// waitTCP waits until addr accepts connections from the switch namespace,
// or the server exits.
func (b *Bed) waitTCP(ctx context.Context, s *service, addr string) error {
	for {
		err := inNetns(b.Switch, func() error {
			c, err := (&net.Dialer{Timeout: 200 * time.Millisecond}).DialContext(ctx, "tcp", addr)
			if err == nil {
				c.Close()
			}
			return err
		})
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(s.log)
			return fmt.Errorf("%s exited: %v: %s", s.name, s.err, strings.TrimSpace(string(out)))
		case <-ctx.Done():
			return fmt.Errorf("%s on %s: %w", s.name, addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Record is a DNS name the bed's dnsmasq answers, with A or AAAA addresses.
type Record struct {
	Name  string
	Addrs []netip.Addr
}

// DNSConfig configures dnsmasq.
type DNSConfig struct {
	// Records are exact names; SetRecords replaces them while it runs.
	Records []Record
	// Wildcards answer a domain and every name under it (dnsmasq
	// --address=/domain/addr), e.g. apps.<cluster>.<base>.
	Wildcards []Record
	// DHCP, when set, serves leases from this range of the bed's prefix.
	DHCP [2]netip.Addr
	// LeaseTime of DHCP leases (default 1h; dnsmasq's minimum is 2m).
	LeaseTime time.Duration
}

// DNS is the bed's dnsmasq. Every host's /etc/resolv.conf (inside its
// namespace) names it.
type DNS struct {
	*service
	hosts, leases string
	mu            sync.Mutex
}

// StartDNS starts dnsmasq on the bridge: DNS on port 53 of the gateway with
// no upstream (names it does not know are refused), and DHCP when asked.
// Each host's namespace gets a resolv.conf naming the gateway.
func (b *Bed) StartDNS(ctx context.Context, cfg DNSConfig) (*DNS, error) {
	dir := filepath.Join(b.Dir, "dnsmasq")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	d := &DNS{hosts: filepath.Join(dir, "records"), leases: filepath.Join(dir, "leases")}
	if err := d.writeRecords(cfg.Records); err != nil {
		return nil, err
	}
	args := []string{"dnsmasq", "--no-daemon", "--conf-file=/dev/null", "--interface=" + b.Bridge, "--bind-interfaces",
		"--except-interface=lo", "--listen-address=" + b.Gateway.String(), "--port=53",
		"--no-resolv", "--no-hosts", "--no-poll", "--local=/#/", "--addn-hosts=" + d.hosts, "--log-queries", "--log-facility=-",
		"--pid-file=" + filepath.Join(dir, "pid")}
	for _, w := range cfg.Wildcards {
		for _, a := range w.Addrs {
			if !b.owns(netip.PrefixFrom(a, a.BitLen())) {
				return nil, fmt.Errorf("start dnsmasq: wildcard %s → %s: %w", w.Name, a, ErrOutsideRange)
			}
			args = append(args, "--address=/"+w.Name+"/"+a.String())
		}
	}
	if cfg.DHCP[0].IsValid() {
		for _, a := range cfg.DHCP {
			if !b.Prefix.Contains(a) {
				return nil, fmt.Errorf("start dnsmasq: DHCP range %s: %w (%s)", a, ErrOutsideRange, b.Prefix)
			}
		}
		lt := cfg.LeaseTime
		if lt == 0 {
			lt = time.Hour
		}
		mask := net.CIDRMask(b.Prefix.Bits(), 32)
		args = append(args, fmt.Sprintf("--dhcp-range=%s,%s,%s,%ds", cfg.DHCP[0], cfg.DHCP[1], net.IP(mask).String(), int(lt.Seconds())),
			"--dhcp-authoritative", "--no-ping", "--dhcp-leasefile="+d.leases, "--log-dhcp",
			"--dhcp-option=3,"+b.Gateway.String(), "--dhcp-option=6,"+b.Gateway.String())
	}
	s, err := b.startService(ctx, dir, "dnsmasq", args...)
	if err != nil {
		return nil, err
	}
	d.service = s
	if err := b.waitTCP(ctx, s, net.JoinHostPort(b.Gateway.String(), "53")); err != nil {
		s.stop()
		return nil, err
	}
	for _, h := range b.Hosts {
		if err := b.writeResolvConf(h.NS); err != nil {
			s.stop()
			return nil, err
		}
	}
	return d, nil
}

// writeResolvConf gives namespace ns a resolv.conf naming the gateway;
// `ip netns exec` mounts it over /etc/resolv.conf.
func (b *Bed) writeResolvConf(ns string) error {
	dir := filepath.Join(etcNetnsDir, ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("resolv.conf for %s: %w", ns, err)
	}
	return os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte("nameserver "+b.Gateway.String()+"\n"), 0o644)
}

// SetRecords replaces the exact-name records; dnsmasq re-reads them at
// once (SIGHUP).
func (d *DNS) SetRecords(records []Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.writeRecords(records); err != nil {
		return err
	}
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return fmt.Errorf("dnsmasq: reload records: %w", err)
	}
	return nil
}

func (d *DNS) writeRecords(records []Record) error {
	var b strings.Builder
	for _, r := range records {
		for _, a := range r.Addrs {
			fmt.Fprintf(&b, "%s %s\n", a, r.Name)
		}
	}
	if err := os.WriteFile(d.hosts, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("dnsmasq records: %w", err)
	}
	return nil
}

// Stop stops dnsmasq.
func (d *DNS) Stop() { d.stop() }

// Lease is one line of dnsmasq's lease file.
type Lease struct {
	Expiry   time.Time
	MAC      string
	Addr     netip.Addr
	Hostname string
}

// Leases reads dnsmasq's lease file, sorted by address.
func (d *DNS) Leases() ([]Lease, error) {
	f, err := os.Open(d.leases)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Lease
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 {
			continue
		}
		exp, err1 := strconv.ParseInt(fs[0], 10, 64)
		a, err2 := netip.ParseAddr(fs[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("dnsmasq lease %q: not a lease line", sc.Text())
		}
		out = append(out, Lease{Expiry: time.Unix(exp, 0), MAC: fs[1], Addr: a, Hostname: fs[3]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr.Less(out[j].Addr) })
	return out, sc.Err()
}

// NTP is the bed's NTP source: chronyd serving its local clock at stratum
// 8 on the gateway, never adjusting the machine's clock (-x) and with no
// upstream servers.
type NTP struct {
	*service
	Addr netip.Addr
}

// StartNTP starts chronyd as a server on the gateway.
func (b *Bed) StartNTP(ctx context.Context) (*NTP, error) {
	dir := filepath.Join(b.Dir, "chrony")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "chrony.conf")
	text := strings.Join([]string{
		"local stratum 8",
		"allow " + b.Prefix.String(),
		"bindaddress " + b.Gateway.String(),
		"port 123",
		"cmdport 0",
		"pidfile " + filepath.Join(dir, "chronyd.pid"),
		"driftfile " + filepath.Join(dir, "drift"),
	}, "\n") + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		return nil, err
	}
	s, err := b.startService(ctx, dir, "chronyd", "chronyd", "-d", "-x", "-u", "root", "-f", conf)
	if err != nil {
		return nil, err
	}
	n := &NTP{service: s, Addr: b.Gateway}
	// chronyd has no TCP port to wait on: ask it over UDP until it answers.
	for {
		if err := inNetns(b.Switch, func() error { return sntpProbe(ctx, net.JoinHostPort(b.Gateway.String(), "123")) }); err == nil {
			return n, nil
		}
		select {
		case <-s.done:
			out, _ := os.ReadFile(s.log)
			return nil, fmt.Errorf("chronyd exited: %v: %s", s.err, strings.TrimSpace(string(out)))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop stops the NTP source.
func (n *NTP) Stop() { n.stop() }

// sntpProbe sends one client request (RFC 4330) and waits briefly for a
// server reply.
func sntpProbe(ctx context.Context, addr string) error {
	c, err := (&net.Dialer{}).DialContext(ctx, "udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	req := make([]byte, 48)
	req[0] = 0x23 // LI 0, version 4, mode 3 (client)
	if _, err := c.Write(req); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	resp := make([]byte, 48)
	n, err := c.Read(resp)
	if err != nil {
		return err
	}
	if n < 48 || resp[0]&0x7 != 4 {
		return fmt.Errorf("ntp %s: not a server reply", addr)
	}
	return nil
}
