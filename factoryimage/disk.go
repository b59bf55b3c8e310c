package factoryimage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A bootable GPT disk made from a stage without loop devices or mounts
// (docs/reference/vm-testbed-facts.md, step 2): the ESP by mkfs.vfat and
// mtools, the root by mkfs.ext4 -d, the table by sgdisk, each filesystem
// copied into place sparsely.

// Partition layout, in 512-byte sectors: the ESP at 1 MiB, everything
// MiB-aligned, 1 MiB left at the end for the backup table.
const (
	sector        = 512
	mib           = 1 << 20
	espSize       = 64 * mib
	ignitionSize  = 1 * mib
	ignitionLabel = "ignition" // the partition name the installer looks for
	espName       = "EFI-SYSTEM"
	rootName      = "root"
	// EFILoader is where the ESP holds systemd-boot: the removable-media
	// path every UEFI firmware boots without a boot entry.
	EFILoader = `\EFI\BOOT\BOOTX64.EFI`
)

// diskSpec says what makeDisk makes.
type diskSpec struct {
	key       string // seeds every GUID, UUID and seed
	stage     *stage
	rootLabel string // the root filesystem's label
	// headroom is free space beyond the 20 % makeDisk leaves.
	headroom int64
	// ignition adds a 1 MiB partition named "ignition", all zeros.
	ignition bool
	title    string // the boot entry's title
	work     string // scratch folder (removed by the caller)
	out      string // the raw disk file
}

// diskLayout is what makeDisk made.
type diskLayout struct {
	Size     int64
	DiskGUID string
	RootGUID string // the root partition's unique GUID (root=PARTUUID=)
	FSUUID   string // the root filesystem's UUID
}

// guid derives a stable version-4-shaped GUID for name from a key: the
// same inputs give the same disk, and two layers' disks never share one.
func guid(key, name string) string {
	h := sha256.Sum256([]byte(key + "\x00" + name))
	b := h[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%X-%X-%X-%X-%X", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func makeDisk(ctx context.Context, o *resolved, s diskSpec) (*diskLayout, error) {
	kernel, initrd, err := bootFiles(s.stage)
	if err != nil {
		return nil, err
	}
	l := &diskLayout{
		DiskGUID: guid(s.key, "disk"),
		RootGUID: guid(s.key, "root-partition"),
		FSUUID:   strings.ToLower(guid(s.key, "root-filesystem")),
	}
	// The ESP.
	esp := filepath.Join(s.work, "esp.img")
	opts := fmt.Sprintf("root=PARTUUID=%s rw console=ttyS0,115200", strings.ToLower(l.RootGUID))
	if err := makeESP(ctx, o, s, esp, kernel, initrd, opts); err != nil {
		return nil, fmt.Errorf("ESP: %w", err)
	}
	// The root filesystem.
	root := filepath.Join(s.work, "root.img")
	rootSize, err := makeExt4(ctx, o, s, root, l.FSUUID)
	if err != nil {
		return nil, fmt.Errorf("root filesystem: %w", err)
	}
	// The table, then the filesystems into place.
	start := int64(mib)
	parts := []struct {
		name, typ, guid string
		size            int64
		src             string
	}{
		{espName, "ef00", guid(s.key, "esp-partition"), espSize, esp},
		{rootName, "8304", l.RootGUID, rootSize, root},
	}
	if s.ignition {
		parts = append(parts, struct {
			name, typ, guid string
			size            int64
			src             string
		}{ignitionLabel, "8300", guid(s.key, "ignition-partition"), ignitionSize, ""})
	}
	l.Size = start + mib
	for _, p := range parts {
		l.Size += p.size
	}
	if err := createSparse(s.out, l.Size); err != nil {
		return nil, err
	}
	args := []string{"-U", l.DiskGUID}
	off := start
	for i, p := range parts {
		n := strconv.Itoa(i + 1)
		args = append(args,
			"-n", fmt.Sprintf("%s:%d:%d", n, off/sector, (off+p.size)/sector-1),
			"-t", n+":"+p.typ, "-c", n+":"+p.name, "-u", n+":"+p.guid)
		off += p.size
	}
	// Not -q: gdisk 1.0.9's sgdisk -q silently creates no partitions
	// (docs/reference/vm-testbed-facts.md, step 2).
	if err := run(ctx, o.Log, nil, "sgdisk", append(args, s.out)...); err != nil {
		return nil, err
	}
	off = start
	for _, p := range parts {
		if p.src != "" {
			if err := copySparse(s.out, off, p.src); err != nil {
				return nil, err
			}
		}
		off += p.size
	}
	return l, nil
}

// bootFiles finds the stage's one kernel and its initramfs.
func bootFiles(s *stage) (kernel, initrd string, err error) {
	ks, _ := filepath.Glob(s.path("boot/vmlinuz-*"))
	if len(ks) != 1 {
		return "", "", fmt.Errorf("want one kernel in %s, found %d", s.path("boot"), len(ks))
	}
	ver := strings.TrimPrefix(filepath.Base(ks[0]), "vmlinuz-")
	initrd = s.path("boot/initrd.img-" + ver)
	if _, err := os.Stat(initrd); err != nil {
		return "", "", fmt.Errorf("kernel %s has no initramfs: %w", ver, err)
	}
	return ks[0], initrd, nil
}

// makeESP makes a FAT32 ESP holding systemd-boot at the removable-media
// path, the kernel, the initramfs and one boot entry (Boot Loader
// Specification type 1) that boots at once.
func makeESP(ctx context.Context, o *resolved, s diskSpec, img, kernel, initrd, options string) error {
	files := map[string][]byte{
		"loader.conf": []byte("timeout 0\neditor no\ndefault nodezero.conf\n"),
		"nodezero.conf": fmt.Appendf(nil, "title %s\nlinux /vmlinuz\ninitrd /initrd.img\noptions %s\n",
			s.title, options),
	}
	for name, b := range files {
		p := filepath.Join(s.work, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		if err := lchtimes(p, o.epoch); err != nil {
			return err
		}
	}
	volid := guid(s.key, "esp-filesystem")[:8]
	if err := run(ctx, o.Log, nil, "mkfs.vfat", "-C", "-F", "32", "-n", "EFI-SYSTEM", "--invariant", "-i", volid, img,
		strconv.Itoa(espSize/1024)); err != nil {
		return err
	}
	// mtools stamps what it creates with SOURCE_DATE_EPOCH, and copies
	// with -m keep the source's (clamped) mtime.
	env := []string{"SOURCE_DATE_EPOCH=" + strconv.FormatInt(o.SourceDateEpoch, 10), "MTOOLS_SKIP_CHECK=1"}
	if err := run(ctx, o.Log, env, "mmd", "-i", img, "::/EFI", "::/EFI/BOOT", "::/loader", "::/loader/entries"); err != nil {
		return err
	}
	for _, c := range []struct{ src, dst string }{
		{s.stage.path("usr/lib/systemd/boot/efi/systemd-bootx64.efi"), "::/EFI/BOOT/BOOTX64.EFI"},
		{kernel, "::/vmlinuz"},
		{initrd, "::/initrd.img"},
		{filepath.Join(s.work, "loader.conf"), "::/loader/loader.conf"},
		{filepath.Join(s.work, "nodezero.conf"), "::/loader/entries/nodezero.conf"},
	} {
		if err := run(ctx, o.Log, env, "mcopy", "-m", "-i", img, c.src, c.dst); err != nil {
			return err
		}
	}
	return nil
}

// makeExt4 makes the root filesystem from the stage, sized to its content
// plus 20 % plus the headroom, and gives every inode the epoch's access
// and change times. It returns the filesystem's size.
func makeExt4(ctx context.Context, o *resolved, s diskSpec, img, uuid string) (int64, error) {
	content, inodes, err := measure(s.stage.dir)
	if err != nil {
		return 0, err
	}
	inodes = inodes*5/4 + 1024
	// 20 % over the content, the inode tables, a 16 MiB journal, and
	// room for the rest of ext4's metadata.
	size := content*6/5 + inodes*256 + 16*mib + 16*mib + s.headroom
	size = (size + mib - 1) / mib * mib
	if err := createSparse(img, size); err != nil {
		return 0, err
	}
	env := []string{
		"E2FSPROGS_FAKE_TIME=" + strconv.FormatInt(o.SourceDateEpoch, 10),
		"SOURCE_DATE_EPOCH=" + strconv.FormatInt(o.SourceDateEpoch, 10),
	}
	hashSeed := strings.ToLower(guid(s.key, "root-hash-seed"))
	if err := run(ctx, o.Log, env, "mkfs.ext4", "-q", "-F", "-L", s.rootLabel, "-U", uuid,
		"-E", "hash_seed="+hashSeed+",root_owner=0:0", "-N", strconv.FormatInt(inodes, 10),
		"-m", "0", "-J", "size=16", "-d", s.stage.dir, img); err != nil {
		return 0, err
	}
	if err := fixInodeTimes(ctx, o, s.work, img, env); err != nil {
		return 0, err
	}
	return size, nil
}

// measure sums a tree's regular files and folders in 4 KiB blocks and
// counts its inodes (hard links once).
func measure(tree string) (size, inodes int64, err error) {
	seen := map[uint64]bool{}
	err = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if ino, ok := inodeOf(info); ok {
			if seen[ino] {
				return nil
			}
			seen[ino] = true
		}
		inodes++
		switch {
		case d.IsDir():
			size += 4096
		case info.Mode().IsRegular():
			size += (info.Size() + 4095) / 4096 * 4096
		case info.Mode()&fs.ModeSymlink != 0 && info.Size() >= 60:
			size += 4096 // a link too long for the inode gets a block
		}
		return nil
	})
	return size, inodes, err
}

// fixInodeTimes gives every used inode of an ext4 image the epoch as its
// access and change time: mkfs.ext4 -d copies them from the stage (e2fsprogs
// 1.47.0 honours E2FSPROGS_FAKE_TIME only for what it stamps itself), and
// the kernel sets a file's ctime to the moment it was last touched, which
// no one can set back. debugfs edits the image in place.
func fixInodeTimes(ctx context.Context, o *resolved, work, img string, env []string) error {
	dump, err := output(ctx, env, "dumpe2fs", img)
	if err != nil {
		return err
	}
	used, err := usedInodes(dump)
	if err != nil {
		return fmt.Errorf("dumpe2fs %s: %w", img, err)
	}
	var b bytes.Buffer
	at := "@" + strconv.FormatInt(o.SourceDateEpoch, 10)
	for _, ino := range used {
		fmt.Fprintf(&b, "sif <%d> atime %s\nsif <%d> ctime %s\n", ino, at, ino, at)
	}
	cmds := filepath.Join(work, "debugfs-times")
	if err := os.WriteFile(cmds, b.Bytes(), 0o644); err != nil {
		return err
	}
	out, err := output(ctx, env, "debugfs", "-w", "-f", cmds, img)
	if err != nil {
		return err
	}
	// debugfs reports a failed command on standard output and exits 0.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "sif:") || strings.HasPrefix(line, "set_inode_field:") {
			return fmt.Errorf("debugfs %s: %s", img, line)
		}
	}
	return nil
}

// usedInodes reads dumpe2fs's output: the inodes per group and each
// group's free inode ranges, and lists the inodes in use that hold files
// (the root folder and those from the first non-reserved inode on).
func usedInodes(dump []byte) ([]int64, error) {
	var ipg, first int64
	var groups [][]string // each group's free ranges
	for _, line := range strings.Split(string(dump), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "Inodes per group:"):
			ipg, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(t, "Inodes per group:")), 10, 64)
		case strings.HasPrefix(t, "First inode:"):
			first, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(t, "First inode:")), 10, 64)
		case groupLine.MatchString(line):
			groups = append(groups, nil)
		case strings.HasPrefix(t, "Free inodes:") && len(groups) > 0:
			rest := strings.TrimSpace(strings.TrimPrefix(t, "Free inodes:"))
			if rest != "" {
				groups[len(groups)-1] = strings.Split(rest, ", ")
			}
		}
	}
	if ipg <= 0 || first <= 0 || len(groups) == 0 {
		return nil, errors.New("no inode counts or groups in its output")
	}
	var used []int64
	for g, ranges := range groups {
		lo, hi := int64(g)*ipg+1, int64(g+1)*ipg
		free := make([]bool, ipg)
		for _, r := range ranges {
			a, b, found := strings.Cut(r, "-")
			if !found {
				b = a
			}
			x, err1 := strconv.ParseInt(a, 10, 64)
			y, err2 := strconv.ParseInt(b, 10, 64)
			if err1 != nil || err2 != nil || x < lo || y > hi || x > y {
				return nil, fmt.Errorf("group %d: bad free inode range %q", g, r)
			}
			for i := x; i <= y; i++ {
				free[i-lo] = true
			}
		}
		for i := lo; i <= hi; i++ {
			if !free[i-lo] && (i == 2 || i >= first) {
				used = append(used, i)
			}
		}
	}
	return used, nil
}

// groupLine starts a group's lines in dumpe2fs's output (unlike the
// header's "Group descriptor size:").
var groupLine = regexp.MustCompile(`^Group [0-9]+: `)

// createSparse makes path an empty (all holes) file of size bytes.
func createSparse(path string, size int64) error {
	os.Remove(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// copySparse writes the file src into dst at off, skipping blocks of zeros
// (dst is all holes there, so they stay holes).
func copySparse(dst string, off int64, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	buf := make([]byte, 64<<10)
	zero := make([]byte, len(buf))
	pos := off
	for {
		n, err := io.ReadFull(in, buf)
		if n > 0 && !bytes.Equal(buf[:n], zero[:n]) {
			if _, werr := out.WriteAt(buf[:n], pos); werr != nil {
				out.Close()
				return fmt.Errorf("write %s: %w", dst, werr)
			}
		}
		pos += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			out.Close()
			return fmt.Errorf("read %s: %w", src, err)
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// round is a duration as the progress lines say it.
func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// inodeOf is a file's inode number, to count hard links once.
func inodeOf(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return 0, false
	}
	return st.Ino, true
}
