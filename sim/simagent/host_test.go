package simagent

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

func TestNewHost(t *testing.T) {
	tests := []struct {
		name     string
		index    int
		class    Class
		addr     string
		mac      string
		hostname string
	}{
		{"first master", 0, Master, "198.18.1.0/16", "02:00:5e:00:00:00", "sim-master-0000"},
		{"a worker past one /24", 300, Worker, "198.18.2.44/16", "02:00:5e:00:01:2c", "sim-worker-0300"},
		{"the thousandth", 999, Worker, "198.18.4.231/16", "02:00:5e:00:03:e7", "sim-worker-0999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := NewHost(tt.index, DefaultNetwork, tt.class)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{h.Address.String(), h.MAC, h.Hostname, h.Gateway.String()}
			want := []string{tt.addr, tt.mac, tt.hostname, "198.18.0.1"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("NewHost(%d) address, MAC, hostname, gateway (-want +got):\n%s", tt.index, diff)
			}
			if len(h.ID) != 36 || h.ID[14] != '4' {
				t.Errorf("NewHost(%d).ID = %q, want a version 4 UUID", tt.index, h.ID)
			}
		})
	}
}

func TestNewHostRefusesWhatTheNetworkCannotHold(t *testing.T) {
	tests := []struct {
		name    string
		network string
		index   int
	}{
		{"a /24 is too small", "10.0.0.0/24", 0},
		{"IPv6", "fd00::/64", 0},
		{"past the end of a /22", "10.0.0.0/22", 512},
		{"a negative index", "10.0.0.0/16", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHost(tt.index, netip.MustParsePrefix(tt.network), Worker)
			if !errors.Is(err, ErrNetwork) {
				t.Errorf("NewHost(%d, %s) error = %v, want ErrNetwork", tt.index, tt.network, err)
			}
		})
	}
}

func TestHostsAreDistinctAndAwayFromTheVIPs(t *testing.T) {
	api, ingress, err := VIPs(DefaultNetwork)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{api.String(), ingress.String()}; !cmp.Equal(got, []string{"198.18.0.100", "198.18.0.101"}) {
		t.Errorf("VIPs(%s) = %v, want 198.18.0.100 and 198.18.0.101", DefaultNetwork, got)
	}
	seen := map[string]bool{api.String(): true, ingress.String(): true}
	for i := range 2000 {
		h, err := NewHost(i, DefaultNetwork, Worker)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{h.ID, h.MAC, h.Hostname, h.Address.Addr().String()} {
			if seen[k] {
				t.Fatalf("host %d repeats %q", i, k)
			}
			seen[k] = true
		}
		if !DefaultNetwork.Contains(h.Address.Addr()) {
			t.Fatalf("host %d address %s is outside %s", i, h.Address, DefaultNetwork)
		}
	}
	if got, want := MaxHosts(DefaultNetwork), 65536-512; got != want {
		t.Errorf("MaxHosts(%s) = %d, want %d", DefaultNetwork, got, want)
	}
}

func TestInventory(t *testing.T) {
	for _, c := range []Class{Master, Worker} {
		t.Run(c.String(), func(t *testing.T) {
			h, err := NewHost(7, DefaultNetwork, c)
			if err != nil {
				t.Fatal(err)
			}
			inv := h.Inventory()
			s, err := wire.EncodeEmbedded(inv)
			if err != nil {
				t.Fatal(err)
			}
			if len(s) < 2000 || len(s) > 3200 {
				t.Errorf("inventory is %d bytes of JSON, want about 2–3 KB", len(s))
			}
			wantCores, wantMem := int64(4), 16*gib
			if c == Master {
				wantCores, wantMem = 8, 32*gib
			}
			if inv.CPU.Count != wantCores || inv.Memory.PhysicalBytes != wantMem {
				t.Errorf("inventory has %d cores, %d bytes; want %d, %d", inv.CPU.Count, inv.Memory.PhysicalBytes, wantCores, wantMem)
			}
			for _, d := range inv.Disks {
				if d.SizeBytes < 120*gb || d.InstallationEligibility == nil || !d.InstallationEligibility.Eligible {
					t.Errorf("disk %s: %d bytes, eligibility %+v; want at least 120 GB and eligible", d.Name, d.SizeBytes, d.InstallationEligibility)
				}
			}
			nic := inv.Interfaces[0]
			if nic.Type != "physical" || nic.MACAddress != h.MAC || !cmp.Equal(nic.IPv4Addresses, []string{h.Address.String()}) {
				t.Errorf("first NIC = %+v, want physical with %s and %s", nic, h.MAC, h.Address)
			}
			if r := inv.Routes[0]; r.Destination != "0.0.0.0" || r.Gateway != "198.18.0.1" {
				t.Errorf("first route = %+v, want the default route via 198.18.0.1", r)
			}
			if inv.Hostname != h.Hostname {
				t.Errorf("inventory hostname = %q, want %q", inv.Hostname, h.Hostname)
			}
		})
	}
}
