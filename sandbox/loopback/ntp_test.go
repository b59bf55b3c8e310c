package loopback

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/nodezero/nodezero/hostagent/timesync"
	"github.com/nodezero/nodezero/wire"
)

// TestNTPSyncsTheAgentsCheck: the agent's own SNTP client (the
// ntp-synchronizer step's fallback) finds the server synced, stratum 1,
// with the machine's clock.
func TestNTPSyncsTheAgentsCheck(t *testing.T) {
	ctx := context.Background()
	n, err := StartNTP(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	r, err := timesync.Query(ctx, n.Addr, net.DefaultResolver, 5*time.Second)
	if err != nil {
		t.Fatalf("Query(%s): %v", n.Addr, err)
	}
	if r.Stratum != 1 || r.Leap != 0 {
		t.Errorf("stratum %d, leap %d; want 1, 0", r.Stratum, r.Leap)
	}
	// Same clock on both sides: any offset is the exchange's rounding,
	// far below the step's ten minutes; a wrong epoch would be 70 years.
	if r.Offset > time.Minute || r.Offset < -time.Minute {
		t.Errorf("offset %v, want about zero", r.Offset)
	}
	host, port, _ := net.SplitHostPort(n.Addr)
	p, _ := net.LookupPort("udp", port)
	resp, err := timesync.Check(ctx, timesync.Options{Port: p}, []string{host})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.NTPSources) != 1 || resp.NTPSources[0].SourceState != wire.SourceStateSynced {
		t.Errorf("ntp-synchronizer's check = %+v, want %s synced", resp.NTPSources, host)
	}
	if n.Answers() != 2 {
		t.Errorf("answers %d, want 2", n.Answers())
	}
}

// TestNTPAnswersClientsOnly: a server or broadcast packet, a short one or
// an unknown version gets no answer (the server never talks to a server).
func TestNTPAnswersClientsOnly(t *testing.T) {
	now := func() time.Time { return time.Unix(1700000000, 0) }
	client := func(b0 byte) []byte {
		p := make([]byte, ntpPacketLen)
		p[0] = b0
		return p
	}
	cases := []struct {
		name   string
		req    []byte
		answer bool
	}{
		{"v4 client", client(4<<3 | 3), true},
		{"v3 client", client(3<<3 | 3), true},
		{"server", client(4<<3 | 4), false},
		{"broadcast", client(4<<3 | 5), false},
		{"version 0", client(0<<3 | 3), false},
		{"short", client(4<<3 | 3)[:47], false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ntpAnswer(tc.req, now(), now)
			if (got != nil) != tc.answer {
				t.Errorf("ntpAnswer(%x…) = %x, want an answer: %v", tc.req[:1], got, tc.answer)
			}
			if got != nil && (got[0]&7 != ntpModeServer || got[0]>>3&7 != tc.req[0]>>3&7) {
				t.Errorf("answer mode %d version %d, want server and the request's version", got[0]&7, got[0]>>3&7)
			}
		})
	}
}

// TestNTPRefusesNonLoopback: like the other responders, never a listener
// off loopback.
func TestNTPRefusesNonLoopback(t *testing.T) {
	if _, err := StartNTP(context.Background(), "0.0.0.0:0"); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("StartNTP(0.0.0.0:0) = %v, want ErrNotLoopback", err)
	}
}
