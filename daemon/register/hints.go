package register

import (
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/configimage/manifests"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// NotFoundByHints is the installation disk id agent-installer-client asks
// for when no eligible disk matches a host's root device hints. No disk
// has it, so the service refuses the update and the failure is visible
// (cmd/agentbasedinstaller/host_config.go applyRootDeviceHints).
const NotFoundByHints = "/dev/not-found-by-hints"

// hintsMatch applies the hints to one disk as assisted-service's
// GetAcceptableDisksWithHints does (internal/host/hostutil): every hint
// given must hold. deviceName equals the disk's path or by-path link (the
// installer refuses other /dev/disk links in hints); model and vendor are
// substrings; hctl, serialNumber and wwn are exact; the size is counted in
// decimal gigabytes, rounded down; rotational means drive type HDD. The
// WWN extensions are ignored, as there.
func hintsMatch(h *manifests.RootDeviceHints, d *v2.Disk) bool {
	if h == nil {
		return true
	}
	switch {
	case h.DeviceName != "" && h.DeviceName != d.Path && h.DeviceName != d.ByPath:
	case h.HCTL != "" && h.HCTL != d.HCTL:
	case h.Model != "" && !strings.Contains(d.Model, h.Model):
	case h.Vendor != "" && !strings.Contains(d.Vendor, h.Vendor):
	case h.SerialNumber != "" && h.SerialNumber != d.Serial:
	case h.MinSizeGigabytes != 0 && d.SizeBytes/1_000_000_000 < int64(h.MinSizeGigabytes):
	case h.WWN != "" && h.WWN != d.WWN:
	case h.Rotational != nil && *h.Rotational != (d.DriveType == v2.DriveTypeHDD):
	default:
		return true
	}
	return false
}

// eligible reports whether the agent (and the service) found the disk fit
// to install on.
func eligible(d *v2.Disk) bool {
	return d != nil && d.InstallationEligibility != nil && d.InstallationEligibility.Eligible
}

// AcceptableDisks returns the eligible disks that match h, in inventory
// order; nil hints accept every eligible disk.
func AcceptableDisks(disks []*v2.Disk, h *manifests.RootDeviceHints) []*v2.Disk {
	var out []*v2.Disk
	for _, d := range disks {
		if eligible(d) && hintsMatch(h, d) {
			out = append(out, d)
		}
	}
	return out
}

// diskID is how the service names a disk in disks_selected_config.
func diskID(d *v2.Disk) string {
	if d.ID != "" {
		return d.ID
	}
	return d.Path
}

// describeDisk is one eligible disk for a failure message.
func describeDisk(d *v2.Disk) string {
	var attrs []string
	for _, a := range []struct{ k, v string }{
		{"by-path", d.ByPath}, {"hctl", d.HCTL}, {"model", d.Model}, {"vendor", d.Vendor},
		{"serial", d.Serial}, {"wwn", d.WWN}, {"type", string(d.DriveType)},
	} {
		if a.v != "" {
			attrs = append(attrs, a.k+" "+a.v)
		}
	}
	attrs = append(attrs, fmt.Sprintf("%d GB", d.SizeBytes/1_000_000_000))
	return fmt.Sprintf("%s (%s)", d.Path, strings.Join(attrs, ", "))
}
