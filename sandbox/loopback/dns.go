package loopback

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// TCP limits: connections served at once (more are closed at accept) and
// how long one may sit idle between queries.
const (
	maxTCPConns = 128
	tcpIdle     = 10 * time.Second
)

// listenAttempts is how many ports StartDNS tries when asked for any port
// ("…:0"): the UDP socket picks one and TCP must get the same.
const listenAttempts = 16

// DNS is an authoritative DNS responder on loopback, over UDP and TCP on
// the same port. It answers only the names it was started with and never
// forwards a query.
type DNS struct {
	Addr string // ip:port it listens on, the real port when asked for 0

	zone    *zone
	udp     net.PacketConn
	tcp     net.Listener
	queries atomic.Int64
	conns   chan struct{} // one token per TCP connection being served

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// StartDNS starts answering on listen (a loopback ip:port; port 0 picks
// one, see Addr): A and AAAA records for the exact names and for every name
// strictly under a wildcard's domain (Name "apps.c.example.com" answers
// "x.apps.c.example.com"), the exact name winning, then the closest
// wildcard; NXDOMAIN for any other name. Names compare case-insensitively,
// a trailing dot or none. It serves until ctx ends or Close.
func StartDNS(ctx context.Context, listen string, exact []Record, wildcards []Record) (*DNS, error) {
	ap, err := loopbackAddr(listen)
	if err != nil {
		return nil, fmt.Errorf("start dns: %w", err)
	}
	z, err := newZone(exact, wildcards)
	if err != nil {
		return nil, fmt.Errorf("start dns: %w", err)
	}
	udp, tcp, err := listenUDPAndTCP(ctx, ap.String(), ap.Port() == 0)
	if err != nil {
		return nil, fmt.Errorf("start dns: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	d := &DNS{Addr: udp.LocalAddr().String(), zone: z, udp: udp, tcp: tcp, conns: make(chan struct{}, maxTCPConns), cancel: cancel}
	context.AfterFunc(ctx, func() {
		udp.Close()
		tcp.Close()
	})
	d.wg.Add(2)
	go func() { defer d.wg.Done(); d.serveUDP(ctx) }()
	go func() { defer d.wg.Done(); d.serveTCP(ctx) }()
	return d, nil
}

// listenUDPAndTCP opens UDP on addr, then TCP on the port UDP got. With
// anyPort, a port TCP cannot have is given back and another one tried.
func listenUDPAndTCP(ctx context.Context, addr string, anyPort bool) (net.PacketConn, net.Listener, error) {
	var lc net.ListenConfig
	for attempt := 1; ; attempt++ {
		udp, err := lc.ListenPacket(ctx, "udp", addr)
		if err != nil {
			return nil, nil, err
		}
		tcp, err := lc.Listen(ctx, "tcp", udp.LocalAddr().String())
		if err == nil {
			return udp, tcp, nil
		}
		udp.Close()
		if !anyPort || !errors.Is(err, syscall.EADDRINUSE) || attempt == listenAttempts {
			return nil, nil, err
		}
	}
}

// Queries returns how many queries the responder has answered, over UDP
// and TCP.
func (d *DNS) Queries() int { return int(d.queries.Load()) }

// Close stops the responder and waits for it.
func (d *DNS) Close() error {
	d.closeOnce.Do(func() {
		d.cancel()
		d.wg.Wait()
	})
	return nil
}

// answer is respond, counted.
func (d *DNS) answer(query []byte, limit int) []byte {
	resp := d.zone.respond(query, limit)
	if resp != nil {
		d.queries.Add(1)
	}
	return resp
}

func (d *DNS) serveUDP(ctx context.Context) {
	serveUDP(ctx, d.udp, 4096, func(q []byte) []byte { return d.answer(q, maxUDPAnswer) }, nil)
}

func (d *DNS) serveTCP(ctx context.Context) {
	wait := backoffFirst
	for {
		c, err := d.tcp.Accept()
		if err != nil {
			if closed(err) {
				return
			}
			var ok bool
			if wait, ok = pause(ctx, wait); !ok {
				return
			}
			continue
		}
		wait = backoffFirst
		select {
		case d.conns <- struct{}{}:
		default:
			c.Close() // at the limit: the client may retry
			continue
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer func() { <-d.conns }()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			d.serveConn(c)
		}()
	}
}

// serveConn answers length-prefixed queries on one TCP connection until
// the client closes it, idles (or stops reading) for tcpIdle, or sends a
// query respond drops.
func (d *DNS) serveConn(c net.Conn) {
	defer c.Close()
	var size [2]byte
	buf := make([]byte, maxTCPAnswer)
	for {
		if err := c.SetDeadline(time.Now().Add(tcpIdle)); err != nil {
			return
		}
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		q := buf[:binary.BigEndian.Uint16(size[:])]
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		resp := d.answer(q, maxTCPAnswer)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(resp)), uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}
