package sandbox

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nodezero/nodezero/testbed"
)

// The VM sandbox's network-safety check: everything its bridge carried is
// captured (testbed.Capture), and at the end every address is checked to
// lie inside the bed, as the namespace tests check theirs. A VM has no
// other way out: QEMU gets taps on the bridge only, never user
// networking (testbed refuses the command line otherwise).

// trafficVerdict checks the frames the bridge carried: IPv4 only between
// addresses of the bed's prefix (DHCP's unaddressed broadcasts and
// link-local multicast aside), IPv6 only on the link, ARP only about the
// bed's addresses, tagged frames (the bond host's VLAN) included. It returns a one-line account, or an error naming the first
// offenders.
func trafficVerdict(pkts []testbed.Packet, dropped int, bed netip.Prefix) (string, error) {
	inside := func(_ testbed.Packet, a netip.Addr) bool { return bed.Contains(a) }
	multicast := netip.MustParsePrefix("224.0.0.0/4")
	broadcast := netip.AddrFrom4([4]byte{255, 255, 255, 255})
	var bad []string
	counts := map[string]int{}
	for _, p := range pkts {
		ok := true
		switch p.EtherType {
		case testbed.EtherTypeARP:
			counts["arp"]++
			ok = inside(p, p.TargetIP) && (inside(p, p.SenderIP) || p.SenderIP == netip.IPv4Unspecified())
		case testbed.EtherTypeIPv4:
			counts["ipv4"]++
			src := inside(p, p.Src) || p.Src == netip.IPv4Unspecified()
			dst := inside(p, p.Dst) || p.Dst == broadcast || multicast.Contains(p.Dst)
			ok = src && dst
		case testbed.EtherTypeIPv6:
			counts["ipv6"]++
			ok = (p.Src.IsLinkLocalUnicast() || p.Src.IsUnspecified()) &&
				(p.Dst.IsLinkLocalUnicast() || p.Dst.IsLinkLocalMulticast() || p.Dst.IsInterfaceLocalMulticast())
		default:
			counts["other"]++
		}
		if !ok && len(bad) < 10 {
			bad = append(bad, p.String())
		}
	}
	account := fmt.Sprintf("network: %d frames on the bed's bridge (%d IPv4, %d ARP, %d IPv6 link-local), every address inside %s", len(pkts), counts["ipv4"], counts["arp"], counts["ipv6"], bed)
	if dropped > 0 {
		account += fmt.Sprintf("; %d frames past the capture's limit went unchecked", dropped)
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("sandbox: traffic left the bed's addresses:\n  %s", strings.Join(bad, "\n  "))
	}
	return account, nil
}
