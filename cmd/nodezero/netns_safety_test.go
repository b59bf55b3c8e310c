package main

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/testbed"
)

// trafficPolicy is what the hosts of a namespace cluster may send, besides
// talking to each other inside the bed's prefix: the cluster's own servers
// and nothing else.
type trafficPolicy struct {
	ntp      netip.Addr         // the configured NTP source; none: no NTP at all
	registry netip.AddrPort     // the release image's registry; none: no pulls
	vipMACs  []net.HardwareAddr // the MACs DHCP may be asked for (VIP allocation)
}

// checkTraffic is the network-safety assertion on everything the bed's
// bridge carried during a test: every address inside the bed (IPv6 only
// link-local), DNS only to the gateway (the resolver the hosts' resolv.conf
// names, the cluster's DNS), NTP only to the configured source, new TCP
// connections only to node zero's API and the registry, DHCP only for the
// VIP MACs, ARP only about bed addresses. The first few offenders are
// named.
func (n *netnsCluster) checkTraffic(t *testing.T, pkts []testbed.Packet, dropped int, p trafficPolicy) {
	t.Helper()
	if len(pkts) == 0 {
		t.Fatal("the capture saw nothing: the assertion would prove nothing")
	}
	if dropped > 0 {
		t.Errorf("the capture dropped %d frames: the traffic was not all checked", dropped)
	}
	inBed := func(a netip.Addr) bool { return n.bed.Prefix.Contains(a) }
	api := netip.AddrPortFrom(n.zero.Addr.Addr(), 8090)
	dhcpBroadcast := func(pk testbed.Packet) bool {
		dhcp := (pk.SrcPort == 68 && pk.DstPort == 67) || (pk.SrcPort == 67 && pk.DstPort == 68)
		return pk.Proto == testbed.ProtoUDP && dhcp && (pk.Src == netip.IPv4Unspecified() || pk.Dst == netip.AddrFrom4([4]byte{255, 255, 255, 255}))
	}
	var bad []string
	counts := map[string]int{}
	flag := func(pk testbed.Packet, why string) {
		if len(bad) < 10 {
			bad = append(bad, why+": "+pk.String())
		}
	}
	for _, pk := range pkts {
		switch pk.EtherType {
		case testbed.EtherTypeARP:
			counts["arp"]++
			if !inBed(pk.TargetIP) || (!inBed(pk.SenderIP) && pk.SenderIP != netip.IPv4Unspecified()) {
				flag(pk, "ARP about an address outside the bed")
			}
			continue
		case testbed.EtherTypeIPv4:
			if !dhcpBroadcast(pk) && (!inBed(pk.Src) || !inBed(pk.Dst)) && !netip.MustParsePrefix("224.0.0.0/24").Contains(pk.Dst) {
				flag(pk, "IPv4 outside the bed")
				continue
			}
		case testbed.EtherTypeIPv6:
			if !(pk.Src.IsLinkLocalUnicast() || pk.Src.IsUnspecified()) || !(pk.Dst.IsLinkLocalUnicast() || pk.Dst.IsLinkLocalMulticast() || pk.Dst.IsInterfaceLocalMulticast()) {
				flag(pk, "IPv6 beyond the link")
			}
			continue
		default:
			continue
		}
		dst := netip.AddrPortFrom(pk.Dst, pk.DstPort)
		switch {
		case pk.Proto == testbed.ProtoUDP && pk.DstPort == 53, pk.Proto == testbed.ProtoTCP && pk.DstPort == 53:
			counts["dns"]++
			if pk.Dst != n.bed.Gateway {
				flag(pk, "DNS to a server the cluster does not use")
			}
		case pk.Proto == testbed.ProtoUDP && pk.DstPort == 123:
			counts["ntp"]++
			if !p.ntp.IsValid() || pk.Dst != p.ntp {
				flag(pk, "NTP to a server the cluster does not name")
			}
		case pk.Proto == testbed.ProtoUDP && pk.DstPort == 67:
			counts["dhcp"]++
			if !slices.ContainsFunc(p.vipMACs, func(m net.HardwareAddr) bool { return strings.EqualFold(m.String(), pk.DHCPClientMAC.String()) }) {
				flag(pk, "DHCP for a MAC that is not a VIP's")
			}
		case pk.Proto == testbed.ProtoTCP && pk.TCPFlags&0x12 == 0x02: // a SYN: a new connection
			counts["tcp"]++
			if dst != api && (!p.registry.IsValid() || dst != p.registry) {
				flag(pk, "a TCP connection to neither node zero's API nor the registry")
			}
		}
	}
	t.Logf("traffic checked: %d frames (%v)", len(pkts), counts)
	if len(bad) > 0 {
		t.Errorf("traffic the cluster's configuration does not allow:\n%s", strings.Join(bad, "\n"))
	}
	if p.ntp.IsValid() && counts["ntp"] == 0 {
		t.Error("no NTP query reached the configured source: the NTP rule was not exercised")
	}
	if counts["dns"] == 0 {
		t.Error("no DNS query seen: the DNS rule was not exercised")
	}
}
