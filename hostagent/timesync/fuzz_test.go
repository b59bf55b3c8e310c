package timesync

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// FuzzSNTPReply answers the agent's SNTP query with any packet, then with
// a well-formed one, from a server on loopback. The fuzzed packet is taken
// only when it is a server packet that answers this request, and then
// refused unless its transmit time is set; any other packet is skipped and
// the well-formed answer taken. Either way Query returns at once, with
// figures a packet can carry.
func FuzzSNTPReply(f *testing.F) {
	good := func(stratum byte) []byte {
		p := make([]byte, packetLen)
		p[0], p[1] = 4<<3|modeServer, stratum
		binary.BigEndian.PutUint64(p[32:40], NTPTimestamp(time.Now()))
		binary.BigEndian.PutUint64(p[40:48], NTPTimestamp(time.Now()))
		return p
	}
	f.Add(good(2), true)
	f.Add(good(0), true)
	f.Add(append(good(16), make([]byte, 400)...), true)
	f.Add(good(2), false)
	f.Add(good(2)[:47], true)
	f.Add([]byte{0xdb, 1}, true)
	zero := good(3)
	clear(zero[40:48])
	f.Add(zero, true)

	srv := &fuzzSNTP{}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		f.Fatalf("listen udp: %v", err)
	}
	srv.conn = conn
	srv.wg.Add(1)
	go srv.serve()
	f.Cleanup(func() {
		conn.Close()
		srv.wg.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port))
	f.Fuzz(func(t *testing.T, pkt []byte, echo bool) {
		srv.set(pkt, echo)
		start := time.Now()
		r, err := Query(context.Background(), addr, nil, 5*time.Second)
		if took := time.Since(start); took > 4*time.Second {
			t.Fatalf("Query took %v: a bad packet held it up", took)
		}
		taken := len(pkt) >= packetLen && echo
		if err != nil {
			if !taken || !errors.Is(err, ErrBadReply) {
				t.Fatalf("Query: %v (packet %x, echo %v)", err, pkt, echo)
			}
			if pkt[0]&7 == modeServer && binary.BigEndian.Uint64(pkt[40:48]) != 0 {
				t.Fatalf("Query refused a server packet with a transmit time: %v", err)
			}
			return
		}
		if r.Leap < 0 || r.Leap > 3 || r.Stratum < 0 || r.Stratum > 255 {
			t.Fatalf("Query = %+v", r)
		}
		if !taken && (r.Stratum != 2 || r.Leap != 0) {
			t.Fatalf("Query took the skipped packet: %+v", r)
		}
		if taken && (pkt[0]&7 != modeServer || r.Stratum != int(pkt[1])) {
			t.Fatalf("Query accepted packet %x as %+v", pkt, r)
		}
		if st := r.state(time.Second); (r.Stratum == 0 || r.Stratum > 15 || r.Leap == liAlarm) && st != "unreachable" {
			t.Fatalf("reply %+v judged %s", r, st)
		}
	})
}

// fuzzSNTP answers each request with the current fuzzed packet (its
// originate field made to match the request when echo is set) and then a
// well-formed stratum 2 answer.
type fuzzSNTP struct {
	conn *net.UDPConn
	wg   sync.WaitGroup
	mu   sync.Mutex
	pkt  []byte
	echo bool
}

func (s *fuzzSNTP) set(pkt []byte, echo bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pkt, s.echo = pkt, echo
}

func (s *fuzzSNTP) serve() {
	defer s.wg.Done()
	buf := make([]byte, 512)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if n < packetLen {
			continue
		}
		s.mu.Lock()
		first := append([]byte(nil), s.pkt...)
		if s.echo && len(first) >= 32 {
			copy(first[24:32], buf[40:48])
		}
		s.mu.Unlock()
		ok := make([]byte, packetLen)
		ok[0], ok[1] = 4<<3|modeServer, 2
		copy(ok[24:32], buf[40:48])
		binary.BigEndian.PutUint64(ok[32:40], NTPTimestamp(time.Now()))
		binary.BigEndian.PutUint64(ok[40:48], NTPTimestamp(time.Now()))
		for _, p := range [][]byte{first, ok} {
			if _, err := s.conn.WriteToUDP(p, from); err != nil {
				return
			}
		}
	}
}
