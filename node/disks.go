package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DiskFiles is the hardware edge of a host read from a hardware tree (a
// test or sandbox host): the block devices the service names — /dev/sda,
// /dev/disk/by-id/wwn-… — are resolved inside the tree, and a file in Dir,
// named after the kernel name, stands in for each. The disk speed check
// and the installer write to those files instead of a real disk. A zero
// DiskFiles (no Dir) has no disks to write.
type DiskFiles struct {
	HardwareRoot string // the hardware tree the inventory was read from
	Dir          string // where the stand-in files live
}

// Path returns the file standing in for dev, created empty when missing.
// dev must be a /dev path that leads, inside the tree, to a disk the tree
// lists under /sys/block.
func (d DiskFiles) Path(dev string) (string, error) {
	if d.Dir == "" {
		return "", fmt.Errorf("no disk for %s: the hardware is read from %s; give the agent --disks DIR for files standing in for its disks", dev, d.HardwareRoot)
	}
	clean := filepath.Clean(dev)
	if !strings.HasPrefix(clean, "/dev/") {
		return "", fmt.Errorf("disk %q: not a /dev path", dev)
	}
	devDir := filepath.Join(d.HardwareRoot, "dev")
	real, err := filepath.EvalSymlinks(filepath.Join(d.HardwareRoot, clean))
	if err != nil {
		return "", fmt.Errorf("disk %s in %s: %w", dev, d.HardwareRoot, err)
	}
	// A link must stay in the tree: an absolute target would name this
	// machine's own devices.
	if absDev, err := filepath.EvalSymlinks(devDir); err != nil || !strings.HasPrefix(real, absDev+string(filepath.Separator)) {
		return "", fmt.Errorf("disk %s in %s leads outside the tree's /dev (to %s)", dev, d.HardwareRoot, real)
	}
	name := filepath.Base(real)
	if _, err := os.Stat(filepath.Join(d.HardwareRoot, "sys/block", name)); err != nil {
		return "", fmt.Errorf("disk %s (%s): not a disk of %s: %w", dev, name, d.HardwareRoot, err)
	}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(d.Dir, name)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return p, nil // kept as it is: a disk keeps what was written to it
	}
	if err != nil {
		return "", err
	}
	// A new stand-in is a sparse file as large as the disk the tree
	// describes (/sys/block/<name>/size, 512-byte sectors).
	if b, rerr := os.ReadFile(filepath.Join(d.HardwareRoot, "sys/block", name, "size")); rerr == nil {
		if sectors, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); perr == nil && sectors > 0 {
			err = f.Truncate(sectors * 512)
		}
	}
	return p, errors.Join(err, f.Close())
}
