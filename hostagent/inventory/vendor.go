package inventory

import (
	"slices"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/util"

	"github.com/nodezero/nodezero/wire"
)

// systemVendor reports ghw's product serial, name and vendor
// (src/inventory/system_vendor.go), with the agent's corrections: family
// oVirt/RHV makes the product "oVirt", chassis asset tag OracleCloud.com
// becomes the manufacturer, and an unknown vendor on s390x is read from
// /proc/cpuinfo and /proc/sysinfo. virtual replaces systemd-detect-virt --vm;
// see isVirtual.
func (c *collector) systemVendor() *wire.SystemVendor {
	sv := &wire.SystemVendor{}
	var product *ghw.ProductInfo
	var chassis *ghw.ChassisInfo
	err := safely("read product", func() error {
		var err error
		if product, err = ghw.Product(c.ghwOpts()...); err != nil {
			return err
		}
		chassis, err = ghw.Chassis(c.ghwOpts()...)
		return err
	})
	if err != nil {
		c.log.Debug("read system vendor", "err", err)
		return sv
	}
	sv.SerialNumber = product.SerialNumber
	sv.ProductName = product.Name
	sv.Manufacturer = product.Vendor
	if product.Family == "oVirt" || product.Family == "RHV" {
		sv.ProductName = "oVirt"
	}
	if chassis.AssetTag == "OracleCloud.com" {
		sv.Manufacturer = chassis.AssetTag
	}
	if product.Vendor == util.UNKNOWN {
		c.s390xVendor(sv)
	}
	if c.isVirtual() {
		sv.Virtual = true
	}
	return sv
}

// s390xVendor is the agent's s390x path: vendor_id IBM/S390 makes the
// manufacturer; the product is "LPAR" unless /proc/sysinfo names a control
// program (z/VM, KVM/Linux), and only KVM/Linux is virtual.
func (c *collector) s390xVendor(sv *wire.SystemVendor) {
	cpuinfo, err := c.readRaw("/proc/cpuinfo")
	if err != nil || parseCPUInfo(cpuinfo).vendorID != "IBM/S390" {
		return
	}
	sv.Manufacturer = "IBM/S390"
	sv.ProductName = "LPAR"
	sv.Virtual = false
	sysinfo, err := c.readRaw("/proc/sysinfo")
	if err != nil {
		return
	}
	// The agent splits grep's "VM.*Control Program" output on ":" and keeps
	// the last part: the text after the last colon of the last match.
	for line := range strings.Lines(sysinfo) {
		if i := strings.Index(line, "VM"); i < 0 || !strings.Contains(line[i:], "Control Program") {
			continue
		}
		if j := strings.LastIndex(line, ":"); j >= 0 {
			sv.ProductName = strings.TrimSpace(line[j+1:])
		}
	}
	if sv.ProductName == "KVM/Linux" {
		sv.Virtual = true
	}
}

// vmDMIPrefixes are the DMI vendor strings systemd-detect-virt takes for a
// virtual machine (src/basic/virt.c, detect_vm_dmi_vendor), matched as
// prefixes of product_name, sys_vendor, board_vendor and bios_vendor.
var vmDMIPrefixes = []string{
	"KVM", "OpenStack", "KubeVirt", "Amazon EC2", "QEMU", "VMware", "VMW", "innotek GmbH",
	"VirtualBox", "Oracle Corporation", "Xen", "Bochs", "Parallels", "BHYVE", "Hyper-V",
	"Apple Virtualization", "Google Compute Engine",
}

// isVirtual stands in for `systemd-detect-virt --vm`, which is not there to
// run against a root: a guest's CPUs carry the CPUID hypervisor bit (the
// "hypervisor" cpuinfo flag, systemd's first test), else the DMI vendor
// strings name a hypervisor (its second test).
func (c *collector) isVirtual() bool {
	if s, err := c.readRaw("/proc/cpuinfo"); err == nil && slices.Contains(parseCPUInfo(s).flags, "hypervisor") {
		return true
	}
	for _, f := range []string{"product_name", "sys_vendor", "board_vendor", "bios_vendor"} {
		v, err := c.read("/sys/class/dmi/id/" + f)
		if err != nil {
			continue
		}
		for _, p := range vmDMIPrefixes {
			if strings.HasPrefix(v, p) {
				return true
			}
		}
	}
	return false
}
