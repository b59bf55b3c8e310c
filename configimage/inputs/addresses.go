package inputs

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// Rules on the hosts' static addresses (their networkConfig) against each
// other, the machine networks, the VIPs and the rendezvous IP.
//
// openshift-install has none of them: it hands the addresses to
// assisted-service, whose host and cluster validations (belongs-to-machine-
// cidr, no-ip-collisions-in-network, api-vips-valid / ingress-vips-valid)
// fail the install later, on the hosts, after the image was built and
// booted. The messages are therefore ours, in the installer's field.Error
// form, and say which host and which line conflict.

// hostAddressing is what a host's networkConfig says about its addresses,
// read from the nmstate nodes as nmstate applies them: a stack counts only
// when `enabled` is true (nmstate's default is false) on an interface that
// is not down, absent or ignored; addresses of a stack with DHCP (or IPv6
// autoconf) are not static. Best effort: the nmstate rules report what is
// malformed.
type hostAddressing struct {
	static  []staticAddr    // document order, each address once
	dynamic [2]bool         // [0] IPv4, [1] IPv6: some interface takes an address from DHCP or autoconf
	names   map[string]bool // interface names the document configures, whatever their state
	macs    map[string]bool // their mac-address values, normalised
}

type staticAddr struct {
	addr netip.Addr
	path string // field path of the ip value
}

// famIdx indexes hostAddressing.dynamic.
func famIdx(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

func readAddressing(n *yaml.Node, path string) hostAddressing {
	out := hostAddressing{names: map[string]bool{}, macs: map[string]bool{}}
	ifaces := deref(mapGet(deref(n), "interfaces"))
	if ifaces == nil || ifaces.Kind != yaml.SequenceNode {
		return out
	}
	seen := map[netip.Addr]bool{}
	for i, item := range ifaces.Content {
		ifc := deref(item)
		if name := scalar(mapGet(ifc, "name")); name != "" {
			out.names[name] = true
		}
		if mac := scalar(mapGet(ifc, "mac-address")); mac != "" {
			out.macs[normalMAC(mac)] = true
		}
		switch strings.ToLower(scalar(mapGet(ifc, "state"))) {
		case "down", "absent", "ignore":
			continue
		}
		if scalar(mapGet(ifc, "controller")) != "" {
			continue // a port: nmstate gives it no addresses
		}
		for f, name := range []string{"ipv4", "ipv6"} {
			sec := deref(mapGet(ifc, name))
			if !flexTrue(mapGet(sec, "enabled")) {
				continue
			}
			if flexTrue(mapGet(sec, "dhcp")) || (f == 1 && flexTrue(mapGet(sec, "autoconf"))) {
				out.dynamic[f] = true
				continue
			}
			addrs := deref(mapGet(sec, "address"))
			if addrs == nil || addrs.Kind != yaml.SequenceNode {
				continue
			}
			for j, a := range addrs.Content {
				ip, ok := parseAddr(scalar(mapGet(deref(a), "ip")))
				if !ok || seen[ip] {
					continue
				}
				seen[ip] = true
				out.static = append(out.static, staticAddr{addr: ip,
					path: fmt.Sprintf("%s.interfaces[%d].%s.address[%d].ip", path, i, name, j)})
			}
		}
	}
	return out
}

// deref follows a few alias hops (the loader bounded the document).
func deref(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode && hops < 8; hops++ {
		n = n.Alias
	}
	return n
}

// scalar is a scalar node's value, "" for anything else.
func scalar(n *yaml.Node) string {
	if n = deref(n); n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// flexTrue reads a boolean as nmstate does (true, yes, on, y, 1).
func flexTrue(n *yaml.Node) bool {
	switch strings.ToLower(scalar(n)) {
	case "true", "yes", "on", "y", "1":
		return true
	}
	return false
}

// where names a position for a message pointing at another place: the
// file:line:col of path in src.
func where(tree *report.Tree, defaultFile, path string) string {
	e := entryAt(tree, defaultFile, path, report.Error, "")
	return strings.TrimSuffix(report.Entry{File: e.File, Line: e.Line, Column: e.Column}.String(), ": ")
}

// addressRules runs the address rules over the hosts the install uses.
func (v *validator) addressRules(hosts []hostView) []hostAddressing {
	nets := make([]hostAddressing, len(hosts))
	for i, h := range hosts {
		if h.network != nil && h.network.Kind == yaml.MappingNode {
			nets[i] = readAddressing(h.network, h.path+".networkConfig")
		}
	}
	v.duplicateAddresses(hosts, nets)
	if v.ic != nil && v.ic.Networking != nil {
		v.addressesInMachineNetworks(hosts, nets)
		v.vipsNotHostAddresses(hosts, nets)
	}
	return nets
}

// duplicateAddresses: a static address on two hosts (assisted-service
// reports it on the hosts as no-ip-collisions-in-network).
func (v *validator) duplicateAddresses(hosts []hostView, nets []hostAddressing) {
	type owner struct {
		host int
		path string
	}
	first := map[netip.Addr]owner{}
	for i, h := range hosts {
		for _, a := range nets[i].static {
			o, dup := first[a.addr]
			if !dup {
				first[a.addr] = owner{i, a.path}
				continue
			}
			other := hosts[o.host]
			h.errf(a.path, msgDuplicate(a.addr.String())+fmt.Sprintf(
				": hosts %s and %s both have this static address (%s's at %s); each host needs its own",
				other.label(), h.label(), other.label(), where(other.tree, other.file(), o.path)))
		}
	}
}

// addressesInMachineNetworks: a host whose static addresses all lie outside
// the machine networks, with no DHCP in a family that has one, can never
// pass assisted-service's belongs-to-machine-cidr validation. A host with
// one address inside may have others outside (a storage network). Multi-node
// clusters with user-managed networking (platform none or external) are
// exempt, as in assisted-service; their node zero is held to the machine
// networks by the rendezvousIP rule.
func (v *validator) addressesInMachineNetworks(hosts []hostView, nets []hostAddressing) {
	machine := parsedOnly(v.parsedNets().machine)
	if len(machine) == 0 {
		return
	}
	masters, arbiters, workers := v.ic.ReplicaCounts()
	switch v.ic.Platform.Name() {
	case PlatformNone, PlatformExternal:
		if masters+arbiters+workers > 1 {
			return
		}
	}
	var machineFam [2]bool
	for _, c := range machine {
		machineFam[famIdx(c.prefix.Addr())] = true
	}
	for i, h := range hosts {
		n := nets[i]
		if len(n.static) == 0 || (n.dynamic[0] && machineFam[0]) || (n.dynamic[1] && machineFam[1]) {
			continue
		}
		inside := false
		for _, a := range n.static {
			inside = inside || inAny(a.addr, machine)
		}
		if inside {
			continue
		}
		for _, a := range n.static {
			h.errf(a.path, msgInvalid(a.addr.String(), "IP expected to be in one of the machine networks: "+joinCIDRs(machine)+
				fmt.Sprintf("; host %s has no address in them, static or from DHCP, so it cannot join the cluster", h.label())))
		}
	}
}

// vipsNotHostAddresses: an API or ingress VIP that is a host's static
// address, or the rendezvous IP (node zero's address even when DHCP gives
// it), would be answered by that host instead of the cluster's load
// balancer (assisted-service: "api vips <ip> is already in use").
func (v *validator) vipsNotHostAddresses(hosts []hostView, nets []hostAddressing) {
	base := ""
	switch p := v.ic.Platform; {
	case p.BareMetal != nil:
		base = "platform.baremetal"
	case p.VSphere != nil:
		base = "platform.vsphere"
	case p.Nutanix != nil:
		base = "platform.nutanix"
	default:
		return
	}
	type owner struct {
		host int
		path string
	}
	owners := map[netip.Addr]owner{}
	for i := range hosts {
		for _, a := range nets[i].static {
			if _, ok := owners[a.addr]; !ok {
				owners[a.addr] = owner{i, a.path}
			}
		}
	}
	var rendezvous netip.Addr
	if v.ac != nil {
		rendezvous, _ = parseAddr(v.ac.RendezvousIP)
	}
	api, ingress := v.ic.Platform.VIPs()
	for _, l := range []struct {
		kind, field string
		list        []string
	}{{"API", "apiVIPs", api}, {"Ingress", "ingressVIPs", ingress}} {
		for i, vip := range l.list {
			a, ok := parseAddr(vip)
			if !ok {
				continue // reported by the VIP rules
			}
			path := report.Index(base+"."+l.field, i)
			if o, taken := owners[a]; taken {
				h := hosts[o.host]
				v.icErr(path, msgInvalid(vip, fmt.Sprintf("VIP for %s must not be a host's address; host %s has it at %s",
					l.kind, h.label(), where(h.tree, h.file(), o.path))))
			} else if rendezvous.IsValid() && a == rendezvous {
				v.icErr(path, msgInvalid(vip, fmt.Sprintf("VIP for %s must not be the rendezvousIP (%s): node zero has that address",
					l.kind, where(v.ac.tree, AgentConfigFile, "rendezvousIP"))))
			}
		}
	}
}

// allStatic reports whether no host can take the address a from DHCP: the
// files list every host the cluster has (as many as the replicas), each
// with a networkConfig that configures every NIC the host lists (an
// unconfigured NIC gets NetworkManager's default DHCP profile) and takes no
// address of a's family from DHCP or autoconf.
func (v *validator) allStatic(hosts []hostView, nets []hostAddressing, a netip.Addr) bool {
	if v.ic == nil || len(hosts) == 0 {
		return false // hosts the files do not list boot with DHCP
	}
	masters, arbiters, workers := v.ic.ReplicaCounts()
	if int64(len(hosts)) < masters+arbiters+workers {
		return false
	}
	for i, h := range hosts {
		n := nets[i]
		if h.network == nil || n.dynamic[famIdx(a)] {
			return false
		}
		for _, ifc := range h.interfaces {
			if ifc.name != "" && !n.names[ifc.name] && !n.macs[normalMAC(ifc.mac)] {
				return false
			}
		}
	}
	return true
}
