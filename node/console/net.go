package console

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vishvananda/netlink"

	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/tui"
)

// NetState reads a host's network for the console's network page: links,
// addresses and main-table routes over netlink (h: nil for this process's
// namespace, a handle for another), the resolver from root/etc/resolv.conf
// and the hostname from the kernel (root "/") or root/etc/hostname.
func NetState(h *netlink.Handle, root string) (tui.NetState, error) {
	if h == nil {
		h = &netlink.Handle{}
	}
	var st tui.NetState
	st.Hostname = hostnameOf(root)
	links, err := h.LinkList()
	if err != nil {
		return st, fmt.Errorf("network: links: %w", err)
	}
	names := map[int]string{}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: 254}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return st, fmt.Errorf("network: routes: %w", err)
	}
	defaults := map[string]bool{}
	for _, r := range routes {
		if r.Type != 1 { // RTN_UNICAST: leave out local, broadcast, unreachable
			continue
		}
		nr := tui.NetRoute{Interface: names[r.LinkIndex], Metric: r.Priority}
		if r.Dst != nil {
			if p, ok := prefixOf(r.Dst); ok && p.Bits() > 0 {
				nr.Destination = p
			}
		}
		if r.Gw != nil {
			nr.Gateway, _ = netip.AddrFromSlice(r.Gw)
			nr.Gateway = nr.Gateway.Unmap()
		}
		if !nr.Destination.IsValid() {
			defaults[nr.Interface] = true
		}
		st.Routes = append(st.Routes, nr)
	}
	for _, l := range links {
		a := l.Attrs()
		ni := tui.NetInterface{Name: a.Name, Type: linkType(l), MTU: a.MTU, State: a.OperState.String(), Default: defaults[a.Name]}
		if len(a.HardwareAddr) > 0 {
			ni.MAC = a.HardwareAddr.String()
		}
		if ni.State == "unknown" && a.Flags&net.FlagUp != 0 {
			ni.State = "up" // loopback and dummies have no carrier to report
		}
		addrs, err := h.AddrList(l, netlink.FAMILY_ALL)
		if err != nil {
			return st, fmt.Errorf("network: addresses of %s: %w", a.Name, err)
		}
		for _, ad := range addrs {
			if p, ok := prefixOf(ad.IPNet); ok {
				ni.Addrs = append(ni.Addrs, p)
			}
		}
		st.Interfaces = append(st.Interfaces, ni)
	}
	sort.SliceStable(st.Interfaces, func(i, j int) bool {
		return st.Interfaces[i].Default && !st.Interfaces[j].Default
	})
	st.DNS = resolvConf(filepath.Join(root, "etc/resolv.conf"))
	return st, nil
}

// linkType names a link as nmstate does: a physical NIC is "ethernet".
func linkType(l netlink.Link) string {
	switch t := l.Type(); t {
	case "device":
		if l.Attrs().Flags&net.FlagLoopback != 0 {
			return "loopback"
		}
		return "ethernet"
	case "bond", "vlan", "bridge", "veth", "dummy", "macvlan", "vxlan", "tun":
		return t
	default:
		return t
	}
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), bits), true
}

// resolvConf reads nameserver and search lines; a missing file is no DNS.
func resolvConf(path string) tui.NetDNS {
	var d tui.NetDNS
	b, err := os.ReadFile(path)
	if err != nil {
		return d
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ";") {
			continue
		}
		switch f[0] {
		case "nameserver":
			d.Servers = append(d.Servers, f[1])
		case "search", "domain":
			d.Search = append(d.Search, f[1:]...)
		}
	}
	return d
}

// hostnameOf is the running hostname on the live host, else the one the
// hostname stage wrote under root.
func hostnameOf(root string) string {
	if root == "/" {
		if h, err := os.Hostname(); err == nil {
			return h
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/hostname")); err == nil {
		return strings.TrimSpace(string(b))
	}
	return "localhost"
}

// localAddrs lists this host's addresses that could be node zero's:
// neither loopback nor link-local, IPv4 first. The links are the node-zero
// stage's (boot.SystemLinks), so the page offers what that stage matches.
func localAddrs() ([]netip.Addr, error) {
	links, err := boot.SystemLinks{}.Links()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, l := range links {
		for _, p := range l.Addrs {
			ip := p.Addr()
			if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() {
				continue
			}
			out = append(out, ip)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Is4() && !out[j].Is4() })
	return out, nil
}
