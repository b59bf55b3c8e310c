package nmstate

import (
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// Parse reads an nmstate document (YAML or JSON text). It returns every
// problem found (errors and warnings, sorted), not just the first; their
// Line and Column are positions in doc, their Path is relative to the
// document root, e.g. "interfaces[1].ipv4.address[0].prefix-length", and
// they carry no File. State is nil when there are errors; warnings never
// make Parse fail.
func Parse(doc []byte) (*State, report.Report) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		e := report.SyntaxError(doc, err)
		return nil, report.Report{Entries: []report.Entry{{Line: e.Line, Message: "invalid YAML: " + e.Message}}}
	}
	return ParseNode(&root)
}

// ParseNode does the same for an already-parsed yaml.v3 node (a mapping, or
// a DocumentNode) so callers can keep the line numbers of the file the
// document is embedded in.
func ParseNode(n *yaml.Node) (*State, report.Report) {
	d := &decoder{}
	walked, ok := report.Check(n, report.DefaultLimits)
	d.rep.Add(walked.Entries...)
	var s *State
	if ok {
		s = d.document(n)
		if !d.hasErrors() {
			link(d, s)
		}
	}
	rep := report.Report{Entries: d.rep.Sorted()}
	if rep.HasErrors() {
		return nil, rep
	}
	return s, rep
}

var topSpec = spec{known: []string{"description", "hostname", "dns-resolver", "route-rules", "routes", "interfaces", "ovs-db", "ovn"}}

// Keys nmstate accepts on any interface (BaseInterface, flattened), in its
// declaration order.
var baseKeys = []string{
	"name", "profile-name", "description", "type", "driver", "state", "identifier",
	"mac-address", "permanent-mac-address", "mtu", "min-mtu", "max-mtu", "wait-ip",
	"ipv4", "ipv6", "mptcp", "controller", "accept-all-mac-addresses", "copy-mac-from",
	"ovs-db", "802.1x", "lldp", "ethtool", "dispatch",
}

// Keys of each rendered type on top of baseKeys.
var typeKeys = map[string][]string{
	typeEthernet: {"ethernet", "veth"},
	typeBond:     {"link-aggregation"},
	typeVLAN:     {"vlan"},
	typeBridge:   {"bridge"},
}

// nmstate interface types this subset cannot render: an error, since nmstate
// would produce something else than what we would.
var unsupportedTypes = map[string]bool{
	"dummy": true, "ovs-bridge": true, "ovs-interface": true, "veth": true, "vxlan": true,
	"mac-vlan": true, "mac-vtap": true, "vrf": true, "infiniband": true, "loopback": true,
	"macsec": true, "ipsec": true, "xfrm": true, "ipvlan": true, "hsr": true, "tun": true,
}

// Interface keys nmstate renders but this subset does not.
var unsupportedBaseKeys = []string{"mptcp", "copy-mac-from", "ovs-db", "802.1x", "ethtool", "dispatch"}

func (d *decoder) document(n *yaml.Node) *State {
	s := &State{byName: map[string]*iface{}}
	n = resolve(n)
	if n == nil || kindOf(n) == kNull {
		return s // an empty document: Keyfiles reports it
	}
	o, ok := d.object(n, "", topSpec)
	if !ok {
		return s
	}
	if f := o.get("hostname"); f != nil {
		d.warnf(f.keyPos(), "Cannot store hostname configuration to keyfile of NetworkManager, please edit /etc/hostname manually")
	}
	if f := o.get("description"); f != nil {
		d.str(f)
	}
	for _, k := range []string{"route-rules", "ovs-db", "ovn"} {
		if f := o.get(k); f != nil {
			d.errorf(f.keyPos(), "`%s` is not supported by nodezero's nmstate subset", k)
		}
	}
	if f := o.get("interfaces"); f != nil {
		d.interfaces(s, f)
	}
	if f := o.get("routes"); f != nil {
		d.routes(s, f)
	}
	if f := o.get("dns-resolver"); f != nil {
		d.dnsResolver(s, f)
	}
	return s
}

func (d *decoder) interfaces(s *State, f *field) {
	items, ok := d.seq(f)
	if !ok {
		return
	}
	for _, it := range items {
		i := d.iface(it)
		if i == nil {
			continue
		}
		// nmstate keeps the last of two same-named interfaces (a HashMap by
		// name); NetworkManager would get one profile where the user wrote
		// two. Strict: report it, with both positions.
		if prev, dup := s.byName[i.name]; dup {
			d.errorf(i.nameAt, "duplicate interface name %q (also defined at %s)", i.name, prev.nameAt)
			continue
		}
		s.byName[i.name] = i
		s.ifaces = append(s.ifaces, i)
	}
}

// iface decodes one interfaces[] entry.
func (d *decoder) iface(it item) *iface {
	if kindOf(it.n) != kMap {
		d.errorf(it.pos(), "invalid type: %s, expected a map", describe(it.n))
		return nil
	}
	i := &iface{at: it.pos(), state: stateUp}
	// The type decides which keys are known, so it is read first.
	raw := map[string]*yaml.Node{}
	for k := 0; k+1 < len(it.n.Content); k += 2 {
		raw[resolve(it.n.Content[k]).Value] = it.n.Content[k+1]
	}
	i.typ = d.ifaceType(it, raw["type"], raw["name"])
	known := append(append([]string(nil), baseKeys...), typeKeys[i.typ]...)
	o, _ := d.object(it.n, it.path, spec{known: known, lenient: true})
	if o == nil {
		return nil
	}
	nf := o.get("name")
	if nf == nil {
		d.errorf(it.pos(), "missing field `name`")
		return nil
	}
	name, ok := d.str(nf)
	if !ok {
		return nil
	}
	i.name, i.nameAt = name, nf.pos()
	if f := o.get("state"); f != nil {
		if st, ok := d.str(f); ok {
			switch st {
			case stateUp, stateDown, stateAbsent, stateIgnore:
				i.state = st
			default:
				d.errorf(f.pos(), "unknown variant `%s`, expected one of `up`, `down`, `absent`, `ignore`", st)
			}
		}
	}
	if i.typ == "" {
		i.typ = typeEthernet // unsupported type, already reported
	}
	if i.state == stateAbsent || i.state == stateIgnore {
		// nmstate drops every other property of these; no file is written.
		return i
	}
	d.baseFields(i, o)
	switch i.typ {
	case typeEthernet:
		if f := o.get("ethernet"); f != nil {
			i.eth = d.ethernet(f)
		}
		if f := o.get("veth"); f != nil {
			d.errorf(f.keyPos(), "`veth` is not supported by nodezero's nmstate subset")
		}
	case typeBond:
		if f := o.get("link-aggregation"); f != nil {
			i.bond = d.bond(f, i.name)
		}
	case typeVLAN:
		if f := o.get("vlan"); f != nil {
			i.vlan = d.vlan(f, i.name)
		} else {
			// nmstate writes a [vlan]-less profile NetworkManager cannot load.
			d.errorf(i.at, "Missing 'vlan.base-iface' for interface '%s'", i.name)
		}
	case typeBridge:
		if f := o.get("bridge"); f != nil {
			i.bridge = d.bridge(f, i.name)
		}
	}
	return i
}

// ifaceType returns the type to render, "" when the type is one nmstate
// knows but this subset does not (reported).
func (d *decoder) ifaceType(it item, tn, nn *yaml.Node) string {
	name := "<unnamed>"
	if nn != nil && kindOf(nn) == kString {
		name = resolve(nn).Value
	}
	if tn == nil || kindOf(tn) == kNull {
		d.warnf(it.pos(), "Setting unknown type interface %s to ethernet", name)
		return typeEthernet
	}
	f := &field{key: "type", v: tn, path: report.Child(it.path, "type")}
	t, ok := d.str(f)
	if !ok {
		return typeEthernet
	}
	switch {
	case t == typeEthernet || t == typeBond || t == typeVLAN || t == typeBridge:
		return t
	case unsupportedTypes[t]:
		d.errorf(f.pos(), "interface type `%s` is not supported by nodezero's nmstate subset (ethernet, bond, vlan, linux-bridge)", t)
		return ""
	}
	// nmstate gc: "Unsupported interface type foo", then rendered as ethernet.
	d.warnf(f.pos(), "Unsupported interface type %s: Setting unknown type interface %s to ethernet", t, name)
	return typeEthernet
}

func (d *decoder) baseFields(i *iface, o *object) {
	for _, k := range unsupportedBaseKeys {
		if f := o.get(k); f != nil {
			d.errorf(f.keyPos(), "`%s` is not supported by nodezero's nmstate subset", k)
		}
	}
	if f := o.get("profile-name"); f != nil {
		if s, ok := d.str(f); ok && d.fileSafe(f.pos(), "profile-name", s) {
			i.profile = s
		}
	}
	if f := o.get("description"); f != nil {
		if s, ok := d.str(f); ok && d.keyfileText(f.pos(), s) {
			i.descr = &s
		}
	}
	if f := o.get("identifier"); f != nil {
		if s, ok := d.str(f); ok {
			switch s {
			case "name":
			case "mac-address":
				i.byMAC = true
			default:
				d.errorf(f.pos(), "unknown variant `%s`, expected `name` or `mac-address`", s)
			}
		}
	}
	d.checkName(i)
	if f := o.get("mac-address"); f != nil {
		if s, ok := d.str(f); ok {
			if mac, ok := parseMAC(s); ok {
				i.mac, i.macAt = mac, f.pos()
			} else {
				// nmstate passes any text on; NetworkManager's keyfile reader
				// then ignores the key without a word.
				d.errorf(f.pos(), "invalid MAC address %q", s)
			}
		}
	} else if i.byMAC {
		// Without a MAC the profile would match every device.
		d.errorf(i.nameAt, "identifier: mac-address needs mac-address on interface %s", i.name)
	}
	if f := o.get("mtu"); f != nil {
		if v, ok := d.uint(f, 32, true); ok {
			i.mtu, i.mtuAt = &v, f.pos()
		}
	}
	if f := o.get("wait-ip"); f != nil {
		if s, ok := d.str(f); ok {
			switch s {
			case "any", "ipv4", "ipv6", "ipv4+ipv6":
				i.waitIP = s
			default:
				d.errorf(f.pos(), "unknown variant `%s`, expected one of `any`, `ipv4`, `ipv6`, `ipv4+ipv6`", s)
			}
		}
	}
	if f := o.get("controller"); f != nil {
		if s, ok := d.str(f); ok {
			i.ctrlSet, i.ctrl, i.ctrlAt = true, s, f.pos()
		}
	}
	if f := o.get("accept-all-mac-addresses"); f != nil {
		if b, ok := d.flexBool(f); ok {
			i.allMACs = &b
		}
	}
	if f := o.get("lldp"); f != nil {
		d.lldp(i, f)
	}
	if f := o.get("ipv4"); f != nil {
		i.ipv4 = d.ip(f, false)
	}
	if f := o.get("ipv6"); f != nil {
		i.ipv6 = d.ip(f, true)
	}
	if i.mtu != nil && enabled(i.ipv6) && *i.mtu < 1280 {
		d.errorf(i.mtuAt, "MTU should be >= 1280 when IPv6 is enabled on interface %s, but got mtu: %d", i.name, *i.mtu)
	}
	for _, w := range []struct {
		need string
		ip   *ipConfig
		fam  string
	}{{"ipv4", i.ipv4, "IPv4"}, {"ipv6", i.ipv6, "IPv6"}} {
		if (i.waitIP == w.need || i.waitIP == "ipv4+ipv6") && !enabled(w.ip) {
			d.errorf(o.get("wait-ip").pos(), "Cannot set 'wait-ip: %s' with %s disabled. Interface: %s(%s)", i.waitIP, w.fam, i.name, i.typ)
		}
	}
}

func (d *decoder) lldp(i *iface, f *field) {
	o, ok := d.object(f.v, f.path, spec{known: []string{"enabled", "neighbors"}})
	if !ok {
		return
	}
	ef := o.get("enabled")
	if ef == nil {
		d.errorf(o.pos(), "missing field `enabled`")
		return
	}
	if b, ok := d.flexBool(ef); ok {
		i.lldp = &b
	}
}

func (d *decoder) ethernet(f *field) *ethConfig {
	o, ok := d.object(f.v, f.path, spec{known: []string{"sr-iov", "auto-negotiation", "speed", "duplex"}})
	if !ok {
		return nil
	}
	e := &ethConfig{}
	if f := o.get("sr-iov"); f != nil {
		d.errorf(f.keyPos(), "`sr-iov` is not supported by nodezero's nmstate subset")
	}
	if f := o.get("auto-negotiation"); f != nil {
		if b, ok := d.flexBool(f); ok {
			e.autoNeg = &b
		}
	}
	if f := o.get("speed"); f != nil {
		if v, ok := d.uint(f, 32, true); ok {
			e.speed = &v
		}
	}
	if f := o.get("duplex"); f != nil {
		if s, ok := d.str(f); ok {
			if s == "full" || s == "half" {
				e.duplex = s
			} else {
				d.errorf(f.pos(), "unknown variant `%s`, expected `full` or `half`", s)
			}
		}
	}
	return e
}

// checkName applies the kernel's rules for interface names. nmstate checks
// none of them; NetworkManager refuses the profile at boot ("interface name
// is longer than 15 characters"), so this subset rejects them up front.
func (d *decoder) checkName(i *iface) {
	if !d.fileSafe(i.nameAt, "interface name", i.name) {
		return
	}
	if i.byMAC {
		return // the name is only a label: interface-name is not written
	}
	d.kernelName(i.nameAt, i.name)
}

func (d *decoder) kernelName(p pos, name string) bool {
	if len(name) > 15 {
		d.errorf(p, "interface name %q is longer than 15 characters; NetworkManager refuses it", name)
		return false
	}
	if strings.ContainsAny(name, ": \t") {
		d.errorf(p, "interface name %q must not contain ':' or whitespace", name)
		return false
	}
	return true
}

// fileSafe checks a string that becomes a file name and a keyfile value.
func (d *decoder) fileSafe(p pos, what, s string) bool {
	switch {
	case s == "":
		d.errorf(p, "%s must not be empty", what)
	case strings.HasPrefix(s, "."):
		// It names the keyfile, and NetworkManager skips hidden files.
		d.errorf(p, "%s %q must not start with '.'", what, s)
	case strings.Contains(s, "/"):
		d.errorf(p, "%s %q must not contain '/'", what, s)
	default:
		return d.keyfileText(p, s)
	}
	return false
}

// parseMAC accepts six colon-separated hex octets and returns them upper case.
func parseMAC(s string) (string, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return "", false
	}
	for _, p := range parts {
		if len(p) != 2 || strings.Trim(p, "0123456789abcdefABCDEF") != "" {
			return "", false
		}
	}
	return strings.ToUpper(s), true
}
