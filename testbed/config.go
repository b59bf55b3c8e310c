package testbed

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
)

// Config describes a bed. Only Prefix is required.
type Config struct {
	// Prefix is the bed's IPv4 subnet, e.g. 10.231.7.0/24. It must lie inside
	// 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 and must not overlap any
	// address or route of the root namespace (default routes excepted).
	Prefix netip.Prefix
	// Prefix6 is an optional IPv6 subnet inside fd00::/8 (ULA), e.g.
	// fd4e:7a::/64, with the same overlap rule.
	Prefix6 netip.Prefix
	// Hosts are the machines on the bed's switch, in order.
	Hosts []HostSpec
	// Dir is where the hosts' root directories are made (Dir/<name>). Empty
	// means a new directory from os.MkdirTemp, removed by Close.
	Dir string
}

// HostSpec describes one host. Only Name is required.
type HostSpec struct {
	// Name names the host and its namespace (nzb<id>-<name>): letters,
	// digits, '-' and '_', at most 32, not "sw".
	Name string
	// NIC is the host's interface name; default "enp1s0".
	NIC string
	// MAC is the NIC's address; default 02:xx:xx:xx:xx:<index>, locally
	// administered and derived from the bed ID and the host's index.
	MAC net.HardwareAddr
	// Addr is the host's IPv4 address in Prefix; default the Prefix's
	// address + 10 + index.
	Addr netip.Addr
	// Addr6 is the host's IPv6 address in Prefix6 (ignored without
	// Prefix6); default the Prefix6's address + 10 + index.
	Addr6 netip.Addr
	// Static makes the bed configure Addr (and Addr6) on the NIC with a
	// default route via the bed's gateway. Without it the NIC is up but holds
	// only its link-local address: the software under test configures it.
	Static bool
}

// Errors that callers (and tests) can tell apart with errors.Is.
var (
	// ErrNotPrivate: a prefix is outside the private ranges a bed may use.
	ErrNotPrivate = errors.New("prefix outside the private ranges")
	// ErrOverlap: a prefix overlaps an address or route of the root namespace.
	ErrOverlap = errors.New("prefix overlaps the root namespace")
	// ErrOutsideRange: an address operation names a prefix outside the bed's.
	ErrOutsideRange = errors.New("address outside the bed's prefixes")
	// ErrInvalid: any other problem in a Config.
	ErrInvalid = errors.New("invalid test bed config")
)

// privateV4 are the only IPv4 ranges a bed may use (RFC 1918).
var privateV4 = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

// privateV6 is the only IPv6 range a bed may use (the locally assigned half
// of RFC 4193 unique local addresses).
var privateV6 = netip.MustParsePrefix("fd00::/8")

const (
	defaultNIC = "enp1s0"
	// hostOffset is where default host addresses start inside the prefixes.
	hostOffset = 10
	// maxHosts keeps veth names (v<id>h<index>) within 15 characters.
	maxHosts = 100
)

var (
	hostNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	ifNameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)
)

// plan is a validated Config with every default filled in.
type plan struct {
	prefix, prefix6 netip.Prefix
	gateway         netip.Addr
	gateway6        netip.Addr // invalid without prefix6
	hosts           []HostSpec // MAC left nil when defaulted: it needs the bed ID
}

// validate checks cfg against the rules above and against used, the root
// namespace's addresses and routes, and returns every problem at once.
func validate(cfg Config, used []netip.Prefix) (plan, error) {
	var errs []error
	bad := func(sentinel error, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), sentinel))
	}
	p := plan{prefix: cfg.Prefix.Masked(), prefix6: cfg.Prefix6.Masked()}

	switch {
	case !cfg.Prefix.IsValid():
		bad(ErrInvalid, "prefix: missing")
	case !cfg.Prefix.Addr().Is4():
		bad(ErrInvalid, "prefix: %s is not IPv4", cfg.Prefix)
	case !insideAny(p.prefix, privateV4):
		bad(ErrNotPrivate, "prefix: %s is not inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16", cfg.Prefix)
	case p.prefix.Bits() > 29:
		bad(ErrInvalid, "prefix: %s is smaller than a /29", cfg.Prefix)
	default:
		if q, ok := overlapping(p.prefix, used); ok {
			bad(ErrOverlap, "prefix: %s overlaps %s in the root namespace", cfg.Prefix, q)
		}
		p.gateway = p.prefix.Addr().Next()
	}
	if cfg.Prefix6.IsValid() {
		switch {
		case !cfg.Prefix6.Addr().Is6() || cfg.Prefix6.Addr().Is4In6():
			bad(ErrInvalid, "prefix6: %s is not IPv6", cfg.Prefix6)
		case !insideAny(p.prefix6, []netip.Prefix{privateV6}):
			bad(ErrNotPrivate, "prefix6: %s is not inside fd00::/8", cfg.Prefix6)
		case p.prefix6.Bits() > 120:
			bad(ErrInvalid, "prefix6: %s is smaller than a /120", cfg.Prefix6)
		default:
			if q, ok := overlapping(p.prefix6, used); ok {
				bad(ErrOverlap, "prefix6: %s overlaps %s in the root namespace", cfg.Prefix6, q)
			}
			p.gateway6 = p.prefix6.Addr().Next()
		}
	}
	if len(cfg.Hosts) > maxHosts {
		bad(ErrInvalid, "hosts: %d hosts, at most %d", len(cfg.Hosts), maxHosts)
	}

	names := map[string]int{}
	macs := map[string]int{}
	addrs := map[netip.Addr]int{}
	for i, h := range cfg.Hosts {
		at := fmt.Sprintf("hosts[%d]", i)
		if !hostNameRE.MatchString(h.Name) || h.Name == "sw" {
			bad(ErrInvalid, "%s.name: %q is not 1-32 letters, digits, '-' or '_' (and not \"sw\")", at, h.Name)
		} else if j, dup := names[h.Name]; dup {
			bad(ErrInvalid, "%s.name: %q repeats hosts[%d]", at, h.Name, j)
		} else {
			names[h.Name] = i
		}
		if h.NIC == "" {
			h.NIC = defaultNIC
		}
		if !ifNameRE.MatchString(h.NIC) || h.NIC == "lo" {
			bad(ErrInvalid, "%s.nic: %q is not a usable interface name", at, h.NIC)
		}
		if h.MAC != nil {
			switch {
			case len(h.MAC) != 6:
				bad(ErrInvalid, "%s.mac: %s is not a 48-bit MAC", at, h.MAC)
			case h.MAC[0]&1 != 0:
				bad(ErrInvalid, "%s.mac: %s is a multicast address", at, h.MAC)
			case isZero(h.MAC):
				bad(ErrInvalid, "%s.mac: %s is all zeros", at, h.MAC)
			default:
				if j, dup := macs[h.MAC.String()]; dup {
					bad(ErrInvalid, "%s.mac: %s repeats hosts[%d]", at, h.MAC, j)
				}
				macs[h.MAC.String()] = i
			}
		}
		if p.gateway.IsValid() {
			if !h.Addr.IsValid() {
				h.Addr = nth(p.prefix.Addr(), hostOffset+i)
			}
			if err := usable(h.Addr, p.prefix, p.gateway); err != nil {
				bad(err, "%s.addr", at)
			} else if j, dup := addrs[h.Addr]; dup {
				bad(ErrInvalid, "%s.addr: %s repeats hosts[%d]", at, h.Addr, j)
			}
			addrs[h.Addr] = i
		}
		if p.gateway6.IsValid() {
			if !h.Addr6.IsValid() {
				h.Addr6 = nth(p.prefix6.Addr(), hostOffset+i)
			}
			if err := usable(h.Addr6, p.prefix6, p.gateway6); err != nil {
				bad(err, "%s.addr6", at)
			} else if j, dup := addrs[h.Addr6]; dup {
				bad(ErrInvalid, "%s.addr6: %s repeats hosts[%d]", at, h.Addr6, j)
			}
			addrs[h.Addr6] = i
		} else if h.Addr6.IsValid() && !cfg.Prefix6.IsValid() {
			bad(ErrInvalid, "%s.addr6: %s given without prefix6", at, h.Addr6)
		}
		p.hosts = append(p.hosts, h)
	}
	if len(errs) > 0 {
		return plan{}, fmt.Errorf("test bed config: %w", errors.Join(errs...))
	}
	return p, nil
}

// usable reports why a cannot be a host address in prefix, or nil.
func usable(a netip.Addr, prefix netip.Prefix, gateway netip.Addr) error {
	switch {
	case !prefix.Contains(a):
		return fmt.Errorf("%s is outside %s: %w", a, prefix, ErrOutsideRange)
	case a == prefix.Addr():
		return fmt.Errorf("%s is the network address of %s: %w", a, prefix, ErrInvalid)
	case a == gateway:
		return fmt.Errorf("%s is the bed's gateway: %w", a, ErrInvalid)
	case a.Is4() && a == lastAddr(prefix):
		return fmt.Errorf("%s is the broadcast address of %s: %w", a, prefix, ErrInvalid)
	}
	return nil
}

// insideAny reports whether p lies wholly inside one of ranges.
func insideAny(p netip.Prefix, ranges []netip.Prefix) bool {
	for _, r := range ranges {
		if p.Bits() >= r.Bits() && r.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// overlapping returns the first of used that overlaps p. Default routes are
// skipped: every subnet overlaps them, and a bed's addresses never reach the
// root namespace anyway.
func overlapping(p netip.Prefix, used []netip.Prefix) (netip.Prefix, bool) {
	for _, q := range used {
		if q.Bits() == 0 {
			continue
		}
		if p.Overlaps(q) {
			return q, true
		}
	}
	return netip.Prefix{}, false
}

// nth returns a + n.
func nth(a netip.Addr, n int) netip.Addr {
	for range n {
		a = a.Next()
	}
	return a
}

// lastAddr returns the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := range b {
		hostBits := len(b)*8 - p.Bits() - (len(b)-1-i)*8
		switch {
		case hostBits >= 8:
			b[i] = 0xff
		case hostBits > 0:
			b[i] |= byte(1)<<hostBits - 1
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
