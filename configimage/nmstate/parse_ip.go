package nmstate

import (
	"net/netip"
	"strconv"

	"github.com/nodezero/nodezero/configimage/report"
)

// ipKeys is nmstate's InterfaceIp, shared by ipv4 and ipv6, in declaration order.
var ipKeys = []string{
	"enabled", "dhcp", "autoconf", "dhcp-client-id", "dhcp-duid", "address", "auto-dns",
	"auto-gateway", "auto-routes", "auto-route-table-id", "auto-route-metric", "addr-gen-mode",
	"allow-extra-address", "token", "dhcp-send-hostname", "dhcp-custom-hostname",
}

var addrSpec = spec{
	known: []string{"ip", "prefix-length", "mptcp-flags", "valid-life-time", "preferred-life-time"},
	aliases: map[string]string{
		"valid-left": "valid-life-time", "valid-lft": "valid-life-time",
		"preferred-left": "preferred-life-time", "preferred-lft": "preferred-life-time",
	},
}

// ip decodes an ipv4 or ipv6 section and applies nmstate's sanitize.
func (d *decoder) ip(f *field, v6 bool) *ipConfig {
	fam := "IPv4"
	if v6 {
		fam = "IPv6"
	}
	// nmstate's own checks, made before serde reads the section.
	known := append([]string(nil), ipKeys...)
	if n := resolve(f.v); kindOf(n) == kMap {
		for k := 0; k+1 < len(n.Content); k += 2 {
			key := resolve(n.Content[k])
			p := at(key, report.Child(f.path, key.Value))
			switch {
			case !v6 && key.Value == "autoconf":
				d.errorf(p, "autoconf is not allowed for IPv4")
			case !v6 && key.Value == "dhcp_duid":
				d.errorf(p, "dhcp-duid is not allowed for IPv4")
				known = append(known, "dhcp_duid")
			case v6 && key.Value == "dhcp_client_id":
				d.errorf(p, "dhcp-client-id is not allowed for IPv6")
				known = append(known, "dhcp_client_id")
			}
		}
	}
	o, ok := d.object(f.v, f.path, spec{known: known})
	if !ok {
		return nil
	}
	ip := &ipConfig{v6: v6, at: f.pos()}
	flex := func(name string) *bool {
		if f := o.get(name); f != nil {
			if b, ok := d.flexBool(f); ok {
				return &b
			}
		}
		return nil
	}
	u32 := func(name string) *uint64 {
		if f := o.get(name); f != nil {
			if v, ok := d.uint(f, 32, true); ok {
				return &v
			}
		}
		return nil
	}
	en := flex("enabled")
	ip.enabled = en != nil && *en
	ip.dhcp = flex("dhcp")
	if v6 {
		ip.autoconf = flex("autoconf")
	}
	ip.autoDNS, ip.autoGateway, ip.autoRoutes = flex("auto-dns"), flex("auto-gateway"), flex("auto-routes")
	ip.autoTable, ip.autoMetric = u32("auto-route-table-id"), u32("auto-route-metric")
	if f := o.get("address"); f != nil {
		ip.addrs = d.addresses(f, v6)
	}
	if f := o.get("allow-extra-address"); f != nil {
		d.strictBool(f) // verification only: nothing to render
	}
	if f := o.get("dhcp-send-hostname"); f != nil {
		if b, ok := d.strictBool(f); ok {
			ip.sendHostname = &b
		}
	}
	if f := o.get("dhcp-custom-hostname"); f != nil {
		if s, ok := d.str(f); ok && d.keyfileText(f.pos(), s) {
			ip.customHostname = &s
		}
	}
	d.ipFamilyFields(ip, o, fam)
	if en == nil && (ip.dhcp != nil || ip.autoconf != nil || len(ip.addrs) > 0) {
		d.warnf(f.keyPos(), "`enabled` is not set, so nmstate disables %s (it defaults to false)", fam)
	}
	d.sanitizeIP(ip, o)
	return ip
}

// ipFamilyFields reads the keys that mean something for one family only.
func (d *decoder) ipFamilyFields(ip *ipConfig, o *object, fam string) {
	ignored := func(name string) {
		if f := o.get(name); f != nil {
			d.warnf(f.keyPos(), "`%s` is ignored for %s", name, fam)
		}
	}
	if !ip.v6 {
		ignored("dhcp-duid")
		ignored("addr-gen-mode")
		ignored("token")
		if f := o.get("dhcp-client-id"); f != nil {
			if s, ok := d.str(f); ok && d.keyfileText(f.pos(), s) {
				switch s {
				case "ll", "LL":
					ip.clientID = "mac"
				case "iaid+duid", "IAID+DUID":
					ip.clientID = "duid"
				default:
					ip.clientID = s
				}
			}
		}
		return
	}
	ignored("dhcp-client-id")
	if f := o.get("dhcp-duid"); f != nil {
		if s, ok := d.str(f); ok && d.keyfileText(f.pos(), s) {
			switch s {
			case "llt", "LLT", "en", "EN", "ll", "LL", "uuid", "UUID":
				ip.duid = map[string]string{"LLT": "llt", "EN": "en", "LL": "ll", "UUID": "uuid"}[s]
				if ip.duid == "" {
					ip.duid = s
				}
			default:
				ip.duid = s
			}
		}
	}
	if f := o.get("addr-gen-mode"); f != nil {
		if s, ok := d.str(f); ok {
			switch s {
			case "eui64", "EUI64":
				ip.addrGenMode = 0
			case "stable-privacy", "STABLE-PRIVACY":
				ip.addrGenMode = 1
			default:
				// nmstate turns any other text into eui64 (0) unless it is a
				// number; only NetworkManager's 0..3 are taken here.
				n, err := strconv.Atoi(s)
				if err != nil || n < 0 || n > 3 {
					d.errorf(f.pos(), "unknown variant `%s`, expected `eui64` or `stable-privacy`", s)
				}
				ip.addrGenMode = n
			}
		}
	}
	if f := o.get("token"); f != nil {
		if s, ok := d.str(f); ok {
			ip.token = &s
		}
	}
}

// addresses decodes the address list; link-local IPv6 and dynamic entries are
// dropped as nmstate does.
func (d *decoder) addresses(f *field, v6 bool) []netip.Prefix {
	items, ok := d.seq(f)
	if !ok {
		return nil
	}
	max := 32
	if v6 {
		max = 128
	}
	var out []netip.Prefix
	for _, it := range items {
		o, ok := d.object(it.n, it.path, addrSpec)
		if !ok {
			continue
		}
		ipf, plf := o.get("ip"), o.get("prefix-length")
		if ipf == nil {
			d.errorf(it.pos(), "missing field `ip`")
		}
		if plf == nil {
			d.errorf(it.pos(), "missing field `prefix-length`")
		}
		if ipf == nil || plf == nil {
			continue
		}
		s, ok := d.str(ipf)
		if !ok {
			continue
		}
		addr, err := netip.ParseAddr(s)
		if err != nil || addr.Zone() != "" {
			d.errorf(ipf.pos(), "invalid IP address %q", s)
			continue
		}
		plen, ok := d.uint(plf, 64, true)
		if !ok {
			continue
		}
		if !v6 && !addr.Is4() {
			d.errorf(ipf.pos(), "Got IPv6 address %s/%d in ipv4 config section", addr, plen)
			continue
		}
		if v6 && addr.Is4() {
			d.errorf(ipf.pos(), "Got IPv4 address %s/%d in ipv6 config section", addr, plen)
			continue
		}
		if plen > uint64(max) {
			fam := "IPv4"
			if v6 {
				fam = "IPv6"
			}
			d.errorf(plf.pos(), "Invalid %s network prefix length '%d', should be in the range of 0 to %d", fam, plen, max)
			continue
		}
		if lf := o.get("valid-life-time"); lf != nil {
			if s, ok := d.str(lf); ok && s != "forever" {
				continue // a dynamic address from a query: nmstate ignores it
			}
		}
		if lf := o.get("preferred-life-time"); lf != nil {
			d.str(lf)
		}
		p := netip.PrefixFrom(addr, int(plen))
		if v6 && addr.Is6() && addr.As16()[0] == 0xfe && addr.As16()[1]&0xc0 == 0x80 {
			d.warnf(ipf.pos(), "Ignoring IPv6 link local address %s/%d", addr, plen)
			continue
		}
		out = append(out, p)
	}
	return out
}

// sanitizeIP is nmstate's InterfaceIpv4/6::sanitize for a desired state.
func (d *decoder) sanitizeIP(ip *ipConfig, o *object) {
	if ip.isAuto() {
		t := true
		for _, b := range []**bool{&ip.autoDNS, &ip.autoRoutes, &ip.autoGateway} {
			if *b == nil {
				*b = &t
			}
		}
	}
	if !ip.enabled {
		ip.dhcp, ip.autoconf, ip.addrs = nil, nil, nil
	}
	if !ip.isAuto() {
		ip.autoDNS, ip.autoGateway, ip.autoRoutes, ip.autoTable, ip.autoMetric = nil, nil, nil, nil, nil
		if !ip.v6 && ip.clientID != "" && ip.enabled {
			d.warnf(o.get("dhcp-client-id").keyPos(), "Ignoring `dhcp-client-id` setting when DHCPv4 is disabled")
		}
		ip.clientID = ""
		ip.sendHostname, ip.customHostname = nil, nil
	}
	if ip.v6 && ip.token != nil {
		d.sanitizeToken(ip, o.get("token"))
		if *ip.token != "::" && ip.addrGenMode != 0 {
			// nmstate passes it on; NetworkManager refuses the profile.
			d.errorf(o.get("token").pos(), "an IPv6 token needs addr-gen-mode eui64 (NetworkManager: ipv6.token: only makes sense with EUI64 address generation mode)")
		}
	}
	if ip.sendHostname != nil && !*ip.sendHostname && ip.customHostname != nil {
		if *ip.customHostname != "" {
			d.warnf(o.get("dhcp-custom-hostname").pos(), "Ignoring `dhcp-custom-hostname: %s` as `dhcp-send-hostname` is disabled", *ip.customHostname)
		}
		ip.customHostname = nil
	}
	if ip.v6 && ip.enabled && !ip.isTrue(ip.dhcp) && ip.isTrue(ip.autoconf) {
		d.errorf(ip.at, "Autoconf without DHCP is not supported yet")
	}
	if !ip.v6 && ip.enabled && !ip.isAuto() && o.get("address") == nil {
		d.warnf(ip.at, "IPv4 is enabled without DHCP or addresses: nmstate writes method=disabled unless a route uses this interface")
	}
}

// sanitizeToken checks an IPv6 token and rewrites it the way nmstate prints it.
func (d *decoder) sanitizeToken(ip *ipConfig, f *field) {
	tok := *ip.token
	if ip.autoconf != nil && !*ip.autoconf && tok != "" && tok != "::" {
		d.errorf(f.pos(), "Desired IPv6 token '%s' cannot be applied with IPv6 autoconf disabled, you may remove IPv6 token by setting as empty string or `::`", tok)
		return
	}
	if tok == "" {
		s := "::"
		ip.token = &s
		return
	}
	a, err := netip.ParseAddr(tok)
	if err != nil || !a.Is6() || a.Zone() != "" {
		d.errorf(f.pos(), "Desired IPv6 token '%s' is not a valid IPv6 address", tok)
		return
	}
	b := a.As16()
	for _, x := range b[:8] {
		if x != 0 {
			d.errorf(f.pos(), "Desired IPv6 token should be lead by 64 bits 0. But got %s", tok)
			return
		}
	}
	// Printed behind a 2001:db8:: prefix and cut, so ::fac1 stays ::fac1
	// instead of becoming ::0.0.250.193.
	b[0], b[1], b[2], b[3] = 0x20, 0x01, 0x0d, 0xb8
	s := netip.AddrFrom16(b).String()[len("2001:db8"):]
	ip.token = &s
}
