package netcheck

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// The hosts to probe take what the swagger's connectivity-check-nic allows
// (plain addresses, as assisted-service and node zero send them) and the
// prefixed form node zero sent before.
func TestParseConnectivityParams(t *testing.T) {
	tests := []struct {
		name    string
		addrs   []string
		want    []netip.Addr
		wantErr bool
	}{
		{"plain IPv4", []string{"192.168.111.10"}, []netip.Addr{netip.MustParseAddr("192.168.111.10")}, false},
		{"plain IPv6", []string{"fd00::a"}, []netip.Addr{netip.MustParseAddr("fd00::a")}, false},
		{"prefixed, from an older node zero", []string{"192.168.111.10/24", "fd00::a/64"},
			[]netip.Addr{netip.MustParseAddr("192.168.111.10"), netip.MustParseAddr("fd00::a")}, false},
		{"repeated in both forms", []string{"10.0.0.2", "10.0.0.2/24"}, []netip.Addr{netip.MustParseAddr("10.0.0.2")}, false},
		{"IPv4-mapped", []string{"::ffff:10.0.0.2"}, []netip.Addr{netip.MustParseAddr("10.0.0.2")}, false},
		{"zone", []string{"fe80::1%eth0"}, nil, true},
		{"not an address", []string{"10.0.0.300"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params := wire.ConnectivityCheckParams{{HostID: "h", Nics: []*wire.ConnectivityCheckNic{{Name: "eth0", MAC: "52:54:00:aa:bb:01", IPAddresses: tc.addrs}}}}
			got, err := parseConnectivityParams(params)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidArgs) {
					t.Fatalf("parseConnectivityParams(%q) = %v, want ErrInvalidArgs", tc.addrs, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseConnectivityParams(%q) = %v", tc.addrs, err)
			}
			if diff := cmp.Diff(tc.want, got[0].addrs, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("parseConnectivityParams(%q) addresses (-want +got):\n%s", tc.addrs, diff)
			}
		})
	}
}
