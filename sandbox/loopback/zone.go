package loopback

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// Record maps a name to its addresses: IPv4 ones answer A queries, IPv6
// ones AAAA queries.
type Record struct {
	Name  string
	Addrs []netip.Addr
}

// answerTTL is the TTL of every answer, in seconds: short, as the sandbox
// may start again with other addresses for the same names.
const answerTTL = 30

// Message size limits: plain DNS over UDP (RFC 1035 §4.2.1; the responder
// sends no EDNS OPT, so a client may not expect more) and DNS over TCP.
const (
	maxUDPAnswer = 512
	maxTCPAnswer = 65535
)

// zone is what the responder knows, names lowercase and without the
// trailing dot.
type zone struct {
	exact map[string][]netip.Addr
	// wildcards answer every name strictly under their domain:
	// "apps.c.example.com" answers "x.apps.c.example.com", not itself.
	wildcards map[string][]netip.Addr
}

// newZone checks and indexes the records, reporting every problem.
func newZone(exact, wildcards []Record) (*zone, error) {
	z := &zone{exact: map[string][]netip.Addr{}, wildcards: map[string][]netip.Addr{}}
	var errs []error
	add := func(m map[string][]netip.Addr, field string, rs []Record) {
		for i, r := range rs {
			at := fmt.Sprintf("%s[%d]", field, i)
			name, err := canonicalName(r.Name)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
				continue
			}
			if _, dup := m[name]; dup {
				errs = append(errs, fmt.Errorf("%s: name %q given twice", at, r.Name))
				continue
			}
			if len(r.Addrs) == 0 {
				errs = append(errs, fmt.Errorf("%s: name %q has no address", at, r.Name))
				continue
			}
			addrs := make([]netip.Addr, 0, len(r.Addrs))
			for j, a := range r.Addrs {
				if !a.IsValid() || a.Zone() != "" {
					errs = append(errs, fmt.Errorf("%s.addrs[%d]: %q is not an IP address without a zone", at, j, a))
					continue
				}
				addrs = append(addrs, a.Unmap())
			}
			m[name] = addrs
		}
	}
	add(z.exact, "exact", exact)
	add(z.wildcards, "wildcards", wildcards)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return z, nil
}

// canonicalName lowercases a configured name, drops its trailing dot and
// checks it is a host name: labels of 1-63 letters, digits, '-' or '_',
// 253 bytes at most.
func canonicalName(s string) (string, error) {
	name := asciiLower(strings.TrimSuffix(s, "."))
	if name == "" || len(name) > 253 {
		return "", fmt.Errorf("name %q: want 1 to 253 bytes", s)
	}
	for _, l := range strings.Split(name, ".") {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("name %q: label %q: want 1 to 63 bytes", s, l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("name %q: label %q: %q is not a letter, digit, '-' or '_'", s, l, c)
			}
		}
	}
	return name, nil
}

// asciiLower lowercases ASCII letters only: DNS names compare
// case-insensitively on ASCII (RFC 4343) and may hold any other byte, which
// strings.ToLower would rewrite.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// lookup returns the addresses of name (lowercase, no trailing dot) and
// whether the zone has it: an exact name first, else the closest wildcard
// domain above it.
func (z *zone) lookup(name string) ([]netip.Addr, bool) {
	if a, ok := z.exact[name]; ok {
		return a, true
	}
	for rest := name; ; {
		var ok bool
		if _, rest, ok = strings.Cut(rest, "."); !ok {
			return nil, false
		}
		if a, ok := z.wildcards[rest]; ok {
			return a, true
		}
	}
}

// respond answers one DNS message, or returns nil to drop it. Only a
// well-formed standard query (not a response, opcode QUERY, exactly one
// question, class IN) is answered; anything after the question (an EDNS
// OPT record, say) is ignored. Names in the zone answer NOERROR with their
// A and/or AAAA records (none for other types: NODATA); other names answer
// NXDOMAIN. An answer longer than limit is sent as its header and question
// with the TC bit, so the client asks again over TCP.
func (z *zone) respond(query []byte, limit int) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response || h.OpCode != 0 {
		return nil
	}
	q, err := p.Question()
	if err != nil || q.Class != dnsmessage.ClassINET {
		return nil
	}
	if _, err := p.Question(); !errors.Is(err, dnsmessage.ErrSectionDone) {
		return nil
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	addrs, found := z.lookup(asciiLower(strings.TrimSuffix(q.Name.String(), ".")))
	if !found {
		rh.RCode = dnsmessage.RCodeNameError
	}
	var answers []netip.Addr
	for _, a := range addrs {
		if a.Is4() && (q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeALL) ||
			a.Is6() && (q.Type == dnsmessage.TypeAAAA || q.Type == dnsmessage.TypeALL) {
			answers = append(answers, a)
		}
	}
	msg, err := buildAnswer(rh, q, answers)
	if err == nil && len(msg) > limit {
		rh.Truncated = true
		msg, err = buildAnswer(rh, q, nil)
	}
	if err != nil {
		return nil // only a question the parser accepted but the builder refuses
	}
	return msg
}

// buildAnswer packs a response to q with answers, named as the question
// was (case kept).
func buildAnswer(h dnsmessage.Header, q dnsmessage.Question, answers []netip.Addr) ([]byte, error) {
	b := dnsmessage.NewBuilder(make([]byte, 0, 128), h)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	for _, a := range answers {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: answerTTL}
		var err error
		if a.Is4() {
			err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		} else {
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
