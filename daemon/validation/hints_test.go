package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// withMACs gives every test host its own MAC, 52:54:00:aa:bb:0<i>, as
// upper case to prove matching ignores case.
func withMACs(hosts []HostEntry) {
	for i, h := range hosts {
		h.Inventory.Interfaces[0].MACAddress = "52:54:00:AA:BB:0" + string(rune('0'+i))
	}
}

func configs(n int, hints *manifests.RootDeviceHints) []manifests.HostConfig {
	out := []manifests.HostConfig{}
	for i := range n {
		out = append(out, manifests.HostConfig{
			Name: "master-" + string(rune('0'+i)), MACs: []string{"52:54:00:aa:bb:0" + string(rune('0'+i))}, Hints: hints,
		})
	}
	return out
}

func TestHostDiskMatchesHints(t *testing.T) {
	id := string(wire.HostValidationIDInstallationDiskMatchesHints)
	tests := []struct {
		name    string
		configs []manifests.HostConfig
		noInv   bool
		status  wire.ValidationStatus // "" = left out of validations_info
		msg     string                // substring
	}{
		{name: "no host configs: not shown", configs: nil},
		{name: "no config for this host", configs: configs(0, nil), status: wire.ValidationSuccess, msg: "No host config matches"},
		{name: "config without hints", configs: configs(1, nil), status: wire.ValidationSuccess, msg: "has no root device hints"},
		{name: "hints match", configs: configs(1, &manifests.RootDeviceHints{DeviceName: "/dev/sda"}),
			status: wire.ValidationSuccess, msg: "An eligible disk matches the root device hints of host config master-0 (deviceName=/dev/sda)"},
		{name: "hints match nothing", configs: configs(1, &manifests.RootDeviceHints{DeviceName: "/dev/sdz"}),
			status: wire.ValidationFailure,
			msg:    "Host config master-0: No eligible disk matches root device hints (deviceName=/dev/sdz); eligible disks: /dev/sda (hctl 0:0:0:0, type HDD, 200 GB)"},
		{name: "before the inventory", configs: configs(1, &manifests.RootDeviceHints{DeviceName: "/dev/sdz"}), noInv: true,
			status: wire.ValidationPending, msg: "Missing inventory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newHostScene()
			withMACs(append([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}}, s.others...))
			s.v.HostConfigs = tt.configs
			if tt.noInv {
				s.in.Inventory = nil
			}
			rep := s.run()
			if tt.status == "" {
				for _, r := range rep.Results {
					if r.ID == id {
						t.Fatalf("%s shown without host configs: %+v", id, r)
					}
				}
				if !rep.Conditions[id] {
					t.Errorf("condition %s = false without host configs, want true", id)
				}
				return
			}
			got := findResult(t, rep, id)
			if got.Status != tt.status || !strings.Contains(got.Message, tt.msg) {
				t.Errorf("%s = %s %q, want %s containing %q", id, got.Status, got.Message, tt.status, tt.msg)
			}
			if want := tt.status == wire.ValidationSuccess; rep.Conditions[id] != want {
				t.Errorf("condition %s = %v, want %v", id, rep.Conditions[id], want)
			}
		})
	}
}

func TestConfiguredHostsRegistered(t *testing.T) {
	id := string(wire.ClusterValidationIDConfiguredHostsRegistered)
	tests := []struct {
		name    string
		configs []manifests.HostConfig
		age     time.Duration
		grace   time.Duration
		status  wire.ValidationStatus
		msg     string
	}{
		{name: "no host configs: not shown"},
		{name: "all registered", configs: configs(5, nil), age: time.Hour,
			status: wire.ValidationSuccess, msg: "Every configured host is registered (5)"},
		{name: "one missing, within grace", configs: append(configs(5, nil), manifests.HostConfig{Name: "worker-9", MACs: []string{"52:54:00:ff:00:09"}}),
			age: time.Minute, status: wire.ValidationPending, msg: "Waiting for configured hosts to register: worker-9 (MAC 52:54:00:ff:00:09)"},
		{name: "one missing, past grace", configs: append(configs(5, nil), manifests.HostConfig{Name: "worker-9", MACs: []string{"52:54:00:ff:00:09"}}),
			age: 11 * time.Minute, status: wire.ValidationFailure, msg: "No host with these MAC addresses has registered in 11m0s: worker-9 (MAC 52:54:00:ff:00:09)"},
		{name: "custom grace", configs: append(configs(5, nil), manifests.HostConfig{Name: "worker-9", MACs: []string{"52:54:00:ff:00:09"}}),
			age: 2 * time.Minute, grace: time.Minute, status: wire.ValidationFailure, msg: "worker-9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newClusterScene()
			withMACs(s.in.Hosts)
			s.v.HostConfigs, s.v.HostConfigGrace = tt.configs, tt.grace
			s.in.Now = now
			s.in.Cluster.CreatedAt = now.Add(-tt.age)
			rep := s.v.ValidateCluster(s.in)
			if tt.status == "" {
				for _, r := range rep.Results {
					if r.ID == id {
						t.Fatalf("%s shown without host configs: %+v", id, r)
					}
				}
				return
			}
			got := findResult(t, rep, id)
			if got.Status != tt.status || !strings.Contains(got.Message, tt.msg) {
				t.Errorf("%s = %s %q, want %s containing %q", id, got.Status, got.Message, tt.status, tt.msg)
			}
			if want := tt.status == wire.ValidationSuccess; rep.Conditions[id] != want {
				t.Errorf("condition %s = %v, want %v", id, rep.Conditions[id], want)
			}
		})
	}
}

func TestProcessInventoryHonoursHints(t *testing.T) {
	inv := testInventory("master-0", 8, 32, "192.168.111.10/24")
	inv.Disks = append(inv.Disks, &wire.Disk{
		ID: "/dev/disk/by-id/wwn-0x2", Name: "sdb", Path: "/dev/sdb", DriveType: wire.DriveTypeSSD,
		SizeBytes: 400 * 1000 * 1000 * 1000, HCTL: "1:0:0:0",
	})
	v := &Validator{HostConfigs: []manifests.HostConfig{{Name: "master-0", MACs: []string{"52:54:00:aa:bb:01"},
		Hints: &manifests.RootDeviceHints{HCTL: "1:0:0:0"}}}}
	h := testHost("h0", wire.HostRoleMaster)
	h.InstallationDiskID = "/dev/disk/by-id/wwn-0x1" // chosen before the hints were known
	got := v.ProcessInventory(testCluster(), h, inv)
	if got == nil || got.Name != "sdb" {
		t.Fatalf("ProcessInventory with hints hctl=1:0:0:0 chose %+v, want sdb", got)
	}
	v.HostConfigs[0].Hints = &manifests.RootDeviceHints{HCTL: "9:9:9:9"}
	if got := v.ProcessInventory(testCluster(), h, inv); got == nil || got.Name != "sda" {
		t.Fatalf("ProcessInventory with hints matching nothing chose %+v, want the current disk sda", got)
	}
}
