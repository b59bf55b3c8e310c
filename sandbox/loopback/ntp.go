package loopback

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// NTP is an SNTP server (RFC 4330) on loopback, over UDP: it answers
// client requests with this machine's clock, as a stratum-1 server whose
// reference is the local clock. The sandbox's hosts share that clock, so
// their ntp-synchronizer step finds them synced, as a real host pointed at
// a reachable NTP server would be.
type NTP struct {
	Addr string // ip:port it listens on, the real port when asked for 0

	conn    net.PacketConn
	now     func() time.Time
	answers atomic.Int64

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// SNTP packet fields.
const (
	ntpPacketLen   = 48
	ntpModeClient  = 3
	ntpModeServer  = 4
	ntpEpochOffset = 2208988800 // seconds from 1900 (NTP era 0) to 1970
	// ntpRefID names the reference of a stratum-1 server: the local clock.
	ntpRefID = "LOCL"
)

// StartNTP starts answering on listen (a loopback ip:port; port 0 picks
// one, see Addr) until ctx ends or Close. Port 123 needs privileges: the
// sandbox's hosts are told the port instead.
func StartNTP(ctx context.Context, listen string) (*NTP, error) {
	ap, err := loopbackAddr(listen)
	if err != nil {
		return nil, fmt.Errorf("start ntp: %w", err)
	}
	var lc net.ListenConfig
	conn, err := lc.ListenPacket(ctx, "udp", ap.String())
	if err != nil {
		return nil, fmt.Errorf("start ntp: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	n := &NTP{Addr: conn.LocalAddr().String(), conn: conn, now: time.Now, cancel: cancel}
	context.AfterFunc(ctx, func() { conn.Close() })
	n.wg.Add(1)
	go func() { defer n.wg.Done(); n.serve(ctx) }()
	return n, nil
}

// Answers returns how many requests the server has answered.
func (n *NTP) Answers() int { return int(n.answers.Load()) }

// Close stops the server and waits for it.
func (n *NTP) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		n.wg.Wait()
	})
	return nil
}

func (n *NTP) serve(ctx context.Context) {
	serveUDP(ctx, n.conn, 512, func(req []byte) []byte {
		return ntpAnswer(req, n.now(), n.now)
	}, func() { n.answers.Add(1) })
}

// ntpAnswer is the server packet for a client request received at
// received, or nil for anything that is not a client request (RFC 4330
// §5: the server answers mode 3 only).
func ntpAnswer(req []byte, received time.Time, now func() time.Time) []byte {
	if len(req) < ntpPacketLen || req[0]&0x7 != ntpModeClient {
		return nil
	}
	version := (req[0] >> 3) & 0x7
	if version < 1 || version > 4 {
		return nil
	}
	resp := make([]byte, ntpPacketLen)
	resp[0] = 0<<6 | version<<3 | ntpModeServer // LI 0: synchronised
	resp[1] = 1                                 // stratum 1: a reference clock
	resp[2] = req[2]                            // poll, as asked
	resp[3] = 0xEC                              // precision 2^-20 s
	copy(resp[12:16], ntpRefID)
	putNTPTime(resp[16:24], received) // reference: the clock is always current
	copy(resp[24:32], req[40:48])     // originate: the client's transmit
	putNTPTime(resp[32:40], received)
	putNTPTime(resp[40:48], now())
	return resp
}

// putNTPTime writes t as a 64-bit NTP timestamp (seconds since 1900 and
// a binary fraction).
func putNTPTime(b []byte, t time.Time) {
	secs := uint64(t.Unix() + ntpEpochOffset)
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	binary.BigEndian.PutUint64(b, secs<<32|frac)
}
