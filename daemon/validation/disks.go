package validation

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Service-side not-eligible reasons, in assisted's wording
// (internal/hardware/validator.go; docs/reference/agent-and-installer.md §3.4).
const (
	tooSmallDiskTemplate            = "Disk is too small (disk only has %s, but %s are required)"
	wrongDriveTypeTemplate          = "Drive type is %s, it must be one of %s."
	wrongMultipathTypeTemplate      = "Multipath device has path of unsupported type. It must be %s"
	mixedTypesInMultipath           = "Multipath device has paths of different types, but they must all be the same type"
	diskIsMultipathMemberTemplate   = "Disk is a member of multipath device %s and is not eligible for installation. Use the multipath device instead."
	wrongISCSINetworkTemplate       = "iSCSI host IP %s is the same as host IP, they must be different"
	errsInISCSIDisableMultipath     = "Installation on multipath device is not possible due to errors on at least one iSCSI disk"
	iscsiHostIPNotAvailable         = "Host IP address is not available"
	iscsiNetworkInterfaceNotFound   = "Cannot find the network interface behind the default route"
	iscsiHostIPParseErrorTemplate   = "Cannot parse iSCSI host IP %s: %s"
	serviceReasonPatternPlaceholder = "\x00"
)

// serviceReasons match the reasons this package adds, so that recomputing
// eligibility replaces them instead of piling them up; the agent's own
// reasons are kept.
var serviceReasons = func() []*regexp.Regexp {
	templates := []struct {
		t string
		n int
	}{
		{tooSmallDiskTemplate, 2}, {wrongDriveTypeTemplate, 2}, {wrongMultipathTypeTemplate, 1},
		{mixedTypesInMultipath, 0}, {diskIsMultipathMemberTemplate, 1}, {wrongISCSINetworkTemplate, 1},
		{errsInISCSIDisableMultipath, 0}, {iscsiHostIPNotAvailable, 0}, {iscsiNetworkInterfaceNotFound, 0},
		{iscsiHostIPParseErrorTemplate, 2},
	}
	var out []*regexp.Regexp
	for _, t := range templates {
		args := make([]any, t.n)
		for i := range args {
			args[i] = serviceReasonPatternPlaceholder
		}
		quoted := regexp.QuoteMeta(fmt.Sprintf(t.t, args...))
		out = append(out, regexp.MustCompile(strings.ReplaceAll(quoted, serviceReasonPatternPlaceholder, ".*")))
	}
	return out
}()

func isServiceReason(reason string) bool {
	for _, re := range serviceReasons {
		if re.MatchString(reason) {
			return true
		}
	}
	return false
}

// DiskNotEligibleReasons returns why disk cannot hold the installation: the
// agent's reasons (reasons this package added earlier are dropped first)
// followed by the service's size, drive-type, multipath and iSCSI rules.
// minSizeGB is the role's disk_size_gb; openshiftVersion gates RAID (4.14)
// and iSCSI (4.15). An empty result means eligible.
func DiskNotEligibleReasons(disk *wire.Disk, inv *wire.Inventory, minSizeGB int64, openshiftVersion string) []string {
	var reasons []string
	if disk.InstallationEligibility != nil {
		for _, r := range disk.InstallationEligibility.NotEligibleReasons {
			if !isServiceReason(r) {
				reasons = append(reasons, r)
			}
		}
	}

	minBytes := minSizeGB * 1000 * 1000 * 1000
	if disk.SizeBytes < minBytes {
		has, want := siBytes(disk.SizeBytes), siBytes(minBytes)
		if has == want {
			has = fmt.Sprintf("%s (short by %s)", has, siBytes(minBytes-disk.SizeBytes))
		}
		reasons = append(reasons, fmt.Sprintf(tooSmallDiskTemplate, has, want))
	}

	arch := ""
	if inv != nil && inv.CPU != nil {
		arch = inv.CPU.Architecture
	}
	if !validDriveType(disk.DriveType, arch, openshiftVersion) {
		reasons = append(reasons, fmt.Sprintf(wrongDriveTypeTemplate, disk.DriveType,
			strings.Join(validDriveTypes(arch, openshiftVersion), ", ")))
	}

	var all []*wire.Disk
	if inv != nil {
		all = inv.Disks
	}
	if disk.DriveType == wire.DriveTypeFC || disk.DriveType == wire.DriveTypeISCSI {
		if holder := multipathHolder(disk, all); holder != "" {
			reasons = append(reasons, fmt.Sprintf(diskIsMultipathMemberTemplate, holder))
		}
	}

	if disk.DriveType == wire.DriveTypeMultipath {
		paths := disksOfHolder(all, disk)
		var fc, iscsi []*wire.Disk
		for _, p := range paths {
			switch p.DriveType {
			case wire.DriveTypeFC:
				fc = append(fc, p)
			case wire.DriveTypeISCSI:
				iscsi = append(iscsi, p)
			}
		}
		if len(fc) == 0 && len(iscsi) == 0 {
			return append(reasons, fmt.Sprintf(wrongMultipathTypeTemplate, "FC, iSCSI"))
		}
		if (len(fc) > 0 && len(fc) != len(paths)) || (len(fc) == 0 && len(iscsi) != len(paths)) {
			reasons = append(reasons, mixedTypesInMultipath)
		}
		for _, p := range iscsi {
			if !validDriveType(p.DriveType, arch, openshiftVersion) || iscsiNetworkProblem(p, inv) != "" {
				reasons = append(reasons, errsInISCSIDisableMultipath)
				break
			}
		}
	}

	if disk.DriveType == wire.DriveTypeISCSI {
		if p := iscsiNetworkProblem(disk, inv); p != "" {
			reasons = append(reasons, p)
		}
	}
	return reasons
}

// validDriveTypes lists the drive types an installation disk may have, in
// assisted's order: HDD, SSD, Multipath always; RAID from 4.14; iSCSI from
// 4.15; FC, ECKD (ESE), ECKD, FBA on s390x; FC on x86_64.
func validDriveTypes(arch, openshiftVersion string) []string {
	t := []string{string(wire.DriveTypeHDD), string(wire.DriveTypeSSD), string(wire.DriveTypeMultipath)}
	if versionAtLeast(openshiftVersion, "4.14.0") {
		t = append(t, string(wire.DriveTypeRAID))
	}
	if versionAtLeast(openshiftVersion, "4.15.0") {
		t = append(t, string(wire.DriveTypeISCSI))
	}
	switch arch {
	case "s390x":
		t = append(t, string(wire.DriveTypeFC), string(wire.DriveTypeECKDESE), string(wire.DriveTypeECKD), string(wire.DriveTypeFBA))
	case "x86_64":
		t = append(t, string(wire.DriveTypeFC))
	}
	return t
}

func validDriveType(dt wire.DriveType, arch, openshiftVersion string) bool {
	for _, t := range validDriveTypes(arch, openshiftVersion) {
		if string(dt) == t {
			return true
		}
	}
	return false
}

// multipathHolder returns the name of a multipath device among disk's
// holders, or "".
func multipathHolder(disk *wire.Disk, all []*wire.Disk) string {
	if disk.Holders == "" {
		return ""
	}
	mpath := map[string]bool{}
	for _, d := range all {
		if d.DriveType == wire.DriveTypeMultipath {
			mpath[d.Name] = true
		}
	}
	for _, h := range strings.Split(disk.Holders, ",") {
		if mpath[h] {
			return h
		}
	}
	return ""
}

// disksOfHolder returns the disks whose holders mention holder's name
// (assisted matches by substring).
func disksOfHolder(all []*wire.Disk, holder *wire.Disk) []*wire.Disk {
	var out []*wire.Disk
	for _, d := range all {
		if strings.Contains(d.Holders, holder.Name) {
			out = append(out, d)
		}
	}
	return out
}

// iscsiNetworkProblem returns why an iSCSI disk's host address is unusable:
// it must be known, and it must not be an address of the interface behind
// the default route of its family. "" means no problem.
func iscsiNetworkProblem(disk *wire.Disk, inv *wire.Inventory) string {
	if disk.ISCSI == nil || disk.ISCSI.HostIPAddress == "" {
		return iscsiHostIPNotAvailable
	}
	ip, err := netip.ParseAddr(disk.ISCSI.HostIPAddress)
	if err != nil {
		return fmt.Sprintf(iscsiHostIPParseErrorTemplate, disk.ISCSI.HostIPAddress, err)
	}
	if inv == nil {
		return ""
	}
	route := defaultRouteByFamily(inv.Routes, ip.Is6())
	if route == nil {
		return ""
	}
	var nic *wire.Interface
	for _, i := range inv.Interfaces {
		if i.Name == route.Interface {
			nic = i
			break
		}
	}
	if nic == nil {
		return iscsiNetworkInterfaceNotFound
	}
	addrs := nic.IPv4Addresses
	if ip.Is6() {
		addrs = nic.IPv6Addresses
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == ip {
			return fmt.Sprintf(wrongISCSINetworkTemplate, ip)
		}
	}
	return ""
}

// ApplyDiskEligibility recomputes installation_eligibility of every disk of
// inv in place, as assisted does when an inventory arrives: a disk the agent
// gave no verdict is taken as eligible by the agent (older agents), then the
// service's reasons are added and eligible = no reasons. Disks without an id
// get one (DiskID).
func ApplyDiskEligibility(inv *wire.Inventory, minSizeGB int64, openshiftVersion string) {
	for _, d := range inv.Disks {
		if d.InstallationEligibility == nil {
			d.InstallationEligibility = &wire.DiskInstallationEligibility{}
		}
		e := d.InstallationEligibility
		if !e.Eligible && len(e.NotEligibleReasons) == 0 {
			e.Eligible = true
		}
	}
	for _, d := range inv.Disks {
		reasons := DiskNotEligibleReasons(d, inv, minSizeGB, openshiftVersion)
		d.InstallationEligibility = &wire.DiskInstallationEligibility{Eligible: len(reasons) == 0, NotEligibleReasons: reasons}
		if d.ID == "" {
			d.ID = DiskID(d)
		}
	}
}

// EligibleDisks returns the eligible disks in installation preference order
// (assisted ListEligibleDisks): bootable first, non-NVMe before NVMe, drive
// type name ascending (HDD before SSD), smaller first, then HCTL.
func EligibleDisks(disks []*wire.Disk) []*wire.Disk {
	var out []*wire.Disk
	for _, d := range disks {
		if d.InstallationEligibility != nil && d.InstallationEligibility.Eligible {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Bootable != b.Bootable {
			return a.Bootable
		}
		if na, nb := strings.HasPrefix(a.Name, "nvme"), strings.HasPrefix(b.Name, "nvme"); na != nb {
			return nb
		}
		if a.DriveType != b.DriveType {
			return a.DriveType < b.DriveType
		}
		if a.SizeBytes != b.SizeBytes {
			return a.SizeBytes < b.SizeBytes
		}
		return a.HCTL < b.HCTL
	})
	return out
}

// SelectInstallationDisk returns the disk to install on: the current choice
// (matched by id, by-path or /dev/<name>) while it is still eligible, else
// the first eligible disk, else nil. Set installation_disk_id to DiskID and
// installation_disk_path to DiskPath of the result.
func SelectInstallationDisk(disks []*wire.Disk, current string) *wire.Disk {
	eligible := EligibleDisks(disks)
	if len(eligible) == 0 {
		return nil
	}
	if current != "" {
		for _, d := range eligible {
			if d.ID == current || d.ByPath == current || DiskPath(d) == current {
				return d
			}
		}
	}
	return eligible[0]
}

// DiskID is the identifier assisted stores as installation_disk_id: the
// disk's id, or /dev/<name> for inventories without one.
func DiskID(d *wire.Disk) string {
	if d.ID != "" {
		return d.ID
	}
	return DiskPath(d)
}

// DiskPath is installation_disk_path: /dev/<name>.
func DiskPath(d *wire.Disk) string { return "/dev/" + d.Name }

// siBytes formats a size in decimal units, rounded up to three decimals, as
// assisted's preciseHumanizeBytes does for disk sizes ("100 GB", "99.999 GB").
func siBytes(b int64) string {
	const kb, mb, gb, tb = 1000, 1000 * 1000, 1000 * 1000 * 1000, 1000 * 1000 * 1000 * 1000
	unit := func(v float64, name string) string {
		r := math.Ceil(v*1000) / 1000
		if r == math.Trunc(r) {
			return fmt.Sprintf("%d %s", int64(r), name)
		}
		s := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", r), "0"), ".")
		return s + " " + name
	}
	switch {
	case b >= tb:
		return unit(float64(b)/tb, "TB")
	case b >= gb:
		return unit(float64(b)/gb, "GB")
	case b >= mb:
		return unit(float64(b)/mb, "MB")
	case b >= kb:
		return unit(float64(b)/kb, "KB")
	}
	return fmt.Sprintf("%d B", b)
}

// binaryBytes formats a size the way assisted's conversions.BytesToString
// does in memory messages: two decimals from GiB up, whole MiB and KiB below.
func binaryBytes(b int64) string {
	const kib, mib, gib, tib, pib = 1 << 10, 1 << 20, 1 << 30, 1 << 40, 1 << 50
	switch {
	case b >= pib:
		return fmt.Sprintf("%.2f PiB", float64(b)/pib)
	case b >= tib:
		return fmt.Sprintf("%.2f TiB", float64(b)/tib)
	case b >= gib:
		return fmt.Sprintf("%.2f GiB", float64(b)/gib)
	case b >= mib:
		return fmt.Sprintf("%d MiB", b/mib)
	case b >= kib:
		return fmt.Sprintf("%d KiB", b/kib)
	}
	return fmt.Sprintf("%d bytes", b)
}
