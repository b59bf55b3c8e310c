package testbed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// How a VM is laid out and started: the plan (every default filled in),
// the QEMU argv it makes, the safety check every argv passes before QEMU
// runs, and the files in the VM's directory.

const (
	qemuBinary    = "qemu-system-x86_64"
	qemuImgBinary = "qemu-img"
	// firstVMNIC is the last MAC byte of a bed's first VM NIC: hosts use
	// 0..maxHosts-1 and the bridge 0xfe (deriveMAC).
	firstVMNIC = 0x80
	maxVMNICs  = 0xfe - firstVMNIC
	// maxSocketPath is what fits a unix socket address (sun_path, with its NUL).
	maxSocketPath = 107
)

// Firmware is a UEFI firmware pair: the code, mapped read-only, and the
// variable store template each VM gets its own writable copy of.
type Firmware struct {
	Code, Vars string
}

// ovmfPairs are where distributions put OVMF, preferred first: Debian's
// 4 MiB build (package ovmf), its 2 MiB build, Fedora's edk2-ovmf.
var ovmfPairs = []Firmware{
	{"/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"},
	{"/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"},
	{"/usr/share/edk2/ovmf/OVMF_CODE.fd", "/usr/share/edk2/ovmf/OVMF_VARS.fd"},
}

// ErrNoFirmware: no OVMF pair is installed.
var ErrNoFirmware = errors.New("no OVMF firmware found (Debian package ovmf)")

// FindOVMF returns the first OVMF pair installed (without Secure Boot).
func FindOVMF() (Firmware, error) {
	for _, fw := range ovmfPairs {
		if regular(fw.Code) && regular(fw.Vars) {
			return fw, nil
		}
	}
	return Firmware{}, fmt.Errorf("%w: looked for %s", ErrNoFirmware, ovmfPairs)
}

func regular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// vmPlan is a validated VMSpec with every default filled in and every path
// the VM uses.
type vmPlan struct {
	name      string
	dir       string
	diskDir   string // where overlay and install lie (dir unless VMSpec.DiskDir)
	boot      string // the base image (absolute), never opened by QEMU but through overlay
	overlay   string
	install   string // "" without an install disk
	installSz int64
	fw        Firmware
	vars      string
	serial    string
	qemuLog   string
	qmp, qga  string
	nics      []VMNIC
	smbios    SMBIOS
	memMiB    int
	cpus      int
	noReboot  bool
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// planVM checks s and fills its defaults. bedID derives the MACs, tap names
// and SMBIOS identity; firstNIC is the bed-wide index of the VM's first NIC.
func planVM(bedID string, s VMSpec, dir string, firstNIC int, fw Firmware) (vmPlan, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("vm %q: %s: %w", s.Name, fmt.Sprintf(format, args...), ErrInvalid))
	}
	if !hostNameRE.MatchString(s.Name) || s.Name == "sw" {
		bad("name: want letters, digits, '-' and '_', at most 32, not \"sw\"")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return vmPlan{}, fmt.Errorf("vm %q: dir: %w", s.Name, err)
	}
	p := vmPlan{
		name: s.Name, dir: abs, fw: fw,
		vars:    filepath.Join(abs, "OVMF_VARS.fd"),
		serial:  filepath.Join(abs, "serial.log"),
		qemuLog: filepath.Join(abs, "qemu.log"),
		qmp:     filepath.Join(abs, "qmp.sock"),
		qga:     filepath.Join(abs, "qga.sock"),
		memMiB:  s.MemoryMiB, cpus: s.CPUs, noReboot: s.NoReboot,
		installSz: s.InstallDiskSize,
	}
	disks := abs
	if s.DiskDir != "" {
		if disks, err = filepath.Abs(s.DiskDir); err != nil {
			return vmPlan{}, fmt.Errorf("vm %q: disk dir: %w", s.Name, err)
		}
	}
	p.diskDir = disks
	if len(p.qga) > maxSocketPath || len(p.qmp) > maxSocketPath {
		bad("dir: %s is too long for a unix socket path inside it (at most %d bytes)", abs, maxSocketPath-len("/qmp.sock"))
	}
	if p.memMiB == 0 {
		p.memMiB = 1024
	}
	if p.cpus == 0 {
		p.cpus = 1
	}
	if p.memMiB < 64 {
		bad("memory: %d MiB, want at least 64", p.memMiB)
	}
	if p.cpus < 1 || p.cpus > 64 {
		bad("cpus: %d, want 1 to 64", p.cpus)
	}
	if s.Boot != "" {
		if p.boot, err = filepath.Abs(s.Boot); err != nil {
			bad("boot: %v", err)
		}
		p.overlay = filepath.Join(disks, "boot.qcow2")
	}
	switch {
	case s.InstallDiskSize < 0:
		bad("install disk size: %d, want 0 (none) or more", s.InstallDiskSize)
	case s.InstallDiskSize > 0:
		p.install = filepath.Join(disks, "install.qcow2")
	}
	if firstNIC+len(s.NICs) > maxVMNICs {
		bad("nics: a bed has at most %d VM NICs", maxVMNICs)
	}
	if len(s.NICs) > maxNICsPerVM {
		bad("nics: %d, at most %d (one PCI slot each, from %#x)", len(s.NICs), maxNICsPerVM, nicSlot)
	}
	for i, n := range s.NICs {
		idx := firstNIC + i
		if n.MAC == nil {
			n.MAC = deriveMAC(bedID, byte(firstVMNIC+idx))
		} else if len(n.MAC) != 6 || n.MAC[0]&1 != 0 {
			bad("nics[%d]: MAC %s is not a unicast Ethernet address", i, n.MAC)
		}
		n.Tap = "t" + bedID + strconv.Itoa(idx)
		if !ifNameRE.MatchString(n.Tap) {
			bad("nics[%d]: tap name %q is not a valid interface name", i, n.Tap)
		}
		p.nics = append(p.nics, n)
	}
	p.smbios, err = fillSMBIOS(bedID, s.Name, s.SMBIOS)
	if err != nil {
		bad("smbios: %v", err)
	}
	return p, errors.Join(errs...)
}

// fillSMBIOS checks s and derives what it leaves out from the bed and VM
// names, so every VM of a bed has its own system UUID and serial.
func fillSMBIOS(bedID, name string, s SMBIOS) (SMBIOS, error) {
	sum := sha256.Sum256([]byte(bedID + "/" + name))
	if s.UUID == "" {
		u := sum[:16]
		u[6] = u[6]&0x0f | 0x80 // version 8: vendor-specific (RFC 9562)
		u[8] = u[8]&0x3f | 0x80 // the RFC variant
		h := hex.EncodeToString(u)
		s.UUID = h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	if s.Serial == "" {
		s.Serial = "NZ" + strings.ToUpper(hex.EncodeToString(sum[16:22]))
	}
	if s.Manufacturer == "" {
		s.Manufacturer = "nodezero"
	}
	if s.Product == "" {
		s.Product = "testbed VM"
	}
	var errs []error
	if !uuidRE.MatchString(s.UUID) {
		errs = append(errs, fmt.Errorf("uuid %q: want 8-4-4-4-12 hex digits", s.UUID))
	}
	for field, v := range map[string]string{"serial": s.Serial, "manufacturer": s.Manufacturer, "product": s.Product} {
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			errs = append(errs, fmt.Errorf("%s %q: control characters", field, v))
		}
	}
	return s, errors.Join(errs...)
}

// argv is the QEMU command line (without the binary) for p under accel.
// Every device that must come and go (the config CD) goes on virtio-scsi:
// on q35, devices on pcie.0 cannot be hot-unplugged. No disk has a
// bootindex: OVMF would then rewrite BootOrder from QEMU's on every boot,
// undoing what efibootmgr set inside the guest.
func (p vmPlan) argv(accel Accel) []string {
	a := []string{"-name", p.name, "-machine", "q35"}
	a = append(a, accelArgs(accel)...)
	a = append(a,
		"-smp", strconv.Itoa(p.cpus), "-m", strconv.Itoa(p.memMiB),
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none",
	)
	if p.noReboot {
		a = append(a, "-no-reboot")
	}
	a = append(a,
		"-drive", "if=pflash,format=raw,unit=0,readonly=on,file="+qemuEscape(p.fw.Code),
		"-drive", "if=pflash,format=raw,unit=1,file="+qemuEscape(p.vars),
		"-smbios", "type=1,manufacturer="+qemuEscape(p.smbios.Manufacturer)+",product="+qemuEscape(p.smbios.Product)+
			",serial="+qemuEscape(p.smbios.Serial)+",uuid="+p.smbios.UUID,
		// The whole serial log, across power cycles (append).
		"-chardev", "file,id=serial0,path="+qemuEscape(p.serial)+",append=on",
		"-serial", "chardev:serial0",
		// QEMU waits for the QMP client before it runs the guest, so no
		// event is missed.
		"-chardev", "socket,id=qmp0,path="+qemuEscape(p.qmp)+",server=on,wait=on",
		"-mon", "chardev=qmp0,mode=control",
		"-device", "virtio-serial-pci,id=vser0",
		"-chardev", "socket,id=qga0,path="+qemuEscape(p.qga)+",server=on,wait=off",
		"-device", "virtserialport,bus=vser0.0,chardev=qga0,name=org.qemu.guest_agent.0",
		"-device", "virtio-scsi-pci,id=scsi0",
	)
	if p.overlay != "" {
		a = append(a,
			"-blockdev", "driver=qcow2,node-name=boot,file.driver=file,file.filename="+qemuEscape(p.overlay),
			"-device", "virtio-blk-pci,drive=boot,serial=boot",
		)
	}
	if p.install != "" {
		a = append(a,
			"-blockdev", "driver=qcow2,node-name=install,file.driver=file,file.filename="+qemuEscape(p.install),
			"-device", "virtio-blk-pci,drive=install,serial=install",
		)
	}
	if len(p.nics) == 0 {
		a = append(a, "-nic", "none")
	}
	for i, n := range p.nics {
		id := "net" + strconv.Itoa(i)
		// romfile= : no iPXE option ROM (Debian's is a separate package);
		// OVMF drives virtio-net itself.
		a = append(a,
			"-netdev", "tap,id="+id+",ifname="+n.Tap+",script=no,downscript=no",
			"-device", "virtio-net-pci,netdev="+id+",mac="+n.MAC.String()+",romfile=,addr="+fmt.Sprintf("%#x", nicSlot+i),
		)
	}
	return a
}

// nicSlot is the PCI slot of a VM's first NIC on the q35 root bus; the
// others follow. Fixed slots give the NICs the names a Linux guest's udev
// derives from them (VMNICName), whatever other devices a VM has.
const nicSlot = 0x10

// maxNICsPerVM keeps the NICs' slots below 0x1f, the q35 chipset's.
const maxNICsPerVM = 0x1f - nicSlot

// VMNICName is the name a Linux guest with predictable interface names
// gives a VM's NIC i: enp0s<slot>.
func VMNICName(i int) string { return fmt.Sprintf("enp0s%d", nicSlot+i) }

// ErrUserNetworking: a QEMU command line that could reach outside the bed.
var ErrUserNetworking = errors.New("qemu networking other than a tap or none")

// checkArgv refuses a QEMU command line with any network backend but a tap
// without scripts (-netdev tap,...,script=no,downscript=no) or -nic none:
// user networking would reach the machine's own network and beyond.
func checkArgv(argv []string) error {
	for i := 0; i < len(argv); i++ {
		opt := argv[i]
		if strings.HasPrefix(opt, "--") {
			opt = opt[1:]
		}
		val := ""
		if k, v, ok := strings.Cut(opt, "="); ok && strings.HasPrefix(opt, "-") {
			opt, val = k, v
		} else if i+1 < len(argv) {
			val = argv[i+1]
		}
		switch opt {
		case "-net", "-netdev", "-nic":
		default:
			continue
		}
		kind, _, _ := strings.Cut(val, ",")
		fields := strings.Split(val, ",")
		switch {
		case opt == "-nic" && val == "none":
		case opt != "-net" && kind == "tap" && slices.Contains(fields, "script=no") && slices.Contains(fields, "downscript=no"):
		default:
			return fmt.Errorf("qemu %s %s: %w", opt, val, ErrUserNetworking)
		}
	}
	return nil
}

// qemuEscape doubles the commas in a QEMU option value.
func qemuEscape(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// prepare makes the VM's files: a fresh copy of the OVMF variable store, a
// qcow2 overlay on the base image (which is thus never written), a blank
// install disk, and an empty serial log.
func (p vmPlan) prepare(ctx context.Context) error {
	if err := os.MkdirAll(p.diskDir, 0o755); err != nil {
		return fmt.Errorf("vm %s: %w", p.name, err)
	}
	if err := copyFile(p.fw.Vars, p.vars); err != nil {
		return fmt.Errorf("vm %s: copy OVMF variables: %w", p.name, err)
	}
	for _, f := range []string{p.serial, p.qemuLog} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return fmt.Errorf("vm %s: %w", p.name, err)
		}
	}
	if p.overlay != "" {
		format, err := imageFormat(ctx, p.boot)
		if err != nil {
			return fmt.Errorf("vm %s: boot image: %w", p.name, err)
		}
		_ = os.Remove(p.overlay)
		if _, err := runTool(ctx, qemuImgBinary, "create", "-q", "-f", "qcow2", "-b", p.boot, "-F", format, p.overlay); err != nil {
			return fmt.Errorf("vm %s: boot overlay: %w", p.name, err)
		}
	}
	if p.install != "" {
		_ = os.Remove(p.install)
		if _, err := runTool(ctx, qemuImgBinary, "create", "-q", "-f", "qcow2", p.install, strconv.FormatInt(p.installSz, 10)); err != nil {
			return fmt.Errorf("vm %s: install disk: %w", p.name, err)
		}
	}
	return nil
}

// imageFormat asks qemu-img what kind of image path is (qcow2, raw, ...).
func imageFormat(ctx context.Context, path string) (string, error) {
	out, err := runTool(ctx, qemuImgBinary, "info", "--output=json", path)
	if err != nil {
		return "", err
	}
	var info struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(out, &info); err != nil || info.Format == "" {
		return "", fmt.Errorf("qemu-img info %s: no format in %q", path, out)
	}
	return info.Format, nil
}

// runTool runs a command and returns its stdout; a failure carries its
// stderr.
func runTool(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// copyFile copies src to a new dst (replacing it), synced.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_ = os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// vmMACsInUse lists the MACs already on b's bridge: hosts', the bridge's
// own and other VMs'. The caller holds b.mu.
func (b *Bed) vmMACsInUse() map[string]string {
	seen := map[string]string{deriveMAC(b.ID, 0xfe).String(): "the bridge"}
	for _, h := range b.Hosts {
		seen[h.MAC.String()] = "host " + h.Name
	}
	for _, v := range b.vms {
		for i, n := range v.NICs {
			seen[n.MAC.String()] = fmt.Sprintf("vm %s nics[%d]", v.Name, i)
		}
	}
	return seen
}
