package sandbox

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/testbed"
)

// TestTrafficVerdict: the VM sandbox's safety check passes a bed's own
// traffic and names any frame with an address outside it.
func TestTrafficVerdict(t *testing.T) {
	bed := netip.MustParsePrefix("10.231.0.0/24")
	a := netip.MustParseAddr
	ipv4 := func(src, dst string) testbed.Packet {
		return testbed.Packet{EtherType: testbed.EtherTypeIPv4, Src: a(src), Dst: a(dst)}
	}
	good := []testbed.Packet{
		ipv4("10.231.0.10", "10.231.0.1"),
		ipv4("0.0.0.0", "255.255.255.255"), // DHCP discover before the keyfiles
		ipv4("10.231.0.11", "224.0.0.251"), // mDNS
		{EtherType: testbed.EtherTypeARP, SenderIP: a("10.231.0.10"), TargetIP: a("10.231.0.11")},
		{EtherType: testbed.EtherTypeIPv6, Src: a("fe80::1"), Dst: a("ff02::2")},
		{EtherType: testbed.EtherTypeIPv4, VLAN: vmVLAN, Src: a("10.231.0.14"), Dst: a("10.231.0.1")},
	}
	if _, err := trafficVerdict(good, 0, bed); err != nil {
		t.Fatalf("the bed's own traffic: %v", err)
	}
	for _, tt := range []struct {
		name string
		p    testbed.Packet
	}{
		{"a public address", ipv4("10.231.0.10", "8.8.8.8")},
		{"another private network", ipv4("192.168.1.5", "10.231.0.10")},
		{"another network on the VLAN", testbed.Packet{EtherType: testbed.EtherTypeIPv4, VLAN: vmVLAN, Src: a("172.31.254.14"), Dst: a("172.31.254.255")}},
		{"IPv6 beyond the link", testbed.Packet{EtherType: testbed.EtherTypeIPv6, Src: a("fe80::1"), Dst: a("2001:db8::1")}},
		{"ARP for an outside address", testbed.Packet{EtherType: testbed.EtherTypeARP, SenderIP: a("10.231.0.10"), TargetIP: a("10.0.0.1")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := trafficVerdict(append(good, tt.p), 0, bed)
			if err == nil || !strings.Contains(err.Error(), "left the bed") {
				t.Fatalf("got %v, want the frame named", err)
			}
		})
	}
}
