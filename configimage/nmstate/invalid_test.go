package nmstate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/configimage/report"
)

// TestInvalidDocuments: each document has exactly one error, with its path,
// position and message (nmstate's text where nmstate reports it).
func TestInvalidDocuments(t *testing.T) {
	const eth0 = "interfaces:\n- name: eth0\n  type: ethernet\n"
	const static = eth0 + "  ipv4: {enabled: true, address: [{ip: 192.0.2.2, prefix-length: 24}]}\n"
	tests := []struct {
		name, doc string
		want      report.Entry
	}{
		{"bad IP text", eth0 + "  ipv4:\n    enabled: true\n    address:\n    - ip: 192.168.1.300\n      prefix-length: 24\n",
			report.Entry{Line: 7, Column: 11, Path: "interfaces[0].ipv4.address[0].ip", Message: `invalid IP address "192.168.1.300"`}},
		{"IPv4 prefix over 32", eth0 + "  ipv4:\n    enabled: true\n    address:\n    - ip: 192.168.1.3\n      prefix-length: 33\n",
			report.Entry{Line: 8, Column: 22, Path: "interfaces[0].ipv4.address[0].prefix-length", Message: "Invalid IPv4 network prefix length '33', should be in the range of 0 to 32"}},
		{"IPv6 prefix over 128", eth0 + "  ipv6:\n    enabled: true\n    address:\n    - {ip: 2001:db8::1, prefix-length: 129}\n",
			report.Entry{Line: 7, Column: 40, Path: "interfaces[0].ipv6.address[0].prefix-length", Message: "Invalid IPv6 network prefix length '129', should be in the range of 0 to 128"}},
		{"IPv6 address in ipv4", eth0 + "  ipv4:\n    enabled: true\n    address:\n    - {ip: 2001:db8::1, prefix-length: 64}\n",
			report.Entry{Line: 7, Column: 12, Path: "interfaces[0].ipv4.address[0].ip", Message: "Got IPv6 address 2001:db8::1/64 in ipv4 config section"}},
		{"missing prefix-length", eth0 + "  ipv4:\n    enabled: true\n    address:\n    - ip: 10.0.0.1\n",
			report.Entry{Line: 7, Column: 7, Path: "interfaces[0].ipv4.address[0]", Message: "missing field `prefix-length`"}},
		{"autoconf under ipv4", eth0 + "  ipv4:\n    enabled: true\n    autoconf: true\n",
			report.Entry{Line: 6, Column: 5, Path: "interfaces[0].ipv4.autoconf", Message: "autoconf is not allowed for IPv4"}},
		{"autoconf without dhcp", eth0 + "  ipv6:\n    enabled: true\n    autoconf: true\n",
			report.Entry{Line: 5, Column: 5, Path: "interfaces[0].ipv6", Message: "Autoconf without DHCP is not supported yet"}},
		{"bad boolean", eth0 + "  ipv4:\n    enabled: true\n    dhcp: maybe\n",
			report.Entry{Line: 6, Column: 11, Path: "interfaces[0].ipv4.dhcp", Message: `Need to be boolean: 1|0|true|false|yes|no|on|off|y|n, got string "maybe"`}},
		{"plain bool given as string", eth0 + "  ipv4:\n    enabled: true\n    dhcp: true\n    dhcp-send-hostname: \"yes\"\n",
			report.Entry{Line: 7, Column: 25, Path: "interfaces[0].ipv4.dhcp-send-hostname", Message: `invalid type: string "yes", expected a boolean`}},
		{"unknown key in ipv4", eth0 + "  ipv4:\n    enabled: true\n    dhcpp: true\n",
			report.Entry{Line: 6, Column: 5, Path: "interfaces[0].ipv4.dhcpp", Message: "unknown field `dhcpp`, expected one of `enabled`, `dhcp`, `autoconf`, `dhcp-client-id`, `dhcp-duid`, `address`, `auto-dns`, `auto-gateway`, `auto-routes`, `auto-route-table-id`, `auto-route-metric`, `addr-gen-mode`, `allow-extra-address`, `token`, `dhcp-send-hostname`, `dhcp-custom-hostname`"}},
		{"bad bond mode", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: active-standby\n    port: [eth0]\n",
			report.Entry{Line: 5, Column: 11, Path: "interfaces[0].link-aggregation.mode", Message: "unknown variant `active-standby`, expected one of `balance-rr`, `active-backup`, `balance-xor`, `broadcast`, `802.3ad`, `balance-tlb`, `balance-alb`"}},
		{"bond without mode", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    port: [eth0]\n",
			report.Entry{Line: 2, Column: 9, Path: "interfaces[0].name", Message: "Bond mode is mandatory for new bond interface: bond0"}},
		{"miimon with arp_interval", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: 1\n    options:\n      miimon: 100\n      arp_interval: 100\n",
			report.Entry{Line: 7, Column: 7, Path: "interfaces[0].link-aggregation.options", Message: "Bond miimon and arp interval are not compatible options."}},
		{"unknown bond option", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: 1\n    options:\n      miimonn: 100\n",
			report.Entry{Line: 7, Column: 7, Path: "interfaces[0].link-aggregation.options.miimonn", Message: "unknown field `miimonn`, expected one of `ad_actor_sys_prio`, `ad_actor_system`, `ad_select`, `ad_user_port_key`, `all_slaves_active`, `arp_all_targets`, `arp_interval`, `arp_ip_target`, `arp_validate`, `downdelay`, `fail_over_mac`, `lacp_rate`, `lp_interval`, `miimon`, `min_links`, `num_grat_arp`, `num_unsol_na`, `packets_per_slave`, `primary`, `primary_reselect`, `resend_igmp`, `tlb_dynamic_lb`, `updelay`, `use_carrier`, `xmit_hash_policy`, `balance_slb`, `arp_missed_max`"}},
		{"MAC with fail_over_mac active", "interfaces:\n- name: bond0\n  type: bond\n  mac-address: 52:54:00:00:00:01\n  link-aggregation:\n    mode: active-backup\n    options: {fail_over_mac: active}\n",
			report.Entry{Line: 4, Column: 16, Path: "interfaces[0].mac-address", Message: "MAC address cannot be specified in bond interface along with fail_over_mac active on active backup mode"}},
		{"port in two bonds", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: 4\n    port: [eth0, eth1]\n- name: bond1\n  type: bond\n  link-aggregation:\n    mode: 4\n    port: [eth1]\n",
			report.Entry{Line: 11, Column: 12, Path: "interfaces[1].link-aggregation.port[0]", Message: "Port eth1 is overbooked by two controller: bond1, bond0"}},
		{"port with IP", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: 4\n    port: [eth0]\n- name: eth0\n  type: ethernet\n  ipv4: {enabled: true, dhcp: true}\n",
			report.Entry{Line: 7, Column: 9, Path: "interfaces[1].name", Message: "Interface eth0 cannot have IP enabled as it is attached to a controller where IP is not allowed"}},
		{"port and ports-config differ", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: 1\n    port: [eth0]\n    ports-config: [{name: eth1}]\n",
			report.Entry{Line: 7, Column: 19, Path: "interfaces[0].link-aggregation.ports-config", Message: "The port names specified in `port` conflict with the port names specified in `ports-config` for bond interface: bond0"}},
		{"VLAN as a bond port", "interfaces:\n- name: bond0\n  type: bond\n  link-aggregation:\n    mode: 1\n    port: [eth0]\n- name: eth0\n  type: vlan\n  vlan: {base-iface: eth9, id: 5}\n",
			report.Entry{Line: 6, Column: 12, Path: "interfaces[0].link-aggregation.port[0]", Message: "vlan interface eth0 cannot be a port of bond bond0"}},
		{"controller property not in port list", "interfaces:\n- name: eth0\n  type: ethernet\n  controller: bond0\n- name: bond0\n  type: bond\n  link-aggregation: {mode: 1, port: [eth1]}\n",
			report.Entry{Line: 4, Column: 15, Path: "interfaces[0].controller", Message: "Interface eth0 has controller bond0 but not listed in port list of controller interface"}},
		{"controller not found", eth0 + "  controller: bond9\n",
			report.Entry{Line: 4, Column: 15, Path: "interfaces[0].controller", Message: "Interface eth0 desired controller bond9 not found"}},
		{"VLAN without base-iface", "interfaces:\n- name: eth0.100\n  type: vlan\n  vlan:\n    id: 100\n",
			report.Entry{Line: 5, Column: 5, Path: "interfaces[0].vlan", Message: "Missing 'vlan.base-iface' for interface 'eth0.100'"}},
		{"VLAN id 4095 (NetworkManager refuses it)", "interfaces:\n- name: eth0.4095\n  type: vlan\n  vlan:\n    base-iface: eth0\n    id: 4095\n",
			report.Entry{Line: 6, Column: 9, Path: "interfaces[0].vlan.id", Message: "VLAN id 4095 is out of range: NetworkManager refuses it (vlan.id: the vlan id must be in range 0-4094 but is 4095)"}},
		{"name over 15 characters (NetworkManager refuses it)", "interfaces:\n- name: ens1f0np0123.1000\n  type: vlan\n  vlan: {base-iface: ens1f0np0123, id: 1000}\n",
			report.Entry{Line: 2, Column: 9, Path: "interfaces[0].name", Message: `interface name "ens1f0np0123.1000" is longer than 15 characters; NetworkManager refuses it`}},
		{"slash in a name", "interfaces:\n- name: eth/0\n  type: ethernet\n",
			report.Entry{Line: 2, Column: 9, Path: "interfaces[0].name", Message: `interface name "eth/0" must not contain '/'`}},
		{"duplicate names", eth0 + "- name: eth1\n  type: ethernet\n- name: eth0\n  type: ethernet\n",
			report.Entry{Line: 6, Column: 9, Path: "interfaces[2].name", Message: `duplicate interface name "eth0" (also defined at line 2 column 9)`}},
		{"two profiles, one file name", eth0 + "  profile-name: uplink\n- name: uplink\n  type: ethernet\n",
			report.Entry{Line: 5, Column: 9, Path: "interfaces[1].name", Message: "interface eth0 and interface uplink would both be written to uplink.nmconnection"}},
		{"MTU below 1280 with IPv6", eth0 + "  mtu: 1000\n  ipv6: {enabled: true, dhcp: true, autoconf: true}\n",
			report.Entry{Line: 4, Column: 8, Path: "interfaces[0].mtu", Message: "MTU should be >= 1280 when IPv6 is enabled on interface eth0, but got mtu: 1000"}},
		{"MTU not a number", eth0 + "  mtu: \"abc\"\n",
			report.Entry{Line: 4, Column: 8, Path: "interfaces[0].mtu", Message: `invalid value: string "abc", expected u32 (0 to 4294967295)`}},
		{"invalid MAC", eth0 + "  mac-address: 52:54:00:zz:00:01\n",
			report.Entry{Line: 4, Column: 16, Path: "interfaces[0].mac-address", Message: `invalid MAC address "52:54:00:zz:00:01"`}},
		{"identifier mac-address without a MAC", eth0 + "  identifier: mac-address\n",
			report.Entry{Line: 2, Column: 9, Path: "interfaces[0].name", Message: "identifier: mac-address needs mac-address on interface eth0"}},
		{"control character in description", eth0 + "  description: \"line1\\nline2\"\n",
			report.Entry{Line: 4, Column: 16, Path: "interfaces[0].description", Message: `"line1\nline2" cannot go into a keyfile: it has control characters`}},
		{"unknown state", eth0 + "  state: running\n",
			report.Entry{Line: 4, Column: 10, Path: "interfaces[0].state", Message: "unknown variant `running`, expected one of `up`, `down`, `absent`, `ignore`"}},
		{"unsupported type", "interfaces:\n- name: br-int\n  type: ovs-bridge\n",
			report.Entry{Line: 3, Column: 9, Path: "interfaces[0].type", Message: "interface type `ovs-bridge` is not supported by nodezero's nmstate subset (ethernet, bond, vlan, linux-bridge)"}},
		{"STP hello time", "interfaces:\n- name: br0\n  type: linux-bridge\n  bridge:\n    options:\n      stp:\n        hello-time: 11\n",
			report.Entry{Line: 7, Column: 21, Path: "interfaces[0].bridge.options.stp.hello-time", Message: "Desired STP hello time 11 is not in the range of [1,10]"}},
		{"token without autoconf", static + "  ipv6: {enabled: true, token: \"::1\", autoconf: false}\n",
			report.Entry{Line: 5, Column: 32, Path: "interfaces[0].ipv6.token", Message: "Desired IPv6 token '::1' cannot be applied with IPv6 autoconf disabled, you may remove IPv6 token by setting as empty string or `::`"}},
		{"unknown top-level key", "hostnam: foo\ninterfaces: []\n",
			report.Entry{Line: 1, Column: 1, Path: "hostnam", Message: "unknown field `hostnam`, expected one of `description`, `hostname`, `dns-resolver`, `route-rules`, `routes`, `interfaces`, `ovs-db`, `ovn`"}},
		{"interfaces not a list", "interfaces:\n  name: eth0\n",
			report.Entry{Line: 2, Column: 3, Path: "interfaces", Message: "invalid type: map, expected a sequence"}},
		{"route without next-hop-interface", static + "routes:\n  config:\n  - destination: 0.0.0.0/0\n    next-hop-address: 192.0.2.1\n",
			report.Entry{Line: 7, Column: 5, Path: "routes.config[0]", Message: `Route with empty next hop interface is not supported: RouteEntry { state: None, destination: Some("0.0.0.0/0"), next_hop_iface: None, next_hop_addr: Some("192.0.2.1"), metric: None, table_id: None, weight: None, route_type: None, cwnd: None, source: None }`}},
		{"route via IPv6-disabled interface", static + "routes:\n  config:\n  - destination: 2001:db8::/64\n    next-hop-interface: eth0\n",
			report.Entry{Line: 8, Column: 25, Path: "routes.config[0].next-hop-interface", Message: "The next hop interface of desired Route 'destination: 2001:db8::/64 next-hop-interface: eth0' has been marked as IPv6 disabled"}},
		{"route via absent interface", "interfaces:\n- name: eth0\n  type: ethernet\n  state: absent\n- name: eth1\n  type: ethernet\n  ipv4: {enabled: true, dhcp: true}\nroutes:\n  config:\n  - {destination: 10.0.0.0/8, next-hop-interface: eth0}\n",
			report.Entry{Line: 10, Column: 51, Path: "routes.config[0].next-hop-interface", Message: "The next hop interface of desired Route 'destination: 10.0.0.0/8 next-hop-interface: eth0' has been marked as absent"}},
		{"route to 0.0.0.0/8", static + "routes:\n  config:\n  - destination: 0.1.0.0/16\n    next-hop-interface: eth0\n",
			report.Entry{Line: 7, Column: 18, Path: "routes.config[0].destination", Message: "0.0.0.0/8 and its subnet cannot be used as the route destination for unicast route, please use the default gateway 0.0.0.0/0 instead"}},
		{"bad next hop", static + "routes:\n  config:\n  - destination: 10.0.0.0/8\n    next-hop-interface: eth0\n    next-hop-address: 10.0.0.300\n",
			report.Entry{Line: 9, Column: 23, Path: "routes.config[0].next-hop-address", Message: "Invalid IP address : invalid IP address syntax"}},
		{"next hop of the other family", static + "routes:\n  config:\n  - destination: 10.0.0.0/8\n    next-hop-interface: eth0\n    next-hop-address: 2001:db8::1\n",
			report.Entry{Line: 9, Column: 23, Path: "routes.config[0].next-hop-address", Message: "next-hop-address 2001:db8::1 is not of the family of destination 10.0.0.0/8"}},
		{"route weight", static + "routes:\n  config:\n  - destination: 10.0.0.0/8\n    next-hop-interface: eth0\n    weight: 300\n",
			report.Entry{Line: 9, Column: 13, Path: "routes.config[0].weight", Message: "Invalid ECMP route weight 300, should be in the range of 1 to 256"}},
		{"route cwnd 0", static + "routes:\n  config:\n  - destination: 10.0.0.0/8\n    next-hop-interface: eth0\n    cwnd: 0\n",
			report.Entry{Line: 9, Column: 11, Path: "routes.config[0].cwnd", Message: "The value of 'cwnd' cannot be 0"}},
		{"unknown route key", static + "routes:\n  config:\n  - destination: 10.0.0.0/8\n    next-hop-interface: eth0\n    via: 10.0.0.1\n",
			report.Entry{Line: 9, Column: 5, Path: "routes.config[0].via", Message: "unknown field `via`, expected one of `state`, `destination`, `next-hop-interface`, `next-hop-address`, `metric`, `table-id`, `weight`, `route-type`, `cwnd`, `source`"}},
		{"DNS families interleaved", static + "dns-resolver:\n  config:\n    server: [192.0.2.1, 2001:db8::1, 192.0.2.2]\n",
			report.Entry{Line: 7, Column: 5, Path: "dns-resolver.config", Message: "Placing IPv4/IPv6 nameserver in the middle of IPv6/IPv4 nameservers is not supported yet"}},
		{"bad DNS server", static + "dns-resolver:\n  config:\n    server: [192.0.2.256]\n",
			report.Entry{Line: 7, Column: 14, Path: "dns-resolver.config.server[0]", Message: "Invalid DNS server string 192.0.2.256"}},
		{"unsupported DNS option", static + "dns-resolver:\n  config:\n    server: [192.0.2.1]\n    options: [rotate, foo]\n",
			report.Entry{Line: 8, Column: 23, Path: "dns-resolver.config.options[1]", Message: "Unsupported DNS option foo, only support these without value: debug, edns0, inet6, ip6-bytestring, ip6-dotint, no-aaaa, no-check-names, no-ip6-dotint, no-reload, no-tld-query, rotate, single-request, single-request-reopen, trust-ad, use-vc and these with values: ndots:n, timeout:n, attempts"}},
		{"no interface for a DNS server", static + "dns-resolver:\n  config:\n    server: [2001:db8::1]\n",
			report.Entry{Line: 7, Column: 14, Path: "dns-resolver.config.server[0]", Message: `Failed to find suitable(IP enabled) interface for DNS server ["2001:db8::1"]`}},
		{"YAML syntax", "interfaces: [\n",
			report.Entry{Line: 1, Path: "", Message: "invalid YAML: did not find expected node content"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, probs := Parse([]byte(tc.doc))
			if s != nil {
				t.Fatalf("Parse(%q) = a state, want an error", tc.doc)
			}
			if diff := cmp.Diff([]report.Entry{tc.want}, probs.Errors()); diff != "" {
				t.Errorf("Parse(%q) errors (-want +got):\n%s", tc.doc, diff)
			}
		})
	}
	if len(tests) < 25 {
		t.Errorf("only %d invalid documents; the brief asks for at least 25", len(tests))
	}
}

// TestWarningsDoNotBlock: unknown keys on an interface and unknown types
// are only warnings, as nmstate ignores or tolerates them.
func TestWarningsDoNotBlock(t *testing.T) {
	doc := "interfaces:\n- name: eth0\n  type: team\n  colour: blue\n  ipv4: {enabled: true, dhcp: true}\nhostname: {config: node0}\n"
	s, probs := Parse([]byte(doc))
	if s == nil {
		t.Fatalf("Parse = nil, %v", probs)
	}
	var msgs []string
	for _, p := range probs.Entries {
		if p.Severity != report.Warning {
			t.Errorf("unexpected error %v", p)
		}
		msgs = append(msgs, p.String())
	}
	want := []string{
		"3:9: warning: interfaces[0].type: Unsupported interface type team: Setting unknown type interface eth0 to ethernet",
		"4:3: warning: interfaces[0].colour: unknown field `colour` is ignored by nmstate",
		"6:1: warning: hostname: Cannot store hostname configuration to keyfile of NetworkManager, please edit /etc/hostname manually",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if kfs, err := s.Keyfiles(); err != nil || len(kfs) != 1 || !strings.Contains(string(kfs[0].Data), "type=802-3-ethernet") {
		t.Errorf("Keyfiles = %v, %v; want one ethernet profile", kfs, err)
	}
}
