package testbed

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Packet is one frame seen on the bridge, decoded. Fields of layers the
// frame does not carry are zero: check EtherType and Proto before reading
// the fields that depend on them.
type Packet struct {
	Time     time.Time // when the kernel handed the frame to the capture
	Outgoing bool      // sent by the switch namespace (the gateway, the bed's servers); else received from a host's cable
	Len      int       // the frame's length (more than an MTU for an offloaded TCP burst); only its first 4096 bytes are decoded
	VLAN     uint16    // the outer 802.1Q VLAN ID, 0 when untagged or priority-tagged

	SrcMAC, DstMAC net.HardwareAddr
	EtherType      uint16 // after any VLAN tags

	// ARP (EtherType 0x0806). The addresses are decoded for Ethernet and
	// IPv4 only; other hardware or protocol types carry just Op.
	Op                   uint16 // 1 request, 2 reply
	SenderMAC, TargetMAC net.HardwareAddr
	SenderIP, TargetIP   netip.Addr

	// IPv4 and IPv6.
	Src, Dst netip.Addr
	Proto    uint8 // the transport protocol, after IPv6 extension headers
	Fragment bool  // a fragment other than the first: it carries no transport header

	// TCP and UDP.
	SrcPort, DstPort uint16
	TCPFlags         uint8 // FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, ...

	// ICMP and ICMPv6.
	ICMPType, ICMPCode uint8

	// DHCPv4 (UDP port 67 or 68 over IPv4).
	DHCPClientMAC   net.HardwareAddr // chaddr, for an Ethernet client
	DHCPMessageType uint8            // option 53: 1 DISCOVER, 2 OFFER, 3 REQUEST, 5 ACK, ...

	// Truncated: the frame ended inside a header the decoder expected;
	// the fields of that header and those after it are zero or partial.
	Truncated bool
}

// decodeFrame decodes an Ethernet frame as far as it goes. It never
// panics, whatever the bytes, and keeps no reference to frame.
func decodeFrame(frame []byte) Packet {
	p := Packet{Len: len(frame)}
	if len(frame) < 14 {
		p.Truncated = true
		return p
	}
	p.DstMAC, p.SrcMAC = hwAddr(frame[0:6]), hwAddr(frame[6:12])
	et, b := binary.BigEndian.Uint16(frame[12:]), frame[14:]
	for first := true; et == 0x8100 || et == 0x88a8 || et == 0x9100; first = false {
		if len(b) < 4 {
			p.EtherType, p.Truncated = et, true
			return p
		}
		if first {
			p.VLAN = binary.BigEndian.Uint16(b) & 0x0fff
		}
		et, b = binary.BigEndian.Uint16(b[2:]), b[4:]
	}
	p.EtherType = et
	switch et {
	case EtherTypeARP:
		p.decodeARP(b)
	case EtherTypeIPv4:
		p.decodeIPv4(b)
	case EtherTypeIPv6:
		p.decodeIPv6(b)
	}
	return p
}

func (p *Packet) decodeARP(b []byte) {
	if len(b) < 8 {
		p.Truncated = true
		return
	}
	p.Op = binary.BigEndian.Uint16(b[6:])
	htype, ptype, hlen, plen := binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:]), b[4], b[5]
	if htype != 1 || ptype != EtherTypeIPv4 || hlen != 6 || plen != 4 {
		return
	}
	if len(b) < 18 {
		p.Truncated = true
		return
	}
	p.SenderMAC, p.SenderIP = hwAddr(b[8:14]), netip.AddrFrom4([4]byte(b[14:18]))
	if len(b) < 28 {
		p.Truncated = true
		return
	}
	p.TargetMAC, p.TargetIP = hwAddr(b[18:24]), netip.AddrFrom4([4]byte(b[24:28]))
}

func (p *Packet) decodeIPv4(b []byte) {
	if len(b) < 20 {
		p.Truncated = true
		return
	}
	p.Proto = b[9]
	p.Src, p.Dst = netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
	ihl := int(b[0]&0x0f) * 4
	if ihl < 20 {
		return // malformed: no telling where the payload starts
	}
	if binary.BigEndian.Uint16(b[6:])&0x1fff != 0 {
		p.Fragment = true
		return
	}
	if len(b) < ihl {
		p.Truncated = true
		return
	}
	// The total length drops Ethernet padding. It is larger than the frame
	// when the capture cut it, and 0 in a segmentation-offload super-frame.
	if total := int(binary.BigEndian.Uint16(b[2:])); total >= ihl && total < len(b) {
		b = b[:total]
	}
	p.decodeTransport(b[ihl:])
}

func (p *Packet) decodeIPv6(b []byte) {
	if len(b) < 40 {
		p.Truncated = true
		return
	}
	p.Src, p.Dst = netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
	next := b[6]
	if plen := int(binary.BigEndian.Uint16(b[4:])); plen > 0 && 40+plen < len(b) {
		b = b[:40+plen] // drop Ethernet padding
	}
	b = b[40:]
	// Walk the extension headers; each step consumes at least 8 bytes.
	for {
		var n int
		switch next {
		case 0, 43, 60: // hop-by-hop options, routing, destination options
			if len(b) >= 2 {
				n = (int(b[1]) + 1) * 8
			}
		case 51: // authentication header
			if len(b) >= 2 {
				n = (int(b[1]) + 2) * 4
			}
		case 44: // fragment
			n = 8
			if len(b) >= 4 && binary.BigEndian.Uint16(b[2:])&0xfff8 != 0 {
				p.Proto, p.Fragment = b[0], true
				return
			}
		default:
			p.Proto = next
			p.decodeTransport(b)
			return
		}
		if n == 0 || len(b) < n {
			p.Proto, p.Truncated = next, true
			return
		}
		next, b = b[0], b[n:]
	}
}

func (p *Packet) decodeTransport(b []byte) {
	switch p.Proto {
	case ProtoTCP, ProtoUDP:
		if len(b) < 4 {
			p.Truncated = true
			return
		}
		p.SrcPort, p.DstPort = binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
		if p.Proto == ProtoTCP {
			if len(b) < 14 {
				p.Truncated = true
				return
			}
			p.TCPFlags = b[13]
			return
		}
		if len(b) < 8 {
			p.Truncated = true
			return
		}
		if l := int(binary.BigEndian.Uint16(b[4:])); l >= 8 && l < len(b) {
			b = b[:l]
		}
		if p.EtherType == EtherTypeIPv4 && (isDHCPPort(p.SrcPort) || isDHCPPort(p.DstPort)) {
			p.decodeDHCP(b[8:])
		}
	case ProtoICMP, ProtoICMPv6:
		if len(b) < 2 {
			p.Truncated = true
			return
		}
		p.ICMPType, p.ICMPCode = b[0], b[1]
	}
}

func isDHCPPort(port uint16) bool { return port == 67 || port == 68 }

// dhcpMagic starts the options of a DHCP message (RFC 2131 §3).
const dhcpMagic = 0x63825363

// decodeDHCP reads a BOOTP/DHCP message: chaddr when the client's hardware
// is Ethernet, and option 53, the message type.
func (p *Packet) decodeDHCP(b []byte) {
	if len(b) < 34 {
		p.Truncated = true
		return
	}
	if htype, hlen := b[1], b[2]; htype == 1 && hlen == 6 {
		p.DHCPClientMAC = hwAddr(b[28:34])
	}
	if len(b) < 240 {
		p.Truncated = true
		return
	}
	if binary.BigEndian.Uint32(b[236:]) != dhcpMagic {
		return // plain BOOTP
	}
	for opts := b[240:]; len(opts) > 0; {
		switch code := opts[0]; code {
		case 0: // pad
			opts = opts[1:]
		case 255: // end
			return
		default:
			if len(opts) < 2 || len(opts) < 2+int(opts[1]) {
				p.Truncated = true
				return
			}
			if code == 53 && opts[1] == 1 {
				p.DHCPMessageType = opts[2]
			}
			opts = opts[2+int(opts[1]):]
		}
	}
}

// hwAddr copies a MAC out of a frame: the frame's buffer is reused.
func hwAddr(b []byte) net.HardwareAddr { return net.HardwareAddr(slices.Clone(b)) }

// String is one line for a failure message, e.g.
//
//	12:00:01.000042 in 02:a1:..:00 > ff:ff:ff:ff:ff:ff ARP request who-has 10.231.0.11 tell 10.231.0.10
func (p Packet) String() string {
	var s strings.Builder
	if !p.Time.IsZero() {
		s.WriteString(p.Time.Format("15:04:05.000000 "))
	}
	if p.Outgoing {
		s.WriteString("out ")
	} else {
		s.WriteString("in ")
	}
	fmt.Fprintf(&s, "%s > %s", macString(p.SrcMAC), macString(p.DstMAC))
	if p.VLAN != 0 {
		fmt.Fprintf(&s, " vlan %d", p.VLAN)
	}
	switch p.EtherType {
	case EtherTypeARP:
		p.writeARP(&s)
	case EtherTypeIPv4, EtherTypeIPv6:
		p.writeIP(&s)
	case 0:
	default:
		fmt.Fprintf(&s, " ethertype %#04x", p.EtherType)
	}
	if p.Truncated {
		s.WriteString(" (truncated)")
	}
	return s.String()
}

func (p Packet) writeARP(s *strings.Builder) {
	switch {
	case p.Op == 1 && p.SenderIP.IsValid():
		fmt.Fprintf(s, " ARP request who-has %s tell %s", addrString(p.TargetIP), p.SenderIP)
	case p.Op == 2 && p.SenderIP.IsValid():
		fmt.Fprintf(s, " ARP reply %s is-at %s to %s", p.SenderIP, macString(p.SenderMAC), addrString(p.TargetIP))
	default:
		fmt.Fprintf(s, " ARP op %d", p.Op)
	}
}

func (p Packet) writeIP(s *strings.Builder) {
	if p.EtherType == EtherTypeIPv4 {
		s.WriteString(" IPv4")
	} else {
		s.WriteString(" IPv6")
	}
	if !p.Src.IsValid() {
		return
	}
	ports := (p.Proto == ProtoTCP || p.Proto == ProtoUDP) && !p.Fragment
	switch p.Proto {
	case ProtoTCP:
		s.WriteString(" TCP ")
	case ProtoUDP:
		s.WriteString(" UDP ")
	case ProtoICMP:
		s.WriteString(" ICMP ")
	case ProtoICMPv6:
		s.WriteString(" ICMPv6 ")
	default:
		fmt.Fprintf(s, " proto %d ", p.Proto)
	}
	if ports {
		fmt.Fprintf(s, "%s > %s", netip.AddrPortFrom(p.Src, p.SrcPort), netip.AddrPortFrom(p.Dst, p.DstPort))
	} else {
		fmt.Fprintf(s, "%s > %s", p.Src, p.Dst)
	}
	switch {
	case p.Fragment:
		s.WriteString(" fragment")
	case p.Proto == ProtoTCP:
		s.WriteString(" flags " + tcpFlags(p.TCPFlags))
	case p.Proto == ProtoICMP || p.Proto == ProtoICMPv6:
		s.WriteString(" " + icmpName(p.Proto, p.ICMPType, p.ICMPCode))
	}
	if p.DHCPMessageType != 0 || p.DHCPClientMAC != nil {
		fmt.Fprintf(s, " DHCP %s chaddr %s", dhcpTypeName(p.DHCPMessageType), macString(p.DHCPClientMAC))
	}
}

func macString(m net.HardwareAddr) string {
	if m == nil {
		return "?"
	}
	return m.String()
}

func addrString(a netip.Addr) string {
	if !a.IsValid() {
		return "?"
	}
	return a.String()
}

// tcpFlags writes TCP flags as letters, e.g. "SA" for SYN+ACK, "-" for none.
func tcpFlags(f uint8) string {
	const letters = "FSRPAUEC" // FIN, SYN, RST, PSH, ACK, URG, ECE, CWR
	var out []byte
	for i := range 8 {
		if f&(1<<i) != 0 {
			out = append(out, letters[i])
		}
	}
	if out == nil {
		return "-"
	}
	return string(out)
}

func icmpName(proto, typ, code uint8) string {
	names := map[uint8]string{0: "echo reply", 3: "unreachable", 5: "redirect", 8: "echo request", 11: "time exceeded"}
	if proto == ProtoICMPv6 {
		names = map[uint8]string{1: "unreachable", 2: "packet too big", 3: "time exceeded",
			128: "echo request", 129: "echo reply", 133: "router solicitation", 134: "router advertisement",
			135: "neighbor solicitation", 136: "neighbor advertisement", 143: "MLDv2 report"}
	}
	if n, ok := names[typ]; ok && code == 0 {
		return n
	}
	if n, ok := names[typ]; ok {
		return n + " code " + strconv.Itoa(int(code))
	}
	return fmt.Sprintf("type %d code %d", typ, code)
}

func dhcpTypeName(t uint8) string {
	names := []string{1: "DISCOVER", 2: "OFFER", 3: "REQUEST", 4: "DECLINE", 5: "ACK", 6: "NAK", 7: "RELEASE", 8: "INFORM"}
	switch {
	case t == 0:
		return "(no type)"
	case int(t) < len(names):
		return names[t]
	}
	return "type " + strconv.Itoa(int(t))
}
