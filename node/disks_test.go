package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/node"
)

// TestDiskFiles: a disk named by its by-id link in a hardware tree gets a
// file named after its kernel name; paths that are not disks of the tree,
// or lead out of it, are refused; without a directory there are no disks.
func TestDiskFiles(t *testing.T) {
	hw, err := filepath.Abs(filepath.Join("..", "testdata", "hw", "master-0"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "disks")
	d := node.DiskFiles{HardwareRoot: hw, Dir: dir}
	for _, dev := range []string{"/dev/disk/by-id/wwn-0x5000c5004a1b0000", "/dev/sda", "/dev/../dev/sda"} {
		p, err := d.Path(dev)
		if err != nil || p != filepath.Join(dir, "sda") {
			t.Errorf("Path(%s) = %q, %v; want %s", dev, p, err, filepath.Join(dir, "sda"))
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "sda")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("stand-in file: %v %v", fi, err)
	}

	// A tree whose link points at the machine's own /dev.
	evil := t.TempDir()
	if err := os.MkdirAll(filepath.Join(evil, "dev/disk/by-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/null", filepath.Join(evil, "dev/disk/by-id/wwn-0x1")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		d    node.DiskFiles
		dev  string
		want string
	}{
		{d, "/etc/passwd", "not a /dev path"},
		{d, "/dev/sdq", "no such file"},
		{d, "/dev/disk", "not a disk of"},
		{node.DiskFiles{HardwareRoot: evil, Dir: dir}, "/dev/disk/by-id/wwn-0x1", "leads outside the tree"},
		{node.DiskFiles{HardwareRoot: hw}, "/dev/sda", "give the agent --disks DIR"},
	} {
		if p, err := tc.d.Path(tc.dev); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Path(%s) in %s = %q, %v; want an error with %q", tc.dev, tc.d.HardwareRoot, p, err, tc.want)
		}
	}
}
