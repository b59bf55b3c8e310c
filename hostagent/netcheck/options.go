package netcheck

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults for Options. The real agent sends 10 pings one second apart
// (`ping -c 10`); we keep the count but send them 100 ms apart, so a check
// of a whole cluster takes about a second per remote address, not ten.
const (
	DefaultCount    = 10
	DefaultInterval = 100 * time.Millisecond
	// DefaultWait is how long a reply is waited for after the last probe:
	// the real agent's `ping -W 3` (docs/reference/agent-and-installer.md
	// §2.2). A busy machine answers late (round trips of 0.5–1 s between
	// VMs under software emulation, found by the VM sandbox), and a late
	// reply is not a lost one.
	DefaultWait     = 3 * time.Second
	DefaultParallel = 64 // remote hosts checked at once: the agent runs one goroutine per host; 64 bounds sockets and keeps a round of 50 peers to one probe train (about 2 s)
	// MaxScanBits is the widest network FreeAddresses scans: a /22.
	MaxScanBits = 22
	// AddressLimit caps the free addresses reported, as the agent does.
	AddressLimit = 8000
)

// Options tunes the checks. The zero value is ready to use.
type Options struct {
	// Interfaces is the allow-list of interfaces that may send probes. nil
	// means every interface that is up, is not loopback, holds a
	// non-link-local address and is physical, a bond, a VLAN or a veth (the
	// real agent's outgoing-NIC rule, BZ 2105358, plus veth, which is a
	// host's cable in a container or a test bed). An explicit list is taken
	// as it is, whatever the kind; the up/address rules still apply. An
	// empty non-nil list allows nothing.
	Interfaces []string
	// Count is the number of ICMP echoes and ARP requests per target.
	Count int
	// Interval is the time between two probes to one target.
	Interval time.Duration
	// Wait is how long to wait for replies after the last probe.
	Wait time.Duration
	// Parallel bounds the remote hosts checked at once.
	Parallel int
	// Stats, when not nil, counts the probes sent.
	Stats *Stats
}

func (o Options) withDefaults() Options {
	if o.Count <= 0 {
		o.Count = DefaultCount
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	return o
}

// Probe kinds counted by Stats.
const (
	ProbeICMP = "icmp"
	ProbeARP  = "arp"
)

// Stats counts probes sent, per kind and interface. It is safe for
// concurrent use; the zero value is ready.
type Stats struct {
	mu sync.Mutex
	m  map[string]map[string]int // kind -> interface -> count
}

func (s *Stats) add(kind, iface string, n int) {
	if s == nil || n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]map[string]int{}
	}
	if s.m[kind] == nil {
		s.m[kind] = map[string]int{}
	}
	s.m[kind][iface] += n
}

// Sent returns the number of probes of kind (ProbeICMP, ProbeARP, or ""
// for all) sent on iface ("" for all interfaces).
func (s *Stats) Sent(kind, iface string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, byIf := range s.m {
		if kind != "" && k != kind {
			continue
		}
		for i, c := range byIf {
			if iface == "" || i == iface {
				n += c
			}
		}
	}
	return n
}

// Interfaces returns the names of the interfaces that sent any probe, sorted.
func (s *Stats) Interfaces() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, byIf := range s.m {
		for i := range byIf {
			if !slices.Contains(names, i) {
				names = append(names, i)
			}
		}
	}
	slices.Sort(names)
	return names
}

// ErrRefused is wrapped by every error that refuses to probe a network or
// address for safety: too wide, or not on an allowed interface.
var ErrRefused = errors.New("refused")

// nic is a local interface allowed to send probes.
type nic struct {
	ifi      net.Interface
	prefixes []netip.Prefix // its non-link-local addresses with their prefix lengths
}

// onLink returns the first of n's addresses whose subnet holds a, of a's family.
func (n nic) onLink(a netip.Addr) (netip.Prefix, bool) {
	for _, p := range n.prefixes {
		if p.Addr().Is4() == a.Is4() && p.Masked().Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// localState is what the checks know about this host.
type localState struct {
	allowed []nic
	own     map[netip.Addr]bool // every address of every interface, allowed or not
}

// nicsOnLink returns the allowed NICs whose subnets hold a, with the
// matching address.
func (l localState) nicsOnLink(a netip.Addr) []nicAddr {
	var out []nicAddr
	for _, n := range l.allowed {
		if p, ok := n.onLink(a); ok {
			out = append(out, nicAddr{nic: n, addr: p})
		}
	}
	return out
}

type nicAddr struct {
	nic  nic
	addr netip.Prefix
}

// readLocal lists the interfaces and applies the allow-list.
func readLocal(allow []string) (localState, error) {
	ifis, err := net.Interfaces()
	if err != nil {
		return localState{}, fmt.Errorf("list interfaces: %w", err)
	}
	st := localState{own: map[netip.Addr]bool{}}
	for _, ifi := range ifis {
		addrs, err := ifi.Addrs()
		if err != nil {
			return localState{}, fmt.Errorf("read addresses of %s: %w", ifi.Name, err)
		}
		var ps []netip.Prefix
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ip = ip.Unmap()
			st.own[ip] = true
			if ip.IsLinkLocalUnicast() {
				continue
			}
			bits, _ := ipn.Mask.Size()
			ps = append(ps, netip.PrefixFrom(ip, bits))
		}
		if ifi.Flags&net.FlagUp == 0 || len(ps) == 0 {
			continue
		}
		// Loopback only when named: sandbox hosts sharing the machine's
		// loopback probe each other there.
		if ifi.Flags&net.FlagLoopback != 0 && !slices.Contains(allow, ifi.Name) {
			continue
		}
		if allow != nil {
			if !slices.Contains(allow, ifi.Name) {
				continue
			}
		} else if !outgoingKind(ifi.Name) {
			continue
		}
		st.allowed = append(st.allowed, nic{ifi: ifi, prefixes: ps})
	}
	return st, nil
}

// outgoingKind reports whether the interface is physical, a bond, a VLAN or
// a veth, from sysfs and the ethtool driver name.
func outgoingKind(name string) bool {
	dir := filepath.Join("/sys/class/net", name)
	if _, err := os.Stat(filepath.Join(dir, "device")); err == nil {
		return true // backed by a bus device: physical
	}
	if b, err := os.ReadFile(filepath.Join(dir, "uevent")); err == nil {
		for line := range strings.Lines(string(b)) {
			switch strings.TrimSpace(line) {
			case "DEVTYPE=bond", "DEVTYPE=vlan":
				return true
			}
		}
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
	if err != nil {
		return false
	}
	return unix.ByteSliceToString(info.Driver[:]) == "veth"
}
