package validation

import (
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// ErrNoMatchingCIDR is returned when no host interface holds an address
// in the subnet of a VIP.
var ErrNoMatchingCIDR = errors.New("no suitable matching CIDR found")

// UsableInterface reports whether assisted keeps an inventory interface:
// types physical, vlan, bond and "" (older agents) are kept; any other type
// (a bridge, a tun, the loopback "device") only when virtual interfaces are
// allowed (assisted's ENABLE_VIRTUAL_INTERFACES; transcript §7.1).
func UsableInterface(i *wire.Interface, allowVirtual bool) bool {
	if i == nil {
		return false
	}
	switch i.Type {
	case "", "physical", "vlan", "bond":
		return true
	}
	return allowVirtual
}

// FilterInterfaces returns the interfaces UsableInterface keeps. The
// service stores an inventory with only these.
func FilterInterfaces(ifaces []*wire.Interface, allowVirtual bool) []*wire.Interface {
	out := make([]*wire.Interface, 0, len(ifaces))
	for _, i := range ifaces {
		if UsableInterface(i, allowVirtual) {
			out = append(out, i)
		}
	}
	return out
}

// isIPv4 and isIPv6 classify an address or CIDR string the way assisted's
// network.IsIPv4Addr / IsIPV4CIDR do: by the separator it contains.
func isIPv4(s string) bool { return strings.Contains(s, ".") }
func isIPv6(s string) bool { return strings.Contains(s, ":") }

// familyAddresses returns the interface's addresses of one family.
func familyAddresses(i *wire.Interface, v4 bool) []string {
	if v4 {
		return i.IPv4Addresses
	}
	return i.IPv6Addresses
}

// CalculateMachineNetworkCIDR is assisted's machine network derivation for
// cluster-managed networking without VIP DHCP: take the API VIP (else the
// ingress VIP), walk the hosts in order and their usable interfaces, and
// return the network of the first interface address whose subnet holds the
// VIP. With neither VIP it returns "". Without a match it returns "" or,
// when matchRequired, an error wrapping ErrNoMatchingCIDR.
func CalculateMachineNetworkCIDR(apiVIP, ingressVIP string, hosts []HostEntry, allowVirtual, matchRequired bool) (string, error) {
	vip := apiVIP
	if vip == "" {
		vip = ingressVIP
	}
	if vip == "" {
		return "", nil
	}
	ip := net.ParseIP(vip)
	if ip == nil {
		return "", fmt.Errorf("could not parse VIP ip %s", vip)
	}
	v4 := isIPv4(vip)
	for _, h := range hosts {
		if h.Inventory == nil {
			continue
		}
		for _, i := range h.Inventory.Interfaces {
			if !UsableInterface(i, allowVirtual) {
				continue
			}
			for _, a := range familyAddresses(i, v4) {
				if _, n, err := net.ParseCIDR(a); err == nil && n.Contains(ip) {
					return n.String(), nil
				}
			}
		}
	}
	if !matchRequired {
		return "", nil
	}
	return "", fmt.Errorf("%w for VIP %s", ErrNoMatchingCIDR, vip)
}

// inventoryNetworks returns the distinct networks of the hosts' usable
// interface addresses, sorted (assisted's order is a map's).
func inventoryNetworks(hosts []HostEntry, allowVirtual bool) []string {
	set := map[string]bool{}
	for _, h := range hosts {
		if h.Inventory == nil {
			continue
		}
		for _, i := range h.Inventory.Interfaces {
			if !UsableInterface(i, allowVirtual) {
				continue
			}
			for _, a := range append(append([]string{}, i.IPv4Addresses...), i.IPv6Addresses...) {
				if _, n, err := net.ParseCIDR(a); err == nil {
					set[n.String()] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// isDefaultRoute: a gateway that is set and specified, to an unspecified
// destination. A destination that does not parse is an error, as in assisted.
func isDefaultRoute(r *wire.Route) (bool, error) {
	gw := net.ParseIP(r.Gateway)
	if gw == nil {
		return false, nil
	}
	dst := net.ParseIP(r.Destination)
	if dst == nil {
		return false, fmt.Errorf("unable to parse destination IP: %s", r.Destination)
	}
	return dst.IsUnspecified() && !gw.IsUnspecified(), nil
}

// Linux address families as the agent reports them in routes.
const (
	familyInet  = 2
	familyInet6 = 10
)

// defaultRouteByFamily returns the default route of one family with the
// lowest metric (the last of equals, as assisted), or nil.
func defaultRouteByFamily(routes []*wire.Route, ipv6 bool) *wire.Route {
	fam := int32(familyInet)
	if ipv6 {
		fam = familyInet6
	}
	var best *wire.Route
	for _, r := range routes {
		if r.Family != fam {
			continue
		}
		if ok, _ := isDefaultRoute(r); !ok {
			continue
		}
		if best != nil && best.Metric < r.Metric {
			continue
		}
		best = r
	}
	return best
}

// AutoAssignMachineNetworks is what assisted's cluster monitor does to a
// cluster's machine networks (internal/cluster/cluster.go
// autoAssignMachineNetworkCidr). When changed is true the caller replaces
// the cluster's machine networks with networks, which may be empty: with
// cluster-managed networking and no host holding a VIP's subnet the monitor
// clears networks the user had set (transcript §7.2).
//
//   - Only clusters in pending-for-input or insufficient are touched.
//   - VIP DHCP: when the hosts' interfaces span exactly one network, it is
//     the machine network.
//   - Single node: once, while no machine network is set, and only when the
//     cluster and service networks have the same address families: per
//     family, the single host network of that family, or with several the
//     one holding the default gateway of the first host.
//   - User-managed networking (multi-node) and a user-managed load balancer:
//     never; the user sets the networks.
//   - Otherwise: the network derived from the first API/ingress VIP pair by
//     CalculateMachineNetworkCIDR, and from the second pair for dual stack.
func (v *Validator) AutoAssignMachineNetworks(c *wire.Cluster, hosts []HostEntry) (networks []string, changed bool, err error) {
	if c.Status != wire.ClusterStatusPendingForInput && c.Status != wire.ClusterStatusInsufficient {
		return nil, false, nil
	}
	current := machineNetworkCIDRs(c)
	at := func(i int) string {
		if i < len(current) {
			return current[i]
		}
		return ""
	}
	switch {
	case c.VIPDHCPAllocation != nil && *c.VIPDHCPAllocation:
		nets := inventoryNetworks(hosts, v.AllowVirtualInterfaces)
		if len(nets) == 1 && nets[0] != at(0) {
			return nets, true, nil
		}
		return nil, false, nil
	case isSNO(c):
		return v.snoMachineNetworks(c, hosts)
	case isUMN(c), userManagedLB(c):
		return nil, false, nil
	}
	primary, err := CalculateMachineNetworkCIDR(vipAt(c.APIVIPs, 0), ingressAt(c.IngressVIPs, 0), hosts, v.AllowVirtualInterfaces, false)
	if err != nil {
		return nil, false, err
	}
	if primary == "" && dualStack(c) {
		// A cluster without hosts yet keeps its dual-stack networks.
		return nil, false, nil
	}
	secondary, err := CalculateMachineNetworkCIDR(vipAt(c.APIVIPs, 1), ingressAt(c.IngressVIPs, 1), hosts, v.AllowVirtualInterfaces, false)
	if err != nil {
		return nil, false, err
	}
	if primary == at(0) && (secondary == "" || secondary == at(1)) {
		return nil, false, nil
	}
	for _, n := range []string{primary, secondary} {
		if n != "" {
			networks = append(networks, n)
		}
	}
	return networks, true, nil
}

func (v *Validator) snoMachineNetworks(c *wire.Cluster, hosts []HostEntry) ([]string, bool, error) {
	if len(machineNetworkCIDRs(c)) > 0 {
		return nil, false, nil
	}
	clusterFams, err := families(clusterNetworkCIDRs(c))
	if err != nil {
		return nil, false, err
	}
	clusterFams = canonFamilies(clusterFams)
	serviceFams, err := families(serviceNetworkCIDRs(c))
	if err != nil {
		return nil, false, err
	}
	if !sameFamilies(clusterFams, serviceFams) {
		return nil, false, nil
	}
	byFam := map[int][]string{}
	for _, n := range inventoryNetworks(hosts, v.AllowVirtualInterfaces) {
		byFam[familyOf(n)] = append(byFam[familyOf(n)], n)
	}
	var pending []string
	for _, fam := range clusterFams {
		cidrs := byFam[fam]
		switch len(cidrs) {
		case 0:
			return nil, false, nil
		case 1:
			pending = append(pending, cidrs[0])
		default:
			if len(hosts) == 0 || hosts[0].Inventory == nil {
				return nil, false, errors.New("can not find cidr by route: no inventory for the first host")
			}
			n, err := defaultRouteNetwork(hosts[0].Inventory, cidrs, fam == 6)
			if err != nil {
				return nil, false, err
			}
			pending = append(pending, n)
		}
	}
	return pending, true, nil
}

// defaultRouteNetwork returns the network among cidrs that holds the
// gateway of the host's lowest-metric default route of the family.
func defaultRouteNetwork(inv *wire.Inventory, cidrs []string, ipv6 bool) (string, error) {
	best := &wire.Route{Metric: math.MaxInt32}
	found := false
	for _, r := range inv.Routes {
		ok, err := isDefaultRoute(r)
		if err != nil {
			return "", fmt.Errorf("find default route: %w", err)
		}
		if !ok || isIPv6(r.Gateway) != ipv6 || r.Metric >= best.Metric {
			continue
		}
		best, found = r, true
	}
	if !found {
		return "", errors.New("could not find default route")
	}
	gw := net.ParseIP(best.Gateway)
	for _, c := range cidrs {
		if _, n, err := net.ParseCIDR(c); err == nil && n.Contains(gw) {
			return c, nil
		}
	}
	name := "IPv4"
	if ipv6 {
		name = "IPv6"
	}
	return "", fmt.Errorf("missing default cidr for %s", name)
}

// belongsToNetwork reports whether a usable interface of inv has an address
// of the network's family inside it.
func belongsToNetwork(inv *wire.Inventory, n *net.IPNet, allowVirtual bool) bool {
	v4 := n.IP.To4() != nil
	for _, i := range inv.Interfaces {
		if !UsableInterface(i, allowVirtual) {
			continue
		}
		for _, a := range familyAddresses(i, v4) {
			if ip, _, err := net.ParseCIDR(a); err == nil && n.Contains(ip) {
				return true
			}
		}
	}
	return false
}

// parseMachineNetworks parses the cluster's machine networks; ok is false
// when there are none or one does not parse (assisted then treats a host as
// belonging to none).
func parseMachineNetworks(c *wire.Cluster) (nets []*net.IPNet, ok bool) {
	cidrs := machineNetworkCIDRs(c)
	if len(cidrs) == 0 {
		return nil, false
	}
	for _, s := range cidrs {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return nil, false
		}
		nets = append(nets, n)
	}
	return nets, true
}

func vipAt(v []*wire.APIVIP, i int) string {
	if i < len(v) && v[i] != nil {
		return string(v[i].IP)
	}
	return ""
}

func ingressAt(v []*wire.IngressVIP, i int) string {
	if i < len(v) && v[i] != nil {
		return string(v[i].IP)
	}
	return ""
}
