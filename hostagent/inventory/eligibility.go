package inventory

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/block"

	"github.com/nodezero/nodezero/wire"
)

// The agent-side reasons a disk is not eligible for installation, verbatim
// (src/inventory/disks.go; docs/reference/agent-and-installer.md §3.3). The
// service adds its own (size, drive type, multipath membership) later.
// Removable disks are eligible: agent PR #716 (OCPBUGS-33404) dropped that
// reason because internal SATA SSDs report removable.
const (
	reasonUnknownController = "Disk has unknown storage controller"
	reasonLVM               = "Disk is an LVM logical volume"
	reasonISCSINotRunning   = "iSCSI disk is not in running state"
	reasonISCSIStateUnread  = "Failed to read state of iSCSI disk"
	reasonISCSINoSession    = "Cannot find iSCSI session"
	reasonISCSINoTarget     = "Cannot find iSCSI target name"
	reasonNoIBFT            = "iBFT firmware is missing"
	reasonNotInIBFT         = "iSCSI disk is missing from iBFT"
	reasonISOMedia          = "Disk appears to be an ISO installation media (has partition with mountpoint suffix iso)"
	reasonMountedFormat     = "Disk has partition '%s' mounted on '%s'"
)

// applianceAgentPrefix marks openshift-appliance disks: a dm name, or a
// partition label, starting with it.
const applianceAgentPrefix = "agent"

const ibftDir = "/sys/firmware/ibft"

// eligibility returns the agent's reasons the disk cannot be installed to
// (none = eligible) and whether it looks like installation media, in the
// agent's order: controller, LVM, iSCSI, then partitions.
func (c *collector) eligibility(d *block.Disk) (reasons []string, media bool) {
	if d.StorageController == ghw.StorageControllerUnknown && !c.isMultipath(d) && !c.isLVM(d) && !isDASD(d) && !isMD(d) {
		reasons = append(reasons, reasonUnknownController)
	}
	if c.isLVM(d) {
		reasons = append(reasons, reasonLVM)
	}
	if isISCSI(d) {
		reasons = append(reasons, c.iscsiStateReasons(d.Name)...)
		reasons = append(reasons, c.ibftReasons(d.Name)...)
	}
	// Appliance disks skip the partition checks.
	for _, p := range d.Partitions {
		if strings.HasPrefix(p.Label, applianceAgentPrefix) {
			return reasons, false
		}
	}
	for _, p := range d.Partitions {
		if strings.HasSuffix(p.MountPoint, "iso") {
			reasons = append(reasons, reasonISOMedia)
			media = true
		}
		if media {
			continue
		}
		if p.MountPoint != "" {
			reasons = append(reasons, fmt.Sprintf(reasonMountedFormat, p.Name, p.MountPoint))
		}
	}
	return reasons, media
}

func isDASD(d *block.Disk) bool  { return strings.HasPrefix(d.Name, "dasd") }
func isMD(d *block.Disk) bool    { return strings.HasPrefix(d.Name, "md") }
func isISCSI(d *block.Disk) bool { return strings.Contains(d.BusPath, "-iscsi-") }
func isFC(d *block.Disk) bool {
	return strings.Contains(d.BusPath, "-fc-") || strings.HasPrefix(d.BusPath, "fc-")
}

func (c *collector) isMultipath(d *block.Disk) bool { return c.dmUUIDHasPrefix(d, "mpath-") }
func (c *collector) isLVM(d *block.Disk) bool       { return c.dmUUIDHasPrefix(d, "LVM-") }

func (c *collector) dmUUIDHasPrefix(d *block.Disk, prefix string) bool {
	if !strings.HasPrefix(d.Name, "dm-") {
		return false
	}
	uuid, err := c.readRaw("/sys/block/" + d.Name + "/dm/uuid")
	return err == nil && strings.HasPrefix(uuid, prefix)
}

// dasdType reads an s390x DASD's discipline (and ESE flag) from the CCW
// device two levels above /sys/block/X's target.
func (c *collector) dasdType(d *block.Disk) wire.DriveType {
	target, err := c.resolve("/sys/block/" + d.Name)
	if err != nil {
		return wire.DriveTypeUnknown
	}
	dev := path.Dir(path.Dir(target))
	discipline, err := c.read(dev + "/discipline")
	if err != nil {
		return wire.DriveTypeUnknown
	}
	switch discipline {
	case "ECKD":
		ese, err := c.read(dev + "/ese")
		if err != nil {
			return wire.DriveTypeUnknown
		}
		if ese == "1" {
			return wire.DriveTypeECKDESE
		}
		return wire.DriveTypeECKD
	case "FBA":
		return wire.DriveTypeFBA
	}
	return wire.DriveTypeUnknown
}

func (c *collector) iscsiStateReasons(name string) []string {
	state, err := c.read("/sys/block/" + name + "/device/state")
	if err != nil {
		return []string{reasonISCSIStateUnread}
	}
	if state != "running" {
		return []string{reasonISCSINotRunning}
	}
	return nil
}

// ibftReasons checks that the disk's iSCSI target is one the firmware booted
// from: some /sys/firmware/ibft/target*/target-name equals the session's
// target name.
func (c *collector) ibftReasons(name string) []string {
	session, err := c.sysBlockComponent(name, 5)
	if err != nil {
		return []string{reasonISCSINoSession}
	}
	target, err := c.read(path.Join("/sys/class/iscsi_session", session, "targetname"))
	if err != nil {
		return []string{reasonISCSINoTarget}
	}
	entries, err := os.ReadDir(c.host(ibftDir))
	if err != nil {
		return []string{reasonNoIBFT}
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.Contains(e.Name(), "target") {
			continue
		}
		if t, err := c.read(path.Join(ibftDir, e.Name(), "target-name")); err == nil && t == target {
			return nil
		}
	}
	return []string{reasonNotInIBFT}
}

// sysBlockComponent is the i-th component of /sys/block/X's target, e.g. for
// /sys/devices/platform/host2/session1/target2:0:0/2:0:0:1/block/sda,
// 4 is the iSCSI host and 5 the session.
func (c *collector) sysBlockComponent(name string, i int) (string, error) {
	target, err := c.resolve("/sys/block/" + name)
	if err != nil {
		return "", err
	}
	parts := strings.Split(target, "/")
	if len(parts) <= i {
		return "", fmt.Errorf("path %s has no component %d", target, i)
	}
	return parts[i], nil
}
