package register

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

func TestApplyHostConfigs(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	set := manifestSet(t, compactSpec())
	cluster, err := RegisterCluster(ctx, s.user, set)
	if err != nil {
		t.Fatal(err)
	}
	ie, err := RegisterInfraEnv(ctx, s.user, set, cluster.ID)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i, name := range []string{"master-0", "master-1", "master-2"} {
		ids[name] = s.addHost(t, ie.ID, inventory(name, macOf(i), i))
	}
	// A host that has not sent its inventory yet is left alone.
	if _, err := s.agent.RegisterHost(ctx, ie.ID, wire.HostCreateParams{HostID: uuid.NewString()}); err != nil {
		t.Fatal(err)
	}

	yes := true
	dir := t.TempDir()
	err = manifests.WriteHostConfigs(dir, []manifests.HostConfig{
		// MACs match case-insensitively. The service picked sdb (HDDs
		// first); the hints move master-0 to sda.
		{Name: "master-0", MACs: []string{"52:54:00:AA:BB:00"}, Role: "master", Hints: &manifests.RootDeviceHints{DeviceName: "/dev/sda"}},
		{Name: "master-1", MACs: []string{macOf(1)}, Role: "worker", Hints: &manifests.RootDeviceHints{Model: "Dell", MinSizeGigabytes: 900}},
		{Name: "master-2", MACs: []string{macOf(2)}, Hints: &manifests.RootDeviceHints{Rotational: &yes, MinSizeGigabytes: 600}},
		{Name: "worker-9", MACs: []string{"52:54:00:ff:ff:09"}, Role: "worker"},
	})
	if err != nil {
		t.Fatal(err)
	}

	res, err := ApplyHostConfigs(ctx, s.user, ie.ID, dir)
	if err != nil {
		t.Fatalf("ApplyHostConfigs: %v", err)
	}
	sda, nvme := "/dev/disk/by-id/wwn-0x5000000000000a00", "/dev/disk/by-id/wwn-0x5000000000000c01"
	updates := map[string]HostUpdate{}
	for _, u := range res.Updated {
		updates[u.Config] = u
	}
	if got := updates["master-0"].DiskID; got != sda {
		t.Errorf("master-0 (deviceName=/dev/sda): got disk %q, want %q", got, sda)
	}
	if u := updates["master-1"]; u.DiskID != nvme || u.Role != "worker" {
		t.Errorf("master-1 (model Dell, >= 900 GB, role worker): got %+v, want disk %s and role worker", u, nvme)
	}
	if _, ok := updates["master-2"]; ok {
		t.Errorf("master-2: got an accepted update %+v, want a failure", updates["master-2"])
	}
	for name, want := range map[string]struct {
		disk string
		role wire.HostRole
	}{"master-0": {sda, ""}, "master-1": {nvme, wire.HostRoleWorker}} {
		h, err := s.user.GetHost(ctx, ie.ID, ids[name])
		if err != nil {
			t.Fatal(err)
		}
		if h.InstallationDiskID != want.disk || (want.role != "" && h.Role != want.role) {
			t.Errorf("%s after the pass: disk %q role %q; want disk %q role %q", name, h.InstallationDiskID, h.Role, want.disk, want.role)
		}
	}

	failures := map[string]Failure{}
	for _, f := range res.Failures {
		failures[f.Config] = f
	}
	if len(res.Failures) != 2 {
		t.Errorf("got %d failures %v, want master-2 and worker-9", len(res.Failures), res.Failures)
	}
	f := failures["master-2"]
	for _, want := range []string{
		"Failed to update host installation disk to /dev/not-found-by-hints (from ",
		"No eligible disk matches root device hints (minSizeGigabytes=600, rotational=true)",
		"eligible disks: /dev/sda (", "/dev/sdb (by-path /dev/disk/by-path/pci-0000:00:1f.2-ata-sdb, hctl 1:0:0:0",
		"500 GB)", "/dev/nvme0n1 (",
	} {
		if !strings.Contains(f.Reason, want) {
			t.Errorf("master-2 failure %q: missing %q", f.Reason, want)
		}
	}
	if strings.Contains(f.Reason, "/dev/sdc (") {
		t.Errorf("master-2 failure lists the ineligible sdc: %q", f.Reason)
	}
	if f.Hostname != "master-2" || f.HostID != ids["master-2"] || f.Hints.String() != "minSizeGigabytes=600, rotational=true" || len(f.EligibleDisks) != 3 {
		t.Errorf("master-2 failure: got %+v", f)
	}
	if diff := cmp.Diff([]string{"worker-9"}, res.Missing()); diff != "" {
		t.Errorf("Missing() (-want +got):\n%s", diff)
	}
	if got := failures["worker-9"].String(); got != "worker-9: Host not registered" {
		t.Errorf("worker-9 failure: got %q", got)
	}

	path := filepath.Join(t.TempDir(), "agent-installer", "host-config-failures")
	if err := WriteFailures(path, res); err != nil {
		t.Fatalf("WriteFailures: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("host-config-failures:\n%s", b)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "master-2: Failed to update host installation disk to /dev/not-found-by-hints") ||
		lines[1] != "worker-9: Host not registered" {
		t.Errorf("host-config-failures:\n%s\nwant a master-2 line then \"worker-9: Host not registered\"", b)
	}

	// A second pass changes nothing more and reports the same failures.
	again, err := ApplyHostConfigs(ctx, s.user, ie.ID, dir)
	if err != nil {
		t.Fatalf("ApplyHostConfigs again: %v", err)
	}
	if len(again.Updated) != 0 || len(again.Failures) != 2 || again.Done() {
		t.Errorf("second pass: got %d updates %v and %d failures, want 0 and 2", len(again.Updated), again.Updated, len(again.Failures))
	}

	// Once nothing fails the file goes away.
	if err := WriteFailures(path, Result{}); err != nil {
		t.Fatalf("WriteFailures(clean): %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFailures(clean): file still there (%v)", err)
	}
}

func TestApplyHostConfigsBadHints(t *testing.T) {
	s := newService(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "master-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"mac_addresses": macOf(0) + "\n", "root-device-hints.yaml": "deviceName: /dev/sda\ndeviceNames: /dev/sdb\n"} {
		if err := os.WriteFile(filepath.Join(dir, "master-0", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := ApplyHostConfigs(context.Background(), s.user, uuid.NewString(), dir)
	if err == nil || !strings.Contains(err.Error(), "root-device-hints.yaml") || !strings.Contains(err.Error(), "deviceNames") {
		t.Fatalf("ApplyHostConfigs with an unknown hint: got %v, want an error naming the file and the field", err)
	}
}

// TestAcceptableDisks pins validation.AcceptableDisks on the inventories
// ApplyHostConfigs sees (this package's fixture).
func TestAcceptableDisks(t *testing.T) {
	inv := inventory("h", macOf(0), 0)
	inv.Disks[3].InstallationEligibility = &wire.DiskInstallationEligibility{NotEligibleReasons: []string{"too small"}}
	yes, no := true, false
	tests := []struct {
		name  string
		hints *manifests.RootDeviceHints
		want  []string
	}{
		{"no hints: every eligible disk", nil, []string{"sda", "sdb", "nvme0n1"}},
		{"deviceName path", &manifests.RootDeviceHints{DeviceName: "/dev/nvme0n1"}, []string{"nvme0n1"}},
		{"deviceName by-path", &manifests.RootDeviceHints{DeviceName: "/dev/disk/by-path/pci-0000:00:1f.2-ata-sdb"}, []string{"sdb"}},
		{"deviceName by-id is not a device name", &manifests.RootDeviceHints{DeviceName: "/dev/disk/by-id/wwn-0x5000000000000a00"}, nil},
		{"hctl exact", &manifests.RootDeviceHints{HCTL: "1:0:0:0"}, []string{"sdb"}},
		{"model substring", &manifests.RootDeviceHints{Model: "SSD 8"}, []string{"sda"}},
		{"vendor substring", &manifests.RootDeviceHints{Vendor: "AT"}, []string{"sda", "sdb"}},
		{"serial exact", &manifests.RootDeviceHints{SerialNumber: "Z10"}, []string{"sdb"}},
		{"serial is not a substring", &manifests.RootDeviceHints{SerialNumber: "Z1"}, nil},
		{"size in decimal GB", &manifests.RootDeviceHints{MinSizeGigabytes: 500}, []string{"sdb", "nvme0n1"}},
		{"wwn exact", &manifests.RootDeviceHints{WWN: "0x5000000000000c00"}, []string{"nvme0n1"}},
		{"rotational", &manifests.RootDeviceHints{Rotational: &yes}, []string{"sdb"}},
		{"not rotational", &manifests.RootDeviceHints{Rotational: &no}, []string{"sda", "nvme0n1"}},
		{"all hints must hold", &manifests.RootDeviceHints{Vendor: "ATA", Rotational: &no}, []string{"sda"}},
		{"ineligible disks never", &manifests.RootDeviceHints{DeviceName: "/dev/sdc"}, nil},
		{"WWN extensions ignored", &manifests.RootDeviceHints{WWNWithExtension: "x", WWNVendorExtension: "y", DeviceName: "/dev/sda"}, []string{"sda"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range validation.AcceptableDisks(inv.Disks, tt.hints) {
				got = append(got, d.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AcceptableDisks(%s) (-want +got):\n%s", tt.hints, diff)
			}
		})
	}
}
