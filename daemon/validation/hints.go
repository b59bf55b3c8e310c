package validation

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// Host configs are the config image's /etc/assisted/hostconfig/<name>/
// directories: a host's MACs, role and root device hints. agent-installer-
// client applies them over the API; the service knows them too (Validator.
// HostConfigs) so that it can choose the installation disk by the hints
// itself and say plainly, as validations, when a configured host's disks
// match none or a configured host never registers.

// DefaultHostConfigGrace is how long after the cluster's registration a
// host config may match no registered host before that is a failure
// rather than a wait: long enough for a host to boot and register.
const DefaultHostConfigGrace = 10 * time.Minute

// NotFoundByHints is the installation disk id agent-installer-client asks
// for when no eligible disk matches a host's root device hints. No disk has
// it, so the service refuses the update (cmd/agentbasedinstaller/
// host_config.go applyRootDeviceHints).
const NotFoundByHints = "/dev/not-found-by-hints"

// HintsMatch applies the hints to one disk as assisted-service's
// GetAcceptableDisksWithHints does (internal/host/hostutil): every hint
// given must hold. deviceName equals the disk's path or by-path link (the
// installer refuses other /dev/disk links in hints); model and vendor are
// substrings; hctl, serialNumber and wwn are exact; the size is counted in
// decimal gigabytes, rounded down; rotational means drive type HDD. The WWN
// extensions are ignored, as there. Nil hints match every disk.
func HintsMatch(h *manifests.RootDeviceHints, d *wire.Disk) bool {
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
	case h.Rotational != nil && *h.Rotational != (d.DriveType == wire.DriveTypeHDD):
	default:
		return true
	}
	return false
}

// diskEligible reports whether the disk is fit to install on.
func diskEligible(d *wire.Disk) bool {
	return d != nil && d.InstallationEligibility != nil && d.InstallationEligibility.Eligible
}

// AcceptableDisks returns the eligible disks that match h, in inventory
// order; nil hints accept every eligible disk.
func AcceptableDisks(disks []*wire.Disk, h *manifests.RootDeviceHints) []*wire.Disk {
	var out []*wire.Disk
	for _, d := range disks {
		if diskEligible(d) && HintsMatch(h, d) {
			out = append(out, d)
		}
	}
	return out
}

// DescribeDisk names a disk for a message: its path and what hints can
// select it by.
func DescribeDisk(d *wire.Disk) string {
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
	return fmt.Sprintf("%s (%s)", DiskPath(d), strings.Join(attrs, ", "))
}

// EligibleDiskDescriptions describes each of the inventory's eligible
// disks (DescribeDisk), in inventory order.
func EligibleDiskDescriptions(inv *wire.Inventory) []string {
	var out []string
	for _, d := range AcceptableDisks(inv.Disks, nil) {
		out = append(out, DescribeDisk(d))
	}
	return out
}

// DescribeEligibleDisks lists the inventory's eligible disks for a
// message, "none" when there are none.
func DescribeEligibleDisks(inv *wire.Inventory) string {
	if out := EligibleDiskDescriptions(inv); len(out) > 0 {
		return strings.Join(out, ", ")
	}
	return "none"
}

// NoDiskMatchesHints is the message for a host whose eligible disks match
// none of its hints.
func NoDiskMatchesHints(h *manifests.RootDeviceHints, inv *wire.Inventory) string {
	return fmt.Sprintf("No eligible disk matches root device hints (%s); eligible disks: %s", h, DescribeEligibleDisks(inv))
}

// MatchHostConfig returns the index of the first config holding one of the
// inventory's MACs (compared case-insensitively), -1 when none does.
func MatchHostConfig(configs []manifests.HostConfig, inv *wire.Inventory) int {
	if inv == nil {
		return -1
	}
	for i, hc := range configs {
		for _, nic := range inv.Interfaces {
			if nic == nil || nic.MACAddress == "" {
				continue
			}
			for _, m := range hc.MACs {
				if strings.EqualFold(nic.MACAddress, m) {
					return i
				}
			}
		}
	}
	return -1
}

// hostConfig returns the host config of an inventory, nil when none.
func (v *Validator) hostConfig(inv *wire.Inventory) *manifests.HostConfig {
	if i := MatchHostConfig(v.HostConfigs, inv); i >= 0 {
		return &v.HostConfigs[i]
	}
	return nil
}

func (v *Validator) hostConfigGrace() time.Duration {
	if v.HostConfigGrace > 0 {
		return v.HostConfigGrace
	}
	return DefaultHostConfigGrace
}

// hostDiskMatchesHints is installation-disk-matches-root-device-hints.
func hostDiskMatchesHints(c *hostContext) (wire.ValidationStatus, string) {
	if c.v.HostConfigs == nil {
		return statusHidden, ""
	}
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	hc := c.v.hostConfig(c.inv)
	switch {
	case hc == nil:
		return wire.ValidationSuccess, "No host config matches this host's MAC addresses"
	case hc.Hints.Empty():
		return wire.ValidationSuccess, fmt.Sprintf("Host config %s has no root device hints", hc.Name)
	case len(AcceptableDisks(c.inv.Disks, hc.Hints)) == 0:
		return wire.ValidationFailure, fmt.Sprintf("Host config %s: %s", hc.Name, NoDiskMatchesHints(hc.Hints, c.inv))
	}
	return wire.ValidationSuccess, fmt.Sprintf("An eligible disk matches the root device hints of host config %s (%s)", hc.Name, hc.Hints)
}

// clusterConfiguredHostsRegistered is configured-hosts-registered: every
// host config matches a host of the cluster that sent an inventory.
func clusterConfiguredHostsRegistered(c *clusterContext) (wire.ValidationStatus, string) {
	if c.v.HostConfigs == nil {
		return statusHidden, ""
	}
	matched := make([]bool, len(c.v.HostConfigs))
	for _, h := range c.hosts {
		if i := MatchHostConfig(c.v.HostConfigs, h.Inventory); i >= 0 {
			matched[i] = true
		}
	}
	var missing []string
	for i, hc := range c.v.HostConfigs {
		if !matched[i] {
			macs := append([]string(nil), hc.MACs...)
			sort.Strings(macs)
			missing = append(missing, fmt.Sprintf("%s (MAC %s)", hc.Name, strings.Join(macs, ", ")))
		}
	}
	if len(missing) == 0 {
		return wire.ValidationSuccess, fmt.Sprintf("Every configured host is registered (%d)", len(c.v.HostConfigs))
	}
	list := strings.Join(missing, "; ")
	since := c.now.Sub(c.c.CreatedAt)
	if c.c.CreatedAt.IsZero() || since < c.v.hostConfigGrace() {
		return wire.ValidationPending, "Waiting for configured hosts to register: " + list
	}
	return wire.ValidationFailure, fmt.Sprintf("No host with these MAC addresses has registered in %s: %s. Check that each is booted from the factory image and reaches the rendezvous IP, or correct its MAC addresses in agent-config.yaml",
		since.Round(time.Minute), list)
}
