package hwtree

import "fmt"

// Sizes are decimal, as disk vendors and the service's disk_size_gb count.
const (
	gb  = 1_000_000_000
	kib = 1024
)

const liveCmdline = "BOOT_IMAGE=/images/pxeboot/vmlinuz random.trust_cpu=on console=tty0 console=ttyS0,115200n8 ignition.firstboot ignition.platform.id=metal coreos.liveiso=rhcos-9.6.20250523-0"

var (
	xeon    = cpuSpec{vendor: "GenuineIntel", model: "Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz", mhz: "2200.000"}
	epyc    = cpuSpec{vendor: "AuthenticAMD", model: "AMD EPYC 7313P 16-Core Processor", mhz: "3000.000"}
	ryzen   = cpuSpec{vendor: "AuthenticAMD", model: "AMD Ryzen 5 3600 6-Core Processor", mhz: "3600.000"}
	celeron = cpuSpec{vendor: "GenuineIntel", model: "Intel(R) Celeron(R) CPU J3455 @ 1.50GHz", mhz: "1500.000"}
	kvmCPU  = cpuSpec{vendor: "GenuineIntel", model: "Intel Xeon Processor (Icelake)", mhz: "2593.906", hypervisor: true}
)

func withCount(c cpuSpec, n int) cpuSpec { c.count = n; return c }

// hosts returns every tree hwtree writes. IDs (DMI UUIDs and serials, MACs, disk
// serials and WWNs) are distinct across hosts except where a host exists to
// show a shared placeholder.
func hosts() []host {
	return []host{
		master(0, "control-plane host: UEFI with Secure Boot on, TPM 2.0, a second NIC without link, a BMC VGA (no pci.ids in the tree, so no GPU names)", "enabled"),
		master(1, "control-plane host: UEFI with Secure Boot off", "disabled"),
		master(2, "control-plane host: UEFI without a SecureBoot variable (NotSupported)", ""),
		worker0(),
		worker1(),
		undersized(),
		smalldisk(),
		placeholder("a", "7d3c1a58-9f2e-4b61-8e0a-5c4d2b1a0f01", "04:d9:f5:d0:00:01", "S6B0NL0T100001"),
		placeholder("b", "7d3c1a58-9f2e-4b61-8e0a-5c4d2b1a0f02", "04:d9:f5:d1:00:01", "S6B0NL0T100002"),
		mounted(),
	}
}

func master(i int, purpose, secureBoot string) host {
	h := host{
		name:       fmt.Sprintf("master-%d", i),
		purpose:    purpose,
		cpu:        withCount(xeon, 8),
		memGiB:     32,
		memTotalKB: 32*1024*kib - 420_000,
		dmi: dmi{
			sysVendor:     "Dell Inc.",
			productName:   "PowerEdge R650",
			productSerial: fmt.Sprintf("7QX1M%02d", 30+i),
			productUUID:   fmt.Sprintf("4c4c4544-0051-5810-8031-b7c04f4d4e%02d", 30+i),
			productFamily: "PowerEdge",
			boardVendor:   "Dell Inc.",
			boardName:     "0JMK61",
			boardSerial:   fmt.Sprintf(".7QX1M%02d.CNFCP0012A00%02d.", 30+i, i),
			biosVendor:    "Dell Inc.",
		},
		firmware: firmware{uefi: true, secureBoot: secureBoot, tpm: "2"},
		cmdline:  liveCmdline,
		live:     true,
		nics: []nic{
			{name: "eno1", mac: fmt.Sprintf("b0:7b:25:a%d:00:01", i), pci: "0000:31:00.0", vendor: "0x14e4", device: "0x165f", speed: "1000", carrier: true, mtu: 1500, ifindex: 2},
			{name: "eno2", mac: fmt.Sprintf("b0:7b:25:a%d:00:02", i), pci: "0000:31:00.1", vendor: "0x14e4", device: "0x165f", speed: "-1", mtu: 1500, ifindex: 3},
		},
		disks: []disk{
			{name: "nvme0n1", major: 259, minor: 0, bytes: 200 * gb, model: "Dell Ent NVMe v2 AGN RI U.2 200GB",
				serial: fmt.Sprintf("S6CKNG0T60%04d", i), wwn: fmt.Sprintf("eui.36434b30546000%02d0025384500000001", i),
				idPath: "pci-0000:01:00.0-nvme-1", byID: fmt.Sprintf("nvme-eui.36434b30546000%02d0025384500000001", i), vpd83: true},
			{name: "sda", major: 8, minor: 0, bytes: 500 * gb, rotational: true, vendor: "ATA", model: "ST500NM0011",
				serial: fmt.Sprintf("Z1M0%04d", i), wwn: fmt.Sprintf("0x5000c5004a1b%04x", i), idPath: "pci-0000:00:17.0-ata-1",
				byID: fmt.Sprintf("wwn-0x5000c5004a1b%04x", i), hctl: "0:0:0:0", vpd83: true},
		},
	}
	if i == 0 {
		h.gpus = []gpu{{addr: "0000:03:00.0", vendor: "102b", device: "0536", class: "030000", subVendor: "1028", subDevice: "0a70"}}
	}
	return h
}

func worker0() host {
	return host{
		name:       "worker-0",
		purpose:    "worker: legacy BIOS, PXE-booted (BOOTIF), an NVIDIA T4 with a small pci.ids in the tree",
		cpu:        withCount(epyc, 4),
		memGiB:     16,
		memTotalKB: 16*1024*kib - 310_000,
		dmi: dmi{
			sysVendor: "Supermicro", productName: "SYS-1019P-WTR", productSerial: "S34512660001",
			productUUID: "00000000-0000-0000-0000-3cecef000110", productFamily: "Family",
			boardVendor: "Supermicro", boardName: "X11SPW-TF", boardSerial: "ZM19AS000110", biosVendor: "American Megatrends Inc.",
		},
		cmdline: liveCmdline + " BOOTIF=01-3c-ec-ef-b0-00-01",
		live:    true,
		nics: []nic{
			{name: "eno1", mac: "3c:ec:ef:b0:00:01", pci: "0000:18:00.0", vendor: "0x8086", device: "0x1563", speed: "10000", carrier: true, mtu: 1500, ifindex: 2},
		},
		disks: []disk{
			{name: "sda", major: 8, minor: 0, bytes: 150 * gb, vendor: "ATA", model: "INTEL_SSDSC2KB150G8",
				serial: "PHYF00000110150AGN", wwn: "0x55cd2e4150000110", idPath: "pci-0000:00:17.0-ata-1",
				byID: "wwn-0x55cd2e4150000110", hctl: "1:0:0:0", vpd83: true},
		},
		gpus:   []gpu{{addr: "0000:3b:00.0", vendor: "10de", device: "1eb8", class: "030200", subVendor: "10de", subDevice: "12a2"}},
		pciIDs: true,
	}
}

func worker1() host {
	return host{
		name:       "worker-1",
		purpose:    "worker: a KVM guest (QEMU DMI, hypervisor CPU flag, virtio disk and NIC, no board serial, so the host ID is the SMBIOS UUID)",
		cpu:        withCount(kvmCPU, 4),
		memGiB:     16,
		memTotalKB: 16*1024*kib - 360_000,
		dmi: dmi{
			sysVendor: "QEMU", productName: "Standard PC (Q35 + ICH9, 2009)",
			productUUID: "9f1e2d3c-4b5a-4697-8877-665544332211", biosVendor: "SeaBIOS",
		},
		cmdline: liveCmdline,
		live:    true,
		nics: []nic{
			{name: "enp1s0", mac: "52:54:00:b1:00:01", pci: "0000:01:00.0", vendor: "0x1af4", device: "0x1041", speed: "-1", carrier: true, mtu: 1500, ifindex: 2},
		},
		disks: []disk{
			{name: "vda", major: 252, minor: 0, bytes: 150 * gb, rotational: true, vendor: "0x1af4",
				serial: "nz-worker-1-root", idPath: "pci-0000:04:00.0"},
		},
	}
}

func undersized() host {
	return host{
		name:       "undersized",
		purpose:    "fails CPU, memory and disk for every role: 1 core (worker needs 2), 4 GiB, a 40 GB disk (arbiter needs 50)",
		cpu:        withCount(celeron, 1),
		memGiB:     4,
		memTotalKB: 4*1024*kib - 180_000,
		dmi: dmi{
			sysVendor: "Intel(R) Client Systems", productName: "NUC6CAYH", productSerial: "G6CA0000C0C1",
			productUUID: "e1d2c3b4-a596-4787-9869-5a4b3c2d1e0f", boardVendor: "Intel Corporation", boardName: "NUC6CAYB",
			boardSerial: "GECA000C0C1", biosVendor: "Intel Corp.",
		},
		firmware: firmware{uefi: true},
		cmdline:  liveCmdline,
		live:     true,
		nics: []nic{
			{name: "enp2s0", mac: "94:c6:91:c0:00:01", pci: "0000:02:00.0", vendor: "0x10ec", device: "0x8168", speed: "1000", carrier: true, mtu: 1500, ifindex: 2},
		},
		disks: []disk{
			{name: "sda", major: 8, minor: 0, bytes: 40 * gb, vendor: "ATA", model: "KINGSTON_SA400S37",
				serial: "50026B7700C0C100", wwn: "0x50026b7700c0c100", idPath: "pci-0000:00:12.0-ata-1",
				byID: "wwn-0x50026b7700c0c100", hctl: "0:0:0:0", vpd83: true},
		},
	}
}

func smalldisk() host {
	return host{
		name:       "smalldisk",
		purpose:    "master-class CPU and RAM, but the only disk is a removable 16 GB USB stick; board serial is HPE's placeholder PCA_number.ACC",
		cpu:        withCount(xeon, 8),
		memGiB:     32,
		memTotalKB: 32*1024*kib - 430_000,
		dmi: dmi{
			sysVendor: "HPE", productName: "ProLiant DL360 Gen11", productSerial: "CZ2D1Q0C11",
			productUUID: "34393350-3831-5a43-3244-315130433131", productFamily: "ProLiant",
			boardVendor: "HPE", boardName: "ProLiant DL360 Gen11", boardSerial: "PCA_number.ACC", biosVendor: "HPE",
		},
		firmware: firmware{uefi: true, secureBoot: "disabled"},
		cmdline:  liveCmdline,
		live:     true,
		nics: []nic{
			{name: "ens1f0", mac: "88:e9:a4:c1:00:01", pci: "0000:12:00.0", vendor: "0x15b3", device: "0x101d", speed: "25000", carrier: true, mtu: 9000, ifindex: 2},
		},
		disks: []disk{
			{name: "sda", major: 8, minor: 0, bytes: 16 * gb, rotational: true, removable: true, vendor: "SanDisk", model: "Cruzer_Blade",
				serial: "4C530001C1160116", idPath: "pci-0000:00:14.0-usb-0:2:1.0-scsi-0:0:0:0", hctl: "6:0:0:0"},
		},
	}
}

// placeholder hosts share the board and product serial "To be filled by
// O.E.M." (ASUS boards); only the SMBIOS UUID tells them apart.
func placeholder(suffix, uuid, mac, diskSerial string) host {
	return host{
		name:       "placeholder-" + suffix,
		purpose:    `valid worker whose board and product serial are the placeholder "To be filled by O.E.M."; its ID must come from the SMBIOS UUID, which differs from the other placeholder host's`,
		cpu:        withCount(ryzen, 4),
		memGiB:     16,
		memTotalKB: 16*1024*kib - 330_000,
		dmi: dmi{
			sysVendor: "System manufacturer", productName: "System Product Name", productSerial: "To be filled by O.E.M.",
			productUUID: uuid, productFamily: "To be filled by O.E.M.",
			boardVendor: "ASUSTeK COMPUTER INC.", boardName: "PRIME B450M-A", boardSerial: "To be filled by O.E.M.",
			biosVendor: "American Megatrends Inc.",
		},
		firmware: firmware{uefi: true},
		cmdline:  liveCmdline,
		live:     true,
		nics: []nic{
			{name: "enp6s0", mac: mac, pci: "0000:06:00.0", vendor: "0x10ec", device: "0x8168", speed: "1000", carrier: true, mtu: 1500, ifindex: 2},
		},
		disks: []disk{
			{name: "nvme0n1", major: 259, minor: 0, bytes: 150 * gb, model: "Samsung SSD 980 250GB",
				serial: diskSerial, wwn: "eui.002538" + diskSerial[len(diskSerial)-6:] + "01", idPath: "pci-0000:01:00.0-nvme-1",
				byID: "nvme-eui.002538" + diskSerial[len(diskSerial)-6:] + "01", vpd83: true},
		},
	}
}

func mounted() host {
	return host{
		name:       "mounted",
		purpose:    "worker whose first disk has mounted partitions (not eligible), a clean second disk, the discovery ISO on a DVD (installation media) and a loop device (skipped)",
		cpu:        withCount(xeon, 4),
		memGiB:     16,
		memTotalKB: 16*1024*kib - 300_000,
		dmi: dmi{
			sysVendor: "Lenovo", productName: "ThinkSystem SR630 V2", productSerial: "J30ABE01",
			productUUID: "b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4de0", productFamily: "ThinkSystem",
			boardVendor: "Lenovo", boardName: "7Z71CTO1WW", boardSerial: "L1HF0AB00E0", biosVendor: "Lenovo",
		},
		firmware: firmware{uefi: true, secureBoot: "disabled", tpm: "2"},
		cmdline:  liveCmdline,
		live:     true,
		mounts:   []string{"/dev/sr0 /run/media/iso iso9660 ro,relatime 0 0"},
		nics: []nic{
			{name: "ens3f0", mac: "7c:d3:0a:e0:00:01", pci: "0000:4b:00.0", vendor: "0x8086", device: "0x159b", speed: "25000", carrier: true, mtu: 1500, ifindex: 2},
		},
		disks: []disk{
			{name: "loop0", major: 7, minor: 0, bytes: 1_073_741_824},
			{name: "sda", major: 8, minor: 0, bytes: 150 * gb, vendor: "ATA", model: "MTFDDAK240TDS",
				serial: "2135E00000E0", wwn: "0x500a0751e00000e0", idPath: "pci-0000:00:17.0-ata-1",
				byID: "wwn-0x500a0751e00000e0", hctl: "0:0:0:0", vpd83: true, mbr: true,
				parts: []part{
					{num: 1, bytes: 600_000_000, fsType: "vfat", label: "EFI-SYSTEM", mount: "/boot/efi", mountOpts: "rw,relatime"},
					{num: 2, bytes: 100 * gb, fsType: "xfs", label: "data", mount: "/var/mnt/data", mountOpts: "rw,relatime"},
					{num: 3, bytes: 40 * gb, fsType: "swap", label: "swap"},
				}},
			{name: "sdb", major: 8, minor: 16, bytes: 200 * gb, vendor: "ATA", model: "MTFDDAK240TDS",
				serial: "2135E00000E1", wwn: "0x500a0751e00000e1", idPath: "pci-0000:00:17.0-ata-2",
				byID: "wwn-0x500a0751e00000e1", hctl: "1:0:0:0", vpd83: true},
			{name: "sr0", major: 11, minor: 0, bytes: 1_203_765_248, removable: true, vendor: "HL-DT-ST", model: "DVD+-RW_GUE1N",
				serial: "KZKE0E0", idPath: "pci-0000:00:17.0-ata-3", hctl: "2:0:0:0"},
		},
	}
}

// pciIDs is the slice of pci.ids that names worker-0's GPU. pcidb drops the
// subclasses of the last class in a file, hence the closing "ff" class.
const pciIDs = `# A small excerpt of pci.ids for the synthetic worker-0 host.
10de  NVIDIA Corporation
	1eb8  TU104GL [Tesla T4]
		10de 12a2  TU104GL [Tesla T4]
C 03  Display controller
	00  VGA compatible controller
	02  3D controller
C ff  Unassigned class
`
