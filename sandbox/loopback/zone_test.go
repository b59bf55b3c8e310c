package loopback

import (
	"errors"
	"net/netip"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func testZone(t testing.TB) *zone {
	t.Helper()
	exact, wildcards := testRecords()
	z, err := newZone(exact, wildcards)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestRespond covers what Go's resolver cannot tell apart: NXDOMAIN from
// NODATA, the flags, and the answer's names.
func TestRespond(t *testing.T) {
	z := testZone(t)
	tests := []struct {
		name     string
		qname    string
		qtype    dnsmessage.Type
		rcode    dnsmessage.RCode
		answers  int
		wantAddr netip.Addr // the first answer's, when answers > 0
	}{
		{"A", "api.c.example.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, apiIP},
		{"AAAA", "api.c.example.com.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, 1, apiIP6},
		{"ANY", "api.c.example.com.", dnsmessage.TypeALL, dnsmessage.RCodeSuccess, 2, apiIP},
		{"NODATA for MX", "api.c.example.com.", dnsmessage.TypeMX, dnsmessage.RCodeSuccess, 0, netip.Addr{}},
		{"NODATA for A of an IPv6 name", "only6.c.example.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 0, netip.Addr{}},
		{"wildcard, case kept", "Foo.Apps.C.Example.Com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, 1, appsIP},
		{"NXDOMAIN", "nope.example.com.", dnsmessage.TypeA, dnsmessage.RCodeNameError, 0, netip.Addr{}},
		{"NXDOMAIN for the root", ".", dnsmessage.TypeA, dnsmessage.RCodeNameError, 0, netip.Addr{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := z.respond(query(t, 42, tt.qname, tt.qtype), maxUDPAnswer)
			if resp == nil {
				t.Fatal("respond = nil, want an answer")
			}
			var m dnsmessage.Message
			if err := m.Unpack(resp); err != nil {
				t.Fatal(err)
			}
			if m.ID != 42 || !m.Response || !m.Authoritative || !m.RecursionDesired || m.RecursionAvailable || m.Truncated {
				t.Errorf("header = %+v, want ID 42, response, authoritative, RD echoed, no RA, no TC", m.Header)
			}
			if m.RCode != tt.rcode {
				t.Errorf("rcode = %v, want %v", m.RCode, tt.rcode)
			}
			if len(m.Questions) != 1 || m.Questions[0].Name.String() != tt.qname || m.Questions[0].Type != tt.qtype {
				t.Errorf("questions = %v, want the one asked", m.Questions)
			}
			if len(m.Answers) != tt.answers {
				t.Fatalf("answers = %v, want %d", m.Answers, tt.answers)
			}
			for _, a := range m.Answers {
				if a.Header.Name.String() != tt.qname || a.Header.TTL != answerTTL {
					t.Errorf("answer %v: want named %q with TTL %d", a.Header, tt.qname, answerTTL)
				}
			}
			if tt.answers > 0 {
				if got := answerAddr(m.Answers[0]); got != tt.wantAddr {
					t.Errorf("first answer = %v, want %v", got, tt.wantAddr)
				}
			}
		})
	}
}

func answerAddr(r dnsmessage.Resource) netip.Addr {
	switch b := r.Body.(type) {
	case *dnsmessage.AResource:
		return netip.AddrFrom4(b.A)
	case *dnsmessage.AAAAResource:
		return netip.AddrFrom16(b.AAAA)
	}
	return netip.Addr{}
}

// TestRespondDrops: messages that are not a standard IN query with one
// question get no answer.
func TestRespondDrops(t *testing.T) {
	z := testZone(t)
	build := func(h dnsmessage.Header, qs ...dnsmessage.Question) []byte {
		b := dnsmessage.NewBuilder(nil, h)
		if err := b.StartQuestions(); err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			if err := b.Question(q); err != nil {
				t.Fatal(err)
			}
		}
		msg, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	q := dnsmessage.Question{Name: dnsmessage.MustNewName("api.c.example.com."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
	chaos := q
	chaos.Class = dnsmessage.ClassCHAOS
	ok := build(dnsmessage.Header{ID: 1}, q)
	tests := map[string][]byte{
		"empty":           nil,
		"short header":    ok[:5],
		"cut question":    ok[:len(ok)-2],
		"response":        build(dnsmessage.Header{ID: 1, Response: true}, q),
		"opcode notify":   build(dnsmessage.Header{ID: 1, OpCode: 4}, q),
		"no question":     build(dnsmessage.Header{ID: 1}),
		"two questions":   build(dnsmessage.Header{ID: 1}, q, q),
		"class chaos":     build(dnsmessage.Header{ID: 1}, chaos),
		"count says more": append([]byte{0, 1, 0, 0, 0, 9}, ok[6:]...),
	}
	for name, msg := range tests {
		if resp := z.respond(msg, maxTCPAnswer); resp != nil {
			t.Errorf("%s: respond = %d bytes, want no answer", name, len(resp))
		}
	}
	if z.respond(ok, maxTCPAnswer) == nil {
		t.Error("the well-formed query got no answer")
	}
}

// TestRespondEDNS: a query with an EDNS OPT record (as Go's resolver sends)
// is answered, without one.
func TestRespondEDNS(t *testing.T) {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 3})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.StartQuestions())
	must(b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("api.c.example.com."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}))
	must(b.StartAdditionals())
	var opt dnsmessage.ResourceHeader
	must(opt.SetEDNS0(1232, dnsmessage.RCodeSuccess, false))
	must(b.OPTResource(opt, dnsmessage.OPTResource{}))
	msg, err := b.Finish()
	must(err)
	var m dnsmessage.Message
	if err := m.Unpack(testZone(t).respond(msg, maxUDPAnswer)); err != nil {
		t.Fatal(err)
	}
	if len(m.Answers) != 1 || len(m.Additionals) != 0 {
		t.Errorf("answer = %d answers, %d additionals; want 1 and 0", len(m.Answers), len(m.Additionals))
	}
}

// FuzzDNSQuery feeds hostile packets to the handler: it must not panic,
// must answer only well-formed queries, and its answers must parse, match
// the query's ID and question, fit the limit and hold only A/AAAA records
// named as asked.
func FuzzDNSQuery(f *testing.F) {
	f.Add(query(f, 1, "api.c.example.com.", dnsmessage.TypeA))
	f.Add(query(f, 2, "x.apps.c.example.com.", dnsmessage.TypeAAAA))
	f.Add(query(f, 3, "nope.example.org.", dnsmessage.TypeALL))
	f.Add(query(f, 4, "API.C.EXAMPLE.COM.", dnsmessage.TypeMX))
	f.Add([]byte{})
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 1, 0, 1}) // a compression pointer loop
	f.Add([]byte("\x00\x01\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x3fxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\x00\x00\x01\x00\x01"))
	z := testZone(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		for _, limit := range []int{maxUDPAnswer, maxTCPAnswer} {
			resp := z.respond(msg, limit)
			if resp == nil {
				continue
			}
			var p dnsmessage.Parser
			h, err := p.Start(msg)
			if err != nil || h.Response || h.OpCode != 0 {
				t.Fatalf("answered a message that is not a query: header %+v, %v", h, err)
			}
			q, err := p.Question()
			if err != nil || q.Class != dnsmessage.ClassINET {
				t.Fatalf("answered a query without an IN question: %v, %v", q, err)
			}
			if _, err := p.Question(); !errors.Is(err, dnsmessage.ErrSectionDone) {
				t.Fatalf("answered a query with more than one question: %v", err)
			}
			if len(resp) > limit {
				t.Fatalf("answer is %d bytes, over the limit %d", len(resp), limit)
			}
			var m dnsmessage.Message
			if err := m.Unpack(resp); err != nil {
				t.Fatalf("answer does not parse: %v", err)
			}
			if m.ID != h.ID || !m.Response || len(m.Questions) != 1 || m.Questions[0] != q {
				t.Fatalf("answer %+v %v does not match query %+v %v", m.Header, m.Questions, h, q)
			}
			for _, a := range m.Answers {
				if a.Header.Name != q.Name || (a.Header.Type != dnsmessage.TypeA && a.Header.Type != dnsmessage.TypeAAAA) {
					t.Fatalf("answer record %v for question %v", a.Header, q)
				}
			}
		}
	})
}
