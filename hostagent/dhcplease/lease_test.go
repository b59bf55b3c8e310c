package dhcplease

import (
	"errors"
	"net/netip"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var addrCmp = cmpopts.EquateComparable(netip.Addr{})

// serviceLeaseRE is the shape assisted-service's VerifyLease accepts
// (internal/network/lease_utils.go): empty, or one `lease {` block of
// `keyword value;` statements. Written out here from its definition.
var serviceLeaseRE = regexp.MustCompile(`^(?:|\s*lease\s*[{](?:\s+[a-z-]+ [^;}]*;)*\s+[}]\s*)$`)

func TestLeaseRoundTrip(t *testing.T) {
	at := time.Date(2020, 10, 25, 14, 48, 38, 0, time.UTC)
	tests := []struct {
		name string
		l    Lease
	}{
		{"full", Lease{
			Interface: "api", Address: netip.MustParseAddr("10.0.0.16"),
			SubnetMask: netip.MustParseAddr("255.255.255.0"),
			Routers:    []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")},
			DNS:        []netip.Addr{netip.MustParseAddr("10.0.0.53")},
			ServerID:   netip.MustParseAddr("10.0.0.1"), LeaseTime: time.Hour,
			Renew: at, Rebind: at.Add(45 * time.Minute), Expire: at.Add(time.Hour),
		}},
		{"minimal, never expires", Lease{Address: netip.MustParseAddr("192.168.1.5")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.l.String()
			if !serviceLeaseRE.MatchString(text) {
				t.Errorf("lease text does not pass the service's VerifyLease shape:\n%s", text)
			}
			got, err := ParseLease(text)
			if err != nil {
				t.Fatalf("ParseLease(%q): %v", text, err)
			}
			if diff := cmp.Diff(tt.l, got, addrCmp); diff != "" {
				t.Errorf("ParseLease(String()) mismatch (-want +got):\n%s", diff)
			}
			if again := got.String(); again != text {
				t.Errorf("String() after parse = %q, want %q", again, text)
			}
		})
	}
}

// A whole dhclient lease file, written the way dhclient writes it, with an
// older lease first and statements the parser skips; the last block wins.
// The second file is the service's FormatLease form ("never").
func TestParseDhclientFile(t *testing.T) {
	file := `default-duid "\000\001\000\001";
lease {
  interface "api";
  fixed-address 10.0.0.9;
  expire 0 2020/10/25 10:00:00;
}
lease {
  interface "api";
  fixed-address 10.0.0.16;
  option subnet-mask 255.255.255.0;
  option dhcp-lease-time 3600;
  option routers 10.0.0.138;
  option dhcp-message-type 5;
  option dhcp-server-identifier 10.0.0.138;
  option domain-name-servers 10.0.0.138;
  option domain-name "Home";
  renew 0 2020/10/25 14:48:38;
  rebind 0 2020/10/25 15:11:32;
  expire 0 2020/10/25 15:19:02;
}
`
	got, err := ParseLease(file)
	if err != nil {
		t.Fatal(err)
	}
	want := Lease{
		Interface: "api", Address: netip.MustParseAddr("10.0.0.16"),
		SubnetMask: netip.MustParseAddr("255.255.255.0"),
		Routers:    []netip.Addr{netip.MustParseAddr("10.0.0.138")},
		DNS:        []netip.Addr{netip.MustParseAddr("10.0.0.138")},
		ServerID:   netip.MustParseAddr("10.0.0.138"), LeaseTime: time.Hour,
		Renew:  time.Date(2020, 10, 25, 14, 48, 38, 0, time.UTC),
		Rebind: time.Date(2020, 10, 25, 15, 11, 32, 0, time.UTC),
		Expire: time.Date(2020, 10, 25, 15, 19, 2, 0, time.UTC),
	}
	if diff := cmp.Diff(want, got, addrCmp); diff != "" {
		t.Errorf("ParseLease mismatch (-want +got):\n%s", diff)
	}

	never := "lease {\n  interface \"ingress\";\n  fixed-address 10.0.0.17;\n  renew never;\n  rebind never;\n  expire never;\n}"
	got, err = ParseLease(never)
	if err != nil {
		t.Fatal(err)
	}
	if got.Address != netip.MustParseAddr("10.0.0.17") || !got.Expire.IsZero() || !got.Renew.IsZero() {
		t.Errorf("ParseLease(never form) = %+v, want 10.0.0.17 with zero times", got)
	}
}

func TestParseLeaseErrors(t *testing.T) {
	tests := []struct {
		name, text string
		noLease    bool
	}{
		{"empty", "", true},
		{"no block", "fixed-address 10.0.0.1;", true},
		{"no address", "lease {\n  interface \"api\";\n}", true},
		{"unterminated", "lease {\n  fixed-address 10.0.0.1;", false},
		{"bad address", "lease {\n  fixed-address 10.0.0.300;\n}", false},
		{"ipv6 address", "lease {\n  fixed-address fd00::1;\n}", false},
		{"bad time", "lease {\n  fixed-address 10.0.0.1;\n  expire 0 2020-10-25;\n}", false},
		{"bad lease time", "lease {\n  fixed-address 10.0.0.1;\n  option dhcp-lease-time -1;\n}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLease(tt.text)
			if err == nil {
				t.Fatalf("ParseLease(%q) = nil error, want an error", tt.text)
			}
			if errors.Is(err, ErrNoLease) != tt.noLease {
				t.Errorf("ParseLease(%q) = %v, errors.Is(ErrNoLease) = %v, want %v", tt.text, err, !tt.noLease, tt.noLease)
			}
		})
	}
}
