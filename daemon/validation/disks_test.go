package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func disk(name string, dt wire.DriveType, sizeGB int64, reasons ...string) *wire.Disk {
	return &wire.Disk{
		Name: name, Path: "/dev/" + name, DriveType: dt, SizeBytes: sizeGB * 1000 * 1000 * 1000,
		InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: len(reasons) == 0, NotEligibleReasons: reasons},
	}
}

func TestDiskNotEligibleReasons(t *testing.T) {
	inv := testInventory("h", 4, 16, "192.168.111.10/24")
	tests := []struct {
		name    string
		disk    *wire.Disk
		arch    string
		version string
		want    []string
	}{
		{"large HDD", disk("sda", wire.DriveTypeHDD, 200), "x86_64", "4.18.0", nil},
		{"too small", disk("sda", wire.DriveTypeSSD, 50), "x86_64", "4.18.0",
			[]string{"Disk is too small (disk only has 50 GB, but 100 GB are required)"}},
		{"short by bytes", &wire.Disk{Name: "sdb", DriveType: wire.DriveTypeHDD, SizeBytes: 99_999_999_900,
			InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true}}, "x86_64", "4.18.0",
			[]string{"Disk is too small (disk only has 100 GB (short by 100 B), but 100 GB are required)"}},
		{"odd size", &wire.Disk{Name: "sdb", DriveType: wire.DriveTypeHDD, SizeBytes: 68_719_476_736,
			InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true}}, "x86_64", "4.18.0",
			[]string{"Disk is too small (disk only has 68.72 GB, but 100 GB are required)"}},
		{"optical drive, agent reason kept", disk("sr0", wire.DriveTypeODD, 200, "Disk appears to be an ISO installation media (has partition with mountpoint suffix iso)"), "x86_64", "4.18.0",
			[]string{
				"Disk appears to be an ISO installation media (has partition with mountpoint suffix iso)",
				"Drive type is ODD, it must be one of HDD, SSD, Multipath, RAID, iSCSI, FC.",
			}},
		{"old service reasons are replaced", disk("sda", wire.DriveTypeHDD, 200, "Disk is too small (disk only has 1 GB, but 100 GB are required)"), "x86_64", "4.18.0", nil},
		{"RAID before 4.14", disk("md0", wire.DriveTypeRAID, 200), "x86_64", "4.13.0",
			[]string{"Drive type is RAID, it must be one of HDD, SSD, Multipath, FC."}},
		{"FC on arm", disk("sdc", wire.DriveTypeFC, 200), "aarch64", "4.18.0",
			[]string{"Drive type is FC, it must be one of HDD, SSD, Multipath, RAID, iSCSI."}},
		{"ECKD on s390x", disk("dasda", wire.DriveTypeECKD, 200), "s390x", "4.18.0", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv.CPU.Architecture = tc.arch
			got := DiskNotEligibleReasons(tc.disk, inv, 100, tc.version)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DiskNotEligibleReasons() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiskMultipath(t *testing.T) {
	inv := testInventory("h", 4, 16, "192.168.111.10/24")
	mpath := disk("dm-0", wire.DriveTypeMultipath, 200)
	fc1, fc2 := disk("sdb", wire.DriveTypeFC, 200), disk("sdc", wire.DriveTypeFC, 200)
	fc1.Holders, fc2.Holders = "dm-0", "dm-0"
	inv.Disks = []*wire.Disk{mpath, fc1, fc2}
	ApplyDiskEligibility(inv, 100, "4.18.0")
	if !mpath.InstallationEligibility.Eligible {
		t.Errorf("FC multipath device not eligible: %v", mpath.InstallationEligibility.NotEligibleReasons)
	}
	want := []string{"Disk is a member of multipath device dm-0 and is not eligible for installation. Use the multipath device instead."}
	if diff := cmp.Diff(want, fc1.InstallationEligibility.NotEligibleReasons); diff != "" {
		t.Errorf("FC path reasons mismatch (-want +got):\n%s", diff)
	}
	fc2.DriveType = wire.DriveTypeHDD
	got := DiskNotEligibleReasons(mpath, inv, 100, "4.18.0")
	if diff := cmp.Diff([]string{mixedTypesInMultipath}, got); diff != "" {
		t.Errorf("mixed multipath reasons mismatch (-want +got):\n%s", diff)
	}
}

func TestISCSIOnDefaultRouteInterface(t *testing.T) {
	inv := testInventory("h", 4, 16, "192.168.111.10/24")
	d := disk("sdd", wire.DriveTypeISCSI, 200)
	d.ISCSI = &wire.ISCSI{HostIPAddress: "192.168.111.10"}
	got := DiskNotEligibleReasons(d, inv, 100, "4.18.0")
	want := []string{"iSCSI host IP 192.168.111.10 is the same as host IP, they must be different"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons mismatch (-want +got):\n%s", diff)
	}
}

func TestInstallationDiskOrder(t *testing.T) {
	nvmeBig := disk("nvme0n1", wire.DriveTypeSSD, 1000)
	ssd := disk("sdb", wire.DriveTypeSSD, 300)
	hddBig := disk("sdc", wire.DriveTypeHDD, 900)
	hddSmall := disk("sdd", wire.DriveTypeHDD, 400)
	hddSmallHCTL := disk("sde", wire.DriveTypeHDD, 400)
	hddSmall.HCTL, hddSmallHCTL.HCTL = "1:0:0:0", "0:0:0:0"
	bootable := disk("sdf", wire.DriveTypeSSD, 2000)
	bootable.Bootable = true
	bad := disk("sdg", wire.DriveTypeHDD, 100, "Disk is an LVM logical volume")
	disks := []*wire.Disk{nvmeBig, ssd, hddBig, hddSmall, bad, hddSmallHCTL, bootable}

	var got []string
	for _, d := range EligibleDisks(disks) {
		got = append(got, d.Name)
	}
	want := []string{"sdf", "sde", "sdd", "sdc", "sdb", "nvme0n1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EligibleDisks order mismatch (-want +got):\n%s", diff)
	}

	if d := SelectInstallationDisk(disks, ""); d != bootable {
		t.Errorf("SelectInstallationDisk(no choice) = %s, want sdf", d.Name)
	}
	if d := SelectInstallationDisk(disks, "/dev/sdb"); d != ssd {
		t.Errorf("SelectInstallationDisk(/dev/sdb) = %s, want the current choice sdb", d.Name)
	}
	if d := SelectInstallationDisk(disks, "/dev/sdg"); d != bootable {
		t.Errorf("SelectInstallationDisk(ineligible sdg) = %s, want sdf", d.Name)
	}
	if d := SelectInstallationDisk([]*wire.Disk{bad}, ""); d != nil {
		t.Errorf("SelectInstallationDisk(no eligible) = %s, want nil", d.Name)
	}
}

func TestProcessInventory(t *testing.T) {
	v := &Validator{}
	c := testCluster()
	h := testHost("h0", wire.HostRoleMaster)
	inv := testInventory("master-0", 8, 32, "192.168.111.10/24")
	inv.Interfaces = append(inv.Interfaces, &wire.Interface{Name: "lo", Type: "device", IPv4Addresses: []string{"127.0.0.1/8"}})
	small := disk("sdb", wire.DriveTypeSSD, 60)
	small.InstallationEligibility = nil // an old agent gave no verdict
	inv.Disks = append(inv.Disks, small)

	got := v.ProcessInventory(c, h, inv)
	if got == nil || DiskID(got) != "/dev/disk/by-id/wwn-0x1" || DiskPath(got) != "/dev/sda" {
		t.Fatalf("ProcessInventory() = %+v, want sda", got)
	}
	if len(inv.Interfaces) != 1 || inv.Interfaces[0].Name != "eth0" {
		t.Errorf("interfaces after processing = %d, want only eth0", len(inv.Interfaces))
	}
	if small.ID != "/dev/sdb" || small.InstallationEligibility.Eligible {
		t.Errorf("small disk = id %q eligible %v, want /dev/sdb not eligible", small.ID, small.InstallationEligibility.Eligible)
	}

	// An arbiter needs only 50 GB, so the 60 GB disk becomes eligible.
	h.Role = wire.HostRoleArbiter
	v.ProcessInventory(c, h, inv)
	if !small.InstallationEligibility.Eligible {
		t.Errorf("60 GB disk for an arbiter not eligible: %v", small.InstallationEligibility.NotEligibleReasons)
	}
}

func TestByteFormats(t *testing.T) {
	tests := []struct {
		f    func(int64) string
		in   int64
		want string
	}{
		{siBytes, 100_000_000_000, "100 GB"},
		{siBytes, 1_500_000_000_000, "1.5 TB"},
		{siBytes, 999, "999 B"},
		{binaryBytes, 16384 * mib, "16.00 GiB"},
		{binaryBytes, 512 * mib, "512 MiB"},
	}
	for _, tc := range tests {
		if got := tc.f(tc.in); got != tc.want {
			t.Errorf("format(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
