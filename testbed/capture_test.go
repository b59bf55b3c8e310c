package testbed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sys/unix"
)

// Frames for the decoder, built by hand. Checksums are left zero where
// the decoder does not read them.

var (
	macA  = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a}
	macB  = net.HardwareAddr{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b}
	bcast = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	ipA   = netip.MustParseAddr("10.231.9.10")
	ipB   = netip.MustParseAddr("10.231.9.11")
	ipGW  = netip.MustParseAddr("10.231.9.1")
	ip6A  = netip.MustParseAddr("fd4e:7a::a")
	ip6B  = netip.MustParseAddr("fd4e:7a::b")
)

func ether(dst, src net.HardwareAddr, etherType uint16, payload []byte) []byte {
	b := slices.Concat([]byte(dst), []byte(src), []byte{0, 0}, payload)
	binary.BigEndian.PutUint16(b[12:], etherType)
	return b
}

// vlanTag inserts an 802.1Q tag with id after the MACs of frame.
func vlanTag(frame []byte, id uint16) []byte {
	tag := binary.BigEndian.AppendUint16([]byte{0x81, 0x00}, id)
	return slices.Concat(frame[:12], tag, frame[12:])
}

func ipv4(src, dst netip.Addr, proto uint8, payload []byte) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	h[8], h[9] = 64, proto
	copy(h[12:], src.AsSlice())
	copy(h[16:], dst.AsSlice())
	return append(h, payload...)
}

func ipv6(src, dst netip.Addr, next uint8, payload []byte) []byte {
	h := make([]byte, 40)
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6], h[7] = next, 64
	copy(h[8:], src.AsSlice())
	copy(h[24:], dst.AsSlice())
	return append(h, payload...)
}

func udp(sport, dport uint16, payload []byte) []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h, sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	binary.BigEndian.PutUint16(h[4:], uint16(8+len(payload)))
	return append(h, payload...)
}

func tcp(sport, dport uint16, flags uint8) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h, sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	h[12], h[13] = 5<<4, flags
	return h
}

func arp(op uint16, sMAC net.HardwareAddr, sIP netip.Addr, tMAC net.HardwareAddr, tIP netip.Addr) []byte {
	b := []byte{0, 1, 0x08, 0x00, 6, 4, 0, 0}
	binary.BigEndian.PutUint16(b[6:], op)
	return slices.Concat(b, sMAC, sIP.AsSlice(), tMAC, tIP.AsSlice())
}

// icmpEcho is an ICMP (or, by type, ICMPv6) echo message with a valid
// ICMP checksum: the kernel does not fill it in for a raw IPv4 socket.
func icmpEcho(typ uint8, id, seq uint16, data []byte) []byte {
	b := make([]byte, 8, 8+len(data))
	b[0] = typ
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], seq)
	b = append(b, data...)
	binary.BigEndian.PutUint16(b[2:], inetChecksum(b))
	return b
}

func inetChecksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// dhcpMessage is a client's DHCP message (op 1, Ethernet) of type
// msgType with the broadcast flag, so that the server broadcasts its reply.
func dhcpMessage(msgType uint8, chaddr net.HardwareAddr, xid uint32) []byte {
	b := make([]byte, 240)
	b[0], b[1], b[2] = 1, 1, 6
	binary.BigEndian.PutUint32(b[4:], xid)
	binary.BigEndian.PutUint16(b[10:], 0x8000)
	copy(b[28:], chaddr)
	binary.BigEndian.PutUint32(b[236:], dhcpMagic)
	return append(b, 53, 1, msgType, 55, 3, 1, 3, 6, 255)
}

// hopByHop is an empty hop-by-hop options header (8 bytes, PadN) before next.
func hopByHop(next uint8, payload []byte) []byte {
	return append([]byte{next, 0, 1, 4, 0, 0, 0, 0}, payload...)
}

// The frames of the decoder's tests, also the fuzz test's seeds.
var (
	frameARPRequest = ether(bcast, macA, EtherTypeARP, arp(1, macA, ipA, make(net.HardwareAddr, 6), ipB))
	frameDNSQuery   = ether(macB, macA, EtherTypeIPv4, ipv4(ipA, ipGW, ProtoUDP, udp(40000, 53, []byte("query"))))
	frameTCPSynAck  = ether(macA, macB, EtherTypeIPv4, ipv4(ipB, ipA, ProtoTCP, tcp(5000, 40001, 0x12)))
	frameEcho6      = ether(macB, macA, EtherTypeIPv6, ipv6(ip6A, ip6B, 0, hopByHop(ProtoICMPv6, icmpEcho(128, 7, 1, []byte("hi")))))
	frameDiscover   = ether(bcast, macA, EtherTypeIPv4, ipv4(netip.IPv4Unspecified(), netip.AddrFrom4([4]byte{255, 255, 255, 255}),
		ProtoUDP, udp(68, 67, dhcpMessage(1, macA, 0x1234))))
)

// TestDecodeFrame decodes hand-built frames, whole, padded, tagged and cut.
func TestDecodeFrame(t *testing.T) {
	bcast4 := netip.AddrFrom4([4]byte{255, 255, 255, 255})
	zeroMAC := make(net.HardwareAddr, 6)
	fragment := ipv4(ipA, ipB, ProtoUDP, udp(1, 2, nil))
	binary.BigEndian.PutUint16(fragment[6:], 185)             // offset 185*8
	frag6First := []byte{ProtoUDP, 0, 0, 1, 0, 0, 0, 1}       // offset 0, more fragments
	frag6Later := []byte{ProtoUDP, 0, 0x05, 0xa8, 0, 0, 0, 1} // offset 181*8
	padded := append(ether(macB, macA, EtherTypeIPv4, ipv4(ipA, ipGW, ProtoUDP, udp(40000, 53, []byte{1}))), make([]byte, 20)...)
	nonEthernetARP := arp(1, macA, ipA, zeroMAC, ipB)
	nonEthernetARP[1] = 6 // IEEE 802 hardware

	tests := []struct {
		name  string
		frame []byte
		want  Packet
	}{
		{"ARP request", frameARPRequest, Packet{
			DstMAC: bcast, SrcMAC: macA, EtherType: EtherTypeARP,
			Op: 1, SenderMAC: macA, SenderIP: ipA, TargetMAC: zeroMAC, TargetIP: ipB,
		}},
		{"ARP reply with a VLAN tag", vlanTag(ether(macA, macB, EtherTypeARP, arp(2, macB, ipB, macA, ipA)), 42), Packet{
			DstMAC: macA, SrcMAC: macB, VLAN: 42, EtherType: EtherTypeARP,
			Op: 2, SenderMAC: macB, SenderIP: ipB, TargetMAC: macA, TargetIP: ipA,
		}},
		{"ARP of another hardware type", ether(bcast, macA, EtherTypeARP, nonEthernetARP), Packet{
			DstMAC: bcast, SrcMAC: macA, EtherType: EtherTypeARP, Op: 1,
		}},
		{"UDP DNS query", frameDNSQuery, Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv4,
			Src: ipA, Dst: ipGW, Proto: ProtoUDP, SrcPort: 40000, DstPort: 53,
		}},
		{"UDP with Ethernet padding", padded, Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv4,
			Src: ipA, Dst: ipGW, Proto: ProtoUDP, SrcPort: 40000, DstPort: 53,
		}},
		{"TCP SYN-ACK", frameTCPSynAck, Packet{
			DstMAC: macA, SrcMAC: macB, EtherType: EtherTypeIPv4,
			Src: ipB, Dst: ipA, Proto: ProtoTCP, SrcPort: 5000, DstPort: 40001, TCPFlags: 0x12,
		}},
		{"ICMP echo request", ether(macB, macA, EtherTypeIPv4, ipv4(ipA, ipB, ProtoICMP, icmpEcho(8, 1, 1, nil))), Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv4, Src: ipA, Dst: ipB, Proto: ProtoICMP, ICMPType: 8,
		}},
		{"IPv4 fragment past the first", ether(macB, macA, EtherTypeIPv4, fragment), Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv4, Src: ipA, Dst: ipB, Proto: ProtoUDP, Fragment: true,
		}},
		{"ICMPv6 echo after a hop-by-hop header", frameEcho6, Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv6,
			Src: ip6A, Dst: ip6B, Proto: ProtoICMPv6, ICMPType: 128,
		}},
		{"IPv6 first fragment", ether(macB, macA, EtherTypeIPv6, ipv6(ip6A, ip6B, 44, append(frag6First, udp(546, 547, nil)...))), Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv6, Src: ip6A, Dst: ip6B, Proto: ProtoUDP, SrcPort: 546, DstPort: 547,
		}},
		{"IPv6 later fragment", ether(macB, macA, EtherTypeIPv6, ipv6(ip6A, ip6B, 44, append(frag6Later, 1, 2, 3, 4))), Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv6, Src: ip6A, Dst: ip6B, Proto: ProtoUDP, Fragment: true,
		}},
		{"DHCP DISCOVER", frameDiscover, Packet{
			DstMAC: bcast, SrcMAC: macA, EtherType: EtherTypeIPv4,
			Src: netip.IPv4Unspecified(), Dst: bcast4, Proto: ProtoUDP, SrcPort: 68, DstPort: 67,
			DHCPClientMAC: macA, DHCPMessageType: 1,
		}},
		{"DHCP cut inside its options", frameDiscover[:len(frameDiscover)-8], Packet{
			DstMAC: bcast, SrcMAC: macA, EtherType: EtherTypeIPv4,
			Src: netip.IPv4Unspecified(), Dst: bcast4, Proto: ProtoUDP, SrcPort: 68, DstPort: 67,
			DHCPClientMAC: macA, Truncated: true,
		}},
		{"LLDP", ether(net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, macA, 0x88cc, []byte{2, 7}), Packet{
			DstMAC: net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x0e}, SrcMAC: macA, EtherType: 0x88cc,
		}},
		{"cut inside the Ethernet header", frameDNSQuery[:10], Packet{Truncated: true}},
		{"cut inside a VLAN tag", vlanTag(frameARPRequest, 7)[:16], Packet{
			DstMAC: bcast, SrcMAC: macA, EtherType: 0x8100, Truncated: true,
		}},
		{"cut inside the IPv4 header", frameDNSQuery[:14+12], Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv4, Truncated: true,
		}},
		{"cut inside the UDP header", frameDNSQuery[:14+20+6], Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv4,
			Src: ipA, Dst: ipGW, Proto: ProtoUDP, SrcPort: 40000, DstPort: 53, Truncated: true,
		}},
		{"cut inside an IPv6 extension header", frameEcho6[:14+40+4], Packet{
			DstMAC: macB, SrcMAC: macA, EtherType: EtherTypeIPv6, Src: ip6A, Dst: ip6B, Proto: 0, Truncated: true,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Len = len(tt.frame)
			got := decodeFrame(tt.frame)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
				t.Errorf("decodeFrame(%x) mismatch (-want +got):\n%s", tt.frame, diff)
			}
		})
	}
}

// TestPacketString: one readable line per packet.
func TestPacketString(t *testing.T) {
	at := time.Date(2025, 1, 2, 12, 0, 1, 42_000, time.Local)
	withTime := func(p Packet) Packet { p.Time = at; return p }
	outgoing := func(p Packet) Packet { p.Outgoing = true; return p }
	tests := []struct {
		p    Packet
		want string
	}{
		{withTime(decodeFrame(frameARPRequest)),
			"12:00:01.000042 in 02:00:00:00:00:0a > ff:ff:ff:ff:ff:ff ARP request who-has 10.231.9.11 tell 10.231.9.10"},
		{outgoing(decodeFrame(ether(macA, macB, EtherTypeARP, arp(2, macB, ipB, macA, ipA)))),
			"out 02:00:00:00:00:0b > 02:00:00:00:00:0a ARP reply 10.231.9.11 is-at 02:00:00:00:00:0b to 10.231.9.10"},
		{decodeFrame(frameDNSQuery),
			"in 02:00:00:00:00:0a > 02:00:00:00:00:0b IPv4 UDP 10.231.9.10:40000 > 10.231.9.1:53"},
		{decodeFrame(vlanTag(frameTCPSynAck, 5)),
			"in 02:00:00:00:00:0b > 02:00:00:00:00:0a vlan 5 IPv4 TCP 10.231.9.11:5000 > 10.231.9.10:40001 flags SA"},
		{decodeFrame(frameEcho6),
			"in 02:00:00:00:00:0a > 02:00:00:00:00:0b IPv6 ICMPv6 fd4e:7a::a > fd4e:7a::b echo request"},
		{decodeFrame(frameDiscover),
			"in 02:00:00:00:00:0a > ff:ff:ff:ff:ff:ff IPv4 UDP 0.0.0.0:68 > 255.255.255.255:67 DHCP DISCOVER chaddr 02:00:00:00:00:0a"},
		{decodeFrame(frameDNSQuery[:14+12]), "in 02:00:00:00:00:0a > 02:00:00:00:00:0b IPv4 (truncated)"},
		{decodeFrame(ether(bcast, macA, 0x88cc, nil)), "in 02:00:00:00:00:0a > ff:ff:ff:ff:ff:ff ethertype 0x88cc"},
		{decodeFrame(nil), "in ? > ? (truncated)"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// FuzzDecodeFrame: whatever the bytes, decoding neither panics nor keeps a
// reference to the frame, and its fields agree with each other.
func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range [][]byte{frameARPRequest, frameDNSQuery, frameTCPSynAck, frameEcho6, frameDiscover, vlanTag(frameDiscover, 9)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		frame := slices.Clone(input) // changed below; the fuzzer's input must not be
		p := decodeFrame(frame)
		_ = p.String()
		if len(frame) < 14 && (!p.Truncated || p.EtherType != 0 || p.SrcMAC != nil) {
			t.Fatalf("decodeFrame(%x) = %+v from a frame shorter than an Ethernet header", frame, p)
		}
		for _, m := range []net.HardwareAddr{p.SrcMAC, p.DstMAC, p.SenderMAC, p.TargetMAC, p.DHCPClientMAC} {
			if m != nil && len(m) != 6 {
				t.Fatalf("decodeFrame(%x): MAC %x is not 6 bytes", frame, m)
			}
		}
		if (p.SrcPort != 0 || p.DstPort != 0) && p.Proto != ProtoTCP && p.Proto != ProtoUDP {
			t.Fatalf("decodeFrame(%x): ports on protocol %d", frame, p.Proto)
		}
		if (p.DHCPMessageType != 0 || p.DHCPClientMAC != nil) && (p.EtherType != EtherTypeIPv4 || p.Proto != ProtoUDP) {
			t.Fatalf("decodeFrame(%x): DHCP fields outside UDP over IPv4: %+v", frame, p)
		}
		if p.Src.IsValid() && p.EtherType != EtherTypeIPv4 && p.EtherType != EtherTypeIPv6 {
			t.Fatalf("decodeFrame(%x): IP addresses with ethertype %#04x", frame, p.EtherType)
		}
		src := slices.Clone(p.SrcMAC)
		for i := range frame {
			frame[i] ^= 0xff
		}
		if !slices.Equal(src, p.SrcMAC) {
			t.Fatalf("decodeFrame kept a reference to its frame: SrcMAC changed from %s to %s", src, p.SrcMAC)
		}
	})
}

// TestCaptureSwitch captures a bed while one host pings the other, looks
// up a name at the bed's dnsmasq and the other host sends a DHCP
// DISCOVER, and checks every frame of that is there, once, decoded right.
func TestCaptureSwitch(t *testing.T) {
	needTool(t, "dnsmasq")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	prefix := freePrefix(t)
	b := NewT(t, Config{Prefix: prefix, Hosts: []HostSpec{{Name: "a", Static: true}, {Name: "b", Static: true}}})
	ha, hb := b.Hosts[0], b.Hosts[1]
	a, bAddr, gw := ha.Addr.Addr(), hb.Addr.Addr(), b.Gateway
	brMAC := deriveMAC(b.ID, 0xfe)
	if _, err := b.StartDNS(ctx, DNSConfig{
		Records: []Record{{Name: "b.bed.test", Addrs: []netip.Addr{bAddr}}},
		DHCP:    [2]netip.Addr{nth(prefix.Addr(), 100), nth(prefix.Addr(), 150)},
	}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	c, err := b.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	if !promiscuous(t, b) {
		t.Errorf("bridge %s is not promiscuous while captured", b.Bridge)
	}

	const echoID = 0x4e5a
	echoData := []byte("nodezero capture")
	pingOnce(t, ha, bAddr, echoID, echoData)
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return ha.DialContext(ctx, network, net.JoinHostPort(gw.String(), "53"))
	}}
	if got, err := res.LookupNetIP(ctx, "ip4", "b.bed.test."); err != nil || !slices.Equal(got, []netip.Addr{bAddr}) {
		t.Fatalf("look up b.bed.test from %s = %v, %v; want [%s]", ha.Name, got, err, bAddr)
	}
	discover(t, hb, hb.MAC, 0x4e5a0001)
	packets := c.Stop()
	end := time.Now()

	if err := c.Err(); err != nil {
		t.Errorf("capture failed: %v", err)
	}
	if n := c.Dropped(); n != 0 {
		t.Errorf("capture dropped %d frames", n)
	}
	if again := c.Stop(); len(again) != len(packets) {
		t.Errorf("second Stop returned %d packets, the first %d", len(again), len(packets))
	}
	if promiscuous(t, b) {
		t.Errorf("bridge %s is still promiscuous after Stop: the capture's socket is open", b.Bridge)
	}
	t.Logf("captured %d frames:\n%s", len(packets), dump(packets))

	// Exactly one of each: the bridge sees a frame once, whichever way it goes.
	once := []struct {
		what  string
		match func(Packet) bool
	}{
		{"ARP request from a for b", func(p Packet) bool {
			return !p.Outgoing && p.EtherType == EtherTypeARP && p.Op == 1 && slices.Equal(p.SrcMAC, ha.MAC) &&
				slices.Equal(p.DstMAC, bcast) && slices.Equal(p.SenderMAC, ha.MAC) && p.SenderIP == a && p.TargetIP == bAddr
		}},
		{"ARP reply from b to a (host to host: needs promiscuous mode)", func(p Packet) bool {
			return !p.Outgoing && p.EtherType == EtherTypeARP && p.Op == 2 && slices.Equal(p.SrcMAC, hb.MAC) &&
				slices.Equal(p.DstMAC, ha.MAC) && slices.Equal(p.SenderMAC, hb.MAC) && p.SenderIP == bAddr && p.TargetIP == a
		}},
		{"ICMP echo request from a to b", func(p Packet) bool {
			return !p.Outgoing && slices.Equal(p.SrcMAC, ha.MAC) && slices.Equal(p.DstMAC, hb.MAC) &&
				p.EtherType == EtherTypeIPv4 && p.Proto == ProtoICMP && p.ICMPType == 8 && p.Src == a && p.Dst == bAddr &&
				p.Len == 14+20+8+len(echoData)
		}},
		{"ICMP echo reply from b to a", func(p Packet) bool {
			return !p.Outgoing && slices.Equal(p.SrcMAC, hb.MAC) && slices.Equal(p.DstMAC, ha.MAC) &&
				p.EtherType == EtherTypeIPv4 && p.Proto == ProtoICMP && p.ICMPType == 0 && p.Src == bAddr && p.Dst == a
		}},
		{"ARP reply from the gateway to a", func(p Packet) bool {
			return p.Outgoing && p.EtherType == EtherTypeARP && p.Op == 2 && slices.Equal(p.SenderMAC, brMAC) &&
				p.SenderIP == gw && p.TargetIP == a
		}},
	}
	for _, o := range once {
		if got := filter(packets, o.match); len(got) != 1 {
			t.Errorf("%s: captured %d times, want once:\n%s", o.what, len(got), dump(got))
		}
	}

	queries := filter(packets, func(p Packet) bool {
		return !p.Outgoing && slices.Equal(p.SrcMAC, ha.MAC) && slices.Equal(p.DstMAC, brMAC) &&
			p.Proto == ProtoUDP && p.Src == a && p.Dst == gw && p.DstPort == 53
	})
	if len(queries) == 0 {
		t.Errorf("no DNS query from %s to %s:53", a, gw)
	}
	answered := false
	for _, q := range queries {
		answered = answered || len(filter(packets, func(p Packet) bool {
			return p.Outgoing && slices.Equal(p.SrcMAC, brMAC) && slices.Equal(p.DstMAC, ha.MAC) &&
				p.Proto == ProtoUDP && p.Src == gw && p.SrcPort == 53 && p.Dst == a && p.DstPort == q.SrcPort
		})) > 0
	}
	if !answered {
		t.Errorf("no DNS answer from %s:53 to a query's port on %s", gw, a)
	}

	discovers := filter(packets, func(p Packet) bool { return p.DHCPMessageType == 1 })
	if len(discovers) == 0 {
		t.Error("no DHCP DISCOVER captured")
	}
	for _, p := range discovers {
		if !slices.Equal(p.DHCPClientMAC, hb.MAC) || !slices.Equal(p.SrcMAC, hb.MAC) || !slices.Equal(p.DstMAC, bcast) ||
			p.Outgoing || p.SrcPort != 68 || p.DstPort != 67 || p.Dst != netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
			t.Errorf("DHCP DISCOVER %s: want chaddr and source %s, to ff:ff:ff:ff:ff:ff and 255.255.255.255:67 from port 68", p, hb.MAC)
		}
	}
	offers := filter(packets, func(p Packet) bool {
		return p.Outgoing && p.DHCPMessageType == 2 && slices.Equal(p.DHCPClientMAC, hb.MAC) &&
			p.Src == gw && p.SrcPort == 67 && p.DstPort == 68
	})
	if len(offers) == 0 {
		t.Errorf("no DHCP OFFER from %s:67 for %s", gw, hb.MAC)
	}

	// Whose frame it is follows from the direction; times are the kernel's.
	for _, p := range packets {
		switch {
		case p.Outgoing && !slices.Equal(p.SrcMAC, brMAC):
			t.Errorf("outgoing frame not from the bridge's MAC %s: %s", brMAC, p)
		case !p.Outgoing && !slices.Equal(p.SrcMAC, ha.MAC) && !slices.Equal(p.SrcMAC, hb.MAC):
			t.Errorf("received frame not from a host's MAC: %s", p)
		}
		if p.Time.Before(start.Add(-time.Second)) || p.Time.After(end.Add(time.Second)) {
			t.Errorf("frame time %s outside the capture (%s to %s): %s", p.Time, start, end, p)
		}
	}
}

// TestCaptureEnds: a capture ends, keeping what it saw and closing its
// socket, when its context ends or its bed closes; a closed bed refuses
// one; one that is full counts the rest.
func TestCaptureEnds(t *testing.T) {
	bed := func(t *testing.T) *Bed {
		return NewT(t, Config{Prefix: freePrefix(t), Hosts: []HostSpec{{Name: "a", Static: true}, {Name: "b", Static: true}}})
	}
	echoRequests := func(ps []Packet) int {
		return len(filter(ps, func(p Packet) bool { return p.Proto == ProtoICMP && p.ICMPType == 8 }))
	}

	t.Run("context", func(t *testing.T) {
		b := bed(t)
		ctx, cancel := context.WithCancel(t.Context())
		c, err := b.Capture(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pingOnce(t, b.Hosts[0], b.Hosts[1].Addr.Addr(), 1, nil)
		cancel()
		waitEnded(t, c)
		if promiscuous(t, b) {
			t.Error("bridge still promiscuous after the context ended")
		}
		if err := c.Err(); err != nil {
			t.Errorf("Err() = %v, want nil", err)
		}
		if got := c.Stop(); echoRequests(got) != 1 {
			t.Errorf("after the context ended: %d echo requests, want 1:\n%s", echoRequests(got), dump(got))
		}
	})

	t.Run("bed closed", func(t *testing.T) {
		b := bed(t)
		c, err := b.Capture(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		pingOnce(t, b.Hosts[0], b.Hosts[1].Addr.Addr(), 2, nil)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		waitEnded(t, c)
		if err := c.Err(); err != nil {
			t.Errorf("Err() = %v, want nil", err)
		}
		if got := c.Stop(); echoRequests(got) != 1 {
			t.Errorf("after the bed closed: %d echo requests, want 1:\n%s", echoRequests(got), dump(got))
		}
		if _, err := b.Capture(t.Context()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Capture on a closed bed: %v, want net.ErrClosed", err)
		}
	})

	t.Run("bridge down and up", func(t *testing.T) {
		b := bed(t)
		c, err := b.Capture(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, state := range []string{"down", "up"} {
			if _, err := runIP(t.Context(), "-n", b.Switch, "link", "set", "dev", b.Bridge, state); err != nil {
				t.Fatal(err)
			}
		}
		pingOnce(t, b.Hosts[0], b.Hosts[1].Addr.Addr(), 4, nil)
		got := c.Stop()
		if err := c.Err(); err != nil {
			t.Errorf("Err() = %v, want nil", err)
		}
		if echoRequests(got) != 1 {
			t.Errorf("after the bridge went down and up: %d echo requests, want 1:\n%s", echoRequests(got), dump(got))
		}
	})

	t.Run("full", func(t *testing.T) {
		b := bed(t)
		c, err := b.capture(t.Context(), 2)
		if err != nil {
			t.Fatal(err)
		}
		pingOnce(t, b.Hosts[0], b.Hosts[1].Addr.Addr(), 3, nil) // ARP request, reply, echo request, reply
		got := c.Stop()
		if len(got) != 2 || c.Dropped() < 2 {
			t.Errorf("capture limited to 2 kept %d and dropped %d of at least 4 frames:\n%s", len(got), c.Dropped(), dump(got))
		}
	})
}

// pingOnce sends one ICMP echo request from h to dst and waits for its
// reply (the wait bounds a broken bed; it is not a timing assertion).
func pingOnce(t *testing.T, h *Host, dst netip.Addr, id uint16, data []byte) {
	t.Helper()
	var c net.PacketConn
	err := inNetns(h.NS, func() error {
		var err error
		c, err = net.ListenPacket("ip4:icmp", h.Addr.Addr().String())
		return err
	})
	if err != nil {
		t.Fatalf("ICMP socket in %s: %v", h.Name, err)
	}
	defer c.Close()
	if _, err := c.WriteTo(icmpEcho(8, id, 1, data), &net.IPAddr{IP: dst.AsSlice()}); err != nil {
		t.Fatalf("ping %s from %s: %v", dst, h.Name, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 1500)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatalf("ping %s from %s: no reply: %v", dst, h.Name, err)
		}
		ip, _ := from.(*net.IPAddr)
		if n >= 8 && buf[0] == 0 && binary.BigEndian.Uint16(buf[4:]) == id && ip != nil && ip.IP.Equal(dst.AsSlice()) {
			return
		}
	}
}

// discover sends a DHCP DISCOVER for chaddr from h's port 68 to the
// broadcast address until a server answers with an OFFER.
func discover(t *testing.T, h *Host, chaddr net.HardwareAddr, xid uint32) {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = unix.BindToDevice(int(fd), h.NIC) }); err != nil {
			return err
		}
		return serr
	}}
	var c net.PacketConn
	err := inNetns(h.NS, func() error {
		var err error
		c, err = lc.ListenPacket(t.Context(), "udp4", "0.0.0.0:68")
		return err
	})
	if err != nil {
		t.Fatalf("DHCP client socket in %s: %v", h.Name, err)
	}
	defer c.Close()
	server := &net.UDPAddr{IP: net.IPv4bcast, Port: 67}
	buf := make([]byte, 1500)
	for range 10 {
		if _, err := c.WriteTo(dhcpMessage(1, chaddr, xid), server); err != nil {
			t.Fatalf("DHCP DISCOVER from %s: %v", h.Name, err)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				break // no answer yet: send again
			}
			if n >= 240 && buf[0] == 2 && binary.BigEndian.Uint32(buf[4:]) == xid {
				return
			}
		}
	}
	t.Fatalf("DHCP DISCOVER from %s: no OFFER", h.Name)
}

// waitEnded waits for c to end on its own, within a bound that only a
// broken capture reaches.
func waitEnded(t *testing.T, c *Capture) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Fatal("capture still running")
	}
}

// promiscuous reports whether b's bridge is in promiscuous mode: exactly
// while a capture's socket is open.
func promiscuous(t *testing.T, b *Bed) bool {
	t.Helper()
	out, err := runIP(t.Context(), "-n", b.Switch, "-d", "link", "show", "dev", b.Bridge)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(out), "promiscuity 1")
}

func filter(ps []Packet, match func(Packet) bool) []Packet {
	var out []Packet
	for _, p := range ps {
		if match(p) {
			out = append(out, p)
		}
	}
	return out
}

// dump prints packets one per line, at most 200 of them.
func dump(ps []Packet) string {
	var s strings.Builder
	for i, p := range ps {
		if i == 200 {
			fmt.Fprintf(&s, "... and %d more\n", len(ps)-i)
			break
		}
		s.WriteString(p.String() + "\n")
	}
	return s.String()
}
