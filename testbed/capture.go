package testbed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A capture of the bed's switch, for tests that must prove what software
// on the hosts sends: only to the bed's own servers, DHCP only from the
// expected MACs, ARP only inside the bed. Every frame between two hosts,
// and between a host and a service on the gateway, crosses the bridge, so
// one packet socket on the bridge sees them all. Frames are decoded by
// hand into the fields such a test asserts on; the raw bytes are not kept.

// Capture limits.
const (
	// maxPackets bounds a capture's memory: frames past it are counted in
	// Dropped, not kept.
	maxPackets = 200_000
	// snapLen is how much of a frame is read: every header the decoder
	// knows and a whole DHCP message fit. Packet.Len keeps the real length.
	snapLen = 4096
	// rcvBuf is the socket's receive buffer, large enough that a burst
	// (a registry push) does not overflow it while the reader catches up.
	rcvBuf = 8 << 20
)

// EtherType values of Packet.EtherType.
const (
	EtherTypeIPv4 uint16 = 0x0800
	EtherTypeARP  uint16 = 0x0806
	EtherTypeIPv6 uint16 = 0x86dd
)

// IP protocol numbers of Packet.Proto.
const (
	ProtoICMP   uint8 = 1
	ProtoTCP    uint8 = 6
	ProtoUDP    uint8 = 17
	ProtoICMPv6 uint8 = 58
)

// Capture records the frames that cross a bed's bridge, from Bed.Capture
// until Stop, the end of its context, or the deletion of the bridge by
// Bed.Close, whichever comes first.
//
// Each frame that crosses the bridge yields exactly one Packet. The socket
// is bound to the bridge device itself, which the capture puts into
// promiscuous mode, so:
//   - a frame a host sends (to another host, to the gateway, or broadcast)
//     is seen once, as the bridge receives it from the host's cable
//     (Outgoing false); frames from host to host are seen only because the
//     bridge is promiscuous;
//   - a frame the switch namespace sends itself (the gateway's ARP, the
//     answers of dnsmasq, chronyd and the registry) is seen once, as the
//     bridge device transmits it (Outgoing true).
//
// The bridge's forwarding onto its ports does not pass through the bridge
// device again, so nothing is seen twice; frames that stay inside one
// namespace (its lo) never reach the bridge and are not seen. One caveat:
// veths and the bridge pass TCP segmentation-offload "super-frames" whole,
// so a Packet of a bulk TCP transfer may stand for several wire segments
// (its Len says so); its headers are those every segment carries.
type Capture struct {
	bed     *Bed
	file    *os.File
	raw     syscall.RawConn
	ifindex int // the bridge's, in the switch namespace
	limit   int
	done    chan struct{} // closed when the reader has closed the socket
	stopCtx func() bool

	mu      sync.Mutex
	packets []Packet
	dropped int
	err     error
}

// Capture starts recording every frame on the bed's bridge. The packet
// socket is opened inside the switch namespace and stays bound to the
// bridge there; the caller's thread is left in its own namespace.
func (b *Bed) Capture(ctx context.Context) (*Capture, error) {
	return b.capture(ctx, maxPackets)
}

func (b *Bed) capture(ctx context.Context, limit int) (*Capture, error) {
	// Held so that Close cannot delete the bridge while the socket is made.
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("capture on test bed %s: %w", b.ID, net.ErrClosed)
	}
	var fd, ifindex int
	err := inNetns(b.Switch, func() error {
		var err error
		fd, ifindex, err = openPacketSocket(b.Bridge)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("capture on bridge %s: %w", b.Bridge, err)
	}
	// A non-blocking descriptor joins Go's poller, so that a read deadline
	// can wake the reader; a descriptor that did not join cannot be stopped.
	f := os.NewFile(uintptr(fd), "packet:"+b.Bridge)
	raw, err := f.SyscallConn()
	if err == nil {
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture on bridge %s: %w", b.Bridge, err)
	}
	c := &Capture{bed: b, file: f, raw: raw, ifindex: ifindex, limit: limit, done: make(chan struct{})}
	go c.read()
	c.stopCtx = context.AfterFunc(ctx, c.halt)
	return c, nil
}

// openPacketSocket opens a raw packet socket for every protocol on the
// named interface of the calling thread's namespace, in promiscuous mode,
// with the kernel's timestamp and auxiliary data (real length, VLAN tag)
// on each frame.
func openPacketSocket(name string) (fd, ifindex int, err error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return -1, 0, err
	}
	// Protocol 0: the socket hears nothing until bind names the bridge,
	// so no frame of another interface slips in first.
	fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("packet socket: %w", err)
	}
	steps := []struct {
		op string
		do func() error
	}{
		{"packet auxdata", func() error { return unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1) }},
		{"timestamps", func() error { return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }},
		{"receive buffer", func() error { return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf) }},
		{"promiscuous mode", func() error {
			mreq := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
			return unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq)
		}},
		{"bind", func() error {
			return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index})
		}},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			unix.Close(fd)
			return -1, 0, fmt.Errorf("packet socket on %s: %s: %w", name, s.op, err)
		}
	}
	return fd, ifi.Index, nil
}

// Stop ends the capture and returns what it recorded, in the order the
// socket received it. Frames already queued on the socket are kept. Every
// call returns the same slice; callers must not modify it.
func (c *Capture) Stop() []Packet {
	c.stopCtx()
	c.halt()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.packets
}

// Dropped is the number of frames the capture saw but did not record:
// those past its limit of 200,000 and those the kernel dropped because the
// socket's buffer was full (counted when the capture ends). A test that
// asserts the absence of some traffic must also check Dropped is 0.
func (c *Capture) Dropped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped
}

// Err reports a failure that ended the capture early: frames after it are
// missing. It is nil when the capture ran until Stop, its context ended or
// the bed was closed.
func (c *Capture) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// halt wakes the reader and makes it finish. After the reader has closed
// the socket it does nothing.
func (c *Capture) halt() { _ = c.file.SetReadDeadline(time.Now()) }

// read records frames until halted, until the bridge is deleted or a read
// fails; then it records what is still queued and closes the socket.
func (c *Capture) read() {
	defer close(c.done)
	buf := make([]byte, snapLen)
	oob := make([]byte, unix.CmsgSpace(sizeofAuxdata)+unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	var fail error
loop:
	for {
		var n, oobn int
		var from unix.Sockaddr
		var rerr error
		err := c.raw.Read(func(fd uintptr) bool {
			n, oobn, _, from, rerr = unix.Recvmsg(int(fd), buf, oob, 0)
			return rerr != unix.EAGAIN
		})
		if err == nil {
			err = rerr
		}
		switch {
		case err == nil:
			c.record(buf[:n], oob[:oobn], from)
		case errors.Is(err, os.ErrDeadlineExceeded): // halted
			break loop
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ENETDOWN):
			// The bridge went down: for good when it was deleted, else
			// the socket hears it again once it is up.
			if c.bridgeLost() {
				break loop
			}
		default:
			fail = fmt.Errorf("capture: read: %w", err)
			break loop
		}
	}
	fail = errors.Join(fail, c.drain(buf, oob))
	c.file.Close()
	c.mu.Lock()
	c.err = fail
	c.mu.Unlock()
}

// bridgeLost reports whether the bridge is gone for good after the socket
// heard it go down. The kernel reports "down" before it unbinds a socket
// from a deleted interface, so the binding alone cannot tell while Bed.Close
// is deleting the bridge; Close holds the bed's lock until it is done, so
// waiting for the lock settles it.
func (c *Capture) bridgeLost() bool {
	c.bed.mu.Lock()
	closed := c.bed.closed
	c.bed.mu.Unlock()
	if closed {
		return true
	}
	lost := true
	_ = c.raw.Control(func(fd uintptr) {
		sa, err := unix.Getsockname(int(fd))
		ll, ok := sa.(*unix.SockaddrLinklayer)
		lost = err != nil || !ok || ll.Ifindex != c.ifindex
	})
	return lost
}

// drain records the frames still queued on the socket, then adds the
// kernel's count of frames it dropped for a full buffer.
func (c *Capture) drain(buf, oob []byte) error {
	var err error
	cerr := c.raw.Control(func(fd uintptr) {
		// A filter that refuses every frame keeps traffic still flowing
		// from prolonging the drain; what is queued stays. (Rebinding
		// cannot do it: protocol 0 in a bind means "keep the protocol".)
		// Should it fail, the loop's bound still ends the drain.
		refuse := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 0}}
		_ = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER,
			&unix.SockFprog{Len: uint16(len(refuse)), Filter: &refuse[0]})
		for range rcvBuf / 64 { // at most what the buffer can hold
			n, oobn, _, from, rerr := unix.Recvmsg(int(fd), buf, oob, unix.MSG_DONTWAIT)
			if errors.Is(rerr, unix.ENETDOWN) || errors.Is(rerr, unix.EINTR) {
				continue
			}
			if rerr != nil {
				break // EAGAIN: the queue is empty
			}
			c.record(buf[:n], oob[:oobn], from)
		}
		st, serr := unix.GetsockoptTpacketStats(int(fd), unix.SOL_PACKET, unix.PACKET_STATISTICS)
		if serr != nil {
			err = fmt.Errorf("capture: read drop count: %w", serr)
			return
		}
		c.mu.Lock()
		c.dropped += int(st.Drops)
		c.mu.Unlock()
	})
	return errors.Join(err, cerr)
}

// record decodes one frame with its control messages and keeps it, or
// counts it when the capture is full.
func (c *Capture) record(frame, oob []byte, from unix.Sockaddr) {
	c.mu.Lock()
	full := len(c.packets) >= c.limit
	if full {
		c.dropped++
	}
	c.mu.Unlock()
	if full {
		return
	}
	p := decodeFrame(frame)
	p.Time = time.Now()
	if ll, ok := from.(*unix.SockaddrLinklayer); ok {
		p.Outgoing = ll.Pkttype == unix.PACKET_OUTGOING
	}
	msgs, _ := unix.ParseSocketControlMessage(oob) // a malformed one only loses metadata
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.SOL_PACKET && m.Header.Type == unix.PACKET_AUXDATA &&
			len(m.Data) >= sizeofAuxdata:
			aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
			p.Len = int(aux.Len)
			// The kernel moves a VLAN tag out of the frame into this
			// metadata before the socket sees it; it is the outer one.
			if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 {
				p.VLAN = aux.Vlan_tci & 0x0fff
			}
		case m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS &&
			len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})):
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			p.Time = time.Unix(ts.Unix())
		}
	}
	c.mu.Lock()
	c.packets = append(c.packets, p)
	c.mu.Unlock()
}

// sizeofAuxdata is the size of struct tpacket_auxdata.
const sizeofAuxdata = int(unsafe.Sizeof(unix.TpacketAuxdata{}))

// htons converts v to network byte order, as sockaddr_ll's protocol wants.
func htons(v uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], v)
	return binary.NativeEndian.Uint16(b[:])
}

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
