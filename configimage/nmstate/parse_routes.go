package nmstate

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
)

var routeKeys = []string{"state", "destination", "next-hop-interface", "next-hop-address", "metric", "table-id", "weight", "route-type", "cwnd", "source"}

func (d *decoder) routes(s *State, f *field) {
	o, ok := d.object(f.v, f.path, spec{known: []string{"running", "config"}})
	if !ok {
		return
	}
	cf := o.get("config")
	if cf == nil {
		return
	}
	items, ok := d.seq(cf)
	if !ok {
		return
	}
	for _, it := range items {
		if r := d.route(it); r != nil {
			s.routes = append(s.routes, r)
		}
	}
}

// rawRoute is a route entry as written, for nmstate's messages.
type rawRoute struct {
	dst, iface, via, src *string
	metric               *int64
	table, weight, cwnd  *uint64
}

// debug renders the entry as Rust's {:?} of nmstate's RouteEntry.
func (r rawRoute) debug() string {
	str := func(p *string) string {
		if p == nil {
			return "None"
		}
		return "Some(" + strconv.Quote(*p) + ")"
	}
	num := func(p *uint64) string {
		if p == nil {
			return "None"
		}
		return "Some(" + strconv.FormatUint(*p, 10) + ")"
	}
	metric := "None"
	if r.metric != nil {
		metric = "Some(" + strconv.FormatInt(*r.metric, 10) + ")"
	}
	return fmt.Sprintf("RouteEntry { state: None, destination: %s, next_hop_iface: %s, next_hop_addr: %s, metric: %s, table_id: %s, weight: %s, route_type: None, cwnd: %s, source: %s }",
		str(r.dst), str(r.iface), str(r.via), metric, num(r.table), num(r.weight), num(r.cwnd), str(r.src))
}

// String is nmstate's Display of a sanitized route, used in its messages.
func (r *route) String() string {
	props := []string{"destination: " + r.dst, "next-hop-interface: " + r.iface}
	if r.via != "" {
		props = append(props, "next-hop-address: "+r.via)
	}
	if r.src != "" {
		props = append(props, "source: "+r.src)
	}
	if r.metric != nil {
		props = append(props, "metric: "+strconv.FormatInt(*r.metric, 10))
	}
	for _, p := range []struct {
		k string
		v *uint64
	}{{"table-id", r.tableID}, {"weight", r.weight}, {"cwnd", r.cwnd}} {
		if p.v != nil {
			props = append(props, p.k+": "+strconv.FormatUint(*p.v, 10))
		}
	}
	return strings.Join(props, " ")
}

// route decodes, validates and sanitizes one routes.config entry; nil when
// it is invalid or nothing is to be rendered for it.
func (d *decoder) route(it item) *route {
	o, ok := d.object(it.n, it.path, spec{known: routeKeys})
	if !ok {
		return nil
	}
	var raw rawRoute
	str := func(name string) *string {
		if f := o.get(name); f != nil {
			if s, ok := d.str(f); ok {
				return &s
			}
		}
		return nil
	}
	if f := o.get("state"); f != nil {
		if s, ok := d.str(f); ok && s != "absent" {
			d.errorf(f.pos(), "unknown variant `%s`, expected `absent`", s)
		} else if ok {
			d.warnf(f.pos(), "a route with state: absent removes nothing from a generated configuration; ignored")
		}
		return nil
	}
	if f := o.get("route-type"); f != nil {
		d.errorf(f.keyPos(), "`route-type` is not supported by nodezero's nmstate subset")
		return nil
	}
	raw.dst, raw.iface, raw.via, raw.src = str("destination"), str("next-hop-interface"), str("next-hop-address"), str("source")
	if f := o.get("metric"); f != nil {
		if v, ok := d.sint(f, 64); ok {
			// nmstate casts the metric to u32; anything but -1 (default)
			// and 0..2^32-1 would wrap.
			if v < -1 || v > 1<<32-1 {
				d.errorf(f.pos(), "route metric %d is out of range -1 to 4294967295", v)
			}
			raw.metric = &v
		}
	}
	u := func(name string, bits int, orString bool) *uint64 {
		if f := o.get(name); f != nil {
			if v, ok := d.uint(f, bits, orString); ok {
				return &v
			}
		}
		return nil
	}
	raw.table, raw.weight, raw.cwnd = u("table-id", 32, true), u("weight", 16, true), u("cwnd", 32, false)
	if d.hasErrorsSince(it) {
		return nil
	}
	if raw.iface == nil {
		d.errorf(it.pos(), "Route with empty next hop interface is not supported: %s", raw.debug())
		return nil
	}
	if raw.dst == nil || *raw.dst == "" {
		// nmstate then writes no route line but still switches the method
		// to manual; the destination is mandatory for it anyway.
		d.errorf(it.pos(), "route destination is mandatory")
		return nil
	}
	r := &route{at: it.pos(), iface: *raw.iface, ifaceAt: o.get("next-hop-interface").pos(), metric: raw.metric, tableID: raw.table, weight: raw.weight, cwnd: raw.cwnd}
	dstPos := o.get("destination").pos()
	if !d.routeDestination(r, *raw.dst, dstPos) {
		return nil
	}
	if raw.via != nil {
		a, err := netip.ParseAddr(*raw.via)
		if err != nil || a.Zone() != "" {
			d.errorf(o.get("next-hop-address").pos(), "Invalid IP address : invalid IP address syntax")
			return nil
		}
		if a.Is6() != r.v6 {
			// nmstate passes it on; NetworkManager's keyfile reader then
			// drops the route without a word.
			d.errorf(o.get("next-hop-address").pos(), "next-hop-address %s is not of the family of destination %s", a, r.dst)
			return nil
		}
		r.via = a.String()
		if r.via != *raw.via {
			d.warnf(o.get("next-hop-address").pos(), "Route next-hop-address %s sanitized to %s", *raw.via, r.via)
		}
	}
	if raw.src != nil {
		a, err := netip.ParseAddr(*raw.src)
		if err != nil || a.Zone() != "" {
			d.errorf(o.get("source").pos(), "Failed to parse IP address '%s': invalid IP address syntax", *raw.src)
			return nil
		}
		if a.Is6() != r.v6 {
			d.errorf(o.get("source").pos(), "source %s is not of the family of destination %s", a, r.dst)
			return nil
		}
		r.src = a.String()
	}
	if r.weight != nil {
		if *r.weight < 1 || *r.weight > 256 {
			d.errorf(o.get("weight").pos(), "Invalid ECMP route weight %d, should be in the range of 1 to 256", *r.weight)
			return nil
		}
		if r.v6 {
			d.errorf(o.get("weight").pos(), "IPv6 ECMP route with weight is not supported yet")
			return nil
		}
	}
	if r.cwnd != nil && *r.cwnd == 0 {
		d.errorf(o.get("cwnd").pos(), "The value of 'cwnd' cannot be 0")
		return nil
	}
	return r
}

// hasErrorsSince reports whether an error was recorded inside the item.
func (d *decoder) hasErrorsSince(it item) bool {
	for _, p := range d.rep.Entries {
		if p.Severity == report.Error && (p.Path == it.path || strings.HasPrefix(p.Path, it.path+".")) {
			return true
		}
	}
	return false
}

// routeDestination is nmstate's validate_route_dst and sanitize_ip_network.
func (d *decoder) routeDestination(r *route, dst string, p pos) bool {
	parts := strings.Split(dst, "/")
	if len(parts) > 2 {
		d.errorf(p, "Invalid IP network string: '%s', expecting 'ip/prefix' or 'ip' format, for example: 192.0.2.0/24 or 2001:db8:1::/64 or 192.0.2.1", dst)
		return false
	}
	a, err := netip.ParseAddr(parts[0])
	if !strings.Contains(dst, ":") && (err != nil || !a.Is4()) {
		d.errorf(p, "Invalid IP address : invalid IPv4 address syntax")
		return false
	}
	if err != nil || a.Zone() != "" {
		if len(parts) == 1 {
			d.errorf(p, "Invalid IP network '%s': invalid IP address syntax", dst)
		} else {
			d.errorf(p, "Invalid IP address : invalid IP address syntax")
		}
		return false
	}
	r.v6 = a.Is6()
	bits := a.BitLen()
	plen := bits
	if len(parts) == 2 {
		n, err := strconv.ParseUint(parts[1], 10, 64)
		if err != nil {
			d.errorf(p, "Invalid IP network prefix length '%s' in '%s': %s", parts[1], dst, rustIntError(parts[1]))
			return false
		}
		if n > uint64(bits) {
			fam := "IPv4"
			if r.v6 {
				fam = "IPv6"
			}
			d.errorf(p, "Invalid %s network prefix length '%s' in '%s', should be smaller than %d'", fam, parts[1], dst, bits)
			return false
		}
		plen = int(n)
	}
	if !r.v6 && a.As4()[0] == 0 && plen >= 8 {
		d.errorf(p, "0.0.0.0/8 and its subnet cannot be used as the route destination for unicast route, please use the default gateway 0.0.0.0/0 instead")
		return false
	}
	pfx, _ := a.Prefix(plen)
	r.dst = pfx.String()
	if r.dst != dst {
		d.warnf(p, "Route destination %s sanitized to %s", dst, r.dst)
	}
	return true
}

// rustIntError is the text of Rust's ParseIntError for a bad usize.
func rustIntError(s string) string {
	if s == "" {
		return "cannot parse integer from empty string"
	}
	if strings.Trim(s, "0123456789") == "" {
		return "number too large to fit in target type"
	}
	return "invalid digit found in string"
}

var dnsOptsNoValue = []string{"debug", "edns0", "inet6", "ip6-bytestring", "ip6-dotint", "no-aaaa", "no-check-names", "no-ip6-dotint", "no-reload", "no-tld-query", "rotate", "single-request", "single-request-reopen", "trust-ad", "use-vc"}

var dnsOptsValue = []string{"ndots", "timeout", "attempts"}

func (d *decoder) dnsResolver(s *State, f *field) {
	o, ok := d.object(f.v, f.path, spec{known: []string{"running", "config"}})
	if !ok {
		return
	}
	cf := o.get("config")
	if cf == nil {
		return
	}
	co, ok := d.object(cf.v, cf.path, spec{known: []string{"server", "search", "options"}})
	if !ok {
		return
	}
	c := &dnsConfig{at: co.pos()}
	if f := co.get("server"); f != nil {
		vals, poss, _ := d.strList(f)
		for k, v := range vals {
			if srv, ok := dnsServer(v); ok {
				c.servers = append(c.servers, srv)
				c.serverAt = append(c.serverAt, poss[k])
			} else {
				d.errorf(poss[k], "Invalid DNS server string %s", v)
			}
		}
	}
	if f := co.get("search"); f != nil {
		vals, poss, _ := d.strList(f)
		for k, v := range vals {
			// Joined with ';' into one keyfile value: a ';' or a blank
			// would split it.
			if v == "" || strings.ContainsAny(v, "; \t") || !d.keyfileText(poss[k], v) {
				d.errorf(poss[k], "invalid DNS search domain %q", v)
				continue
			}
			c.search = append(c.search, v)
		}
	}
	if f := co.get("options"); f != nil {
		vals, poss, _ := d.strList(f)
		for k, v := range vals {
			if d.dnsOption(poss[k], v) {
				c.options = append(c.options, v)
			}
		}
	}
	s.dns = c
}

// dnsServer is nmstate's sanitize of one server: canonical text, IPv6 link
// local servers keep their %iface.
func dnsServer(v string) (string, bool) {
	if strings.Contains(v, ":") {
		ip, zone, hasZone := strings.Cut(v, "%")
		a, err := netip.ParseAddr(ip)
		if err != nil || !a.Is6() || a.Zone() != "" || (hasZone && (zone == "" || strings.Contains(zone, "%"))) {
			return "", false
		}
		if hasZone {
			return a.String() + "%" + zone, true
		}
		return a.String(), true
	}
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return "", false
	}
	return a.String(), true
}

func (d *decoder) dnsOption(p pos, opt string) bool {
	if name, _, ok := strings.Cut(opt, ":"); ok {
		for _, o := range dnsOptsValue {
			if o == name {
				return d.keyfileText(p, opt)
			}
		}
		d.errorf(p, "Option '%s' is not supported to hold a value, only support these without value: %s and these with values: %s:n",
			name, strings.Join(dnsOptsNoValue, ", "), strings.Join(dnsOptsValue, ":n, "))
		return false
	}
	for _, o := range dnsOptsNoValue {
		if o == opt {
			return true
		}
	}
	d.errorf(p, "Unsupported DNS option %s, only support these without value: %s and these with values: %s",
		opt, strings.Join(dnsOptsNoValue, ", "), strings.Join(dnsOptsValue, ":n, "))
	return false
}
