package inventory

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Address families as the agent reports them (unix.AF_INET, unix.AF_INET6).
const (
	familyV4 = 2
	familyV6 = 10
)

// Route flags of /proc/net/ipv6_route (include/uapi/linux/route.h, ipv6_route.h).
const (
	rtfReject  = 0x0200
	rtfAnycast = 0x00100000
	rtfCache   = 0x01000000
	rtfLocal   = 0x80000000
)

// routes returns the IPv4 then the IPv6 routes, shaped like the agent's
// netlink dump of the main table (src/inventory/routes.go): destination
// without prefix length ("0.0.0.0"/"::" for default), the gateway if any,
// the metric.
func (c *collector) routes(ifaces []*wire.Interface) []*wire.Route {
	if len(c.o.Addresses) > 0 {
		return overrideRoutes(ifaces, c.o.Addresses)
	}
	var out []*wire.Route
	if s, err := c.readRoutes("/proc/net/route"); err == nil {
		out = append(out, parseRoutes4(s)...)
	} else {
		c.log.Debug("read IPv4 routes", "err", err)
	}
	if s, err := c.readRoutes("/proc/net/ipv6_route"); err == nil {
		out = append(out, parseRoutes6(s)...)
	} else {
		c.log.Debug("read IPv6 routes", "err", err)
	}
	return out
}

// readRoutes reads a route table from the root, or with Options.LiveRoutes
// from the running system: routes, like addresses (see liveAddresses),
// belong to the network the host is on, not to its hardware. A test-bed
// host in a network namespace sees its namespace's.
func (c *collector) readRoutes(p string) (string, error) {
	if c.o.LiveRoutes {
		b, err := os.ReadFile(p)
		return string(b), err
	}
	return c.readRaw(p)
}

// parseRoutes4 reads /proc/net/route, which lists the main table. Addresses
// are the raw 32-bit values in host byte order, printed in hex.
func parseRoutes4(s string) []*wire.Route {
	var out []*wire.Route
	for i, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 8 {
			continue // header
		}
		dst, ok1 := procAddr4(f[1])
		gw, ok2 := procAddr4(f[2])
		metric, err := strconv.ParseInt(f[6], 10, 32)
		if !ok1 || !ok2 || err != nil {
			continue
		}
		r := &wire.Route{Interface: f[0], Destination: dst.String(), Family: familyV4, Metric: int32(metric)}
		if !gw.IsUnspecified() {
			r.Gateway = gw.String()
		}
		out = append(out, r)
	}
	return out
}

func procAddr4(h string) (netip.Addr, bool) {
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return netip.Addr{}, false
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(v))
	return netip.AddrFrom4(b), true
}

// parseRoutes6 reads /proc/net/ipv6_route. It lists every table, so the
// entries netlink would not show for the main table are dropped: local and
// anycast addresses, cached and reject (unreachable) routes, multicast.
func parseRoutes6(s string) []*wire.Route {
	var out []*wire.Route
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		dst, ok1 := procAddr6(f[0])
		gw, ok2 := procAddr6(f[4])
		metric, err1 := strconv.ParseUint(f[5], 16, 32)
		flags, err2 := strconv.ParseUint(f[8], 16, 32)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			continue
		}
		if flags&(rtfReject|rtfAnycast|rtfCache|rtfLocal) != 0 || dst.IsMulticast() {
			continue
		}
		r := &wire.Route{Interface: f[9], Destination: dst.String(), Family: familyV6, Metric: int32(metric)}
		if !gw.IsUnspecified() {
			r.Gateway = gw.String()
		}
		out = append(out, r)
	}
	return out
}

func procAddr6(h string) (netip.Addr, bool) {
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != 16 {
		return netip.Addr{}, false
	}
	return netip.AddrFrom16([16]byte(b)), true
}

// overrideRoutes are the routes of a host whose addresses are given: per
// family a default route via the first host address of the first network
// (so has-default-route holds), then one route per network, all on the
// interface that carries the addresses. Metrics follow the kernel's
// defaults: 0 for IPv4, 1024 for an IPv6 default route, 256 for an IPv6
// prefix route.
func overrideRoutes(ifaces []*wire.Interface, addrs []netip.Prefix) []*wire.Route {
	var nic string
	for _, i := range ifaces {
		if len(i.IPv4Addresses)+len(i.IPv6Addresses) > 0 {
			nic = i.Name
			break
		}
	}
	if nic == "" {
		return nil
	}
	var v4, v6 []*wire.Route
	seen := map[netip.Prefix]bool{}
	for _, p := range addrs {
		if !p.IsValid() || p.Addr().IsLinkLocalUnicast() {
			continue
		}
		network := p.Masked()
		if seen[network] {
			continue
		}
		seen[network] = true
		gw := network.Addr().Next()
		if !network.Contains(gw) {
			gw = p.Addr()
		}
		if p.Addr().Is4() {
			if len(v4) == 0 {
				v4 = append(v4, &wire.Route{Interface: nic, Destination: "0.0.0.0", Gateway: gw.String(), Family: familyV4})
			}
			v4 = append(v4, &wire.Route{Interface: nic, Destination: network.Addr().String(), Family: familyV4})
		} else {
			if len(v6) == 0 {
				v6 = append(v6, &wire.Route{Interface: nic, Destination: "::", Gateway: gw.String(), Family: familyV6, Metric: 1024})
			}
			v6 = append(v6, &wire.Route{Interface: nic, Destination: network.Addr().String(), Family: familyV6, Metric: 256})
		}
	}
	return append(v4, v6...)
}
