package inventory

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// fuzzHardwareFiles are the files of a hardware tree FuzzCollect replaces,
// one per input: what the agent parses itself and what it reads through
// ghw.
var fuzzHardwareFiles = []string{
	"proc/cpuinfo",
	"proc/meminfo",
	"proc/cmdline",
	"proc/self/mounts",
	"proc/net/route",
	"proc/net/ipv6_route",
	"sys/block/sda/size",
	"sys/block/sda/queue/rotational",
	"sys/block/sda/device/vpd_pg83",
	"sys/block/nvme0n1/wwid",
	"run/udev/data/b8:0",
	"sys/class/dmi/id/product_uuid",
	"sys/class/dmi/id/board_serial",
	"sys/class/tpm/tpm0/tpm_version_major",
	"sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
	"sys/devices/pci0000:00/0000:31:00.0/net/eno1/address",
	"sys/devices/pci0000:00/0000:31:00.0/net/eno1/flags",
	"sys/devices/pci0000:00/0000:31:00.0/net/eno1/mtu",
	"sys/devices/pci0000:00/0000:31:00.0/net/eno1/speed",
	"sys/devices/pci0000:00/0000:03:00.0/class",
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// FuzzCollect collects the inventory of master-0's hardware tree with one
// of its files replaced by any bytes: the agent reads /proc and /sys of
// machines nobody has seen. Collect and HostID succeed (a file that does
// not parse costs its section, not the inventory), the inventory encodes
// as JSON, its counts and sizes are not negative, and the host ID is a
// UUID.
func FuzzCollect(f *testing.F) {
	src := hwTree(f, "master-0")
	for i, p := range fuzzHardwareFiles {
		b, err := os.ReadFile(filepath.Join(src, p))
		if err != nil {
			b = nil // not in this tree: the input creates it
		}
		f.Add(uint8(i), b)
	}
	f.Add(uint8(1), []byte("MemTotal: 9223372036854775807 kB\n"))
	f.Add(uint8(4), []byte("Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\nens3\t00000000\t0101A8C0\t0003\t0\t0\t100\t00000000\n"))
	f.Add(uint8(6), []byte("99999999999999999999\n"))
	root := copyTree(f, src)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		p := filepath.Join(root, fuzzHardwareFiles[int(which)%len(fuzzHardwareFiles)])
		old, err := os.ReadFile(p)
		existed := err == nil
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if existed {
				err = os.WriteFile(p, old, 0o644)
			} else {
				err = os.Remove(p)
			}
			if err != nil {
				t.Fatal(err)
			}
		}()
		o := Options{Root: root, Hostname: "master-0"}
		inv, err := Collect(context.Background(), o)
		if err != nil {
			t.Fatalf("Collect: %v", err)
		}
		if _, err := json.Marshal(inv); err != nil {
			t.Fatalf("inventory does not encode: %v", err)
		}
		if inv.CPU == nil || inv.CPU.Count < 0 || inv.CPU.Frequency < 0 {
			t.Fatalf("cpu %+v", inv.CPU)
		}
		if inv.Memory == nil || inv.Memory.PhysicalBytes < 0 || inv.Memory.UsableBytes < 0 {
			t.Fatalf("memory %+v", inv.Memory)
		}
		for _, d := range inv.Disks {
			if d == nil || d.SizeBytes < 0 {
				t.Fatalf("disk %+v", d)
			}
		}
		for _, i := range inv.Interfaces {
			// A link that is down reports speed -1, and the agent passes
			// it on.
			if i == nil || i.MTU < 0 || i.SpeedMbps < -1 {
				t.Fatalf("interface %+v", i)
			}
		}
		id, err := HostID(o)
		if err != nil || !uuidRE.MatchString(id) {
			t.Fatalf("HostID = %q, %v", id, err)
		}
	})
}

// copyTree copies a hardware tree, symlinks as symlinks, to a temporary
// directory (in memory when the machine has /dev/shm).
func copyTree(tb testing.TB, src string) string {
	tb.Helper()
	parent := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		parent = "/dev/shm"
	}
	dst, err := os.MkdirTemp(parent, "nodezero-hw-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dst) })
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dst
}
