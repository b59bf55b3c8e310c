package assisted

import (
	"net"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// The vectors for cluster bd9d3b83-… are assisted-service's own
// (internal/host/hostcommands/dhcp_allocate_cmd_test.go expects exactly
// these MACs in the dhcp-lease-allocate request it builds); the last one
// was computed by hand-running the algorithm's definition (a Python
// transcription of "T[key[0]+i], then fold every byte") over the RFC 3074
// table.
func TestVIPMAC(t *testing.T) {
	tests := []struct {
		name, cluster, vip, want string
	}{
		{"service api", "bd9d3b83-80a3-4b94-8b61-c12b2f1a2373", string(wire.VIPTypeAPI), "00:1a:4a:b5:4d:cc"},
		{"service ingress", "bd9d3b83-80a3-4b94-8b61-c12b2f1a2373", string(wire.VIPTypeIngress), "00:1a:4a:83:b1:f7"},
		{"short key", "x", "api", "00:1a:4a:a8:8e:c1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VIPMAC(tt.cluster, tt.vip); got != tt.want {
				t.Errorf("VIPMAC(%q, %q) = %s, want %s", tt.cluster, tt.vip, got, tt.want)
			}
		})
	}
}

// Every VIP MAC parses, carries the OUI, is unicast and globally
// administered, and the two VIPs of a cluster differ.
func TestVIPMACShape(t *testing.T) {
	for _, id := range []string{"", "a", "0b8e1ea4-3d5a-4a4b-9e3a-6f1b1c9a2d10", strings.Repeat("z", 300)} {
		api, ingress := VIPMAC(id, "api"), VIPMAC(id, "ingress")
		for _, m := range []string{api, ingress} {
			hw, err := net.ParseMAC(m)
			if err != nil {
				t.Fatalf("VIPMAC(%q) = %q: %v", id, m, err)
			}
			if hw[0] != 0x00 || hw[1] != 0x1a || hw[2] != 0x4a || m != strings.ToLower(m) {
				t.Errorf("VIPMAC(%q) = %s, want lower-case 00:1a:4a:…", id, m)
			}
		}
		if api == ingress {
			t.Errorf("VIPMAC(%q): api and ingress both %s", id, api)
		}
	}
}

// The table must be a permutation, or the hash loses its spread.
func TestPearsonTableIsPermutation(t *testing.T) {
	var seen [256]bool
	for i, v := range pearsonTable {
		if seen[v] {
			t.Fatalf("pearsonTable[%d] = %d repeats an earlier value", i, v)
		}
		seen[v] = true
	}
}
