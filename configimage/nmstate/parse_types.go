package nmstate

import (
	"sort"
	"strconv"
	"strings"
)

var bondModes = []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}

// optKind says how a bond or bridge option is read and written.
type optKind int

const (
	optU8 optKind = iota
	optU16
	optU32
	optU64
	optBool01   // bool_or_string, written 0/1
	optBoolWord // bool_or_string, written true/false
	optString
	optEnum // names (or their index, as int or string); written by name
	optEnum01
)

type optSpec struct {
	name   string // YAML key
	nmKey  string // keyfile key
	kind   optKind
	values []string
}

// bondOpts is nmstate's BondOptions in declaration order; the keyfile key is
// the kernel's option name.
var bondOpts = []optSpec{
	{name: "ad_actor_sys_prio", kind: optU16},
	{name: "ad_actor_system", kind: optString},
	{name: "ad_select", kind: optEnum, values: []string{"stable", "bandwidth", "count"}},
	{name: "ad_user_port_key", kind: optU16},
	{name: "all_slaves_active", kind: optEnum01, values: []string{"dropped", "delivered"}},
	{name: "arp_all_targets", kind: optEnum, values: []string{"any", "all"}},
	{name: "arp_interval", kind: optU32},
	{name: "arp_ip_target", kind: optString},
	{name: "arp_validate", kind: optEnum, values: []string{"none", "active", "backup", "all", "filter", "filter_active", "filter_backup"}},
	{name: "downdelay", kind: optU32},
	{name: "fail_over_mac", kind: optEnum, values: []string{"none", "active", "follow"}},
	{name: "lacp_rate", kind: optEnum, values: []string{"slow", "fast"}},
	{name: "lp_interval", kind: optU32},
	{name: "miimon", kind: optU32},
	{name: "min_links", kind: optU32},
	{name: "num_grat_arp", kind: optU8},
	{name: "num_unsol_na", kind: optU8},
	{name: "packets_per_slave", kind: optU32},
	{name: "primary", kind: optString},
	{name: "primary_reselect", kind: optEnum, values: []string{"always", "better", "failure"}},
	{name: "resend_igmp", kind: optU32},
	{name: "tlb_dynamic_lb", kind: optBool01},
	{name: "updelay", kind: optU32},
	{name: "use_carrier", kind: optBool01},
	{name: "xmit_hash_policy", kind: optEnum, values: []string{"layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac"}},
	{name: "balance_slb", nmKey: "balance-slb", kind: optBool01},
	{name: "arp_missed_max", kind: optU8},
}

// key is the option's keyfile key.
func (o optSpec) key() string {
	if o.nmKey != "" {
		return o.nmKey
	}
	return o.name
}

// eachOption calls fn, in specs order, for every option of specs present in
// o whose value reads, with its keyfile text. Bad values are reported by
// option and skipped.
func (d *decoder) eachOption(o *object, specs []optSpec, fn func(spec optSpec, f *field, v string)) {
	for _, spec := range specs {
		f := o.get(spec.name)
		if f == nil {
			continue
		}
		if v, ok := d.option(f, spec); ok {
			fn(spec, f, v)
		}
	}
}

// option reads one option value and returns its keyfile text.
func (d *decoder) option(f *field, o optSpec) (string, bool) {
	bits := map[optKind]int{optU8: 8, optU16: 16, optU32: 32, optU64: 64}
	switch o.kind {
	case optU8, optU16, optU32, optU64:
		v, ok := d.uint(f, bits[o.kind], true)
		return strconv.FormatUint(v, 10), ok
	case optBool01, optBoolWord:
		b, ok := d.flexBool(f)
		if o.kind == optBoolWord {
			return strconv.FormatBool(b), ok
		}
		if b {
			return "1", ok
		}
		return "0", ok
	case optString:
		s, ok := d.str(f)
		return s, ok && d.keyfileText(f.pos(), s)
	}
	s, ok := d.numberAsString(f)
	if !ok {
		return "", false
	}
	for k, v := range o.values {
		if s == v || s == strconv.Itoa(k) {
			if o.kind == optEnum01 {
				return strconv.Itoa(k), true
			}
			return v, true
		}
	}
	d.errorf(f.pos(), "unknown variant `%s`, %s", s, expected(o.values))
	return "", false
}

func (d *decoder) bond(f *field, name string) *bondConfig {
	o, ok := d.object(f.v, f.path, spec{known: []string{"mode", "options", "port", "ports-config"}, aliases: map[string]string{"ports": "port"}})
	if !ok {
		return nil
	}
	b := &bondConfig{opts: map[string]string{}}
	if f := o.get("mode"); f != nil {
		if s, ok := d.numberAsString(f); ok {
			for k, m := range bondModes {
				if s == m || s == strconv.Itoa(k) {
					b.mode = m
				}
			}
			if b.mode == "" {
				d.errorf(f.pos(), "unknown variant `%s`, %s", s, expected(bondModes))
			}
		}
	}
	if f := o.get("options"); f != nil {
		d.bondOptions(b, f)
	}
	if f := o.get("port"); f != nil {
		b.portsSet, b.portsAt = true, f.pos()
		if items, ok := d.seq(f); ok {
			for _, it := range items {
				if s, ok := d.strItem(it); ok {
					b.ports = append(b.ports, portRef{name: s, at: it.pos()})
				}
			}
		}
	}
	if f := o.get("ports-config"); f != nil {
		d.bondPortsConfig(b, f)
	}
	if b.balanceSLB != nil && *b.balanceSLB && (b.mode != "balance-xor" || b.xmitHash != "vlan+srcmac") {
		d.errorf(b.optsAt, "To enable balance-slb, bond mode should be balance-xor and xmit_hash_policy: 'vlan+srcmac'")
	}
	d.checkBondPorts(b, name, o)
	return b
}

func (d *decoder) bondOptions(b *bondConfig, f *field) {
	names := make([]string, len(bondOpts))
	for k, o := range bondOpts {
		names[k] = o.name
	}
	o, ok := d.object(f.v, f.path, spec{known: names, aliases: map[string]string{"balance-slb": "balance_slb"}})
	if !ok {
		return
	}
	b.optsAt = o.pos()
	d.eachOption(o, bondOpts, func(spec optSpec, f *field, v string) {
		switch spec.name {
		case "miimon":
			n, _ := strconv.ParseUint(v, 10, 64)
			b.miimon = &n
		case "arp_interval":
			n, _ := strconv.ParseUint(v, 10, 64)
			b.arpInterval = &n
		case "fail_over_mac":
			b.failOverMAC = v
		case "xmit_hash_policy":
			b.xmitHash = v
		case "balance_slb":
			t := v == "1"
			b.balanceSLB = &t
		case "arp_missed_max":
			if v == "2" {
				return // nmstate leaves the kernel default unwritten
			}
		case "ad_actor_system":
			mac, ok := parseMAC(v)
			if !ok {
				d.errorf(f.pos(), "invalid MAC address %q", v)
				return
			}
			if strings.HasPrefix(mac, "01:00:5E") {
				d.errorf(f.pos(), "The ad_actor_system bond option cannot be an IANA multicast address(prefix with 01:00:5E)")
				return
			}
			v, b.adActorSystem, b.adActorAt = mac, mac, f.pos()
		}
		if v != "" {
			b.opts[spec.key()] = v
		}
	})
	if b.miimon != nil && b.arpInterval != nil && *b.miimon > 0 && *b.arpInterval > 0 {
		d.errorf(b.optsAt, "Bond miimon and arp interval are not compatible options.")
	}
}

func (d *decoder) bondPortsConfig(b *bondConfig, f *field) {
	b.portsConfigSet = true
	items, ok := d.seq(f)
	if !ok {
		return
	}
	for _, it := range items {
		// nmstate's BondPortConfig does not deny unknown fields.
		o, ok := d.object(it.n, it.path, spec{known: []string{"name", "priority", "queue-id"}, lenient: true})
		if !ok {
			continue
		}
		nf := o.get("name")
		if nf == nil {
			d.errorf(it.pos(), "missing field `name`")
			continue
		}
		name, ok := d.str(nf)
		if !ok {
			continue
		}
		pc := bondPortConfig{name: name, at: nf.pos()}
		if f := o.get("priority"); f != nil {
			if v, ok := d.sint(f, 32); ok {
				pc.priority = &v
			}
		}
		if f := o.get("queue-id"); f != nil {
			if v, ok := d.uint(f, 16, true); ok {
				pc.queueID = &v
			}
		}
		b.portsConfig = append(b.portsConfig, pc)
	}
}

// checkBondPorts is nmstate's port/ports-config conflict and queue-id checks.
func (d *decoder) checkBondPorts(b *bondConfig, name string, o *object) {
	if b.portsSet && b.portsConfigSet {
		var a, c []string
		for _, p := range b.ports {
			a = append(a, p.name)
		}
		for _, p := range b.portsConfig {
			c = append(c, p.name)
		}
		sort.Strings(a)
		sort.Strings(c)
		if strings.Join(a, "\x00") != strings.Join(c, "\x00") {
			d.errorf(o.get("ports-config").pos(), "The port names specified in `port` conflict with the port names specified in `ports-config` for bond interface: %s", name)
		}
	}
	seen := map[uint64]string{}
	for _, pc := range b.portsConfig {
		if pc.queueID == nil || *pc.queueID == 0 {
			continue
		}
		if prev, dup := seen[*pc.queueID]; dup {
			d.errorf(pc.at, "Port %s and %s of Bond %s are sharing the same queue-id which is not supported by linux kernel yet", prev, pc.name, name)
			continue
		}
		seen[*pc.queueID] = pc.name
	}
}

func (d *decoder) vlan(f *field, name string) *vlanConfig {
	o, ok := d.object(f.v, f.path, spec{known: []string{"base-iface", "id", "protocol", "registration-protocol", "reorder-headers", "loose-binding"}})
	if !ok {
		return nil
	}
	v := &vlanConfig{}
	idf := o.get("id")
	if idf == nil {
		d.errorf(o.pos(), "missing field `id`")
	} else if id, ok := d.uint(idf, 16, true); ok {
		if id > 4094 {
			// nmstate takes any u16; NetworkManager refuses the profile.
			d.errorf(idf.pos(), "VLAN id %d is out of range: NetworkManager refuses it (vlan.id: the vlan id must be in range 0-4094 but is %d)", id, id)
		}
		v.id = id
	}
	if bf := o.get("base-iface"); bf == nil {
		d.errorf(o.pos(), "Missing 'vlan.base-iface' for interface '%s'", name)
	} else if s, ok := d.str(bf); ok && d.fileSafe(bf.pos(), "base-iface", s) {
		v.base = s
	}
	if f := o.get("protocol"); f != nil {
		if s, ok := d.str(f); ok {
			switch s {
			case "802.1q":
			case "802.1ad":
				v.protocol = s
			default:
				d.errorf(f.pos(), "unknown variant `%s`, expected `802.1q` or `802.1ad`", s)
			}
		}
	}
	reorder := true
	if f := o.get("reorder-headers"); f != nil {
		if b, ok := d.strictBool(f); ok {
			reorder = b
		}
	}
	if reorder {
		v.flags |= 1
	}
	if f := o.get("loose-binding"); f != nil {
		if b, ok := d.strictBool(f); ok && b {
			v.flags |= 4
		}
	}
	if f := o.get("registration-protocol"); f != nil {
		if s, ok := d.str(f); ok {
			switch s {
			case "gvrp":
				v.flags |= 2
			case "mvrp":
				v.flags |= 8
			case "none":
			default:
				d.errorf(f.pos(), "unknown variant `%s`, expected one of `gvrp`, `mvrp`, `none`", s)
			}
		}
	}
	return v
}
