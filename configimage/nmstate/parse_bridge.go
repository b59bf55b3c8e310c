package nmstate

import "strconv"

// bridgeOpts maps nmstate's LinuxBridgeOptions to [bridge] keys.
var bridgeOpts = []optSpec{
	{name: "group-addr", nmKey: "group-address", kind: optString},
	{name: "group-forward-mask", nmKey: "group-forward-mask", kind: optU16},
	{name: "group-fwd-mask", nmKey: "group-forward-mask", kind: optU16},
	{name: "hash-max", nmKey: "multicast-hash-max", kind: optU32},
	{name: "mac-ageing-time", nmKey: "ageing-time", kind: optU32},
	{name: "multicast-last-member-count", kind: optU32},
	{name: "multicast-last-member-interval", kind: optU64},
	{name: "multicast-membership-interval", kind: optU64},
	{name: "multicast-querier", kind: optBoolWord},
	{name: "multicast-querier-interval", kind: optU64},
	{name: "multicast-query-interval", kind: optU64},
	{name: "multicast-query-response-interval", kind: optU64},
	{name: "multicast-query-use-ifaddr", kind: optBoolWord},
	{name: "multicast-router", kind: optEnum, values: []string{"disabled", "auto", "enabled"}},
	{name: "multicast-snooping", kind: optBoolWord},
	{name: "multicast-startup-query-count", kind: optU32},
	{name: "multicast-startup-query-interval", kind: optU64},
}

var bridgeOptKeys = []string{
	"gc-timer", "group-addr", "group-forward-mask", "group-fwd-mask", "hash-max", "hello-timer",
	"mac-ageing-time", "multicast-last-member-count", "multicast-last-member-interval",
	"multicast-membership-interval", "multicast-querier", "multicast-querier-interval",
	"multicast-query-interval", "multicast-query-response-interval", "multicast-query-use-ifaddr",
	"multicast-router", "multicast-snooping", "multicast-startup-query-count",
	"multicast-startup-query-interval", "stp", "vlan-protocol", "vlan-default-pvid",
}

// stpOpts are bridge.options.stp: [bridge] keys with nmstate's ranges.
var stpOpts = []struct {
	name     string
	kind     optKind
	min, max uint64
	label    string
}{
	{"forward-delay", optU8, 2, 30, "forward delay"},
	{"hello-time", optU8, 1, 10, "hello time"},
	{"max-age", optU8, 6, 40, "max age"},
	{"priority", optU16, 0, 65535, ""},
}

func (d *decoder) bridge(f *field, name string) *bridgeConfig {
	o, ok := d.object(f.v, f.path, spec{known: []string{"options", "port"}, aliases: map[string]string{"ports": "port"}})
	if !ok {
		return nil
	}
	br := &bridgeConfig{opts: map[string]string{}}
	if f := o.get("options"); f != nil {
		d.bridgeOptions(br, f, name)
	}
	if f := o.get("port"); f != nil {
		br.portsSet = true
		if items, ok := d.seq(f); ok {
			for _, it := range items {
				if p, ok := d.bridgePort(it); ok {
					br.ports = append(br.ports, p)
				}
			}
		}
	}
	return br
}

func (d *decoder) bridgeOptions(br *bridgeConfig, f *field, name string) {
	o, ok := d.object(f.v, f.path, spec{known: bridgeOptKeys})
	if !ok {
		return
	}
	for _, k := range []string{"gc-timer", "hello-timer"} {
		if f := o.get(k); f != nil {
			d.uint(f, 64, false) // runtime timers: nmstate drops them
		}
	}
	for _, k := range []string{"vlan-protocol", "vlan-default-pvid"} {
		if f := o.get(k); f != nil {
			d.errorf(f.keyPos(), "`%s` is not supported by nodezero's nmstate subset", k)
		}
	}
	d.eachOption(o, bridgeOpts, func(spec optSpec, f *field, v string) {
		key := spec.key()
		if spec.name == "group-addr" {
			mac, ok := parseMAC(v)
			if !ok {
				d.errorf(f.pos(), "invalid MAC address %q", v)
				return
			}
			v = mac
		}
		if spec.name == "group-fwd-mask" {
			if prev, dup := br.opts[key]; dup && prev != v {
				d.errorf(f.pos(), "Linux bridge %s has different group_forward_mask: %s, group_fwd_mask: %s, these two property is the same, hence conflicting", name, prev, v)
				return
			}
		}
		br.opts[key] = v
	})
	if f := o.get("stp"); f != nil {
		d.stp(br, f)
	}
}

func (d *decoder) stp(br *bridgeConfig, f *field) {
	o, ok := d.object(f.v, f.path, spec{known: []string{"enabled", "forward-delay", "hello-time", "max-age", "priority"}})
	if !ok {
		return
	}
	if f := o.get("enabled"); f != nil {
		if b, ok := d.flexBool(f); ok {
			br.opts["stp"] = strconv.FormatBool(b)
		}
	}
	for _, s := range stpOpts {
		f := o.get(s.name)
		if f == nil {
			continue
		}
		bits := 8
		if s.kind == optU16 {
			bits = 16
		}
		v, ok := d.uint(f, bits, true)
		if !ok {
			continue
		}
		if v < s.min || v > s.max {
			d.errorf(f.pos(), "Desired STP %s %d is not in the range of [%d,%d]", s.label, v, s.min, s.max)
			continue
		}
		br.opts[s.name] = strconv.FormatUint(v, 10)
	}
}

func (d *decoder) bridgePort(it item) (bridgePort, bool) {
	o, ok := d.object(it.n, it.path, spec{known: []string{"name", "stp-hairpin-mode", "stp-path-cost", "stp-priority", "vlan"}})
	if !ok {
		return bridgePort{}, false
	}
	nf := o.get("name")
	if nf == nil {
		d.errorf(it.pos(), "missing field `name`")
		return bridgePort{}, false
	}
	name, ok := d.str(nf)
	if !ok {
		return bridgePort{}, false
	}
	p := bridgePort{name: name, at: nf.pos()}
	if f := o.get("stp-hairpin-mode"); f != nil {
		if b, ok := d.flexBool(f); ok {
			p.hairpin = &b
		}
	}
	if f := o.get("stp-path-cost"); f != nil {
		if v, ok := d.uint(f, 32, true); ok {
			p.pathCost = &v
		}
	}
	if f := o.get("stp-priority"); f != nil {
		if v, ok := d.uint(f, 16, true); ok {
			p.priority = &v
		}
	}
	if f := o.get("vlan"); f != nil {
		d.errorf(f.keyPos(), "bridge port `vlan` (VLAN filtering) is not supported by nodezero's nmstate subset")
	}
	return p, true
}
