package nmstate

import "strings"

const dnsPriority = 40 // nmstate's DEFAULT_DNS_PRIORITY; the other family gets +10

// placeDNS is nmstate's store_dns_config_to_iface (servers given) and
// store_dns_search_or_option_to_iface (only search/options given) for gc
// mode, where there is no current state: the DNS settings go into the IP
// section of one interface per family, picked in document order.
func (d *decoder) placeDNS(s *State) {
	c := s.dns
	if c == nil {
		return
	}
	var order []*iface // nmstate's insert order: the interfaces as written
	for _, i := range s.ifaces {
		if !i.auto && i.active() {
			order = append(order, i)
		}
	}
	if len(c.servers) == 0 {
		if len(c.search) > 0 || len(c.options) > 0 {
			d.placeSearchOnly(c, order)
		}
		return
	}
	if len(c.servers) > 2 && mixedFamilies(c.servers) {
		d.errorf(c.at, "Placing IPv4/IPv6 nameserver in the middle of IPv6/IPv4 nameservers is not supported yet")
		return
	}
	var linkLocal []string
	for k, srv := range c.servers {
		_, name, ok := strings.Cut(srv, "%")
		if !ok {
			continue
		}
		i := s.byName[name]
		switch {
		case i == nil:
			d.errorf(c.serverAt[k], "Desired IPv6 link local DNS server %s is pointing to interface %s which does not exist.", srv, name)
		case !validForDNS(i, true):
			d.errorf(c.serverAt[k], "Interface %s has IPv6 disabled, hence cannot hold desired IPv6 link local DNS server %s", name, srv)
		default:
			linkLocal = append(linkLocal, name)
		}
	}
	if len(linkLocal) >= 2 {
		// nmstate counts servers, not interfaces: two link-local servers on
		// one interface are refused too.
		d.errorf(c.at, "Only support IPv6 link local DNS name server(s) pointing to a single interface, but got '%s'", strings.Join(linkLocal, " "))
	}
	if d.hasErrors() {
		return
	}
	v6Iface := findDNSIface(order, true)
	if len(linkLocal) > 0 {
		v6Iface = s.byName[linkLocal[0]]
	}
	v4Iface := findDNSIface(order, false)
	var v4, v6 []string
	for _, srv := range c.servers {
		if strings.Contains(srv, ":") {
			ip, _, _ := strings.Cut(srv, "%")
			v6 = append(v6, ip)
		} else {
			v4 = append(v4, srv)
		}
	}
	preferV6 := strings.Contains(c.servers[0], ":")
	d.saveDNS(c, v6Iface, true, v6, preferV6)
	d.saveDNS(c, v4Iface, false, v4, !preferV6)
}

func (d *decoder) saveDNS(c *dnsConfig, i *iface, v6 bool, servers []string, preferred bool) {
	if len(servers) == 0 {
		return
	}
	if i == nil {
		at := c.at
		for k, srv := range c.servers {
			if strings.Contains(srv, ":") == v6 {
				at = c.serverAt[k]
				break
			}
		}
		d.errorf(at, "Failed to find suitable(IP enabled) interface for DNS server %s", rustList(servers))
		return
	}
	p := &dnsPlacement{servers: servers, priority: dnsPriority + 10}
	if preferred {
		p.search, p.options, p.priority = c.search, c.options, dnsPriority
	}
	i.dns[fam(v6)] = p
}

func fam(v6 bool) int {
	if v6 {
		return 1
	}
	return 0
}

// findDNSIface is nmstate's find_dns_iface without a current state: the
// first preferred interface, else the first valid one.
func findDNSIface(order []*iface, v6 bool) *iface {
	for _, i := range order {
		if preferredForDNS(i, v6) {
			return i
		}
	}
	for _, i := range order {
		if validForDNS(i, v6) {
			return i
		}
	}
	return nil
}

func (d *decoder) placeSearchOnly(c *dnsConfig, order []*iface) {
	put := func(i *iface, v6 bool) {
		i.dns[fam(v6)] = &dnsPlacement{search: c.search, options: c.options, priority: dnsPriority}
	}
	for _, i := range order {
		if i.ipv6.isAuto() {
			put(i, true)
			return
		}
		if i.ipv4.isAuto() {
			put(i, false)
			return
		}
	}
	for _, i := range order {
		if enabled(i.ipv6) {
			put(i, true)
			return
		}
		if enabled(i.ipv4) {
			put(i, false)
			return
		}
	}
	d.errorf(c.at, "Failed to find suitable(IP enabled) interface for DNS searches '%s'", strings.Join(c.search, " "))
}

// mixedFamilies is nmstate's is_mixed_dns_servers: an IPv4 server between
// IPv6 ones, or the reverse.
func mixedFamilies(srvs []string) bool {
	var pattern []byte
	for _, s := range srvs {
		c := byte('4')
		if strings.Contains(s, ":") {
			c = '6'
		}
		if len(pattern) == 0 || pattern[len(pattern)-1] != c {
			pattern = append(pattern, c)
		}
	}
	p := string(pattern)
	return strings.Contains(p, "464") || strings.Contains(p, "646")
}
