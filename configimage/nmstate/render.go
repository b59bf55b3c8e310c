package nmstate

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrNoKeyfiles is returned (wrapped) by Keyfiles when the document renders
// no profile at all, which the installer refuses the same way.
var ErrNoKeyfiles = errors.New("nmstate generated an empty NetworkManager config file content")

// Keyfile is one NetworkManager connection profile: its file name (the
// connection id plus ".nmconnection", e.g. "eth0.nmconnection") and text.
type Keyfile struct {
	Name string
	Data []byte
}

// Keyfiles renders the state as `nmstatectl gc` does: byte-for-byte the
// reference's rules, in nmstate's output order (sorted by interface name,
// then controllers before their ports). Error when the result would be empty.
func (s *State) Keyfiles() ([]Keyfile, error) {
	if s == nil {
		return nil, fmt.Errorf("render keyfiles: %w", ErrNoKeyfiles)
	}
	var list []*iface
	for _, i := range s.ifaces {
		if i.active() {
			list = append(list, i)
		}
	}
	sort.SliceStable(list, func(a, b int) bool { return list[a].name < list[b].name })
	sort.SliceStable(list, func(a, b int) bool { return list[a].upPriority < list[b].upPriority })
	var out []Keyfile
	for _, i := range list {
		data, err := writeKeyfile(s.sections(i))
		if err != nil {
			return nil, fmt.Errorf("render keyfile of %s: %w", i.name, err)
		}
		out = append(out, Keyfile{Name: i.id() + ".nmconnection", Data: data})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("render keyfiles: %w", ErrNoKeyfiles)
	}
	return out, nil
}

// nmTypes maps nmstate types to NetworkManager connection types.
var nmTypes = map[string]string{typeEthernet: "802-3-ethernet", typeBond: "bond", typeVLAN: "vlan", typeBridge: "bridge"}

// slaveTypes maps a controller's nmstate type to NetworkManager's slave-type.
var slaveTypes = map[string]string{typeBond: "bond", typeBridge: "bridge"}

func boolText(b bool) string { return strconv.FormatBool(b) }

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func u64(v uint64) string { return strconv.FormatUint(v, 10) }

// sections builds one profile, in nmstate's section order.
func (s *State) sections(i *iface) []section {
	conn := section{name: "connection", keys: map[string]string{
		"id":                 i.id(),
		"uuid":               uuid5(i.typ + "://" + i.name),
		"type":               nmTypes[i.typ],
		"autoconnect":        boolText(i.state != stateDown),
		"autoconnect-slaves": "-1",
	}}
	if !i.byMAC {
		conn.keys["interface-name"] = i.name
	}
	if i.isController() {
		conn.keys["autoconnect-slaves"] = "1"
	}
	if i.master != "" {
		conn.keys["master"] = i.master
		conn.keys["slave-type"] = slaveTypes[i.masterType]
	}
	if i.lldp != nil {
		conn.keys["lldp"] = bit(*i.lldp)
	}
	out := []section{conn}
	if i.typ == typeBond {
		b := section{name: "bond", keys: map[string]string{}}
		if i.bond != nil {
			for k, v := range i.bond.opts {
				b.keys[k] = v
			}
			b.keys["mode"] = i.bond.mode
		}
		out = append(out, b)
	}
	if sec, ok := s.bondPort(i); ok {
		out = append(out, sec)
	}
	if i.typ == typeBridge {
		b := section{name: "bridge", keys: map[string]string{}}
		if i.bridge != nil {
			for k, v := range i.bridge.opts {
				b.keys[k] = v
			}
			if i.bridge.portsSet {
				b.keys["vlan-filtering"] = "false"
			}
		}
		out = append(out, b)
	}
	if sec, ok := s.bridgePort(i); ok {
		out = append(out, sec)
	}
	if i.canHaveIP() {
		out = append(out, ipSection(i, false), ipSection(i, true))
	}
	if sec, ok := wired(i); ok {
		out = append(out, sec)
	}
	if i.typ == typeVLAN && i.vlan != nil {
		out = append(out, section{name: "vlan", keys: map[string]string{
			"flags":    strconv.FormatUint(uint64(i.vlan.flags), 10),
			"id":       u64(i.vlan.id),
			"parent":   i.vlan.base,
			"protocol": i.vlan.protocol,
		}})
	}
	if i.descr != nil {
		out = append(out, section{name: "user", keys: map[string]string{"nmstate.interface.description": *i.descr}})
	}
	return out
}

// bondPort is [bond-port], written only for a ports-config entry with a
// non-zero priority or queue-id.
func (s *State) bondPort(i *iface) (section, bool) {
	if i.masterType != typeBond {
		return section{}, false
	}
	c := s.byName[i.master]
	if c.bond == nil {
		return section{}, false
	}
	for _, pc := range c.bond.portsConfig {
		if pc.name != i.name {
			continue
		}
		prio := pc.priority != nil && *pc.priority != 0
		qid := pc.queueID != nil && *pc.queueID != 0
		if !prio && !qid {
			return section{}, false
		}
		sec := section{name: "bond-port", keys: map[string]string{}}
		if prio {
			sec.keys["prio"] = strconv.FormatInt(*pc.priority, 10)
		}
		if pc.queueID != nil {
			sec.keys["queue-id"] = u64(*pc.queueID)
		}
		return sec, true
	}
	return section{}, false
}

// bridgePort is [bridge-port], written (maybe bare) for every port the
// bridge lists.
func (s *State) bridgePort(i *iface) (section, bool) {
	if i.masterType != typeBridge {
		return section{}, false
	}
	c := s.byName[i.master]
	if c.bridge == nil {
		return section{}, false
	}
	for _, p := range c.bridge.ports {
		if p.name != i.name {
			continue
		}
		sec := section{name: "bridge-port", keys: map[string]string{}}
		if p.hairpin != nil {
			sec.keys["hairpin-mode"] = boolText(*p.hairpin)
		}
		if p.pathCost != nil {
			sec.keys["path-cost"] = u64(*p.pathCost)
		}
		if p.priority != nil {
			sec.keys["priority"] = u64(*p.priority)
		}
		return sec, true
	}
	return section{}, false
}

// wired is [ethernet], written only when something in it is set.
func wired(i *iface) (section, bool) {
	sec := section{name: "ethernet", keys: map[string]string{}}
	if i.mac != "" {
		if i.byMAC {
			sec.keys["mac-address"] = i.mac
		} else {
			sec.keys["cloned-mac-address"] = i.mac
		}
	}
	if i.mtu != nil {
		sec.keys["mtu"] = u64(*i.mtu)
	}
	if e := i.eth; e != nil && e.autoNeg != nil {
		sec.keys["auto-negotiate"] = boolText(*e.autoNeg)
		if !*e.autoNeg {
			if e.speed != nil {
				sec.keys["speed"] = u64(*e.speed)
			}
			sec.keys["duplex"] = e.duplex
		}
	}
	if i.allMACs != nil {
		sec.keys["accept-all-mac-addresses"] = bit(*i.allMACs)
	}
	return sec, len(sec.keys) > 0
}

const dhcpTimeout = "2147483647" // i32::MAX: NetworkManager never gives up

// ipSection is [ipv4] or [ipv6].
func ipSection(i *iface, v6 bool) section {
	name := "ipv4"
	if v6 {
		name = "ipv6"
	}
	sec := section{name: name, keys: map[string]string{"dhcp-timeout": dhcpTimeout, "method": "disabled"}}
	defer mayFail(i, v6, sec)
	ip := ipOf(i, v6)
	if ip == nil {
		return sec
	}
	if v6 {
		sec.keys["addr-gen-mode"] = strconv.Itoa(ip.addrGenMode)
	}
	if !ip.enabled {
		return sec
	}
	hasStatic := len(ip.addrs) > 0
	for _, r := range i.routes {
		hasStatic = hasStatic || r.v6 == v6
	}
	switch {
	case !v6 && ip.isTrue(ip.dhcp):
		sec.keys["method"] = "auto"
	case v6 && ip.isTrue(ip.dhcp) && ip.isTrue(ip.autoconf):
		sec.keys["method"] = "auto"
	case v6 && ip.isTrue(ip.dhcp):
		sec.keys["method"] = "dhcp"
	case hasStatic:
		sec.keys["method"] = "manual"
	case v6:
		sec.keys["method"] = "link-local"
	}
	for k, a := range ip.addrs {
		sec.keys["address"+strconv.Itoa(k)] = a.String()
	}
	if ip.isAuto() {
		dhcpKeys(sec.keys, ip)
	}
	n := 0
	for _, r := range i.routes {
		if r.v6 != v6 {
			continue
		}
		sec.keys["route"+strconv.Itoa(n)], sec.keys["route"+strconv.Itoa(n)+"_options"] = routeLine(r)
		n++
	}
	if p := i.dns[fam(v6)]; p != nil {
		sec.keys["dns"] = strings.Join(p.servers, ";")
		sec.keys["dns-search"] = strings.Join(p.search, ";")
		sec.keys["dns-options"] = strings.Join(p.options, ";")
		sec.keys["dns-priority"] = strconv.Itoa(p.priority)
	}
	return sec
}

// dhcpKeys are the keys nmstate writes for DHCP / autoconf.
func dhcpKeys(keys map[string]string, ip *ipConfig) {
	flip := map[string]*bool{"ignore-auto-dns": ip.autoDNS, "ignore-auto-routes": ip.autoRoutes, "never-default": ip.autoGateway}
	for k, b := range flip {
		if b != nil {
			keys[k] = boolText(!*b)
		}
	}
	if ip.autoTable != nil {
		keys["route-table"] = u64(*ip.autoTable)
	}
	if ip.autoMetric != nil {
		keys["route-metric"] = u64(*ip.autoMetric)
	}
	send := ip.sendHostname == nil || *ip.sendHostname
	keys["dhcp-send-hostname"] = boolText(send)
	custom := ""
	if send && ip.customHostname != nil {
		custom = *ip.customHostname
	}
	if !ip.v6 {
		keys["dhcp-client-id"] = ip.clientID
		if ip.clientID == "" {
			keys["dhcp-client-id"] = "mac"
		}
		if strings.Contains(custom, ".") {
			keys["dhcp-fqdn"] = custom
		} else {
			keys["dhcp-hostname"] = custom
		}
		return
	}
	keys["ra-timeout"] = dhcpTimeout
	keys["dhcp-duid"] = ip.duid
	if ip.duid == "" {
		keys["dhcp-duid"] = "ll"
	}
	keys["dhcp-iaid"] = "mac"
	if ip.token != nil && *ip.token != "::" {
		keys["token"] = *ip.token
	}
	keys["dhcp-hostname"] = custom
}

// routeLine is routeN and routeN_options.
func routeLine(r *route) (string, string) {
	metric := int64(0)
	if r.metric != nil && *r.metric != -1 {
		metric = *r.metric
	}
	line := r.dst + "," + r.via + "," + strconv.FormatInt(metric, 10)
	table := uint64(254)
	if r.tableID != nil && *r.tableID != 0 {
		table = *r.tableID
	}
	opts := "table=" + u64(table)
	if r.weight != nil {
		opts += ",weight=" + u64(*r.weight)
	}
	if r.cwnd != nil {
		opts += ",cwnd=" + u64(*r.cwnd) + ",lock-cwnd=true"
	}
	if r.src != "" {
		opts += ",src=" + r.src
	}
	return line, opts
}

// mayFail applies wait-ip to the section.
func mayFail(i *iface, v6 bool, sec section) {
	var v string
	switch i.waitIP {
	case "any":
		v = "true"
	case "ipv4":
		v = boolText(v6)
	case "ipv6":
		v = boolText(!v6)
	case "ipv4+ipv6":
		v = "false"
	}
	if v != "" {
		sec.keys["may-fail"] = v
	}
}
