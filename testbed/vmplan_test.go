package testbed

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testFirmware = Firmware{Code: "/fw/OVMF_CODE_4M.fd", Vars: "/fw/OVMF_VARS_4M.fd"}

// opts returns the values of every occurrence of option name in argv.
func opts(argv []string, name string) []string {
	var vals []string
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == name {
			vals = append(vals, argv[i+1])
		}
	}
	return vals
}

// TestVMArgv pins the QEMU command line a VM gets: taps only, its own
// OVMF variables, its SMBIOS identity, the overlay (never the base) on
// virtio-blk, the install disk with its serial, virtio-scsi for the CD.
func TestVMArgv(t *testing.T) {
	const bedID = "4242x7qz"
	mac := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	dirA, dirB := "/beds/a", "/beds/b"
	a, err := planVM(bedID, VMSpec{
		Name: "master-0", Boot: "/images/factory.qcow2", InstallDiskSize: 8 << 30,
		NICs:   []VMNIC{{MAC: mac}, {}},
		SMBIOS: SMBIOS{UUID: "5b5c3a1e-7c1d-4a53-9d43-8f3e2a1b0c9d", Serial: "SN-0001", Manufacturer: "Acme, Inc.", Product: "Rack 9"},
	}, dirA, 0, testFirmware)
	if err != nil {
		t.Fatal(err)
	}
	b, err := planVM(bedID, VMSpec{Name: "worker-0", NICs: []VMNIC{{}}, MemoryMiB: 2048, CPUs: 2, NoReboot: true}, dirB, 2, testFirmware)
	if err != nil {
		t.Fatal(err)
	}
	argvA, argvB := a.argv(AccelTCG), b.argv(AccelKVM)

	t.Run("network: taps only", func(t *testing.T) {
		for name, argv := range map[string][]string{"a": argvA, "b": argvB} {
			if err := checkArgv(argv); err != nil {
				t.Errorf("vm %s: checkArgv = %v", name, err)
			}
			for _, nd := range opts(argv, "-netdev") {
				if !strings.HasPrefix(nd, "tap,") || strings.Contains(nd, "user") {
					t.Errorf("vm %s: -netdev %s, want taps only", name, nd)
				}
			}
			if net := opts(argv, "-net"); len(net) != 0 || strings.Contains(strings.Join(argv, " "), "hostfwd") {
				t.Errorf("vm %s: -net %q in %q", name, net, argv)
			}
			if nics := opts(argv, "-nic"); len(nics) != 0 {
				t.Errorf("vm %s: -nic %v, want none (it has NICs)", name, nics)
			}
		}
		want := []string{
			"tap,id=net0,ifname=t4242x7qz0,script=no,downscript=no",
			"tap,id=net1,ifname=t4242x7qz1,script=no,downscript=no",
		}
		if diff := cmp.Diff(want, opts(argvA, "-netdev")); diff != "" {
			t.Errorf("vm a -netdev (-want +got):\n%s", diff)
		}
		derived := deriveMAC(bedID, firstVMNIC+1)
		wantDev := []string{
			"virtio-net-pci,netdev=net0,mac=02:11:22:33:44:55,romfile=,addr=0x10",
			"virtio-net-pci,netdev=net1,mac=" + derived.String() + ",romfile=,addr=0x11",
		}
		if got := slices.DeleteFunc(opts(argvA, "-device"), func(d string) bool { return !strings.HasPrefix(d, "virtio-net") }); !cmp.Equal(got, wantDev) {
			t.Errorf("vm a NIC devices = %q, want %q", got, wantDev)
		}
		if got := opts(argvB, "-netdev"); len(got) != 1 || !strings.Contains(got[0], "ifname=t4242x7qz2,") {
			t.Errorf("vm b -netdev = %q, want its one tap t4242x7qz2 (the bed's third VM NIC)", got)
		}
		if b.nics[0].MAC.String() != deriveMAC(bedID, firstVMNIC+2).String() {
			t.Errorf("vm b MAC = %s, want %s", b.nics[0].MAC, deriveMAC(bedID, firstVMNIC+2))
		}
		noNIC, err := planVM(bedID, VMSpec{Name: "lonely"}, "/beds/c", 3, testFirmware)
		if err != nil {
			t.Fatal(err)
		}
		if got := opts(noNIC.argv(AccelTCG), "-nic"); !cmp.Equal(got, []string{"none"}) {
			t.Errorf("a VM without NICs: -nic %q, want [none]", got)
		}
	})

	t.Run("firmware: code read-only, variables per VM", func(t *testing.T) {
		for name, c := range map[string]struct {
			argv []string
			dir  string
		}{"a": {argvA, dirA}, "b": {argvB, dirB}} {
			want := []string{
				"if=pflash,format=raw,unit=0,readonly=on,file=" + testFirmware.Code,
				"if=pflash,format=raw,unit=1,file=" + filepath.Join(c.dir, "OVMF_VARS.fd"),
			}
			if diff := cmp.Diff(want, opts(c.argv, "-drive")); diff != "" {
				t.Errorf("vm %s -drive (-want +got):\n%s", name, diff)
			}
		}
	})

	t.Run("smbios", func(t *testing.T) {
		want := []string{"type=1,manufacturer=Acme,, Inc.,product=Rack 9,serial=SN-0001,uuid=5b5c3a1e-7c1d-4a53-9d43-8f3e2a1b0c9d"}
		if diff := cmp.Diff(want, opts(argvA, "-smbios")); diff != "" {
			t.Errorf("vm a -smbios (-want +got):\n%s", diff)
		}
		// Derived identities differ between VMs and are stable.
		again, _ := planVM(bedID, VMSpec{Name: "worker-0"}, dirB, 0, testFirmware)
		if b.smbios != again.smbios {
			t.Errorf("derived SMBIOS not stable: %+v, then %+v", b.smbios, again.smbios)
		}
		other, _ := planVM(bedID, VMSpec{Name: "worker-1"}, dirB, 0, testFirmware)
		if other.smbios.UUID == b.smbios.UUID || other.smbios.Serial == b.smbios.Serial {
			t.Errorf("two VMs share a derived identity: %+v and %+v", b.smbios, other.smbios)
		}
		if !uuidRE.MatchString(b.smbios.UUID) || b.smbios.Manufacturer != "nodezero" || b.smbios.Product != "testbed VM" {
			t.Errorf("derived SMBIOS = %+v", b.smbios)
		}
	})

	t.Run("disks", func(t *testing.T) {
		joined := strings.Join(argvA, " ")
		if strings.Contains(joined, "/images/factory.qcow2") {
			t.Errorf("the base image is on QEMU's command line (only its overlay may be): %s", joined)
		}
		want := []string{
			"driver=qcow2,node-name=boot,file.driver=file,file.filename=/beds/a/boot.qcow2",
			"driver=qcow2,node-name=install,file.driver=file,file.filename=/beds/a/install.qcow2",
		}
		if diff := cmp.Diff(want, opts(argvA, "-blockdev")); diff != "" {
			t.Errorf("vm a -blockdev (-want +got):\n%s", diff)
		}
		devs := opts(argvA, "-device")
		for _, d := range []string{"virtio-blk-pci,drive=boot,serial=boot", "virtio-blk-pci,drive=install,serial=install", "virtio-scsi-pci,id=scsi0"} {
			if !slices.Contains(devs, d) {
				t.Errorf("vm a has no -device %s: %q", d, devs)
			}
		}
		if strings.Contains(joined, "bootindex") {
			t.Errorf("a bootindex would make OVMF rewrite BootOrder on every boot: %s", joined)
		}
		if got := opts(argvB, "-blockdev"); len(got) != 0 {
			t.Errorf("vm b (no boot, no install disk): -blockdev %q, want none", got)
		}
	})

	t.Run("machine", func(t *testing.T) {
		for _, c := range []struct {
			name     string
			argv     []string
			accel    string
			cpu      string
			mem, smp string
			noReboot bool
		}{
			{"a", argvA, "tcg,thread=multi,tb-size=256", "max", "1024", "1", false},
			{"b", argvB, "kvm", "host", "2048", "2", true},
		} {
			got := []string{opts(c.argv, "-accel")[0], opts(c.argv, "-cpu")[0], opts(c.argv, "-m")[0], opts(c.argv, "-smp")[0]}
			if want := []string{c.accel, c.cpu, c.mem, c.smp}; !cmp.Equal(got, want) {
				t.Errorf("vm %s -accel -cpu -m -smp = %q, want %q", c.name, got, want)
			}
			if slices.Contains(c.argv, "-no-reboot") != c.noReboot {
				t.Errorf("vm %s: -no-reboot present = %v, want %v", c.name, !c.noReboot, c.noReboot)
			}
			for _, flag := range []string{"-nodefaults", "-no-user-config"} {
				if !slices.Contains(c.argv, flag) {
					t.Errorf("vm %s: no %s", c.name, flag)
				}
			}
		}
		if got := opts(argvA, "-chardev"); !slices.Contains(got, "file,id=serial0,path=/beds/a/serial.log,append=on") ||
			!slices.Contains(got, "socket,id=qmp0,path=/beds/a/qmp.sock,server=on,wait=on") ||
			!slices.Contains(got, "socket,id=qga0,path=/beds/a/qga.sock,server=on,wait=off") {
			t.Errorf("vm a -chardev = %q: want the serial log (appended), QMP and the guest agent in its directory", got)
		}
	})
}

func TestCheckArgv(t *testing.T) {
	for _, c := range []struct {
		name string
		argv []string
		ok   bool
	}{
		{"tap without scripts", []string{"-netdev", "tap,id=n,ifname=t0,script=no,downscript=no"}, true},
		{"no nic", []string{"-nic", "none"}, true},
		{"nothing", []string{"-m", "512"}, true},
		{"user netdev", []string{"-netdev", "user,id=n"}, false},
		{"user nic", []string{"-nic", "user,hostfwd=tcp::2222-:22"}, false},
		{"legacy -net", []string{"-net", "nic"}, false},
		{"double dash", []string{"--netdev", "user,id=n"}, false},
		{"equals form", []string{"-netdev=user,id=n"}, false},
		{"tap with an ifup script", []string{"-netdev", "tap,id=n,ifname=t0"}, false},
		{"tap nic", []string{"-nic", "tap,ifname=t0,script=no,downscript=no"}, true},
		{"bridge helper", []string{"-netdev", "bridge,id=n,br=br0"}, false},
		{"socket", []string{"-netdev", "socket,id=n,connect=1.2.3.4:5"}, false},
		{"json", []string{"-netdev", `{"type":"user","id":"n"}`}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkArgv(c.argv)
			if c.ok && err != nil {
				t.Errorf("checkArgv(%q) = %v, want nil", c.argv, err)
			}
			if !c.ok && !errors.Is(err, ErrUserNetworking) {
				t.Errorf("checkArgv(%q) = %v, want ErrUserNetworking", c.argv, err)
			}
		})
	}
}

func TestPlanVMInvalid(t *testing.T) {
	for _, c := range []struct {
		name string
		spec VMSpec
		dir  string
		want string
	}{
		{"no name", VMSpec{}, "/d", "name:"},
		{"sw", VMSpec{Name: "sw"}, "/d", "name:"},
		{"multicast MAC", VMSpec{Name: "a", NICs: []VMNIC{{MAC: net.HardwareAddr{1, 0, 0, 0, 0, 1}}}}, "/d", "nics[0]: MAC 01:00:00:00:00:01"},
		{"bad uuid", VMSpec{Name: "a", SMBIOS: SMBIOS{UUID: "nope"}}, "/d", `smbios: uuid "nope"`},
		{"control character", VMSpec{Name: "a", SMBIOS: SMBIOS{Serial: "a\nb"}}, "/d", "smbios: serial"},
		{"negative disk", VMSpec{Name: "a", InstallDiskSize: -1}, "/d", "install disk size: -1"},
		{"tiny memory", VMSpec{Name: "a", MemoryMiB: 16}, "/d", "memory: 16 MiB"},
		{"long dir", VMSpec{Name: "a"}, "/" + strings.Repeat("d", 120), "too long for a unix socket"},
		{"too many NICs", VMSpec{Name: "a", NICs: make([]VMNIC, 16)}, "/d", "nics: 16, at most 15"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := planVM("1x2", c.spec, c.dir, 0, testFirmware)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("planVM(%+v) = %v, want ErrInvalid saying %q", c.spec, err, c.want)
			}
		})
	}
	if _, err := planVM("1x2", VMSpec{Name: "a", NICs: make([]VMNIC, 3)}, "/d", maxVMNICs-2, testFirmware); !errors.Is(err, ErrInvalid) {
		t.Errorf("planVM past the bed's VM NICs = %v, want ErrInvalid", err)
	}
}

// TestVMFiles makes a VM's files with the real qemu-img: the OVMF
// variables are the VM's own copy, the overlay is backed onto the base
// (which stays as it was), the install disk is blank and of its size.
func TestVMFiles(t *testing.T) {
	needTool(t, qemuImgBinary)
	fw := needOVMF(t)
	ctx := t.Context()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.raw")
	if err := os.WriteFile(base, bytes.Repeat([]byte("nodezero"), 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := planVM("1x2", VMSpec{Name: name, Boot: base, InstallDiskSize: 3 << 20}, filepath.Join(dir, name), 0, fw)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.prepare(ctx); err != nil {
			t.Fatal(err)
		}
		vars, err := os.ReadFile(p.vars)
		if err != nil {
			t.Fatal(err)
		}
		tmpl, _ := os.ReadFile(fw.Vars)
		if !bytes.Equal(vars, tmpl) || p.vars == fw.Vars || filepath.Dir(p.vars) != p.dir {
			t.Errorf("vm %s: variables %s: want a copy of %s in %s", name, p.vars, fw.Vars, p.dir)
		}
		var info struct {
			Format        string `json:"format"`
			VirtualSize   int64  `json:"virtual-size"`
			Backing       string `json:"backing-filename"`
			BackingFormat string `json:"backing-filename-format"`
		}
		out, err := runTool(ctx, qemuImgBinary, "info", "--output=json", p.overlay)
		if err != nil || json.Unmarshal(out, &info) != nil {
			t.Fatalf("qemu-img info %s: %v: %s", p.overlay, err, out)
		}
		if info.Format != "qcow2" || info.Backing != base || info.BackingFormat != "raw" || info.VirtualSize != int64(len(before)) {
			t.Errorf("vm %s overlay = %+v, want qcow2 backed onto %s (raw, %d bytes)", name, info, base, len(before))
		}
		info.Backing = ""
		out, err = runTool(ctx, qemuImgBinary, "info", "--output=json", p.install)
		if err != nil || json.Unmarshal(out, &info) != nil {
			t.Fatalf("qemu-img info %s: %v: %s", p.install, err, out)
		}
		if info.Format != "qcow2" || info.VirtualSize != 3<<20 || info.Backing != "" {
			t.Errorf("vm %s install disk = %+v, want a blank 3 MiB qcow2", name, info)
		}
	}
	if after, _ := os.ReadFile(base); !bytes.Equal(after, before) {
		t.Error("the base image changed")
	}
}

// needOVMF returns the firmware, failing under CI=true without it.
func needOVMF(t *testing.T) Firmware {
	t.Helper()
	fw, err := FindOVMF()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("OVMF is required when CI=true: %v", err)
		}
		t.Skipf("%v; CI=true makes this a failure", err)
	}
	return fw
}
