package factoryimage

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/units"
)

// The installed-OS layer: the image the install writes onto a host's disk,
// whose first boot applies the host's Ignition config with real Ignition.

//go:embed guest/*
var guestFS embed.FS

// guestFile is one file of guest/ and where it goes in the installed OS.
type guestFile struct {
	name string // in guest/
	dest string // relative to the root
	mode os.FileMode
}

var guestFiles = []guestFile{
	{"ignition-firstboot", "usr/local/lib/nodezero/ignition-firstboot", 0o755},
	{"nodezero-ignition.service", units.UnitDir + "/nodezero-ignition.service", 0o644},
	{"run-nodezero-factory.mount", units.UnitDir + "/run-nodezero-factory.mount", 0o644},
}

// Where the installed OS has its programs.
const (
	ignitionPath = "usr/local/bin/ignition"
	osImageFile  = "os.img.zst"
	osImageRaw   = "os.img"
	// OSImageLabel is the boot entry efibootmgr gives the written disk.
	OSImageLabel = "nodezero installed OS"
	// OSRootLabel and FactoryRootLabel are the two root filesystems'
	// labels: the installed OS mounts the factory disk by the latter.
	OSRootLabel      = "nzroot"
	FactoryRootLabel = "nzfactory"
)

// guestRendered are guest/'s files with their enablement links, as
// `systemctl enable` would make them (units.Links reads the [Install]
// sections).
func guestRendered() ([]units.File, []units.Link, error) {
	var files []units.File
	for _, g := range guestFiles {
		b, err := guestFS.ReadFile("guest/" + g.name)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, units.File{Path: g.dest, Mode: g.mode, Data: b})
	}
	links, err := units.Links(files)
	if err != nil {
		return nil, nil, err
	}
	return files, links, nil
}

// osImageKey hashes the installed OS's inputs.
func osImageKey(o *resolved, rootfs string, digests inputDigests) string {
	k := newKey(LayerOSImage)
	k.add("rootfs", rootfs)
	k.add("nodezero", digests.binary)
	k.add("ignition", digests.ignition)
	for _, g := range guestFiles {
		b, _ := guestFS.ReadFile("guest/" + g.name)
		k.add("guest/"+g.name, g.dest+"\x00"+strconv.FormatUint(uint64(g.mode), 8)+"\x00"+string(b))
	}
	k.add("epoch", strconv.FormatInt(o.SourceDateEpoch, 10))
	return k.sum()
}

// buildOSImage makes the entry's os.img (raw) and os.img.zst, and returns
// the payload's description of the image.
func buildOSImage(ctx context.Context, o *resolved, rootfsTree string, e *entry) (diskwrite.Image, error) {
	st, err := newStage(ctx, o, rootfsTree, e.path("stage"))
	if err != nil {
		return diskwrite.Image{}, err
	}
	defer st.remove()
	if err := st.copyFile(units.DefaultBinary[1:], 0o755, o.Binary); err != nil {
		return diskwrite.Image{}, err
	}
	if err := st.copyFile(ignitionPath, 0o755, o.Ignition); err != nil {
		return diskwrite.Image{}, err
	}
	if err := runsInGuest(ctx, st); err != nil {
		return diskwrite.Image{}, err
	}
	files, links, err := guestRendered()
	if err != nil {
		return diskwrite.Image{}, err
	}
	for _, f := range files {
		if err := st.writeFile(f.Path, f.Mode, bytes.NewReader(f.Data)); err != nil {
			return diskwrite.Image{}, err
		}
	}
	for _, l := range links {
		if err := st.symlink(l.Path, l.Target); err != nil {
			return diskwrite.Image{}, err
		}
	}
	if err := st.seal(); err != nil {
		return diskwrite.Image{}, err
	}
	work := e.path("work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return diskwrite.Image{}, err
	}
	defer removeAll(work)
	if _, err := makeDisk(ctx, o, diskSpec{
		key: e.key, stage: st, rootLabel: OSRootLabel, ignition: true,
		title: OSImageLabel + " (Debian 12)", work: work, out: e.path(osImageRaw),
	}); err != nil {
		return diskwrite.Image{}, err
	}
	img, err := compress(ctx, o, e.path(osImageRaw), e.path(osImageFile))
	if err != nil {
		return diskwrite.Image{}, err
	}
	img.IgnitionPartition = ignitionLabel
	img.EFIPartition = 1
	img.EFILoader = EFILoader
	img.EFILabel = OSImageLabel
	return img, nil
}

// runsInGuest runs ignition and nodezero inside the tree (chroot): ignition
// links the build machine's glibc and libblkid, and one built on a newer
// release than the guest's would fail only at the first boot.
func runsInGuest(ctx context.Context, st *stage) error {
	out, err := output(ctx, nil, "chroot", st.dir, "/"+ignitionPath, "-version")
	if err != nil || !strings.HasPrefix(string(out), "Ignition ") {
		return fmt.Errorf("ignition does not run on Debian 12 (%s): %v %s; build it on Debian 12 with tools/ignition/build.sh", Suite, err, bytes.TrimSpace(out))
	}
	if out, err := output(ctx, nil, "chroot", st.dir, units.DefaultBinary, "version"); err != nil {
		return fmt.Errorf("nodezero does not run in the image: %v %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// compress writes raw as one zstd stream at dst (what the writer reads:
// zstd's CLI on all cores, several times faster than the Go encoder) and
// describes it: the sha256 and size of the raw image.
func compress(ctx context.Context, o *resolved, raw, dst string) (diskwrite.Image, error) {
	sum, err := fileDigest(raw)
	if err != nil {
		return diskwrite.Image{}, err
	}
	st, err := os.Stat(raw)
	if err != nil {
		return diskwrite.Image{}, err
	}
	if err := run(ctx, o.Log, nil, "zstd", "-q", "-T0", "-3", "-f", raw, "-o", dst); err != nil {
		return diskwrite.Image{}, err
	}
	// The factory image carries this very file (a hard link): its time is
	// the epoch like every other.
	if err := lchtimes(dst, o.epoch); err != nil {
		return diskwrite.Image{}, err
	}
	return diskwrite.Image{File: osImageFile, SHA256: sum, Size: st.Size()}, nil
}
