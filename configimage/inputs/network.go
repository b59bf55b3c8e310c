package inputs

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
)

// OVN-Kubernetes default internal subnets (pkg/validate), which no cluster
// network may overlap when networkType is OVNKubernetes.
var ovnDefaults = []struct {
	kind string
	v4   cidr
	v6   cidr
}{
	{"internal", parseCIDR("100.64.0.0/16"), parseCIDR("fd98::/64")},
	{"transit", parseCIDR("100.88.0.0/16"), parseCIDR("fd97::/64")},
	{"masquerade", parseCIDR("169.254.0.0/17"), parseCIDR("fd69::/112")},
}

// nets holds the parsed networking lists; entries that did not parse are
// reported once, here, and skipped by every later rule.
type nets struct {
	machine, service, cluster []cidr
}

func (v *validator) parsedNets() nets {
	n := v.ic.Networking
	var out nets
	for _, m := range n.MachineNetwork {
		out.machine = append(out.machine, parseCIDR(m.CIDR))
	}
	for _, s := range n.ServiceNetwork {
		out.service = append(out.service, parseCIDR(s))
	}
	for _, c := range n.ClusterNetwork {
		out.cluster = append(out.cluster, parseCIDR(c.CIDR))
	}
	return out
}

// networking is validateNetworking and validateNetworkingIPVersion.
func (v *validator) networking() {
	n := v.ic.Networking
	if n == nil {
		v.icErr("networking", msgRequired("networking is required"))
		return
	}
	const base = "networking"
	if n.NetworkType == "" {
		v.icErr(base+".networkType", msgRequired("network provider type required"))
	}
	if strings.EqualFold(n.NetworkType, "OpenShiftSDN") {
		v.icErr(base+".networkType", msgInvalid(n.NetworkType, "networkType OpenShiftSDN is not supported, please use OVNKubernetes"))
	} else if strings.EqualFold(n.NetworkType, "Kuryr") {
		v.icErr(base+".networkType", msgInvalid(n.NetworkType, "networkType Kuryr is not supported on OpenShift later than 4.14"))
	}
	ovn := strings.EqualFold(n.NetworkType, "OVNKubernetes")
	p := v.parsedNets()

	if len(p.machine) == 0 {
		v.icErr(base+".machineNetwork", msgRequired("at least one machine network is required"))
	}
	for i, m := range p.machine {
		path := report.Index(base+".machineNetwork", i) + ".cidr"
		if !v.subnet(path, m, ovn) {
			continue
		}
		for j, o := range p.machine[:i] {
			if overlaps(m, o) {
				v.icErr(path, msgInvalid(m.String(), fmt.Sprintf("machine network must not overlap with machine network %d", j)))
			}
		}
	}

	if len(p.service) == 0 {
		v.icErr(base+".serviceNetwork", msgRequired("a service network is required"))
	}
	for i, s := range p.service {
		path := report.Index(base+".serviceNetwork", i)
		if !v.subnet(path, s, ovn) {
			continue
		}
		if bits := s.prefix.Bits(); s.is6() && bits < 108 {
			v.icErr(path, msgInvalid(s.String(), "an IPv6 service network must be /108 or smaller (/112 is usual)"))
		}
		for _, m := range p.machine {
			if overlaps(s, m) {
				v.icErr(path, msgInvalid(s.String(), "service network must not overlap with any of the machine networks"))
			}
		}
		for j, o := range p.service[:i] {
			if overlaps(s, o) {
				v.icErr(path, msgInvalid(s.String(), fmt.Sprintf("service network must not overlap with service network %d", j)))
			}
		}
	}

	if len(p.cluster) == 0 {
		v.icErr(base+".clusterNetwork", msgRequired("cluster network required"))
	}
	for i, c := range p.cluster {
		path := report.Index(base+".clusterNetwork", i)
		if !v.subnet(path+".cidr", c, ovn) {
			continue
		}
		for _, m := range p.machine {
			if overlaps(c, m) {
				v.icErr(path+".cidr", msgInvalid(c.String(), "cluster network must not overlap with any of the machine networks"))
			}
		}
		for j, s := range p.service {
			if overlaps(c, s) {
				v.icErr(path+".cidr", msgInvalid(c.String(), fmt.Sprintf("cluster network must not overlap with service network %d", j)))
			}
		}
		for j, o := range p.cluster[:i] {
			if overlaps(c, o) {
				v.icErr(path+".cidr", msgInvalid(c.String(), fmt.Sprintf("cluster network must not overlap with cluster network %d", j)))
			}
		}
		v.hostPrefix(path+".hostPrefix", n, i, c, p.cluster[:i], ovn)
	}
	if n.ClusterNetworkMTU != 0 {
		v.icErr(base+".clusterNetworkMTU", msgInvalid(bare(fmt.Sprint(n.ClusterNetworkMTU)), "cluster network MTU is allowed only in AWS deployments"))
	}
	v.ipFamilies(p)
}

// subnet reports a CIDR that does not parse or is not a network address,
// and OVN default-subnet overlaps; false means skip the other rules.
func (v *validator) subnet(path string, c cidr, ovn bool) bool {
	if !c.ok {
		v.icErr(path, msgInvalid(c.text, c.err.Error()))
		return false
	}
	if err := checkSubnetCIDR(c); err != nil {
		v.icErr(path, msgInvalid(c.String(), err.Error()))
		return false
	}
	if ovn {
		for _, d := range ovnDefaults {
			def := d.v4
			if c.is6() {
				def = d.v6
			}
			if overlaps(c, def) {
				v.icErr(path, msgInvalid(c.String(), fmt.Sprintf("must not overlap with OVNKubernetes default %s subnet %s", d.kind, def.String())))
			}
		}
	}
	return true
}

func (v *validator) hostPrefix(path string, n *Networking, i int, c cidr, earlier []cidr, ovn bool) {
	hp := n.ClusterNetwork[i].HostPrefix
	if !ovn && hp == 0 {
		return
	}
	switch {
	case hp < 0:
		v.icErr(path, msgInvalid(bare(fmt.Sprint(hp)), "hostPrefix must be positive"))
	case int(hp) < c.prefix.Bits():
		v.icErr(path, msgInvalid(bare(fmt.Sprint(hp)), "cluster network host subnetwork prefix must not be larger size than CIDR "+c.String()))
	case !c.is6() && hp > 32, c.is6() && hp != 64:
		if c.is6() {
			v.icErr(path, msgInvalid(bare(fmt.Sprint(hp)), "cluster network host subnetwork prefix must be 64 for IPv6 networks"))
		} else {
			v.icErr(path, msgInvalid(bare(fmt.Sprint(hp)), "cluster network host subnetwork prefix must be at most 32 for IPv4 networks"))
		}
	case !c.is6():
		for j, o := range earlier {
			if o.ok && !o.is6() && n.ClusterNetwork[j].HostPrefix != hp {
				v.icErr(path, msgInvalid(bare(fmt.Sprint(hp)), "cluster network host subnetwork prefix must be the same value for IPv4 networks"))
				break
			}
		}
	}
}

type family struct{ v4, v6, primary6, seen bool }

func familyOf(list []cidr) family {
	var f family
	for _, c := range list {
		if !c.ok {
			continue
		}
		if !f.seen {
			f.seen, f.primary6 = true, c.is6()
		}
		if c.is6() {
			f.v6 = true
		} else {
			f.v4 = true
		}
	}
	return f
}

func cidrStrings(list []cidr) string {
	s := make([]string, 0, len(list))
	for _, c := range list {
		s = append(s, c.String())
	}
	return strings.Join(s, ", ")
}

// ipFamilies is validateNetworkingIPVersion: the service networks decide
// single or dual stack; dual stack needs both families in every list, and
// IPv4 first except where the platform allows IPv6-primary.
func (v *validator) ipFamilies(p nets) {
	svc := familyOf(p.service)
	switch {
	case svc.v4 && svc.v6:
		if len(p.service) != 2 {
			v.icErr("networking.serviceNetwork", msgInvalid(cidrStrings(p.service),
				"when installing dual-stack IPv4/IPv6 you must provide two service networks, one for each IP address type"))
		}
		name := v.ic.Platform.Name()
		allowV6Primary := name == PlatformBareMetal || name == PlatformVSphere
		for _, l := range []struct {
			name string
			list []cidr
		}{{"machineNetwork", p.machine}, {"serviceNetwork", p.service}, {"clusterNetwork", p.cluster}} {
			f := familyOf(l.list)
			path := "networking." + l.name
			switch {
			case f.v4 && !f.v6:
				v.icErr(path, msgInvalid(cidrStrings(l.list), "dual-stack IPv4/IPv6 requires an IPv6 network in this list"))
			case !f.v4 && f.v6:
				v.icErr(path, msgInvalid(cidrStrings(l.list), "dual-stack IPv4/IPv6 requires an IPv4 network in this list"))
			}
			if !allowV6Primary && f.v4 && f.v6 && f.primary6 {
				v.icErr(path, msgInvalid(cidrStrings(l.list), "IPv4 addresses must be listed before IPv6 addresses"))
			}
		}
	case svc.v4:
		if len(p.service) > 1 {
			v.icErr("networking.serviceNetwork", msgInvalid(cidrStrings(p.service), "only one service network can be specified"))
		}
	}
}

// vips is validateVIPsForPlatform / validateAPIAndIngressVIPs with
// usingAgentMethod=true: VIPs are required on baremetal and vsphere.
func (v *validator) vips() {
	p := v.ic.Platform
	var base string
	var required bool
	var lb *LoadBalancer
	switch {
	case p.BareMetal != nil:
		base, required, lb = "platform.baremetal", true, p.BareMetal.LoadBalancer
	case p.VSphere != nil:
		base, required, lb = "platform.vsphere", true, p.VSphere.LoadBalancer
	case p.Nutanix != nil:
		base, required, lb = "platform.nutanix", false, p.Nutanix.LoadBalancer
	default:
		return
	}
	userLB := lb != nil && lb.Type == "UserManaged"
	api, ingress := p.VIPs()
	nets := v.parsedNets()
	machine := familyOf(nets.machine)
	svc := familyOf(nets.service)
	dual := svc.v4 && svc.v6

	check := func(kind, field string, list, others []string) {
		path := base + "." + field
		switch {
		case len(list) == 0:
			if required {
				v.icErr(path, msgRequired("must specify at least one VIP for the "+kind))
			}
			if len(others) > 0 {
				if kind == "API" {
					v.icErr(path, msgRequired("must specify VIP for API, when VIP for ingress is set"))
				} else {
					v.icErr(path, msgRequired("must specify VIP for ingress, when VIP for API is set"))
				}
			}
			return
		case len(list) > 2:
			v.icErr(path, msgTooMany(len(list), 2))
			return
		}
		for i, vip := range list {
			ip := report.Index(path, i)
			if err := checkIP(vip); err != nil {
				v.icErr(ip, msgInvalid(vip, err.Error()))
				continue
			}
			if userLB {
				continue
			}
			a, _ := parseAddr(vip)
			if kind == "API" {
				for _, o := range others {
					if b, ok := parseAddr(o); ok && a == b {
						v.icErr(ip, msgInvalid(vip, "VIP for API must not be one of the Ingress VIPs"))
					}
				}
			}
			if m := parsedOnly(nets.machine); required && len(m) > 0 && !inAny(a, m) {
				v.icErr(ip, msgInvalid(vip, "IP expected to be in one of the machine networks: "+joinCIDRs(m)))
			}
		}
		if len(list) == 1 && dual && machine.seen {
			a, ok := parseAddr(list[0])
			if ok && a.Is6() != machine.primary6 {
				v.icErr(report.Index(path, 0), msgInvalid(list[0], "VIP for the "+kind+
					" must be of the same IP family with machine network's primary IP Family for dual-stack IPv4/IPv6"))
			}
		}
		if len(list) == 2 {
			a, okA := parseAddr(list[0])
			b, okB := parseAddr(list[1])
			if okA && okB && a.Is6() == b.Is6() {
				v.icErr(path, msgInvalid(list, "If two "+kind+" VIPs are given, one must be an IPv4 address, the other an IPv6"))
			}
		}
	}
	check("API", "apiVIPs", api, ingress)
	check("Ingress", "ingressVIPs", ingress, api)
}

func inAny(a netip.Addr, list []cidr) bool {
	for _, c := range list {
		if c.contains(a) {
			return true
		}
	}
	return false
}

func joinCIDRs(list []cidr) string {
	s := make([]string, 0, len(list))
	for _, c := range list {
		s = append(s, c.String())
	}
	return strings.Join(s, ",")
}

// parsedOnly drops the networks that did not parse (already reported).
func parsedOnly(list []cidr) []cidr {
	var out []cidr
	for _, c := range list {
		if c.ok {
			out = append(out, c)
		}
	}
	return out
}
