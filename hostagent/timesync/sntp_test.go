package timesync

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// sntpServer is a tiny NTP server on 127.0.0.1 answering with the given
// stratum and a clock shifted by skew.
type sntpServer struct {
	conn    *net.UDPConn
	stratum byte
	skew    time.Duration
	wg      sync.WaitGroup
}

func startSNTP(t *testing.T, stratum byte, skew time.Duration) *sntpServer {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("listen udp: %v", err)
	}
	s := &sntpServer{conn: conn, stratum: stratum, skew: skew}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() {
		conn.Close()
		s.wg.Wait()
	})
	return s
}

func (s *sntpServer) port() int { return s.conn.LocalAddr().(*net.UDPAddr).Port }

func (s *sntpServer) serve() {
	defer s.wg.Done()
	buf := make([]byte, 512)
	for {
		n, from, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return // closed by the test's cleanup
		}
		if n < packetLen {
			continue
		}
		rx := time.Now().Add(s.skew)
		out := make([]byte, packetLen)
		out[0] = 0<<6 | (buf[0]>>3&7)<<3 | modeServer
		out[1] = s.stratum
		out[2] = buf[2]                                    // poll
		out[3] = 0xec                                      // precision ~2^-20 s
		binary.BigEndian.PutUint32(out[12:16], 0x7f7f0101) // reference id
		copy(out[24:32], buf[40:48])                       // originate = client transmit
		binary.BigEndian.PutUint64(out[16:24], NTPTimestamp(rx))
		binary.BigEndian.PutUint64(out[32:40], NTPTimestamp(rx))
		binary.BigEndian.PutUint64(out[40:48], NTPTimestamp(time.Now().Add(s.skew)))
		if _, err := s.conn.WriteToUDP(out, from); err != nil {
			return
		}
	}
}

func TestQuery(t *testing.T) {
	srv := startSNTP(t, 2, time.Hour)
	r, err := Query(context.Background(), net.JoinHostPort("127.0.0.1", itoa(srv.port())), nil, 5*time.Second)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	if r.Stratum != 2 {
		t.Errorf("Query stratum = %d, want 2", r.Stratum)
	}
	// The server's clock is an hour ahead; the round trip on loopback is
	// far below a minute.
	if d := r.Offset - time.Hour; d < -time.Minute || d > time.Minute {
		t.Errorf("Query offset = %v, want about 1h", r.Offset)
	}
}

func TestQueryClosedPort(t *testing.T) {
	port := closedPort(t)
	_, err := Query(context.Background(), net.JoinHostPort("127.0.0.1", itoa(port)), nil, 5*time.Second)
	if err == nil {
		t.Fatal("Query of a closed port succeeded")
	}
}

func TestQueryCancelled(t *testing.T) {
	// A socket that never answers: Query must return once ctx ends.
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Query(ctx, conn.LocalAddr().String(), nil, time.Hour)
	if !errors.Is(err, context.Canceled) && err == nil {
		t.Fatalf("Query with a cancelled ctx = %v, want an error", err)
	}
}

func TestNTPTimestampRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		time.Unix(0, 0),
		time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC),
		time.Date(2036, 2, 7, 6, 28, 15, 0, time.UTC), // last second of era 0
	} {
		got := ntpTime(NTPTimestamp(tm))
		if d := got.Sub(tm); d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("ntpTime(NTPTimestamp(%v)) = %v, off by %v", tm, got, d)
		}
	}
}

func TestReplyState(t *testing.T) {
	tests := []struct {
		name string
		r    Reply
		want wire.SourceState
	}{
		{"stratum 1", Reply{Stratum: 1}, wire.SourceStateSynced},
		{"stratum 15 small offset", Reply{Stratum: 15, Offset: -time.Second}, wire.SourceStateSynced},
		{"kiss of death", Reply{Stratum: 0}, wire.SourceStateUnreachable},
		{"unsynchronised", Reply{Stratum: 16}, wire.SourceStateUnreachable},
		{"alarm", Reply{Stratum: 2, Leap: liAlarm}, wire.SourceStateUnreachable},
		{"far ahead", Reply{Stratum: 2, Offset: time.Hour}, wire.SourceStateError},
		{"far behind", Reply{Stratum: 2, Offset: -time.Hour}, wire.SourceStateError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.state(DefaultMaxOffset); got != tt.want {
				t.Errorf("%+v.state() = %q, want %q", tt.r, got, tt.want)
			}
		})
	}
}

func TestStepSNTP(t *testing.T) {
	good := startSNTP(t, 2, 0)
	port := good.port()
	// 127.0.0.2 is loopback too, but nothing listens there on port.
	step := Step(Options{Port: port})
	out, stderr, code := step(context.Background(), []string{`{"ntp_source":"127.0.0.1,127.0.0.2"}`})
	if code != 0 {
		t.Fatalf("step exit %d, stderr %q", code, stderr)
	}
	var got wire.NTPSynchronizationResponse
	if err := wire.DecodeEmbedded(out, &got); err != nil {
		t.Fatal(err)
	}
	want := wire.NTPSynchronizationResponse{NTPSources: []*wire.NTPSource{
		{SourceName: "127.0.0.1", SourceState: wire.SourceStateSynced},
		{SourceName: "127.0.0.2", SourceState: wire.SourceStateUnreachable},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step output (-want +got):\n%s", diff)
	}
}

func TestStepSNTPBadServers(t *testing.T) {
	tests := []struct {
		name    string
		stratum byte
		skew    time.Duration
		want    wire.SourceState
	}{
		{"unsynchronised server", 16, 0, wire.SourceStateUnreachable},
		{"clock a day off", 1, 24 * time.Hour, wire.SourceStateError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startSNTP(t, tt.stratum, tt.skew)
			out, stderr, code := Step(Options{Port: srv.port()})(context.Background(), []string{`{"ntp_source":"127.0.0.1"}`})
			if code != 0 {
				t.Fatalf("step exit %d, stderr %q", code, stderr)
			}
			var got wire.NTPSynchronizationResponse
			if err := wire.DecodeEmbedded(out, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.NTPSources) != 1 || got.NTPSources[0].SourceState != tt.want {
				t.Errorf("step output = %s, want one source %q", out, tt.want)
			}
		})
	}
}

func TestStepNoChronydFallsBack(t *testing.T) {
	// chronyc pointed at a socket nobody serves: the step uses SNTP.
	chronyc := needTool(t, "chronyc")
	srv := startSNTP(t, 3, 0)
	opts := Options{Chronyc: []string{chronyc, "-h", t.TempDir() + "/none.sock"}, Port: srv.port()}
	out, stderr, code := Step(opts)(context.Background(), []string{`{"ntp_source":"127.0.0.1"}`})
	if code != 0 {
		t.Fatalf("step exit %d, stderr %q", code, stderr)
	}
	want := `{"ntp_sources":[{"source_name":"127.0.0.1","source_state":"synced"}]}`
	if out != want {
		t.Errorf("step output = %s, want %s", out, want)
	}
}

func closedPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	c.Close()
	return port
}
