package hwtree

import (
	"fmt"
	"strconv"
	"strings"
)

// ExtraWorkerPrefix names the trees of the workers a day-2 sandbox adds
// to an installed cluster (extra-worker-0, extra-worker-1...): KVM guests
// like worker-1, each with its own SMBIOS UUID, MAC and disk serial, made
// on demand by Write rather than listed by Names.
const ExtraWorkerPrefix = "extra-worker-"

const maxExtraWorkers = 100

// extraWorkerNamed returns the tree named name when it is an extra worker's.
func extraWorkerNamed(name string) (host, bool) {
	s, ok := strings.CutPrefix(name, ExtraWorkerPrefix)
	if !ok {
		return host{}, false
	}
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 || i >= maxExtraWorkers || strconv.Itoa(i) != s {
		return host{}, false
	}
	return extraWorker(i), true
}

func extraWorker(i int) host {
	return host{
		name:       fmt.Sprintf("%s%d", ExtraWorkerPrefix, i),
		purpose:    "a worker added to an installed cluster on day 2: a KVM guest with a virtio disk and NIC",
		cpu:        withCount(kvmCPU, 4),
		memGiB:     16,
		memTotalKB: 16*1024*kib - 360_000,
		dmi: dmi{
			sysVendor: "QEMU", productName: "Standard PC (Q35 + ICH9, 2009)",
			productUUID: fmt.Sprintf("6a0d2e5b-1c3f-4e7a-9b2d-0000000000%02d", i), biosVendor: "SeaBIOS",
		},
		firmware: firmware{uefi: true},
		cmdline:  liveCmdline,
		live:     true,
		nics: []nic{
			{name: "enp1s0", mac: fmt.Sprintf("52:54:00:d2:00:%02x", i), pci: "0000:01:00.0", vendor: "0x1af4", device: "0x1041", speed: "-1", carrier: true, mtu: 1500, ifindex: 2},
		},
		disks: []disk{
			{name: "vda", major: 252, minor: 0, bytes: 150 * gb, rotational: true, vendor: "0x1af4",
				serial: fmt.Sprintf("nz-extra-worker-%d-root", i), idPath: "pci-0000:04:00.0"},
		},
	}
}
