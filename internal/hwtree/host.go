package hwtree

import (
	"fmt"
	"strconv"
	"strings"
)

// host describes one synthetic machine.
type host struct {
	name    string
	purpose string // one line for the README

	cpu        cpuSpec
	memGiB     int   // physical memory, in 2 GiB memory blocks
	memTotalKB int64 // MemTotal of /proc/meminfo (usable memory)

	dmi      dmi
	firmware firmware
	cmdline  string
	live     bool // /sysroot is a loop device (booted from the discovery ISO)
	mounts   []string

	nics   []nic
	disks  []disk
	gpus   []gpu
	pciIDs bool // write usr/share/hwdata/pci.ids, so GPUs get names
}

type cpuSpec struct {
	count      int
	vendor     string // vendor_id
	model      string // model name
	mhz        string
	hypervisor bool // the CPUID hypervisor bit, as a guest sees it
}

// dmi holds /sys/class/dmi/id files; an empty value means the file is absent.
type dmi struct {
	sysVendor, productName, productSerial, productUUID, productFamily string
	boardVendor, boardName, boardSerial                               string
	biosVendor, chassisAssetTag                                       string
}

type firmware struct {
	uefi       bool
	secureBoot string // "", "enabled" or "disabled"; "" = no SecureBoot efivar
	tpm        string // tpm_version_major; "" = no TPM
}

type nic struct {
	name    string
	mac     string
	pci     string // PCI address of the function
	vendor  string // PCI vendor ID, 0x....
	device  string // PCI device ID, 0x....
	speed   string // sysfs speed in Mb/s
	carrier bool
	mtu     int
	ifindex int
}

type disk struct {
	name         string
	major, minor int
	bytes        int64
	rotational   bool
	removable    bool
	vendor       string // sys/block/X/device/vendor
	model        string // udev ID_MODEL
	serial       string // udev ID_SERIAL_SHORT
	wwn          string // udev ID_WWN
	idPath       string // udev ID_PATH
	byID         string // name of the /dev/disk/by-id link the agent reads (wwn-*, nvme-eui.*)
	hctl         string // SCSI address under device/scsi_device
	vpd83        bool   // device identification VPD page present (sg_inq -p 0x83 answers)
	mbr          bool   // first sector ends in the 0x55AA boot signature
	parts        []part
}

type part struct {
	num       int
	bytes     int64
	fsType    string
	label     string // GPT partition name (ID_PART_ENTRY_NAME)
	mount     string // mount point; "" = not mounted
	mountOpts string
}

type gpu struct {
	addr           string // 0000:bb:dd.f
	vendor, device string // 4 hex digits each
	class          string // 6 hex digits, e.g. 030200
	subVendor      string
	subDevice      string
}

func (d disk) summary() string {
	kind := "SSD"
	switch {
	case strings.HasPrefix(d.name, "sr"):
		kind = "DVD"
	case strings.HasPrefix(d.name, "loop"):
		kind = "loop"
	case d.removable:
		kind = "removable USB"
	case d.rotational:
		kind = "HDD"
	}
	size := fmt.Sprintf("%d GB", d.bytes/1_000_000_000)
	if d.bytes < 1_000_000_000 {
		size = fmt.Sprintf("%d MB", d.bytes/1_000_000)
	}
	return fmt.Sprintf("%s %s %s", d.name, size, kind)
}

func (d disk) partName(n int) string {
	if strings.HasPrefix(d.name, "nvme") || strings.HasPrefix(d.name, "mmcblk") {
		return d.name + "p" + strconv.Itoa(n)
	}
	return d.name + strconv.Itoa(n)
}

// write lays the host out under t.
func (h host) write(t *tree) {
	h.writeCPU(t)
	h.writeMemory(t)
	h.writeDMI(t)
	h.writeFirmware(t)
	for _, n := range h.nics {
		n.write(t)
	}
	writeLoopback(t)
	for _, d := range h.disks {
		d.write(t)
	}
	h.writeGPUs(t)
	if h.pciIDs {
		t.file("usr/share/hwdata/pci.ids", pciIDs)
	}
	h.writeMounts(t)
	t.file("proc/cmdline", h.cmdline+"\n")
}

func (h host) writeCPU(t *tree) {
	flags := "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx lm constant_tsc nopl cpuid pni ssse3 fma cx16 sse4_1 sse4_2 x2apic popcnt aes xsave avx rdrand"
	if h.cpu.hypervisor {
		flags += " hypervisor"
	}
	flags += " lahf_lm abm avx2 bmi1 bmi2"
	cores := h.cpu.count / 2
	if cores == 0 {
		cores = 1
	}
	var b strings.Builder
	for i := range h.cpu.count {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: %s\nmodel name\t: %s\ncpu MHz\t\t: %s\n", i, h.cpu.vendor, h.cpu.model, h.cpu.mhz)
		fmt.Fprintf(&b, "physical id\t: 0\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\nflags\t\t: %s\n\n", h.cpu.count, i%cores, cores, flags)
		t.line(fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/core_id", i), strconv.Itoa(i%cores))
		t.line(fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/physical_package_id", i), "0")
	}
	// The trailing blank line matters: ghw drops a last block without one.
	t.file("proc/cpuinfo", b.String())
}

func (h host) writeMemory(t *tree) {
	t.line("sys/devices/system/memory/block_size_bytes", "80000000") // 2 GiB, hex
	for i := range h.memGiB / 2 {
		t.line(fmt.Sprintf("sys/devices/system/memory/memory%d/state", i), "online")
	}
	t.file("proc/meminfo", fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\nHugetlb:               0 kB\nHugepagesize:       2048 kB\n",
		h.memTotalKB, h.memTotalKB*9/10, h.memTotalKB*19/20))
}

func (h host) writeDMI(t *tree) {
	for _, f := range []struct{ name, value string }{
		{"sys_vendor", h.dmi.sysVendor},
		{"product_name", h.dmi.productName},
		{"product_serial", h.dmi.productSerial},
		{"product_uuid", h.dmi.productUUID},
		{"product_family", h.dmi.productFamily},
		{"board_vendor", h.dmi.boardVendor},
		{"board_name", h.dmi.boardName},
		{"board_serial", h.dmi.boardSerial},
		{"bios_vendor", h.dmi.biosVendor},
		{"chassis_asset_tag", h.dmi.chassisAssetTag},
	} {
		if f.value != "" {
			t.line("sys/class/dmi/id/"+f.name, f.value)
		}
	}
}

func (h host) writeFirmware(t *tree) {
	if h.firmware.uefi {
		t.line("sys/firmware/efi/fw_platform_size", "64")
		// efivarfs: 4 bytes of attributes, then the one-byte SecureBoot value.
		switch h.firmware.secureBoot {
		case "enabled":
			t.file("sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", "\x06\x00\x00\x00\x01")
		case "disabled":
			t.file("sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", "\x06\x00\x00\x00\x00")
		}
	}
	if h.firmware.tpm != "" {
		t.line("sys/class/tpm/tpm0/tpm_version_major", h.firmware.tpm)
	}
}

func (h host) writeMounts(t *tree) {
	lines := []string{
		"sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0",
		"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
		"tmpfs /run tmpfs rw,nosuid,nodev,mode=755 0 0",
	}
	if h.live {
		lines = append(lines, "/dev/loop0 /sysroot squashfs ro,relatime 0 0")
	}
	for _, d := range h.disks {
		for _, p := range d.parts {
			if p.mount != "" {
				lines = append(lines, fmt.Sprintf("/dev/%s %s %s %s 0 0", d.partName(p.num), p.mount, p.fsType, p.mountOpts))
			}
		}
	}
	lines = append(lines, h.mounts...)
	// No blank lines: ghw's mount parser indexes line[0].
	t.file("proc/self/mounts", strings.Join(lines, "\n")+"\n")
}

func (h host) writeGPUs(t *tree) {
	for _, g := range h.gpus {
		dev := "sys/devices/pci0000:00/" + g.addr
		t.line(dev+"/vendor", "0x"+g.vendor)
		t.line(dev+"/device", "0x"+g.device)
		t.line(dev+"/class", "0x"+g.class)
		t.line(dev+"/modalias", fmt.Sprintf("pci:v0000%sd0000%ssv0000%ssd0000%sbc%ssc%si%s",
			strings.ToUpper(g.vendor), strings.ToUpper(g.device), strings.ToUpper(g.subVendor), strings.ToUpper(g.subDevice),
			strings.ToUpper(g.class[0:2]), strings.ToUpper(g.class[2:4]), strings.ToUpper(g.class[4:6])))
		t.link("sys/bus/pci/devices/"+g.addr, "../../../devices/pci0000:00/"+g.addr)
	}
}

func (n nic) write(t *tree) {
	fn := "sys/devices/pci0000:00/" + n.pci
	dir := fn + "/net/" + n.name
	t.line(fn+"/vendor", n.vendor)
	t.line(fn+"/device", n.device)
	t.line(fn+"/class", "0x020000")
	t.line(dir+"/address", n.mac)
	t.line(dir+"/mtu", strconv.Itoa(n.mtu))
	t.line(dir+"/type", "1")
	t.line(dir+"/ifindex", strconv.Itoa(n.ifindex))
	t.line(dir+"/flags", "0x1003") // up, broadcast, multicast
	t.line(dir+"/speed", n.speed)
	if n.carrier {
		t.line(dir+"/operstate", "up")
		t.line(dir+"/carrier", "1")
	} else {
		t.line(dir+"/operstate", "down")
		t.line(dir+"/carrier", "0")
	}
	t.file(dir+"/uevent", fmt.Sprintf("INTERFACE=%s\nIFINDEX=%d\n", n.name, n.ifindex))
	t.link(dir+"/device", "../../../"+n.pci)
	t.link("sys/class/net/"+n.name, "../../devices/pci0000:00/"+n.pci+"/net/"+n.name)
}

func writeLoopback(t *tree) {
	dir := "sys/devices/virtual/net/lo"
	t.line(dir+"/address", "00:00:00:00:00:00")
	t.line(dir+"/mtu", "65536")
	t.line(dir+"/type", "772")
	t.line(dir+"/ifindex", "1")
	t.line(dir+"/flags", "0x9") // up, loopback
	t.line(dir+"/operstate", "unknown")
	t.line(dir+"/carrier", "1")
	t.file(dir+"/uevent", "INTERFACE=lo\nIFINDEX=1\n")
	t.link("sys/class/net/lo", "../../devices/virtual/net/lo")
}

func (d disk) write(t *tree) {
	dir := "sys/block/" + d.name
	t.line(dir+"/size", strconv.FormatInt(d.bytes/512, 10))
	t.line(dir+"/removable", boolDigit(d.removable))
	t.line(dir+"/dev", fmt.Sprintf("%d:%d", d.major, d.minor))
	t.line(dir+"/queue/rotational", boolDigit(d.rotational))
	if d.vendor != "" {
		t.line(dir+"/device/vendor", d.vendor)
	}
	if d.hctl != "" {
		t.file(dir+"/device/scsi_device/"+d.hctl+"/uevent", "")
	}
	if d.vpd83 {
		if strings.HasPrefix(d.name, "nvme") {
			t.line(dir+"/wwid", d.wwn)
		} else {
			t.file(dir+"/device/vpd_pg83", "\x00\x83\x00\x0c\x01\x03\x00\x08"+d.serial[:4]+"\x00\x00\x00\x00")
		}
	}
	var udev []string
	if d.idPath != "" {
		udev = append(udev, "E:ID_PATH="+d.idPath)
	}
	if d.model != "" {
		udev = append(udev, "E:ID_MODEL="+d.model)
	}
	switch {
	case d.serial != "" && d.model != "":
		udev = append(udev, "E:ID_SERIAL="+d.model+"_"+d.serial, "E:ID_SERIAL_SHORT="+d.serial)
	case d.serial != "":
		udev = append(udev, "E:ID_SERIAL="+d.serial) // virtio-blk: no model, serial as set by the hypervisor
	}
	if d.wwn != "" {
		udev = append(udev, "E:ID_WWN="+d.wwn)
	}
	udev = append(udev, "E:DEVTYPE=disk")
	t.file(fmt.Sprintf("run/udev/data/b%d:%d", d.major, d.minor), strings.Join(udev, "\n")+"\n")

	sector := ""
	if d.mbr {
		sector = strings.Repeat("\x00", 510) + "\x55\xaa"
	}
	t.file("dev/"+d.name, sector)
	if d.idPath != "" {
		t.link("dev/disk/by-path/"+d.idPath, "../../"+d.name)
	}
	if d.byID != "" {
		t.link("dev/disk/by-id/"+d.byID, "../../"+d.name)
	}

	var next int64 = 2048 * 512
	for _, p := range d.parts {
		name := d.partName(p.num)
		pdir := dir + "/" + name
		minor := d.minor + p.num
		t.line(pdir+"/size", strconv.FormatInt(p.bytes/512, 10))
		t.line(pdir+"/start", strconv.FormatInt(next/512, 10))
		t.line(pdir+"/partition", strconv.Itoa(p.num))
		t.line(pdir+"/dev", fmt.Sprintf("%d:%d", d.major, minor))
		next += p.bytes
		t.file(fmt.Sprintf("run/udev/data/b%d:%d", d.major, minor), fmt.Sprintf(
			"E:DEVTYPE=partition\nE:ID_FS_TYPE=%s\nE:ID_PART_ENTRY_NAME=%s\nE:ID_PART_ENTRY_NUMBER=%d\n", p.fsType, p.label, p.num))
	}
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
