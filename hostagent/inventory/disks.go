package inventory

import (
	"io"
	"math"
	"os"
	"path"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/block"
	"github.com/jaypipes/ghw/pkg/util"

	"github.com/nodezero/nodezero/wire"
)

// Where the agent finds stable disk names (src/inventory/disks.go).
const (
	byIDDir   = "/dev/disk/by-id"
	byPathDir = "/dev/disk/by-path"
)

// applianceSize is the size the agent reports for an openshift-appliance
// disk, so that the service's size check passes (100 GiB).
const applianceSize = 100 << 30

// disks lists the block devices ghw finds under the root, with the agent's
// skip rules, names and eligibility.
func (c *collector) disks() []*wire.Disk {
	var info *ghw.BlockInfo
	err := safely("read block devices", func() error {
		var err error
		info, err = ghw.Block(c.ghwOpts()...)
		return err
	})
	if err != nil {
		c.log.Debug("read block devices", "err", err)
		return nil
	}
	if len(info.Disks) == 0 {
		return nil
	}
	if d := c.applianceDisk(info.Disks); d != nil {
		return []*wire.Disk{d}
	}
	byID := c.byIDLinks()
	var out []*wire.Disk
	for i, d := range info.Disks {
		if !c.shouldReport(d) {
			continue
		}
		reasons, media := c.eligibility(d)
		// Optical drives are installation media whatever their mounts say.
		media = media || d.DriveType == ghw.DriveTypeODD
		p := c.devPath(d)
		rec := &wire.Disk{
			ByID:                byID[p],
			ByPath:              c.uniqueByPath(info.Disks, i),
			HCTL:                c.hctl(d.Name),
			Model:               unknownToEmpty(d.Model),
			Name:                d.Name,
			Path:                p,
			DriveType:           c.driveType(d),
			Serial:              unknownToEmpty(d.SerialNumber),
			SizeBytes:           sizeBytes(d),
			Vendor:              unknownToEmpty(d.Vendor),
			WWN:                 pureWWN(d.WWN, byID[p]),
			Bootable:            c.bootable(p),
			Removable:           d.IsRemovable,
			IsInstallationMedia: media,
			InstallationEligibility: &wire.DiskInstallationEligibility{
				Eligible:           len(reasons) == 0,
				NotEligibleReasons: reasons,
			},
			HasUUID: c.hasUUID(d.Name, p),
			Holders: c.holders(d.Name),
		}
		if rec.DriveType == wire.DriveTypeISCSI {
			rec.ISCSI = &wire.ISCSI{HostIPAddress: c.iscsiHostIP(d.Name)}
		}
		rec.ID = diskID(rec)
		out = append(out, rec)
	}
	return out
}

// sizeBytes is ghw's size of d, or 0 (unknown) when sysfs gives a sector
// count no disk has: past 8 EiB, int64 would make it negative.
func sizeBytes(d *block.Disk) int64 {
	if d.SizeBytes > math.MaxInt64 {
		return 0
	}
	return int64(d.SizeBytes)
}

// diskID is by-id, else by-path, else the path.
func diskID(d *wire.Disk) string {
	switch {
	case d.ByID != "":
		return d.ByID
	case d.ByPath != "":
		return d.ByPath
	}
	return d.Path
}

// shouldReport drops what the agent never reports: hidden devices,
// device-mapper devices other than multipath and LVM, loop and zram devices.
func (c *collector) shouldReport(d *block.Disk) bool {
	hidden, _ := c.read("/sys/block/" + d.Name + "/hidden")
	switch {
	case hidden == "1":
		return false
	case strings.HasPrefix(d.Name, "dm-") && !c.isMultipath(d) && !c.isLVM(d):
		return false
	case strings.HasPrefix(d.Name, "loop"), strings.HasPrefix(d.Name, "zram"):
		return false
	}
	return true
}

// driveType follows the agent's precedence: DASD, iSCSI, FC, multipath, LVM,
// RAID (md), then ghw's type; ghw's "virtual" (loop) becomes Unknown.
func (c *collector) driveType(d *block.Disk) wire.DriveType {
	switch {
	case isDASD(d):
		return c.dasdType(d)
	case isISCSI(d):
		return wire.DriveTypeISCSI
	case isFC(d):
		return wire.DriveTypeFC
	case c.isMultipath(d):
		return wire.DriveTypeMultipath
	case c.isLVM(d):
		return wire.DriveTypeLVM
	case isMD(d):
		return wire.DriveTypeRAID
	}
	switch d.DriveType {
	case ghw.DriveTypeFDD:
		return wire.DriveTypeFDD
	case ghw.DriveTypeHDD:
		return wire.DriveTypeHDD
	case ghw.DriveTypeODD:
		return wire.DriveTypeODD
	case ghw.DriveTypeSSD:
		return wire.DriveTypeSSD
	}
	return wire.DriveTypeUnknown
}

// byIDLinks maps a disk path to its /dev/disk/by-id name, from the wwn-* and
// nvme-eui* links only; when two links resolve to one disk, the later name
// in directory order wins, as in the agent's map.
func (c *collector) byIDLinks() map[string]string {
	m := map[string]string{}
	entries, err := os.ReadDir(c.host(byIDDir))
	if err != nil {
		c.log.Debug("read disk by-id links", "err", err)
		return m
	}
	for _, e := range entries {
		n := e.Name()
		if e.Type()&os.ModeSymlink == 0 || !(strings.HasPrefix(n, "wwn-") || strings.HasPrefix(n, "nvme-eui")) {
			continue
		}
		target, err := c.resolve(byIDDir + "/" + n)
		if err != nil {
			c.log.Debug("resolve disk by-id link", "link", n, "err", err)
			continue
		}
		m[target] = byIDDir + "/" + n
	}
	return m
}

// devPath is /dev/<name> when it exists, else the target of the disk's
// by-path link, else "".
func (c *collector) devPath(d *block.Disk) string {
	p := "/dev/" + d.Name
	if c.exists(p) {
		return p
	}
	target, err := c.resolve(byPathDir + "/" + d.BusPath)
	if err != nil {
		return ""
	}
	return target
}

// uniqueByPath is the disk's by-path link, or "" when another disk shares its
// bus path (two IDE devices on one bus): the agent would rather report no
// by-path than a wrong one.
func (c *collector) uniqueByPath(all []*block.Disk, i int) string {
	bus := all[i].BusPath
	if bus == util.UNKNOWN {
		return ""
	}
	for j, other := range all {
		if j != i && other.BusPath == bus {
			return ""
		}
	}
	return c.byPath(bus)
}

func (c *collector) byPath(bus string) string {
	if bus == util.UNKNOWN || bus == "" {
		return ""
	}
	p := byPathDir + "/" + bus
	if !c.exists(p) {
		return ""
	}
	return p
}

// hctl is the first entry of /sys/block/X/device/scsi_device.
func (c *collector) hctl(name string) string {
	entries, err := os.ReadDir(c.host("/sys/block/" + name + "/device/scsi_device"))
	if err != nil || len(entries) == 0 {
		return ""
	}
	return entries[0].Name()
}

// bootable stands in for the agent's `file -s <path>` matching "DOS/MBR boot
// sector": file prints that for any first sector ending in the 0x55AA boot
// signature (MBR, GPT's protective MBR, FAT and NTFS boot sectors).
func (c *collector) bootable(p string) bool {
	if p == "" {
		return false
	}
	f, err := os.Open(c.host(p))
	if err != nil {
		return false
	}
	defer f.Close()
	var sector [512]byte
	if _, err := io.ReadFull(f, sector[:]); err != nil {
		return false
	}
	return sector[510] == 0x55 && sector[511] == 0xaa
}

// hasUUID stands in for the agent's `sg_inq -p 0x83 <path>` succeeding (the
// device answers the device-identification VPD page; vSphere's
// disk.EnableUUID check): the kernel exposes that page as
// /sys/block/X/device/vpd_pg83, and NVMe namespaces (which sg_inq answers
// through its SCSI-to-NVMe translation) have /sys/block/X/wwid.
func (c *collector) hasUUID(name, p string) bool {
	if p == "" {
		return false
	}
	return c.exists("/sys/block/"+name+"/device/vpd_pg83") || c.exists("/sys/block/"+name+"/wwid")
}

// holders is the comma-separated list of /sys/block/X/holders.
func (c *collector) holders(name string) string {
	entries, err := os.ReadDir(c.host("/sys/block/" + name + "/holders"))
	if err != nil {
		return ""
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// pureWWN is ghw's WWN, or when ghw has none, the by-id name without its
// "wwn-" prefix (the agent's getPureWWN, which leaves an nvme-eui path whole).
func pureWWN(wwn, byID string) string {
	if wwn == util.UNKNOWN {
		return strings.TrimPrefix(byID, byIDDir+"/wwn-")
	}
	return wwn
}

func unknownToEmpty(s string) string {
	if s == util.UNKNOWN {
		return ""
	}
	return s
}

// applianceDisk is the openshift-appliance case: a device-mapper disk whose
// dm name starts with "agent" is the only disk reported, 100 GiB, SSD,
// eligible. The agent leaves its id empty; we give it the usual id so the
// service can select it.
func (c *collector) applianceDisk(all []*block.Disk) *wire.Disk {
	for _, d := range all {
		if !strings.HasPrefix(d.Name, "dm-") {
			continue
		}
		name, err := c.readRaw("/sys/block/" + d.Name + "/dm/name")
		if err != nil || !strings.HasPrefix(name, applianceAgentPrefix) {
			continue
		}
		p := c.devPath(d)
		rec := &wire.Disk{
			ByID:                    c.byIDLinks()[p],
			ByPath:                  c.byPath(d.BusPath),
			Name:                    d.Name,
			Path:                    p,
			DriveType:               wire.DriveTypeSSD,
			SizeBytes:               applianceSize,
			InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
		}
		for _, other := range all {
			if c.hasUUID(other.Name, c.devPath(other)) {
				rec.HasUUID = true
				break
			}
		}
		rec.ID = diskID(rec)
		return rec
	}
	return nil
}

// iscsiHostIP is the IP address the iSCSI host of the disk uses, from
// /sys/class/iscsi_host/<host>/ipaddress.
func (c *collector) iscsiHostIP(name string) string {
	host, err := c.sysBlockComponent(name, 4)
	if err != nil {
		c.log.Debug("find iSCSI host", "disk", name, "err", err)
		return ""
	}
	ip, err := c.read(path.Join("/sys/class/iscsi_host", host, "ipaddress"))
	if err != nil {
		c.log.Debug("read iSCSI host address", "disk", name, "err", err)
		return ""
	}
	return ip
}
