package inventory

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// diskView is the part of a disk record the eligibility tests compare.
type diskView struct {
	Type    wire.DriveType
	Elig    bool
	Reasons []string
	Media   bool
}

func viewDisks(ds []*wire.Disk) map[string]diskView {
	m := map[string]diskView{}
	for _, d := range ds {
		m[d.Name] = diskView{d.DriveType, d.InstallationEligibility.Eligible, d.InstallationEligibility.NotEligibleReasons, d.IsInstallationMedia}
	}
	return m
}

func collectDisks(t *testing.T, root string) []*wire.Disk {
	t.Helper()
	inv, err := Collect(context.Background(), Options{Root: root, Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	return inv.Disks
}

func TestEligibilityOfCommittedTrees(t *testing.T) {
	tests := []struct {
		tree string
		want map[string]diskView
	}{
		{"master-0", map[string]diskView{
			"nvme0n1": {Type: wire.DriveTypeSSD, Elig: true},
			"sda":     {Type: wire.DriveTypeHDD, Elig: true},
		}},
		// Removable is not a reason any more (agent PR #716); the stick is
		// too small, but that is the service's reason, not the agent's.
		{"smalldisk", map[string]diskView{"sda": {Type: wire.DriveTypeHDD, Elig: true}}},
		{"undersized", map[string]diskView{"sda": {Type: wire.DriveTypeSSD, Elig: true}}},
		{"worker-1", map[string]diskView{"vda": {Type: wire.DriveTypeHDD, Elig: true}}},
		{"mounted", map[string]diskView{
			"sda": {Type: wire.DriveTypeSSD, Reasons: []string{
				"Disk has partition 'sda1' mounted on '/boot/efi'",
				"Disk has partition 'sda2' mounted on '/var/mnt/data'",
			}},
			"sdb": {Type: wire.DriveTypeSSD, Elig: true},
			"sr0": {Type: wire.DriveTypeODD, Elig: true, Media: true},
			// loop0 is not reported.
		}},
	}
	for _, tc := range tests {
		t.Run(tc.tree, func(t *testing.T) {
			got := viewDisks(collectDisks(t, hwTree(t, tc.tree)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("disks of %s (-want +got):\n%s", tc.tree, diff)
			}
		})
	}
}

// blockDev returns the files of one block device for writeRoot.
func blockDev(name, devno, udev string) map[string]string {
	return map[string]string{
		"sys/block/" + name + "/size":             "419430400\n", // 200 GiB
		"sys/block/" + name + "/dev":              devno + "\n",
		"sys/block/" + name + "/queue/rotational": "0\n",
		"run/udev/data/b" + devno:                 udev,
		"dev/" + name:                             "",
	}
}

// sysBlockLink moves a device's sysfs directory under target and links
// /sys/block/<name> to it, as the kernel lays out iSCSI and DASD devices.
func sysBlockLink(files map[string]string, name, target string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		if rest, ok := cutDir(k, "sys/block/"+name); ok {
			out["sys/"+target+rest] = v
			continue
		}
		out[k] = v
	}
	out["sys/block/"+name] = "->../" + target
	return out
}

func cutDir(p, dir string) (string, bool) {
	if len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/' {
		return p[len(dir):], true
	}
	return "", false
}

func TestEligibilityRules(t *testing.T) {
	const iqn = "iqn.2024-01.com.example:disk1"
	iscsiPath := "ip-10.0.0.1:3260-iscsi-" + iqn + "-lun-0"
	root := writeRoot(t, merge(
		blockDev("md0", "9:0", ""),
		blockDev("dm-0", "253:0", ""),
		blockDev("dm-1", "253:1", ""),
		blockDev("dm-2", "253:2", ""),
		map[string]string{
			"sys/block/dm-1/dm/uuid": "mpath-3600a098038303053453f463045727154\n",
			"sys/block/dm-2/dm/uuid": "LVM-abcdef\n",
			"sys/block/sdb/hidden":   "1\n",
		},
		blockDev("zram0", "252:0", ""),
		blockDev("sdb", "8:16", ""),
		blockDev("xyz0", "240:0", ""),
		// An ISO written to a stick: its partition is mounted on .../iso.
		blockDev("sdc", "8:32", "E:ID_PATH=pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0\n"),
		map[string]string{
			"sys/block/sdc/sdc1/dev": "8:33\n", "sys/block/sdc/sdc1/size": "2048\n",
			"sys/block/sdc/sdc2/dev": "8:34\n", "sys/block/sdc/sdc2/size": "2048\n",
		},
		// An appliance-labelled partition skips the partition checks.
		blockDev("sdd", "8:48", ""),
		map[string]string{
			"sys/block/sdd/sdd1/dev": "8:49\n", "sys/block/sdd/sdd1/size": "2048\n",
			"run/udev/data/b8:49": "E:ID_PART_ENTRY_NAME=agentboot\n",
		},
		sysBlockLink(merge(blockDev("sde", "8:64", "E:ID_PATH="+iscsiPath+"\n"), map[string]string{
			"sys/block/sde/device/state": "running\n",
		}), "sde", "devices/platform/host3/session2/target3:0:0/3:0:0:0/block/sde"),
		map[string]string{
			"sys/class/iscsi_session/session2/targetname": iqn + "\n",
			"sys/class/iscsi_host/host3/ipaddress":        "10.0.0.7\n",
			"sys/firmware/ibft/target0/target-name":       iqn + "\n",
		},
		sysBlockLink(merge(blockDev("sdf", "8:80", "E:ID_PATH=ip-10.0.0.2:3260-iscsi-iqn.2024-01.com.example:other-lun-0\n"), map[string]string{
			"sys/block/sdf/device/state": "blocked\n",
		}), "sdf", "devices/platform/host4/session3/target4:0:0/4:0:0:0/block/sdf"),
		map[string]string{"sys/class/iscsi_session/session3/targetname": "iqn.2024-01.com.example:other\n"},
		blockDev("sdg", "8:96", "E:ID_PATH=pci-0000:41:00.0-fc-0x500a0981891b8dc5-lun-0\n"),
		sysBlockLink(blockDev("dasda", "94:0", ""), "dasda", "devices/css0/0.0.0000/0.0.0100/block/dasda"),
		map[string]string{
			"sys/devices/css0/0.0.0000/0.0.0100/discipline": "ECKD\n",
			"sys/devices/css0/0.0.0000/0.0.0100/ese":        "1\n",
			"proc/self/mounts": "/dev/sdc1 /run/media/iso iso9660 ro 0 0\n" +
				"/dev/sdc2 /var/data xfs rw 0 0\n" +
				"/dev/sdd1 /boot xfs rw 0 0\n",
		},
	))
	disks := collectDisks(t, root)
	want := map[string]diskView{
		"dasda": {Type: wire.DriveTypeECKDESE, Elig: true},
		"dm-1":  {Type: wire.DriveTypeMultipath, Elig: true},
		"dm-2":  {Type: wire.DriveTypeLVM, Reasons: []string{"Disk is an LVM logical volume"}},
		"md0":   {Type: wire.DriveTypeRAID, Elig: true},
		"sdc": {Type: wire.DriveTypeSSD, Media: true, Reasons: []string{
			"Disk appears to be an ISO installation media (has partition with mountpoint suffix iso)",
		}},
		"sdd":  {Type: wire.DriveTypeSSD, Elig: true},
		"sde":  {Type: wire.DriveTypeISCSI, Elig: true},
		"sdf":  {Type: wire.DriveTypeISCSI, Reasons: []string{"iSCSI disk is not in running state", "iSCSI disk is missing from iBFT"}},
		"sdg":  {Type: wire.DriveTypeFC, Elig: true},
		"xyz0": {Type: wire.DriveTypeUnknown, Reasons: []string{"Disk has unknown storage controller"}},
		// dm-0 (plain device mapper), sdb (hidden) and zram0 are not reported.
	}
	if diff := cmp.Diff(want, viewDisks(disks)); diff != "" {
		t.Errorf("disks (-want +got):\n%s", diff)
	}
	for _, d := range disks {
		if d.Name == "sde" {
			if d.ISCSI == nil || d.ISCSI.HostIPAddress != "10.0.0.7" {
				t.Errorf("sde iscsi = %+v, want host_ip_address 10.0.0.7", d.ISCSI)
			}
		}
	}
}

func TestEligibilityNoIBFT(t *testing.T) {
	const iqn = "iqn.2024-01.com.example:disk1"
	root := writeRoot(t, merge(
		sysBlockLink(merge(blockDev("sda", "8:0", "E:ID_PATH=ip-10.0.0.1:3260-iscsi-"+iqn+"-lun-0\n"), map[string]string{
			"sys/block/sda/device/state": "running\n",
		}), "sda", "devices/platform/host3/session2/target3:0:0/3:0:0:0/block/sda"),
		map[string]string{"sys/class/iscsi_session/session2/targetname": iqn + "\n"},
	))
	got := viewDisks(collectDisks(t, root))["sda"].Reasons
	if want := []string{"iBFT firmware is missing"}; !cmp.Equal(got, want) {
		t.Errorf("reasons = %q, want %q", got, want)
	}
}

func TestDiskNames(t *testing.T) {
	files := merge(
		// Two devices on one bus path: neither gets a by-path.
		blockDev("hda", "3:0", "E:ID_PATH=pci-0000:00:01.1-ata-1\n"),
		blockDev("hdb", "3:64", "E:ID_PATH=pci-0000:00:01.1-ata-1\n"),
		// No ID_WWN: the WWN comes from the wwn- link's name.
		blockDev("sda", "8:0", "E:ID_PATH=pci-0000:00:17.0-ata-1\n"),
		// No /dev/sdb: the path comes from resolving the by-path link.
		blockDev("sdb", "8:16", "E:ID_PATH=pci-0000:00:17.0-ata-2\nE:ID_WWN=0x5000000000000002\n"),
		// No ID_WWN and an nvme-eui link: the agent reports the link's path.
		blockDev("nvme0n1", "259:0", ""),
		map[string]string{
			"dev/disk/by-path/pci-0000:00:01.1-ata-1":  "->../../hda",
			"dev/disk/by-path/pci-0000:00:17.0-ata-1":  "->../../sda",
			"dev/disk/by-path/pci-0000:00:17.0-ata-2":  "->/dev/sdb-renamed",
			"dev/sdb-renamed":                          "",
			"dev/disk/by-id/wwn-0x5000000000000001":    "->../../sda",
			"dev/disk/by-id/ata-SOMETHING":             "->../../sda",
			"dev/disk/by-id/nvme-eui.0025388b71b2c3d4": "->../../nvme0n1",
		},
	)
	delete(files, "dev/sdb")
	root := writeRoot(t, files)
	type names struct{ ID, ByID, ByPath, Path, WWN string }
	got := map[string]names{}
	for _, d := range collectDisks(t, root) {
		got[d.Name] = names{d.ID, d.ByID, d.ByPath, d.Path, d.WWN}
	}
	want := map[string]names{
		"hda": {ID: "/dev/hda", Path: "/dev/hda"},
		"hdb": {ID: "/dev/hdb", Path: "/dev/hdb"},
		"nvme0n1": {ID: "/dev/disk/by-id/nvme-eui.0025388b71b2c3d4", ByID: "/dev/disk/by-id/nvme-eui.0025388b71b2c3d4",
			Path: "/dev/nvme0n1", WWN: "/dev/disk/by-id/nvme-eui.0025388b71b2c3d4"},
		"sda": {ID: "/dev/disk/by-id/wwn-0x5000000000000001", ByID: "/dev/disk/by-id/wwn-0x5000000000000001",
			ByPath: "/dev/disk/by-path/pci-0000:00:17.0-ata-1", Path: "/dev/sda", WWN: "0x5000000000000001"},
		"sdb": {ID: "/dev/disk/by-path/pci-0000:00:17.0-ata-2", ByPath: "/dev/disk/by-path/pci-0000:00:17.0-ata-2",
			Path: "/dev/sdb-renamed", WWN: "0x5000000000000002"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("disk names (-want +got):\n%s", diff)
	}
}

func TestApplianceDisk(t *testing.T) {
	root := writeRoot(t, merge(
		blockDev("sda", "8:0", ""),
		blockDev("dm-0", "253:0", ""),
		map[string]string{
			"sys/block/dm-0/dm/name":        "agentroot\n",
			"sys/block/sda/device/vpd_pg83": "x",
		},
	))
	disks := collectDisks(t, root)
	want := []*wire.Disk{{
		ID: "/dev/dm-0", Name: "dm-0", Path: "/dev/dm-0", DriveType: wire.DriveTypeSSD, SizeBytes: 100 << 30, HasUUID: true,
		InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
	}}
	if diff := cmp.Diff(want, disks); diff != "" {
		t.Errorf("appliance disks (-want +got):\n%s", diff)
	}
}

func TestBootable(t *testing.T) {
	mbr := fmt.Sprintf("%0510d", 0) + "\x55\xaa"
	root := writeRoot(t, map[string]string{"dev/a": mbr, "dev/b": mbr[:511] + "\x00", "dev/c": "short"})
	c, err := newCollector(Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"/dev/a": true, "/dev/b": false, "/dev/c": false, "/dev/missing": false, "": false} {
		if got := c.bootable(p); got != want {
			t.Errorf("bootable(%q) = %v, want %v", p, got, want)
		}
	}
}
