package factoryimage

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The rootfs layer: Debian 12 by mmdebstrap, shared by both images.

//go:embed customize.sh
var customizeScript []byte

// packages are what the rootfs installs beyond apt's variant (Essential
// packages and apt). passwd has useradd, which Ignition's passwd stage
// runs; libblkid1 is the library ignition links; zstd compresses the
// initramfs.
var packages = []string{
	"systemd", "systemd-sysv", "udev", "dbus", "network-manager",
	"linux-image-amd64", "initramfs-tools", "zstd", "systemd-boot-efi", "efibootmgr",
	"qemu-guest-agent", "iproute2", "iputils-ping", "e2fsprogs", "dosfstools", "gdisk",
	"util-linux", "kmod", "procps", "passwd", "libblkid1",
}

// keepModules are the kernel modules kept (with what they load): virtio
// disks, NICs, console (the guest agent's channel), SCSI disks and CD-ROMs
// (the config image), ISO 9660, FAT (the ESP, efibootmgr), ext4, efivarfs,
// the bonding, VLAN and bridge drivers NetworkManager's keyfiles need,
// autofs4 (systemd loads it at boot), and a few common emulated
// controllers.
var keepModules = []string{
	"virtio_pci", "virtio_blk", "virtio_scsi", "virtio_net", "virtio_console",
	"virtio_balloon", "virtio_rng", "sd_mod", "sr_mod", "isofs", "vfat",
	"nls_cp437", "nls_ascii", "nls_utf8", "nls_iso8859_1", "ext4",
	"crc32c_generic", "crc32c_intel", "efivarfs", "bonding", "8021q", "bridge",
	"autofs4", "e1000e", "ahci", "nvme", "qemu_fw_cfg", "loop",
}

// dpkgExcludes keep documentation, manuals and translations out (each
// package's copyright stays).
var dpkgExcludes = []string{
	"path-exclude=/usr/share/man/*",
	"path-exclude=/usr/share/doc/*",
	"path-include=/usr/share/doc/*/copyright",
	"path-exclude=/usr/share/locale/*",
	"path-exclude=/usr/share/info/*",
	"path-exclude=/usr/share/lintian/*",
}

// setupHook writes the initramfs settings before the kernel's package
// builds its first initramfs (customize.sh rebuilds it with the module
// list), so that first one is small and quick too.
const setupHook = `mkdir -p "$1/etc/initramfs-tools/conf.d" && printf 'MODULES=list\nCOMPRESS=zstd\n' >"$1/etc/initramfs-tools/conf.d/nodezero.conf"`

// sources are the three archive lines: the release, its updates and its
// security updates.
func (o *resolved) sources() []string {
	return []string{
		fmt.Sprintf("deb %s %s main", o.Mirror, Suite),
		fmt.Sprintf("deb %s %s-updates main", o.Mirror, Suite),
		fmt.Sprintf("deb %s %s-security main", o.SecurityMirror, Suite),
	}
}

// rootfsKey hashes what the rootfs is made of. The archive's content is
// not an input (it changes with every point release): a cached rootfs is
// kept until the cache entry is removed or an input here changes.
func rootfsKey(o *resolved) string {
	k := newKey(LayerRootfs)
	k.add("suite", Suite)
	k.add("sources", strings.Join(o.sources(), "\n"))
	k.add("packages", strings.Join(packages, ","))
	k.add("modules", strings.Join(keepModules, ","))
	k.add("dpkg", strings.Join(dpkgExcludes, "\n"))
	k.add("setup-hook", setupHook)
	k.add("customize.sh", string(customizeScript))
	k.add("epoch", strconv.FormatInt(o.SourceDateEpoch, 10))
	return k.sum()
}

// rootfsTree is the tree inside a rootfs entry.
const rootfsTree = "tree"

// buildRootfs runs mmdebstrap into the entry and clamps every timestamp.
func buildRootfs(ctx context.Context, o *resolved, e *entry) error {
	script := e.path("customize.sh")
	if err := os.WriteFile(script, customizeScript, 0o755); err != nil {
		return err
	}
	defer os.Remove(script)
	args := []string{
		"--mode=root", "--variant=apt", "--format=directory",
		"--include=" + strings.Join(packages, ","),
	}
	for _, x := range dpkgExcludes {
		args = append(args, "--dpkgopt="+x)
	}
	args = append(args,
		"--setup-hook="+setupHook,
		fmt.Sprintf("--customize-hook=sh %s \"$1\" %s", shellQuote(script), strings.Join(keepModules, " ")),
		Suite, e.path(rootfsTree))
	args = append(args, o.sources()...)
	env := []string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(o.SourceDateEpoch, 10)}
	if err := run(ctx, o.Log, env, "mmdebstrap", args...); err != nil {
		return err
	}
	return clamp(e.path(rootfsTree), o.epoch)
}

// clamp sets every mtime later than epoch to epoch (SOURCE_DATE_EPOCH's
// rule), links included; atime goes along.
func clamp(tree string, epoch time.Time) error {
	var dirs []string
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Directories last, deepest first: fixing an entry inside
			// would not change a directory's mtime, but be plain about it.
			dirs = append(dirs, p)
			return nil
		}
		return clampOne(p, epoch)
	})
	if err != nil {
		return fmt.Errorf("clamp times in %s: %w", tree, err)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := clampOne(dirs[i], epoch); err != nil {
			return fmt.Errorf("clamp times in %s: %w", tree, err)
		}
	}
	return nil
}

func clampOne(p string, epoch time.Time) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !st.ModTime().After(epoch) {
		return nil
	}
	return lchtimes(p, epoch)
}

// run runs a program with the environment plus env, its output going to
// log; a failure's error carries the command and the end of its output.
func run(ctx context.Context, log io.Writer, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	// Cancelled, a program gets SIGTERM and time to clean up (mmdebstrap
	// unmounts what it mounted in the tree), then SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	tail := &tailBuffer{max: 4 << 10}
	cmd.Stdout = io.MultiWriter(log, tail)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, strings.TrimSpace(tail.String()))
	}
	return nil
}

// output runs a program and returns its standard output; a failure's error
// carries its standard error.
func output(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
