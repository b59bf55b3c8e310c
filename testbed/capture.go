package testbed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
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
