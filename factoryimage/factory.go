package factoryimage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

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
	k.add("service-env", strings.Join(o.ServiceEnv, "\n"))
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
	if len(o.ServiceEnv) > 0 {
		env, dropIn, err := serviceEnvFiles(o.ServiceEnv)
		if err != nil {
			return err
		}
		if err := st.writeFile(serviceEnvFile[1:], 0o644, bytes.NewReader(env)); err != nil {
			return err
		}
		if err := st.writeFile(serviceEnvDropIn[1:], 0o644, bytes.NewReader(dropIn)); err != nil {
			return err
		}
	}
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

// Where ServiceEnv goes: an environment file and the drop-in that gives it
// to nodezero.service.
const (
	serviceEnvFile   = "/etc/nodezero/service.env"
	serviceEnvDropIn = "/etc/systemd/system/nodezero.service.d/10-environment.conf"
)

// serviceEnvFiles renders ServiceEnv: each KEY=VALUE single-quoted in the
// environment file (systemd's EnvironmentFile= takes the value as it is,
// JSON included), and the drop-in naming it. A key that is not a shell
// name, or a value holding a single quote or a line break, is refused.
func serviceEnvFiles(env []string) (file, dropIn []byte, err error) {
	var b bytes.Buffer
	b.WriteString("# Written by nodezero create factory-image: node zero's service environment.\n")
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envKeyRE.MatchString(k) {
			return nil, nil, fmt.Errorf("factory image: service environment %q: want KEY=VALUE", kv)
		}
		if strings.ContainsAny(v, "'\n\r") {
			return nil, nil, fmt.Errorf("factory image: service environment %s: a value may not hold a single quote or a line break", k)
		}
		fmt.Fprintf(&b, "%s='%s'\n", k, v)
	}
	dropIn = []byte("# Written by nodezero create factory-image.\n[Service]\nEnvironmentFile=" + serviceEnvFile + "\n")
	return b.Bytes(), dropIn, nil
}

var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
