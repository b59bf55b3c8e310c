// Package testbed builds a network test bed on one machine: each "host" is a
// network namespace with one NIC, cabled by a veth pair to a bridge that
// lives in the bed's own "switch" namespace. The end-to-end tests and
// `nodezero sandbox --netns` run `nodezero run` inside the hosts; dnsmasq, a
// registry or an NTP source can run on the switch.
//
// The machine's own networking is never touched: every link is created
// inside a bed namespace (a veth is made in the switch namespace with its
// peer placed straight into the host namespace), so nothing is added to the
// root namespace, and every address a bed configures is checked to lie in
// the bed's prefixes, which must be private and must not overlap anything
// the root namespace holds. Namespaces are named nzb<pid>x<rand>-<host|sw>;
// a bed whose creator died without Close is reaped by the next New.
//
// A host may also be a virtual machine (StartVM, vm.go): QEMU under UEFI
// firmware, run inside the switch namespace with its NICs on taps on the
// bridge, never with QEMU's user networking; Close and Reap take VMs down
// with the namespaces.
//
// It imports no project package. It needs root and iproute2's ip command,
// and for VMs QEMU (qemu-system-x86_64, qemu-img) and OVMF.
package testbed

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
)

// Bed is a running test bed. Its fields are read-only.
type Bed struct {
	ID       string       // <pid>x<rand>, embedded in every name the bed makes
	Switch   string       // the switch namespace, nzb<ID>-sw
	Bridge   string       // the bridge inside Switch, b<ID>
	Gateway  netip.Addr   // the bridge's IPv4 address: the first host of Prefix
	Gateway6 netip.Addr   // the bridge's IPv6 address (first host of Prefix6), if any
	Prefix   netip.Prefix // the bed's IPv4 subnet
	Prefix6  netip.Prefix // the bed's IPv6 subnet, if any
	Dir      string       // the parent of the hosts' root directories
	Hosts    []*Host

	mu         sync.Mutex
	closed     bool
	namespaces []string // made by this bed, in order
	dirs       []string // made by this bed, removed by Close
	vms        []*VM    // started by StartVM, killed by Close
	vmNICs     int      // VM NICs so far: the next one's index (MAC, tap)
}

// Host is one machine on the bed. Its fields are read-only.
type Host struct {
	Name   string
	NS     string // its namespace, nzb<ID>-<Name>
	NIC    string // its interface, e.g. enp1s0
	MAC    net.HardwareAddr
	Addr   netip.Prefix // its IPv4 address and the bed's prefix length
	Addr6  netip.Prefix // its IPv6 address, if the bed has Prefix6
	Static bool         // whether the bed configured Addr/Addr6 (else the caller's software does)
	Root   string       // its root directory, Dir/<Name>
	Port   string       // the switch side of its cable, v<ID>h<index> in the switch namespace

	bed *Bed
}

// New builds a bed: it validates cfg, reaps stale beds, then makes the
// switch namespace with its bridge and one namespace per host. On any error
// it tears down what it made.
func New(ctx context.Context, cfg Config) (*Bed, error) {
	if euid := os.Geteuid(); euid != 0 {
		return nil, fmt.Errorf("new test bed: needs root, running as uid %d", euid)
	}
	used, err := rootPrefixes(ctx)
	if err != nil {
		return nil, fmt.Errorf("new test bed: %w", err)
	}
	p, err := validate(cfg, used)
	if err != nil {
		return nil, err
	}
	if _, err := Reap(ctx); err != nil {
		return nil, fmt.Errorf("new test bed: %w", err)
	}
	b := &Bed{Prefix: p.prefix, Gateway: p.gateway, Prefix6: p.prefix6, Gateway6: p.gateway6}
	if err := b.build(ctx, cfg.Dir, p); err != nil {
		return nil, errors.Join(fmt.Errorf("new test bed %s: %w", b.ID, err), b.Close())
	}
	return b, nil
}

// TB is the part of testing.TB that NewT uses (kept small so that a program
// using the package does not link the testing package).
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// NewT is New for tests: it closes the bed in t.Cleanup and fails t on any
// error. Without root or the ip command it fails t when the environment has
// CI=true, and skips t otherwise.
func NewT(t TB, cfg Config) *Bed {
	t.Helper()
	NeedTool(t, "ip")
	NeedRoot(t)
	b, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close test bed: %v", err)
		}
	})
	return b
}

// build makes everything; whatever it made is recorded for Close.
func (b *Bed) build(ctx context.Context, dir string, p plan) error {
	if err := b.makeSwitchNS(ctx); err != nil {
		return err
	}
	b.Bridge = "b" + b.ID
	if dir == "" {
		d, err := os.MkdirTemp("", "nzb"+b.ID+"-")
		if err != nil {
			return fmt.Errorf("make bed directory: %w", err)
		}
		b.dirs = append(b.dirs, d)
		dir = d
	}
	b.Dir = dir

	sw := b.Switch
	if err := b.prepareNS(ctx, sw); err != nil {
		return err
	}
	brMAC := deriveMAC(b.ID, 0xfe)
	// No multicast snooping: the switch floods multicast like a plain one,
	// so DHCPv6 and neighbour discovery need no querier.
	if _, err := runIP(ctx, "-n", sw, "link", "add", "name", b.Bridge, "address", brMAC.String(),
		"type", "bridge", "mcast_snooping", "0"); err != nil {
		return err
	}
	if err := b.addAddr(ctx, sw, b.Bridge, netip.PrefixFrom(b.Gateway, b.Prefix.Bits())); err != nil {
		return err
	}
	if b.Gateway6.IsValid() {
		if err := b.addAddr(ctx, sw, b.Bridge, netip.PrefixFrom(b.Gateway6, b.Prefix6.Bits())); err != nil {
			return err
		}
	}
	if _, err := runIP(ctx, "-n", sw, "link", "set", "dev", b.Bridge, "up"); err != nil {
		return err
	}

	seen := map[string]string{brMAC.String(): "the bridge"}
	for i, spec := range p.hosts {
		h := &Host{
			Name: spec.Name, NS: nsPrefix + b.ID + "-" + spec.Name, NIC: spec.NIC, MAC: spec.MAC,
			Addr: netip.PrefixFrom(spec.Addr, b.Prefix.Bits()), Static: spec.Static,
			Port: "v" + b.ID + "h" + strconv.Itoa(i), bed: b,
		}
		if h.MAC == nil {
			h.MAC = deriveMAC(b.ID, byte(i))
		}
		if other, dup := seen[h.MAC.String()]; dup {
			return fmt.Errorf("hosts[%d]: MAC %s is already used by %s: %w", i, h.MAC, other, ErrInvalid)
		}
		seen[h.MAC.String()] = "hosts[" + strconv.Itoa(i) + "]"
		if b.Prefix6.IsValid() {
			h.Addr6 = netip.PrefixFrom(spec.Addr6, b.Prefix6.Bits())
		}
		if err := b.addHost(ctx, h); err != nil {
			return fmt.Errorf("host %s: %w", h.Name, err)
		}
		b.Hosts = append(b.Hosts, h)
	}
	return nil
}

// makeSwitchNS picks the bed ID and creates the switch namespace, trying
// another ID if the name is taken (ip netns add never reuses a namespace).
func (b *Bed) makeSwitchNS(ctx context.Context) error {
	var err error
	for range 8 {
		id := newID()
		sw := nsPrefix + id + "-sw"
		if nsExists(sw) {
			continue
		}
		if _, err = runIP(ctx, "netns", "add", sw); err != nil {
			continue // most likely a race for the same name; try another
		}
		b.ID, b.Switch = id, sw
		b.namespaces = append(b.namespaces, sw)
		return nil
	}
	return fmt.Errorf("make switch namespace: %w", err)
}

// prepareNS quiets IPv6 in a fresh namespace and brings its lo up.
func (b *Bed) prepareNS(ctx context.Context, ns string) error {
	if err := quietIPv6(ns); err != nil {
		return err
	}
	_, err := runIP(ctx, "-n", ns, "link", "set", "dev", "lo", "up")
	return err
}

// addHost makes h's namespace, cables it to the bridge and, for a static
// host, configures its addresses and default routes.
func (b *Bed) addHost(ctx context.Context, h *Host) error {
	if _, err := runIP(ctx, "netns", "add", h.NS); err != nil {
		return err
	}
	b.namespaces = append(b.namespaces, h.NS)
	if err := b.prepareNS(ctx, h.NS); err != nil {
		return err
	}
	root := filepath.Join(b.Dir, h.Name)
	if err := os.Mkdir(root, 0o755); err != nil {
		return fmt.Errorf("make host root: %w", err)
	}
	b.dirs = append(b.dirs, root)
	h.Root = root

	sw := b.Switch
	err := runAll(ctx, [][]string{
		{"-n", sw, "link", "add", "name", h.Port, "type", "veth",
			"peer", "name", h.NIC, "address", h.MAC.String(), "netns", h.NS},
		{"-n", sw, "link", "set", "dev", h.Port, "master", b.Bridge, "up"},
		{"-n", h.NS, "link", "set", "dev", h.NIC, "up"},
	})
	if err != nil || !h.Static {
		return err
	}
	if err := b.addAddr(ctx, h.NS, h.NIC, h.Addr); err != nil {
		return err
	}
	if _, err := runIP(ctx, "-n", h.NS, "-4", "route", "add", "default", "via", b.Gateway.String(), "dev", h.NIC); err != nil {
		return err
	}
	if !h.Addr6.IsValid() {
		return nil
	}
	if err := b.addAddr(ctx, h.NS, h.NIC, h.Addr6); err != nil {
		return err
	}
	_, err = runIP(ctx, "-n", h.NS, "-6", "route", "add", "default", "via", b.Gateway6.String(), "dev", h.NIC)
	return err
}

// Close kills every process inside the bed's namespaces (with its process
// group, unless that is the caller's own), deletes the bed's links and
// namespaces and removes the directories New made. Later calls do nothing.
func (b *Bed) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	ctx := context.Background()
	var errs []error
	// VMs first, waiting for each QEMU to be gone (the kills below would
	// catch them too, in the switch namespace, without waiting).
	for _, v := range b.vms {
		v.kill()
	}
	// Kill everywhere first, then delete, hosts before the switch.
	for _, ns := range b.namespaces {
		if nsExists(ns) {
			errs = append(errs, killNetns(ctx, ns, true))
		}
	}
	for _, ns := range slices.Backward(b.namespaces) {
		if nsExists(ns) {
			errs = append(errs, deleteNetns(ctx, ns))
		}
	}
	for _, d := range slices.Backward(b.dirs) {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close test bed %s: %w", b.ID, err)
	}
	return nil
}

// deriveMAC returns 02:h0:h1:h2:h3:n, where h is the SHA-256 of the bed ID:
// locally administered, unicast, and stable for an ID and index.
func deriveMAC(id string, n byte) net.HardwareAddr {
	sum := sha256.Sum256([]byte(id))
	return net.HardwareAddr{0x02, sum[0], sum[1], sum[2], sum[3], n}
}

// runAll runs ip once per argument list, stopping at the first failure.
func runAll(ctx context.Context, steps [][]string) error {
	for _, s := range steps {
		if _, err := runIP(ctx, s...); err != nil {
			return err
		}
	}
	return nil
}
