package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHostConfigsRoundTrip(t *testing.T) {
	yes := true
	want := []HostConfig{
		{Name: "master-0", MACs: []string{"52:54:00:aa:bb:01", "52:54:00:aa:bb:02"}, Role: "master",
			Hints: &RootDeviceHints{DeviceName: "/dev/sda", MinSizeGigabytes: 600, Rotational: &yes}},
		{Name: "worker-0", MACs: []string{"52:54:00:aa:bb:03"}},
	}
	dir := t.TempDir()
	if err := WriteHostConfigs(dir, want); err != nil {
		t.Fatalf("WriteHostConfigs: %v", err)
	}
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := map[string]string{
		"master-0/mac_addresses":          "52:54:00:aa:bb:01\n52:54:00:aa:bb:02\n",
		"master-0/role":                   "master",
		"master-0/root-device-hints.yaml": "deviceName: /dev/sda\nminSizeGigabytes: 600\nrotational: true\n",
		"worker-0/mac_addresses":          "52:54:00:aa:bb:03\n",
	}
	if diff := cmp.Diff(wantFiles, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	// Upper-case MACs and a directory without mac_addresses are read the
	// way the client reads them.
	if err := os.WriteFile(filepath.Join(dir, "worker-0", MACAddressesFile), []byte("52:54:00:AA:BB:03\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "stray"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := LoadHostConfigs(dir)
	if err != nil {
		t.Fatalf("LoadHostConfigs: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadHostConfigs(WriteHostConfigs(x)) (-want +got):\n%s", diff)
	}
	if got, err := LoadHostConfigs(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("LoadHostConfigs(missing dir) = %v, %v; want nothing", got, err)
	}
}

func TestParseRootDeviceHintsStrict(t *testing.T) {
	if _, err := ParseRootDeviceHints([]byte("deviceName: /dev/sda\nsize: 10\n")); err == nil || !strings.Contains(err.Error(), "size") {
		t.Errorf("ParseRootDeviceHints(unknown key): got %v, want an error naming it", err)
	}
	h, err := ParseRootDeviceHints(nil)
	if err != nil || !h.Empty() || h.String() != "none" {
		t.Errorf("ParseRootDeviceHints(empty) = %+v, %v; want empty hints", h, err)
	}
}
