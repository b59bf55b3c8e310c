package inventory

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// secureBootVar is the efivarfs file of the SecureBoot variable: 4 bytes of
// attributes, then one byte, 0 disabled or 1 enabled (src/inventory/boot.go).
const secureBootVar = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"

// boot reports the firmware boot mode, the kernel command line (raw, as the
// agent sends it), the PXE interface from BOOTIF=, Secure Boot and whether
// the system booted from a live image.
func (c *collector) boot() *wire.Boot {
	b := &wire.Boot{CurrentBootMode: "bios", SecureBootState: c.secureBoot(), DeviceType: c.bootDeviceType()}
	if fi, err := os.Stat(c.host("/sys/firmware/efi")); err == nil && fi.IsDir() {
		b.CurrentBootMode = "uefi"
	}
	if cmdline, err := c.readRaw("/proc/cmdline"); err == nil {
		b.CommandLine = cmdline
		for _, part := range strings.Split(strings.TrimSpace(cmdline), " ") {
			if v, ok := strings.CutPrefix(part, "BOOTIF="); ok {
				b.PXEInterface = v
				break
			}
		}
	}
	return b
}

func (c *collector) secureBoot() wire.SecureBootState {
	content, err := c.readRaw(secureBootVar)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return wire.SecureBootStateNotSupported
	case err != nil, len(content) != 5:
		return wire.SecureBootStateUnknown
	}
	switch content[4] {
	case 0:
		return wire.SecureBootStateDisabled
	case 1:
		return wire.SecureBootStateEnabled
	}
	return wire.SecureBootStateUnknown
}

// bootDeviceType stands in for the agent's `findmnt -o SOURCE /sysroot`:
// the last mount on /sysroot in /proc/self/mounts; a loop device means the
// live ISO (ephemeral), anything else an installed system, no mount "".
func (c *collector) bootDeviceType() wire.BootDeviceType {
	mounts, err := c.readRaw("/proc/self/mounts")
	if err != nil {
		return ""
	}
	var source string
	for line := range strings.Lines(mounts) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[1] == "/sysroot" {
			source = f[0]
		}
	}
	switch {
	case source == "":
		return ""
	case strings.HasPrefix(source, "/dev/loop"):
		return wire.BootDeviceTypeEphemeral
	}
	return wire.BootDeviceTypePersistent
}

// tpmVersion maps tpm0's major version to the inventory's enum; no TPM is
// "none", an unreadable file "" (src/inventory/tpm.go).
func (c *collector) tpmVersion() wire.InventoryTPMVersion {
	s, err := c.readRaw("/sys/class/tpm/tpm0/tpm_version_major")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return wire.InventoryTPMVersionNone
	case err != nil:
		c.log.Debug("read TPM version", "err", err)
		return ""
	}
	switch s = strings.TrimSuffix(s, "\n"); s {
	case "1":
		return wire.InventoryTPMVersion12
	case "2":
		return wire.InventoryTPMVersion20
	}
	return wire.InventoryTPMVersion(s)
}
