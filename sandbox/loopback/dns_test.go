package loopback

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/dns/dnsmessage"
)

var (
	apiIP    = netip.MustParseAddr("127.0.10.1")
	apiIntIP = netip.MustParseAddr("127.0.10.2")
	appsIP   = netip.MustParseAddr("127.0.10.3")
	deepIP   = netip.MustParseAddr("127.0.10.4")
	regIP    = netip.MustParseAddr("127.0.10.5")
	apiIP6   = netip.MustParseAddr("fd00::1")
)

// testRecords are a cluster's names: exact ones, and *.apps with a more
// specific wildcard under it.
func testRecords() (exact, wildcards []Record) {
	exact = []Record{
		{Name: "api.c.example.com", Addrs: []netip.Addr{apiIP, apiIP6}},
		{Name: "API-INT.c.example.com.", Addrs: []netip.Addr{apiIntIP}},
		{Name: "only6.c.example.com", Addrs: []netip.Addr{apiIP6}},
		{Name: "console.apps.c.example.com", Addrs: []netip.Addr{regIP}}, // beats the wildcard
	}
	wildcards = []Record{
		{Name: "apps.c.example.com", Addrs: []netip.Addr{appsIP}},
		{Name: "deep.apps.c.example.com", Addrs: []netip.Addr{deepIP}},
	}
	return exact, wildcards
}

// startTestDNS starts the responder on loopback and closes it when the test
// ends.
func startTestDNS(t *testing.T, exact, wildcards []Record) *DNS {
	t.Helper()
	d, err := StartDNS(t.Context(), "127.0.0.1:0", exact, wildcards)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// resolverFor is Go's own resolver asking only d, over network ("udp"
// lets it choose, falling back to TCP on truncation; "tcp" forces TCP).
func resolverFor(d *DNS, network string) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, nw, _ string) (net.Conn, error) {
		if network == "tcp" {
			nw = "tcp"
		}
		var dl net.Dialer
		return dl.DialContext(ctx, nw, d.Addr)
	}}
}

func TestDNSResolve(t *testing.T) {
	exact, wildcards := testRecords()
	d := startTestDNS(t, exact, wildcards)
	tests := []struct {
		name, host, family string
		want               []netip.Addr // nil: not found
	}{
		{"exact A", "api-int.c.example.com", "ip4", []netip.Addr{apiIntIP}},
		{"exact configured with a dot and capitals", "api-int.c.example.com.", "ip", []netip.Addr{apiIntIP}},
		{"query case", "API.C.Example.COM", "ip4", []netip.Addr{apiIP}},
		{"exact AAAA", "api.c.example.com", "ip6", []netip.Addr{apiIP6}},
		{"exact both", "api.c.example.com", "ip", []netip.Addr{apiIP, apiIP6}},
		{"AAAA only name", "only6.c.example.com", "ip", []netip.Addr{apiIP6}},
		{"no A for an AAAA-only name", "only6.c.example.com", "ip4", nil},
		{"wildcard", "oauth-openshift.apps.c.example.com", "ip4", []netip.Addr{appsIP}},
		{"wildcard two labels down", "a.b.apps.c.example.com", "ip4", []netip.Addr{appsIP}},
		{"wildcard case", "X.APPS.c.example.com.", "ip4", []netip.Addr{appsIP}},
		{"closest wildcard", "x.deep.apps.c.example.com", "ip4", []netip.Addr{deepIP}},
		{"more specific wildcard's own name is under the other", "deep.apps.c.example.com", "ip4", []netip.Addr{appsIP}},
		{"exact beats wildcard", "console.apps.c.example.com", "ip4", []netip.Addr{regIP}},
		{"wildcard domain itself", "apps.c.example.com.", "ip4", nil},
		{"cluster domain", "c.example.com.", "ip4", nil},
		{"under an exact name", "x.api.c.example.com.", "ip4", nil},
		{"elsewhere", "example.org.", "ip", nil},
		{"suffix without a dot", "xapps.c.example.com.", "ip4", nil},
	}
	for _, network := range []string{"udp", "tcp"} {
		r := resolverFor(d, network)
		for _, tt := range tests {
			t.Run(network+"/"+tt.name, func(t *testing.T) {
				got, err := r.LookupNetIP(t.Context(), tt.family, tt.host)
				if tt.want == nil {
					var de *net.DNSError
					if !errors.As(err, &de) || !de.IsNotFound {
						t.Fatalf("LookupNetIP(%s, %q) = %v, %v, want not found", tt.family, tt.host, got, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("LookupNetIP(%s, %q): %v", tt.family, tt.host, err)
				}
				slices.SortFunc(got, netip.Addr.Compare)
				if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
					t.Errorf("LookupNetIP(%s, %q) (-want +got):\n%s", tt.family, tt.host, diff)
				}
			})
		}
	}
	if d.Queries() < len(tests) {
		t.Errorf("Queries() = %d after %d lookups over each transport", d.Queries(), len(tests))
	}
}

// TestDNSTruncation: too many addresses for a UDP answer come back with
// the TC bit, and Go's resolver gets them all over TCP.
func TestDNSTruncation(t *testing.T) {
	var many []netip.Addr
	for i := range 60 {
		many = append(many, netip.AddrFrom4([4]byte{127, 0, 20, byte(i + 1)}))
	}
	d := startTestDNS(t, []Record{{Name: "many.c.example.com", Addrs: many}}, nil)

	resp := exchangeUDP(t, d, query(t, 7, "many.c.example.com.", dnsmessage.TypeA))
	var p dnsmessage.Parser
	h, err := p.Start(resp)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Truncated || len(resp) > maxUDPAnswer {
		t.Errorf("UDP answer: truncated %v, %d bytes; want TC and at most %d bytes", h.Truncated, len(resp), maxUDPAnswer)
	}

	got, err := resolverFor(d, "udp").LookupNetIP(t.Context(), "ip4", "many.c.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(many) {
		t.Errorf("LookupNetIP(many) = %d addresses, want %d", len(got), len(many))
	}
}

// TestDNSDropsMalformed: a malformed packet gets no answer, and the next
// query on the same socket gets its own.
func TestDNSDropsMalformed(t *testing.T) {
	exact, wildcards := testRecords()
	d := startTestDNS(t, exact, wildcards)
	c, err := net.Dial("udp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bad := query(t, 1, "api.c.example.com.", dnsmessage.TypeA)
	bad[2] |= 0x80 // QR: a response, not a query
	for _, b := range [][]byte{[]byte("hello"), bad} {
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Write(query(t, 2, "api.c.example.com.", dnsmessage.TypeA)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	var p dnsmessage.Parser
	h, err := p.Start(buf[:n])
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != 2 {
		t.Errorf("first answer has ID %d, want 2 (the malformed packets must get none)", h.ID)
	}
	if d.Queries() != 1 {
		t.Errorf("Queries() = %d, want 1", d.Queries())
	}
}

func TestStartDNSRejects(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "192.0.2.1:53", "localhost:0", "[::]:0"} {
		if d, err := StartDNS(t.Context(), listen, nil, nil); !errors.Is(err, ErrNotLoopback) {
			if d != nil {
				d.Close()
			}
			t.Errorf("StartDNS(%q) = %v, want ErrNotLoopback", listen, err)
		}
	}
	_, err := StartDNS(t.Context(), "127.0.0.1:0",
		[]Record{
			{Name: "a..example.com", Addrs: []netip.Addr{apiIP}},
			{Name: "ok.example.com", Addrs: []netip.Addr{apiIP}},
			{Name: "OK.example.com.", Addrs: []netip.Addr{apiIP}},
			{Name: "none.example.com"},
		},
		[]Record{{Name: "apps.example.com", Addrs: []netip.Addr{{}}}})
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 4 {
		t.Errorf("StartDNS(bad records) = %v, want 4 problems (bad name, duplicate, no address, invalid address)", err)
	}
}

// TestDNSClose: once the context ends and Close returns, nothing listens.
func TestDNSClose(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	d, err := StartDNS(ctx, "127.0.0.1:0", []Record{{Name: "a.example.com", Addrs: []netip.Addr{apiIP}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A TCP connection being served is closed too.
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read on a served TCP connection after Close succeeded")
	}
	if c2, err := net.Dial("tcp", d.Addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c2 != nil {
			c2.Close()
		}
		t.Errorf("dial tcp %s after Close = %v, want connection refused", d.Addr, err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

// query packs a standard recursive query for name.
func query(t testing.TB, id uint16, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.StartQuestions())
	must(b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}))
	msg, err := b.Finish()
	must(err)
	return msg
}

// exchangeUDP sends q to d over UDP and returns the answer.
func exchangeUDP(t *testing.T, d *DNS, q []byte) []byte {
	t.Helper()
	c, err := net.Dial("udp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf[:n]
}
