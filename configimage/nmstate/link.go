package nmstate

import (
	"sort"
	"strconv"
	"strings"
)

// link settles what nmstate decides across interfaces: ports and their
// controllers (creating undefined ports as ethernet), the activation order,
// the interface each route goes to, file names and, when all that is sound,
// where the DNS settings land.
func link(d *decoder, s *State) {
	d.linkPorts(s)
	d.linkControllerProps(s)
	d.checkInterfaces(s)
	d.setUpPriority(s)
	d.linkRoutes(s)
	d.checkFileNames(s)
	if !d.hasErrors() {
		d.placeDNS(s)
	}
}

// namesPorts reports whether a controller lists its ports (possibly none).
func (i *iface) namesPorts() bool {
	return (i.bond != nil && (i.bond.portsSet || i.bond.portsConfigSet)) || (i.bridge != nil && i.bridge.portsSet)
}

// canBePortOf refuses what the kernel refuses: only ethernet in a bond,
// no bridge in a bridge.
func (d *decoder) canBePortOf(p, c *iface, at pos) bool {
	if (c.typ == typeBond && p.typ != typeEthernet) || (c.typ == typeBridge && p.typ == typeBridge) {
		d.errorf(at, "%s interface %s cannot be a port of %s %s", p.typ, p.name, c.typ, c.name)
		return false
	}
	return true
}

func (d *decoder) linkPorts(s *State) {
	owner := map[string]*iface{}
	for _, c := range append([]*iface(nil), s.ifaces...) {
		if !c.active() || !c.isController() {
			continue
		}
		for _, p := range c.ports() {
			if !d.fileSafe(p.at, "port name", p.name) || !d.kernelName(p.at, p.name) {
				continue
			}
			if p.name == c.name {
				d.errorf(p.at, "interface %s cannot be a port of itself", c.name)
				continue
			}
			if prev := owner[p.name]; prev != nil {
				d.errorf(p.at, "Port %s is overbooked by two controller: %s, %s", p.name, c.name, prev.name)
				continue
			}
			owner[p.name] = c
			pi := s.byName[p.name]
			if pi == nil {
				pi = &iface{auto: true, name: p.name, nameAt: p.at, at: p.at, typ: typeEthernet, state: stateUp}
				s.byName[p.name] = pi
				s.ifaces = append(s.ifaces, pi)
				d.warnf(p.at, "Assuming undefined port %s as ethernet", p.name)
			} else if !pi.active() {
				d.errorf(p.at, "port %s of %s is marked state: %s", p.name, c.name, pi.state)
				continue
			}
			if !d.canBePortOf(pi, c, p.at) {
				continue
			}
			if pi.ctrlSet && pi.ctrl != c.name {
				if pi.ctrl == "" {
					d.errorf(pi.ctrlAt, "Interface %s desired to detach controller via controller property set to '', but still been listed as port of controller %s", pi.name, c.name)
				} else {
					d.errorf(pi.ctrlAt, "Interface %s has controller property set to %s, but been listed as port of controller %s", pi.name, pi.ctrl, c.name)
				}
				continue
			}
			pi.master, pi.masterType = c.name, c.typ
		}
	}
}

// linkControllerProps handles `controller:` on a port whose controller does
// not list it.
func (d *decoder) linkControllerProps(s *State) {
	for _, i := range s.ifaces {
		if !i.ctrlSet || i.ctrl == "" || !i.active() || i.master != "" {
			continue
		}
		c := s.byName[i.ctrl]
		switch {
		case c == nil || !c.active():
			d.errorf(i.ctrlAt, "Interface %s desired controller %s not found", i.name, i.ctrl)
		case !c.isController():
			d.errorf(i.ctrlAt, "controller %s of interface %s is not a bond or linux-bridge", i.ctrl, i.name)
		case c.namesPorts():
			listed := false
			for _, p := range c.ports() {
				listed = listed || p.name == i.name
			}
			if !listed {
				d.errorf(i.ctrlAt, "Interface %s has controller %s but not listed in port list of controller interface", i.name, i.ctrl)
			}
		case d.canBePortOf(i, c, i.ctrlAt):
			i.master, i.masterType = c.name, c.typ
		}
	}
}

func (d *decoder) checkInterfaces(s *State) {
	for _, i := range s.ifaces {
		if !i.active() {
			continue
		}
		if i.master != "" && i.state == stateUp && (enabled(i.ipv4) || enabled(i.ipv6)) {
			d.errorf(i.nameAt, "Interface %s cannot have IP enabled as it is attached to a controller where IP is not allowed", i.name)
		}
		if i.typ != typeBond {
			continue
		}
		if (i.bond == nil || i.bond.mode == "") && i.state == stateUp {
			d.errorf(i.nameAt, "Bond mode is mandatory for new bond interface: %s", i.name)
		}
		if b := i.bond; b != nil && b.mode == "active-backup" && b.failOverMAC == "active" && i.mac != "" {
			d.errorf(i.macAt, "MAC address cannot be specified in bond interface along with fail_over_mac active on active backup mode")
		}
	}
}

// setUpPriority is nmstate's set_ifaces_up_priority: controllers 0, their
// ports one more, nested ports more again, a VLAN one more than its parent.
// Ports nmstate creates itself are not in its insert order and keep 0.
func (d *decoder) setUpPriority(s *State) {
	prio := map[string]int{}
	valid := func(i *iface) bool { return i.master == "" || prio[i.name] != 0 }
	done := false
	var stuck *iface
	for pass := 0; pass < 4 && !done; pass++ {
		done = true
		pending := map[string]int{}
		for _, i := range s.ifaces {
			if i.auto || i.state != stateUp || valid(i) {
				continue
			}
			c := s.byName[i.master]
			if cp, ok := pending[c.name]; ok {
				pending[i.name] = cp + 1
			} else if valid(c) {
				pending[i.name] = prio[c.name] + 1
			} else {
				done, stuck = false, i
			}
		}
		if done {
			for _, i := range s.ifaces {
				if i.auto || i.state != stateUp || i.vlan == nil {
					continue
				}
				if pp, ok := pending[i.vlan.base]; ok {
					pending[i.name] = pp + 1
				} else if p := s.byName[i.vlan.base]; p != nil && p.active() && valid(p) {
					pending[i.name] = prio[p.name] + 1
				}
			}
		}
		for n, p := range pending {
			prio[n] = p
		}
	}
	if !done {
		d.errorf(stuck.nameAt, "Failed to set up priority: nmstate only support nested interface up to 4 levels. To support more nest level, please order the interfaces in desire state to place controller before its ports")
	}
	for _, i := range s.ifaces {
		i.upPriority = prio[i.name]
	}
}

// routeKey is nmstate's RouteEntry sort key (the metric is not part of it).
func (r *route) key() []string {
	table := uint64(254)
	if r.tableID != nil {
		table = *r.tableID
	}
	var w, c uint64
	if r.weight != nil {
		w = *r.weight
	}
	if r.cwnd != nil {
		c = *r.cwnd
	}
	return []string{strconv.FormatUint(1<<32+table, 10), r.iface, r.dst, r.via, r.src, strconv.FormatUint(1<<32+w, 10), strconv.FormatUint(1<<32+c, 10)}
}

func lessKey(a, b []string) bool {
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

func (d *decoder) linkRoutes(s *State) {
	for _, r := range s.routes {
		i := s.byName[r.iface]
		fam, ip := "IPv4", (*ipConfig)(nil)
		if i != nil {
			ip = i.ipv4
		}
		if r.v6 {
			fam = "IPv6"
			if i != nil {
				ip = i.ipv6
			}
		}
		switch {
		case i == nil && r.iface != "lo":
			// nmstate drops these silently in gc mode.
			d.warnf(r.ifaceAt, "next-hop-interface %s is not defined in interfaces; nmstate drops this route", r.iface)
		case i != nil && i.state == stateIgnore:
			d.warnf(r.ifaceAt, "next-hop-interface %s is ignored; nmstate drops this route", r.iface)
		case i != nil && i.state == stateAbsent:
			d.errorf(r.ifaceAt, "The next hop interface of desired Route '%s' has been marked as absent", r)
		case !enabled(ip) || !i.canHaveIP():
			d.errorf(r.ifaceAt, "The next hop interface of desired Route '%s' has been marked as %s disabled", r, fam)
		default:
			i.routes = append(i.routes, r)
		}
	}
	for _, i := range s.ifaces {
		sort.SliceStable(i.routes, func(a, b int) bool { return lessKey(i.routes[a].key(), i.routes[b].key()) })
		var kept []*route
		for _, r := range i.routes {
			if n := len(kept); n > 0 && !lessKey(kept[n-1].key(), r.key()) {
				d.warnf(r.at, "route duplicates the one at %s (nmstate compares routes without their metric) and is dropped", kept[n-1].at)
				continue
			}
			kept = append(kept, r)
		}
		i.routes = kept
	}
}

// checkFileNames refuses two profiles with one file name: nmstate would
// emit both and the second would overwrite the first.
func (d *decoder) checkFileNames(s *State) {
	seen := map[string]*iface{}
	for _, i := range s.ifaces {
		if !i.active() {
			continue
		}
		name := i.id() + ".nmconnection"
		if prev := seen[name]; prev != nil {
			d.errorf(i.nameAt, "interface %s and interface %s would both be written to %s", prev.name, i.name, name)
			continue
		}
		seen[name] = i
	}
}

// id is the NetworkManager connection id and the file name's stem.
func (i *iface) id() string {
	if i.profile != "" {
		return i.profile
	}
	return i.name
}

func ipOf(i *iface, v6 bool) *ipConfig {
	if v6 {
		return i.ipv6
	}
	return i.ipv4
}

// validForDNS is nmstate's is_iface_valid_for_dns.
func validForDNS(i *iface, v6 bool) bool {
	ip := ipOf(i, v6)
	return enabled(ip) && (ip.isStatic() || ip.isAuto())
}

// preferredForDNS is nmstate's is_iface_prefered_for_dns.
func preferredForDNS(i *iface, v6 bool) bool {
	ip := ipOf(i, v6)
	return enabled(ip) && (ip.isStatic() || (ip.isAuto() && ip.autoDNS != nil && !*ip.autoDNS))
}

// rustList renders a Vec<String> as Rust's {:?} does.
func rustList(ss []string) string {
	q := make([]string, len(ss))
	for k, s := range ss {
		q[k] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
