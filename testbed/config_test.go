package testbed

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

func TestValidateDefaults(t *testing.T) {
	cfg := Config{
		Prefix:  pfx("10.231.7.0/24"),
		Prefix6: pfx("fd4e:7a::/64"),
		Hosts:   []HostSpec{{Name: "a"}, {Name: "b", NIC: "eth3", Addr: addr("10.231.7.200"), Static: true}},
	}
	p, err := validate(cfg, []netip.Prefix{pfx("0.0.0.0/0"), pfx("::/0"), pfx("192.0.2.0/24")})
	if err != nil {
		t.Fatalf("validate: %v", err)
	}
	if got, want := p.gateway, addr("10.231.7.1"); got != want {
		t.Errorf("gateway = %s, want %s", got, want)
	}
	if got, want := p.gateway6, addr("fd4e:7a::1"); got != want {
		t.Errorf("gateway6 = %s, want %s", got, want)
	}
	want := []HostSpec{
		{Name: "a", NIC: "enp1s0", Addr: addr("10.231.7.10"), Addr6: addr("fd4e:7a::a")},
		{Name: "b", NIC: "eth3", Addr: addr("10.231.7.200"), Addr6: addr("fd4e:7a::b"), Static: true},
	}
	if diff := cmp.Diff(want, p.hosts, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
}

func TestValidateRefuses(t *testing.T) {
	root := []netip.Prefix{pfx("0.0.0.0/0"), pfx("10.88.0.0/16"), pfx("fd00::/64"), pfx("172.17.0.1/32")}
	tests := []struct {
		name  string
		cfg   Config
		want  error  // the sentinel every reported problem should carry, or nil
		wants string // a part of the message naming the field
	}{
		{"missing prefix", Config{}, ErrInvalid, "prefix: missing"},
		{"public prefix", Config{Prefix: pfx("8.8.8.0/24")}, ErrNotPrivate, "prefix: 8.8.8.0/24"},
		{"test-net prefix", Config{Prefix: pfx("192.0.2.0/24")}, ErrNotPrivate, "prefix: 192.0.2.0/24"},
		{"wider than private", Config{Prefix: pfx("10.0.0.0/7")}, ErrNotPrivate, "prefix: 10.0.0.0/7"},
		{"ipv6 as prefix", Config{Prefix: pfx("fd00:1::/64")}, ErrInvalid, "is not IPv4"},
		{"overlaps root route", Config{Prefix: pfx("10.88.3.0/24")}, ErrOverlap, "overlaps 10.88.0.0/16"},
		{"covers root address", Config{Prefix: pfx("172.16.0.0/12")}, ErrOverlap, "overlaps 172.17.0.1/32"},
		{"too small", Config{Prefix: pfx("10.1.1.0/30")}, ErrInvalid, "smaller than a /29"},
		{"public prefix6", Config{Prefix: pfx("10.1.1.0/24"), Prefix6: pfx("2001:db8::/64")}, ErrNotPrivate, "prefix6: 2001:db8::/64"},
		{"fc00 prefix6", Config{Prefix: pfx("10.1.1.0/24"), Prefix6: pfx("fc00:1::/64")}, ErrNotPrivate, "not inside fd00::/8"},
		{"overlapping prefix6", Config{Prefix: pfx("10.1.1.0/24"), Prefix6: pfx("fd00::/48")}, ErrOverlap, "overlaps fd00::/64"},
		{"host addr outside", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", Addr: addr("10.1.2.5")}}}, ErrOutsideRange, "hosts[0].addr: 10.1.2.5 is outside 10.1.1.0/24"},
		{"host addr public", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", Addr: addr("1.1.1.1")}}}, ErrOutsideRange, "hosts[0].addr"},
		{"host addr gateway", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", Addr: addr("10.1.1.1")}}}, ErrInvalid, "gateway"},
		{"host addr broadcast", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", Addr: addr("10.1.1.255")}}}, ErrInvalid, "broadcast"},
		{"host addr6 outside", Config{Prefix: pfx("10.1.1.0/24"), Prefix6: pfx("fd01::/64"), Hosts: []HostSpec{{Name: "a", Addr6: addr("fd02::5")}}}, ErrOutsideRange, "hosts[0].addr6"},
		{"addr6 without prefix6", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", Addr6: addr("fd02::5")}}}, ErrInvalid, "without prefix6"},
		{"default addrs run out", Config{Prefix: pfx("10.1.1.0/29"), Hosts: []HostSpec{{Name: "a"}}}, ErrOutsideRange, "10.1.1.10 is outside"},
		{"bad name", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a/b"}}}, ErrInvalid, `hosts[0].name: "a/b"`},
		{"reserved name", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "sw"}}}, ErrInvalid, `hosts[0].name: "sw"`},
		{"duplicate name", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a"}, {Name: "a"}}}, ErrInvalid, "hosts[1].name: \"a\" repeats hosts[0]"},
		{"long nic", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", NIC: "enp1s0abcdefghij"}}}, ErrInvalid, "hosts[0].nic"},
		{"nic lo", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", NIC: "lo"}}}, ErrInvalid, "hosts[0].nic"},
		{"multicast mac", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{{Name: "a", MAC: net.HardwareAddr{1, 2, 3, 4, 5, 6}}}}, ErrInvalid, "multicast"},
		{"duplicate mac", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{
			{Name: "a", MAC: net.HardwareAddr{2, 2, 3, 4, 5, 6}}, {Name: "b", MAC: net.HardwareAddr{2, 2, 3, 4, 5, 6}}}}, ErrInvalid, "hosts[1].mac"},
		{"duplicate addr", Config{Prefix: pfx("10.1.1.0/24"), Hosts: []HostSpec{
			{Name: "a", Addr: addr("10.1.1.11")}, {Name: "b"}}}, ErrInvalid, "hosts[1].addr: 10.1.1.11 repeats hosts[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validate(tt.cfg, root)
			if err == nil {
				t.Fatalf("validate(%+v) = nil error, want %v", tt.cfg, tt.want)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("validate(%+v) = %v, want errors.Is %v", tt.cfg, err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wants) {
				t.Errorf("validate(%+v) = %v, want it to mention %q", tt.cfg, err, tt.wants)
			}
		})
	}
}

func TestValidateCollectsEveryProblem(t *testing.T) {
	cfg := Config{Prefix: pfx("10.1.1.0/24"), Prefix6: pfx("2001:db8::/64"), Hosts: []HostSpec{
		{Name: ""}, {Name: "b", NIC: "lo"}, {Name: "c", Addr: addr("10.9.9.9")},
	}}
	_, err := validate(cfg, nil)
	if err == nil {
		t.Fatal("validate = nil error, want four problems")
	}
	for _, want := range []string{"prefix6:", "hosts[0].name", "hosts[1].nic", "hosts[2].addr"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("validate error %q does not mention %q", err, want)
		}
	}
}

func TestLastAddr(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.1.0/24": "10.1.1.255", "10.1.0.0/23": "10.1.1.255", "172.16.0.0/12": "172.31.255.255",
		"10.1.1.8/29": "10.1.1.15", "fd00::/120": "fd00::ff",
	} {
		if got := lastAddr(pfx(in)); got != addr(want) {
			t.Errorf("lastAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestRouteDsts(t *testing.T) {
	out := `[{"dst":"default","gateway":"192.0.2.1"},{"dst":"192.0.2.0/24"},{"type":"local","dst":"192.0.2.2"},{"type":"multicast","dst":"ff00::/8"}]`
	got, err := routeDsts([]byte(out))
	if err != nil {
		t.Fatalf("routeDsts: %v", err)
	}
	want := []netip.Prefix{pfx("192.0.2.0/24"), pfx("192.0.2.2/32"), pfx("ff00::/8")}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("routeDsts (-want +got):\n%s", diff)
	}
	if _, err := routeDsts([]byte(`[{"dst":"bogus"}]`)); err == nil {
		t.Errorf("routeDsts(bogus) = nil error, want one")
	}
	if got, err := routeDsts([]byte("\n")); err != nil || got != nil {
		t.Errorf("routeDsts(empty) = %v, %v, want nil, nil", got, err)
	}
}

func TestNames(t *testing.T) {
	id := newID()
	if m := bedNSRE.FindStringSubmatch(nsPrefix + id + "-sw"); m == nil || m[1] != id {
		t.Errorf("bedNSRE does not match the switch namespace of ID %q: %v", id, m)
	}
	if n := len("v" + id + "h99"); n > 15 {
		t.Errorf("veth name for ID %q has %d characters, want at most 15", id, n)
	}
	for _, ns := range []string{"nzb-sw", "nzbx1-sw", "nzb12x-sw", "nzb12xab", "other12xab-sw"} {
		if bedNSRE.MatchString(ns) {
			t.Errorf("bedNSRE matches %q, want no match", ns)
		}
	}
	mac := deriveMAC(id, 3)
	if mac[0] != 0x02 || mac[5] != 3 {
		t.Errorf("deriveMAC(%q, 3) = %s, want 02:..:03", id, mac)
	}
	if again := deriveMAC(id, 3); again.String() != mac.String() {
		t.Errorf("deriveMAC is not stable: %s then %s", mac, again)
	}
}
