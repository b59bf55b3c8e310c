package dhcplease

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Lease is one VIP lease as the step reports it and the service stores it.
//
// Its text form (String, ParseLease) is a single dhclient lease-file block,
// the format the real agent sends (it runs dhclient and returns the last
// `lease { … }` block of the lease file), so that the service's
// VerifyLease check (`lease {` then `keyword value;` statements then `}`)
// accepts it and the service can write it into the installed cluster's
// /etc/keepalived/lease-<name> files, where baremetal-runtimecfg's
// dhclient renews it:
//
//	lease {
//	  interface "api";
//	  fixed-address 10.0.0.16;
//	  option subnet-mask 255.255.255.0;
//	  option routers 10.0.0.1;
//	  option domain-name-servers 10.0.0.1;
//	  option dhcp-lease-time 3600;
//	  option dhcp-message-type 5;
//	  option dhcp-server-identifier 10.0.0.1;
//	  renew 0 2020/10/25 14:48:38;
//	  rebind 0 2020/10/25 15:11:32;
//	  expire 0 2020/10/25 15:19:02;
//	}
//
// Times are UTC, as dhclient writes them ("<weekday> YYYY/MM/DD HH:MM:SS",
// weekday 0 = Sunday); "never" (what the service's FormatLease writes into
// the ignition copy) parses as the zero time. ParseLease reads the last
// block of a text, ignores statements it does not know, and
// ParseLease(l.String()) == l for every Lease whose times are whole UTC
// seconds.
type Lease struct {
	Interface  string       // the interface dhclient ran on: "api" or "ingress"
	Address    netip.Addr   // fixed-address: the VIP
	SubnetMask netip.Addr   // option subnet-mask, if the server sent one
	Routers    []netip.Addr // option routers
	DNS        []netip.Addr // option domain-name-servers
	ServerID   netip.Addr   // option dhcp-server-identifier
	LeaseTime  time.Duration
	Renew      time.Time // zero: never
	Rebind     time.Time // zero: never
	Expire     time.Time // zero: never
}

// ErrNoLease is returned by ParseLease for a text with no lease block or
// no fixed-address in its last one.
var ErrNoLease = errors.New("no lease in text")

// dhclientTime is the layout of a dhclient lease time after its weekday.
const dhclientTime = "2006/01/02 15:04:05"

// String returns the lease as a dhclient lease-file block.
func (l Lease) String() string {
	var b strings.Builder
	b.WriteString("lease {\n")
	stmt := func(format string, args ...any) {
		fmt.Fprintf(&b, "  "+format+";\n", args...)
	}
	if l.Interface != "" {
		stmt("interface %q", l.Interface)
	}
	stmt("fixed-address %s", l.Address)
	if l.SubnetMask.IsValid() {
		stmt("option subnet-mask %s", l.SubnetMask)
	}
	if len(l.Routers) > 0 {
		stmt("option routers %s", joinAddrs(l.Routers))
	}
	if len(l.DNS) > 0 {
		stmt("option domain-name-servers %s", joinAddrs(l.DNS))
	}
	if l.LeaseTime > 0 {
		stmt("option dhcp-lease-time %d", int64(l.LeaseTime/time.Second))
	}
	stmt("option dhcp-message-type 5") // an ACK, as dhclient records it
	if l.ServerID.IsValid() {
		stmt("option dhcp-server-identifier %s", l.ServerID)
	}
	stmt("renew %s", formatTime(l.Renew))
	stmt("rebind %s", formatTime(l.Rebind))
	stmt("expire %s", formatTime(l.Expire))
	b.WriteString("}")
	return b.String()
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ",")
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	t = t.UTC()
	return strconv.Itoa(int(t.Weekday())) + " " + t.Format(dhclientTime)
}

// ParseLease parses the last lease block of text (a whole dhclient lease
// file is fine). Errors name the statement that is wrong.
func ParseLease(text string) (Lease, error) {
	body, err := lastBlock(text)
	if err != nil {
		return Lease{}, err
	}
	var l Lease
	for _, raw := range strings.Split(body, ";") {
		st := strings.TrimSpace(raw)
		if st == "" {
			continue
		}
		key, val, _ := strings.Cut(st, " ")
		val = strings.TrimSpace(val)
		if key == "option" {
			key, val, _ = strings.Cut(val, " ")
			key = "option " + key
			val = strings.TrimSpace(val)
		}
		if err := l.set(key, val); err != nil {
			return Lease{}, fmt.Errorf("parse lease: %q: %w", st, err)
		}
	}
	if !l.Address.IsValid() {
		return Lease{}, fmt.Errorf("parse lease: no fixed-address: %w", ErrNoLease)
	}
	return l, nil
}

// lastBlock returns the body between the braces of the last `lease {…}`.
func lastBlock(text string) (string, error) {
	i := strings.LastIndex(text, "lease")
	for i >= 0 {
		rest := strings.TrimLeft(text[i+len("lease"):], " \t\r\n")
		if strings.HasPrefix(rest, "{") {
			body, _, ok := strings.Cut(rest[1:], "}")
			if !ok {
				return "", errors.New("parse lease: unterminated lease block")
			}
			return body, nil
		}
		i = strings.LastIndex(text[:i], "lease")
	}
	return "", fmt.Errorf("parse lease: %w", ErrNoLease)
}

func (l *Lease) set(key, val string) error {
	var err error
	switch key {
	case "interface":
		if l.Interface, err = strconv.Unquote(val); err == nil && !validInterface(l.Interface) {
			// String could not write it back in a form ParseLease reads
			// (a ';' or '}' inside the quotes ends the statement or block).
			err = fmt.Errorf("%q is not an interface name", l.Interface)
		}
	case "fixed-address":
		l.Address, err = parseV4(val)
	case "option subnet-mask":
		l.SubnetMask, err = parseV4(val)
	case "option routers":
		l.Routers, err = parseV4List(val)
	case "option domain-name-servers":
		l.DNS, err = parseV4List(val)
	case "option dhcp-server-identifier":
		l.ServerID, err = parseV4(val)
	case "option dhcp-lease-time":
		var secs uint32
		secs, err = parseUint32(val)
		l.LeaseTime = time.Duration(secs) * time.Second
	case "renew":
		l.Renew, err = parseTime(val)
	case "rebind":
		l.Rebind, err = parseTime(val)
	case "expire":
		l.Expire, err = parseTime(val)
	}
	// Anything else (domain-name, dhcp-message-type, medium, filename…)
	// carries nothing the step needs.
	return err
}

// validInterface accepts the names dhclient is run with ("api",
// "ingress") and kernel interface names: letters, digits and "-_.:@".
func validInterface(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:@", r)) {
			return false
		}
	}
	return true
}

func parseUint32(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	return uint32(n), err
}

func parseV4(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, err
	}
	if !a.Is4() {
		return netip.Addr{}, fmt.Errorf("%s is not an IPv4 address", a)
	}
	return a, nil
}

func parseV4List(s string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, f := range strings.Split(s, ",") {
		a, err := parseV4(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// parseTime reads "never" or "<weekday> YYYY/MM/DD HH:MM:SS" (UTC); the
// weekday is not checked against the date (dhclient ignores it too).
func parseTime(s string) (time.Time, error) {
	if s == "never" {
		return time.Time{}, nil
	}
	_, date, ok := strings.Cut(s, " ")
	if !ok {
		return time.Time{}, fmt.Errorf("time %q: want \"never\" or \"<weekday> YYYY/MM/DD HH:MM:SS\"", s)
	}
	t, err := time.ParseInLocation(dhclientTime, strings.TrimSpace(date), time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", s, err)
	}
	return t, nil
}
