package factoryimage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/units"
)

// The factory layer: the disk every host boots before its install.

// Outputs of the factory layer, in its cache entry and in Options.Dir.
const (
	RawFile   = "factory.raw"
	QCOW2File = "factory.qcow2"
)

// factoryHeadroom is free space on the factory root beyond the 20 %: node
// zero keeps its store and the install's files there, and the installed
// OS's simulated in-cluster part goes on using it. Free space costs
// nothing in the sparse raw file or the qcow2.
const factoryHeadroom = 512 * mib

// factoryKey hashes the factory image's inputs.
func factoryKey(o *resolved, rootfs, osImage string, digests inputDigests) (string, error) {
	rel := o.Payload
	rel.OS, rel.Dir = diskwrite.Image{}, ""
	b, err := json.Marshal(rel)
	if err != nil {
		return "", err
	}
	k := newKey(LayerFactory)
	k.add("rootfs", rootfs)
	k.add("os-image", osImage)
	k.add("nodezero", digests.binary)
	k.add("payload", string(b))
	k.add("epoch", strconv.FormatInt(o.SourceDateEpoch, 10))
	return k.sum(), nil
}

// buildFactory makes the entry's factory.raw and factory.qcow2: the rootfs,
// nodezero as `nodezero install --root` lays it, and the payload with the
// installed OS's image.
func buildFactory(ctx context.Context, o *resolved, rootfsTree string, osEntry *entry, img diskwrite.Image, e *entry) error {
	st, err := newStage(ctx, o, rootfsTree, e.path("stage"))
	if err != nil {
		return err
	}
	defer st.remove()
	bin, err := os.Open(o.Binary)
	if err != nil {
		return err
	}
	res, err := units.Install(st.dir, units.Params{}, bin)
	bin.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "factory image: nodezero install: %d files and links\n", len(res.Changed))
	dir := diskwrite.DefaultPayloadDir[1:]
	if err := st.linkFile(filepath.Join(dir, img.File), osEntry.path(img.File)); err != nil {
		return err
	}
	p := o.Payload
	p.OS = img
	if err := diskwrite.WritePayload(st.path(dir), &p); err != nil {
		return err
	}
	if err := st.seal(); err != nil {
		return err
	}
	work := e.path("work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	defer removeAll(work)
	if _, err := makeDisk(ctx, o, diskSpec{
		key: e.key, stage: st, rootLabel: FactoryRootLabel, headroom: factoryHeadroom,
		title: "nodezero factory image (Debian 12)", work: work, out: e.path(RawFile),
	}); err != nil {
		return err
	}
	// A zstd qcow2 serves directly as a read-only backing file
	// (docs/reference/vm-testbed-facts.md, step 2).
	return run(ctx, o.Log, nil, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", "-c",
		"-o", "compression_type=zstd", e.path(RawFile), e.path(QCOW2File))
}
