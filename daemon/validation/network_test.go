package validation

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestCalculateMachineNetworkCIDR(t *testing.T) {
	v4 := testHosts()
	v6 := []HostEntry{{Host: testHost("h6", wire.HostRoleMaster), Inventory: testInventory("six", 8, 32, "10.0.0.1/24")}}
	v6[0].Inventory.Interfaces = append(v6[0].Inventory.Interfaces, &wire.Interface{
		Name: "eth1", Type: "vlan", IPv6Addresses: []string{"fd2e:6f44:5dd8:c956::14/64"},
	})
	virt := []HostEntry{{Host: testHost("hv", wire.HostRoleMaster), Inventory: testInventory("virt", 8, 32, "192.168.111.30/24")}}
	virt[0].Inventory.Interfaces[0].Type = "tun"

	tests := []struct {
		name         string
		api, ingress string
		hosts        []HostEntry
		allowVirtual bool
		want         string
	}{
		{"IPv4 API VIP", "192.168.111.5", "192.168.111.4", v4, false, "192.168.111.0/24"},
		{"ingress VIP when no API VIP", "", "192.168.111.4", v4, false, "192.168.111.0/24"},
		{"IPv6", "fd2e:6f44:5dd8:c956::5", "", v6, false, "fd2e:6f44:5dd8:c956::/64"},
		{"no matching interface", "10.9.9.9", "", v4, false, ""},
		{"no VIPs", "", "", v4, false, ""},
		{"virtual interface ignored", "192.168.111.5", "", virt, false, ""},
		{"virtual interface allowed", "192.168.111.5", "", virt, true, "192.168.111.0/24"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CalculateMachineNetworkCIDR(tc.api, tc.ingress, tc.hosts, tc.allowVirtual, false)
			if err != nil || got != tc.want {
				t.Errorf("CalculateMachineNetworkCIDR(%q, %q) = %q, %v, want %q", tc.api, tc.ingress, got, err, tc.want)
			}
		})
	}
	_, err := CalculateMachineNetworkCIDR("10.9.9.9", "", v4, false, true)
	if !errors.Is(err, ErrNoMatchingCIDR) {
		t.Errorf("required match error = %v, want ErrNoMatchingCIDR", err)
	}
	if _, err := CalculateMachineNetworkCIDR("not-an-ip", "", v4, false, true); err == nil {
		t.Error("unparsable VIP: no error")
	}
}

func TestAutoAssignMachineNetworks(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(c *wire.Cluster, hosts *[]HostEntry)
		want    []string
		changed bool
	}{
		{"already equal", nil, nil, false},
		{"derived from the API VIP", func(c *wire.Cluster, _ *[]HostEntry) { c.MachineNetworks = nil },
			[]string{"192.168.111.0/24"}, true},
		{"user value replaced by the derived one", func(c *wire.Cluster, _ *[]HostEntry) {
			c.MachineNetworks = []*wire.MachineNetwork{{CIDR: "192.168.0.0/16"}}
		}, []string{"192.168.111.0/24"}, true},
		{"no host in the VIP subnet clears the networks", func(c *wire.Cluster, hosts *[]HostEntry) { *hosts = nil },
			nil, true},
		{"dual stack without hosts keeps the networks", func(c *wire.Cluster, hosts *[]HostEntry) {
			*hosts = nil
			c.MachineNetworks = append(c.MachineNetworks, &wire.MachineNetwork{CIDR: "fd00::/64"})
		}, nil, false},
		{"user-managed networking", func(c *wire.Cluster, _ *[]HostEntry) {
			c.MachineNetworks, c.UserManagedNetworking = nil, ptr(true)
		}, nil, false},
		{"user-managed load balancer", func(c *wire.Cluster, _ *[]HostEntry) {
			c.MachineNetworks = nil
			c.LoadBalancer = &wire.LoadBalancer{Type: wire.LoadBalancerTypeUserManaged}
		}, nil, false},
		{"not before install", func(c *wire.Cluster, _ *[]HostEntry) {
			c.MachineNetworks, c.Status = nil, wire.ClusterStatusReady
		}, nil, false},
		{"DHCP with one host network", func(c *wire.Cluster, _ *[]HostEntry) {
			c.MachineNetworks, c.APIVIPs, c.IngressVIPs, c.VIPDHCPAllocation = nil, nil, nil, ptr(true)
		}, []string{"192.168.111.0/24"}, true},
		{"DHCP with two host networks", func(c *wire.Cluster, hosts *[]HostEntry) {
			c.MachineNetworks, c.VIPDHCPAllocation = nil, ptr(true)
			(*hosts)[0].Inventory.Interfaces[0].IPv4Addresses = []string{"10.1.0.5/24"}
		}, nil, false},
		{"SNO with one host network", func(c *wire.Cluster, hosts *[]HostEntry) {
			c.MachineNetworks, c.APIVIPs, c.IngressVIPs, c.ControlPlaneCount = nil, nil, nil, 1
			*hosts = (*hosts)[:1]
		}, []string{"192.168.111.0/24"}, true},
		{"SNO picks the default route network", func(c *wire.Cluster, hosts *[]HostEntry) {
			c.MachineNetworks, c.ControlPlaneCount = nil, 1
			*hosts = (*hosts)[:1]
			inv := (*hosts)[0].Inventory
			inv.Interfaces = append(inv.Interfaces, &wire.Interface{Name: "eth1", Type: "physical", IPv4Addresses: []string{"10.1.0.5/24"}})
		}, []string{"192.168.111.0/24"}, true},
		{"SNO keeps a user network", func(c *wire.Cluster, hosts *[]HostEntry) {
			c.ControlPlaneCount = 1
			c.MachineNetworks = []*wire.MachineNetwork{{CIDR: "10.1.0.0/24"}}
		}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, hosts := testCluster(), testHosts()
			if tc.setup != nil {
				tc.setup(c, &hosts)
			}
			v := &Validator{}
			got, changed, err := v.AutoAssignMachineNetworks(c, hosts)
			if err != nil {
				t.Fatalf("AutoAssignMachineNetworks() error = %v", err)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("networks mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterInterfaces(t *testing.T) {
	in := []*wire.Interface{{Name: "eth0", Type: "physical"}, {Name: "old"}, {Name: "br0", Type: "bridge"},
		{Name: "bond0", Type: "bond"}, {Name: "eth0.10", Type: "vlan"}, {Name: "lo", Type: "device"}}
	var got []string
	for _, i := range FilterInterfaces(in, false) {
		got = append(got, i.Name)
	}
	if diff := cmp.Diff([]string{"eth0", "old", "bond0", "eth0.10"}, got); diff != "" {
		t.Errorf("FilterInterfaces mismatch (-want +got):\n%s", diff)
	}
	if n := len(FilterInterfaces(in, true)); n != len(in) {
		t.Errorf("FilterInterfaces(allowVirtual) kept %d, want %d", n, len(in))
	}
}

func TestVIPUseFromHosts(t *testing.T) {
	hosts := testHosts()
	hosts[0].Host.FreeAddresses = `[{"network":"192.168.111.0/24","free_addresses":["192.168.111.4","192.168.111.5","192.168.111.6"]}]`
	hosts[1].Host.FreeAddresses = `[{"network":"192.168.111.0/24","free_addresses":["192.168.111.5","192.168.111.6"]},{"network":"10.0.0.0/24","free_addresses":["10.0.0.9"]}]`
	hosts[2].Host.FreeAddresses = `not json`
	u := VIPUseFromHosts(typed(hosts))
	want := map[string]map[string]bool{
		"192.168.111.0/24": {"192.168.111.5": true, "192.168.111.6": true},
		"10.0.0.0/24":      {"10.0.0.9": true},
	}
	if u == nil {
		t.Fatal("VIPUseFromHosts() = nil")
	}
	if diff := cmp.Diff(want, u.Free); diff != "" {
		t.Errorf("free sets mismatch (-want +got):\n%s", diff)
	}
	if u := VIPUseFromHosts(typed(testHosts())); u != nil {
		t.Errorf("VIPUseFromHosts(no reports) = %+v, want nil", u)
	}
}
