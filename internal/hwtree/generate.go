// Package hwtree writes the synthetic hardware trees that the inventory
// tests and the sandbox's hosts read instead of a real machine.
//
// Each tree is a plain directory laid out like the parts of /proc, /sys, /run
// and /dev that hostagent/inventory and ghw read (a ghw chroot). Trees are
// small (a few KB) and deterministic. The copies committed under
// testdata/hw are regenerated with
//
//	go generate ./hostagent/inventory
//
// (its command hwgen calls Generate); the sandbox writes the trees it needs
// at start (Write), so the one binary needs no checkout. They are written,
// not embedded: go:embed holds no symlinks, and sysfs is made of them.
//
// hwtree imports nothing of this module.
package hwtree

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Names returns the name of every tree, in the order Generate writes them.
func Names() []string {
	var out []string
	for _, h := range hosts() {
		out = append(out, h.name)
	}
	return out
}

// Generate replaces out/<host> for every host and rewrites out/README.md.
// Directories of hosts that are not in the list are left alone.
func Generate(out string) error { return generate(out, hosts()) }

// Write replaces out/<name> with the named trees only (no README): what a
// sandbox needs of them. An unknown name is an error naming the known ones.
func Write(out string, names ...string) error {
	all := hosts()
	var hs []host
	for _, n := range names {
		if h, ok := extraWorkerNamed(n); ok {
			hs = append(hs, h)
			continue
		}
		i := slices.IndexFunc(all, func(h host) bool { return h.name == n })
		if i < 0 {
			return fmt.Errorf("hardware tree %q: no such host (have %s, and %s0 to %s%d)", n, strings.Join(Names(), ", "), ExtraWorkerPrefix, ExtraWorkerPrefix, maxExtraWorkers-1)
		}
		hs = append(hs, all[i])
	}
	return writeTrees(out, hs)
}

// generate replaces out/<host> for every host and rewrites out/README.md.
// Directories of hosts that are not in the list are left alone.
func generate(out string, hs []host) error {
	if err := writeTrees(out, hs); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "README.md"), []byte(readme(hs)), 0o644)
}

// writeTrees replaces out/<host> for every host of hs.
func writeTrees(out string, hs []host) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	for _, h := range hs {
		dir := filepath.Join(out, h.name)
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove old tree %s: %w", h.name, err)
		}
		t := &tree{root: dir}
		h.write(t)
		if t.err != nil {
			return fmt.Errorf("write tree %s: %w", h.name, t.err)
		}
	}
	return nil
}

// tree writes files and symlinks under root and remembers the first error,
// so that the host description reads as a list of paths.
type tree struct {
	root string
	err  error
}

func (t *tree) file(rel, content string) {
	if t.err != nil {
		return
	}
	p := filepath.Join(t.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.err = err
		return
	}
	t.err = os.WriteFile(p, []byte(content), 0o644)
}

// line writes content followed by a newline, as sysfs attributes read.
func (t *tree) line(rel, content string) { t.file(rel, content+"\n") }

// link creates rel as a symlink to target (relative, as in sysfs and
// /dev/disk, so the tree stays valid wherever it is checked out).
func (t *tree) link(rel, target string) {
	if t.err != nil {
		return
	}
	p := filepath.Join(t.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.err = err
		return
	}
	t.err = os.Symlink(target, p)
}

func readme(hs []host) string {
	var b strings.Builder
	b.WriteString(`# Synthetic hardware trees

Each directory is the root of one test host: the files under proc/, sys/, run/ and dev/ that
hostagent/inventory (and github.com/jaypipes/ghw with WithChroot / GHW_CHROOT) read on a real
machine. Pass a directory as inventory.Options.Root. The trees are generated; do not edit them
by hand. Change internal/hwtree and run

    go generate ./hostagent/inventory

Default hardware requirements (daemon/validation/default_hw_requirements.json here): master 4 cores,
16 GiB, 100 GB disk; worker 2 cores, 8 GiB, 100 GB disk.

| host | CPUs | RAM | disks | purpose |
|---|---|---|---|---|
`)
	for _, h := range hs {
		var disks []string
		for _, d := range h.disks {
			disks = append(disks, d.summary())
		}
		fmt.Fprintf(&b, "| %s | %d | %d GiB | %s | %s |\n",
			h.name, h.cpu.count, h.memGiB, strings.Join(disks, ", "), h.purpose)
	}
	b.WriteString(`
What every tree holds: proc/cpuinfo (ending in a blank line, which ghw needs), proc/meminfo,
proc/cmdline, proc/self/mounts, sys/devices/system/cpu/cpuN, sys/devices/system/memory blocks,
sys/block/<dev>/{size,removable,dev,queue/rotational,device/vendor}, run/udev/data/b<maj:min>
(ID_MODEL, ID_SERIAL_SHORT, ID_WWN, ID_PATH), sys/class/dmi/id/*, and sys/class/net/<nic> as a
symlink into sys/devices (a NIC is physical when that path is not under devices/virtual, the
agent's rule), with address, mtu, operstate, carrier, speed, type, flags and ifindex. dev/<disk>
exists so a disk's path is /dev/<disk>; dev/disk/by-path and dev/disk/by-id hold the udev links.
`)
	return b.String()
}
