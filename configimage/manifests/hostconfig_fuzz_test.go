package manifests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzHostConfig reads a host config directory with any mac_addresses,
// role and root-device-hints.yaml (the config image carries them to every
// host). Hints that do not parse are an error naming the file; what is
// accepted is written out by WriteHostConfigs and reads back the same.
func FuzzHostConfig(f *testing.F) {
	f.Add("52:54:00:AA:BB:01\n52:54:00:aa:bb:02\n", "master", []byte("deviceName: /dev/sda\nminSizeGigabytes: 600\nrotational: true\n"))
	f.Add("52:54:00:aa:bb:03", "", []byte(nil))
	f.Add(" \n\n", "worker\n", []byte("hctl: \"0:0:0:0\"\nwwn: \"0x5000c500\"\nwwnWithExtension: x\nwwnVendorExtension: y\nmodel: m\nvendor: v\nserialNumber: s\n"))
	f.Add("52:54:00:aa:bb:04\n", "arbiter", []byte("{}"))
	f.Add("52:54:00:aa:bb:05\n", "master", []byte("deviceName: /dev/sda\nbogus: 1\n"))
	f.Add("52:54:00:aa:bb:06\n", "master", []byte("rotational: maybe\n"))
	f.Add("52:54:00:aa:bb:07\n", "master", []byte("minSizeGigabytes: 99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, macs, role string, hints []byte) {
		dir := memTempDir(t)
		host := filepath.Join(dir, "master-0")
		write := func(name string, data []byte) {
			if err := os.MkdirAll(host, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(host, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(MACAddressesFile, []byte(macs))
		if role != "" {
			write(RoleFile, []byte(role))
		}
		if hints != nil {
			write(RootDeviceHintsFile, hints)
		}
		got, err := LoadHostConfigs(dir)
		if err != nil {
			if _, perr := ParseRootDeviceHints(hints); hints == nil || perr == nil {
				t.Fatalf("LoadHostConfigs: %v, though the hints parse", err)
			}
			if !strings.Contains(err.Error(), filepath.Join(host, RootDeviceHintsFile)+": ") {
				t.Fatalf("LoadHostConfigs: error %q does not name the hints file", err)
			}
			return
		}
		if len(got) != 1 || got[0].Name != "master-0" {
			t.Fatalf("LoadHostConfigs = %+v, want master-0 alone", got)
		}
		for _, m := range got[0].MACs {
			if m == "" || m != strings.ToLower(strings.TrimSpace(m)) || strings.Contains(m, "\n") {
				t.Fatalf("LoadHostConfigs(%q) kept MAC %q", macs, m)
			}
		}
		if r := got[0].Role; r != strings.TrimSpace(r) {
			t.Fatalf("LoadHostConfigs kept role %q untrimmed", r)
		}
		out := memTempDir(t)
		if err := WriteHostConfigs(out, got); err != nil {
			t.Fatalf("WriteHostConfigs of a loaded config: %v", err)
		}
		again, err := LoadHostConfigs(out)
		if err != nil {
			t.Fatalf("LoadHostConfigs of what WriteHostConfigs wrote: %v", err)
		}
		// Hints that say nothing are not written: nil and empty are alike.
		noHints := cmp.Comparer(func(a, b *RootDeviceHints) bool {
			return a.Empty() && b.Empty() || !a.Empty() && !b.Empty() && cmp.Equal(*a, *b)
		})
		if diff := cmp.Diff(got, again, noHints); diff != "" {
			t.Fatalf("host config written and read again differs (-loaded +again):\n%s", diff)
		}
	})
}

// memTempDir is a temporary directory in memory (/dev/shm) when the
// machine has one: WriteHostConfigs fsyncs what it writes, which on a busy
// disk would cost the campaign most of its inputs.
func memTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "nodezero-fuzz-")
	if errors.Is(err, os.ErrNotExist) {
		return t.TempDir()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
