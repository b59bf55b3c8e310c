package timesync

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// An SNTP exchange (RFC 4330): one 48-byte client packet, one 48-byte
// server packet.
const (
	packetLen = 48
	// ntpEpochOffset is the seconds from the NTP era 0 epoch (1900) to the
	// Unix epoch (1970).
	ntpEpochOffset = 2208988800
	modeClient     = 3
	modeServer     = 4
	liAlarm        = 3 // leap indicator "clock not synchronised"
)

// Reply is what one SNTP exchange learned about a source.
type Reply struct {
	Stratum int
	Leap    int
	// Offset is the source clock minus the local clock:
	// ((T2-T1)+(T3-T4))/2 in RFC 4330's terms.
	Offset time.Duration
}

// ErrBadReply is returned (wrapped) for a server packet that is not a valid
// answer to the request.
var ErrBadReply = errors.New("bad sntp reply")

// Query does one SNTP exchange with addr ("host:port") and returns the
// server's answer. The caller judges stratum and offset.
func Query(ctx context.Context, addr string, resolver *net.Resolver, timeout time.Duration) (Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := net.Dialer{Resolver: resolver}
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return Reply{}, fmt.Errorf("sntp query %s: %w", addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return Reply{}, fmt.Errorf("sntp query %s: %w", addr, err)
	}
	// Close the socket when ctx ends early so a cancelled step returns.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	req := make([]byte, packetLen)
	req[0] = 0<<6 | 4<<3 | modeClient // LI 0, version 4, client
	// The transmit timestamp is random (RFC 4330 §6 allows any value the
	// client checks in the reply's originate field); it also defeats
	// spoofed replies. The local send time is kept apart.
	if _, err := rand.Read(req[40:48]); err != nil {
		return Reply{}, fmt.Errorf("sntp query %s: %w", addr, err)
	}
	t1 := time.Now()
	if _, err := conn.Write(req); err != nil {
		return Reply{}, fmt.Errorf("sntp query %s: send: %w", addr, err)
	}
	buf := make([]byte, 512)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return Reply{}, fmt.Errorf("sntp query %s: receive: %w", addr, err)
		}
		t4 := time.Now()
		if n < packetLen || string(buf[24:32]) != string(req[40:48]) {
			continue // not the answer to our request: keep waiting
		}
		return parseReply(buf[:n], t1, t4, addr)
	}
}

// parseReply checks a server packet whose originate timestamp matched and
// computes the offset.
func parseReply(p []byte, t1, t4 time.Time, addr string) (Reply, error) {
	if mode := p[0] & 7; mode != modeServer {
		return Reply{}, fmt.Errorf("sntp query %s: %w: mode %d", addr, ErrBadReply, mode)
	}
	r := Reply{Leap: int(p[0] >> 6), Stratum: int(p[1])}
	t2 := ntpTime(binary.BigEndian.Uint64(p[32:40]))
	t3 := ntpTime(binary.BigEndian.Uint64(p[40:48]))
	if t3.IsZero() {
		return Reply{}, fmt.Errorf("sntp query %s: %w: zero transmit timestamp", addr, ErrBadReply)
	}
	r.Offset = (t2.Sub(t1) + t3.Sub(t4)) / 2
	return r, nil
}

// ntpTime converts a 64-bit NTP timestamp (era 0) to a time; 0 is the zero
// time.
func ntpTime(ts uint64) time.Time {
	if ts == 0 {
		return time.Time{}
	}
	secs := int64(ts>>32) - ntpEpochOffset
	frac := int64((ts & 0xffffffff) * 1e9 >> 32)
	return time.Unix(secs, frac)
}

// NTPTimestamp converts t to a 64-bit NTP timestamp (era 0); test servers
// use it.
func NTPTimestamp(t time.Time) uint64 {
	secs := uint64(t.Unix() + ntpEpochOffset)
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	return secs<<32 | frac
}

// state judges one reply.
func (r Reply) state(maxOffset time.Duration) wire.SourceState {
	if r.Stratum < 1 || r.Stratum > 15 || r.Leap == liAlarm {
		// Stratum 0 is a kiss-o'-death, 16 an unsynchronised server:
		// neither can be synced to.
		return wire.SourceStateUnreachable
	}
	if r.Offset > maxOffset || r.Offset < -maxOffset {
		return wire.SourceStateError
	}
	return wire.SourceStateSynced
}

// checkSNTP queries every source at once and reports each one's state in
// the order given.
func checkSNTP(ctx context.Context, opts Options, sources []string) *wire.NTPSynchronizationResponse {
	resp := &wire.NTPSynchronizationResponse{NTPSources: make([]*wire.NTPSource, len(sources))}
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := wire.SourceStateUnreachable
			addr := net.JoinHostPort(src, strconv.Itoa(opts.Port))
			if r, err := Query(ctx, addr, opts.Resolver, opts.Timeout); err == nil {
				st = r.state(opts.MaxOffset)
			}
			resp.NTPSources[i] = &wire.NTPSource{SourceName: src, SourceState: st}
		}()
	}
	wg.Wait()
	return resp
}
