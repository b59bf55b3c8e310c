package factoryimage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/units"
)

// The whole build, as `nodezero create factory-image` runs it: root,
// mmdebstrap and the Debian mirror (only when the rootfs is not cached
// yet), the disk tools, and the ignition tools/ignition/build.sh builds.
// The cache is the persistent one (DefaultCacheDir), so a machine builds
// the rootfs once.

// needBuild skips (or, under CI=true, fails) a test that cannot build.
func needBuild(t *testing.T) {
	t.Helper()
	testbed.NeedRoot(t)
	for _, tool := range []string{"mmdebstrap", "mkfs.ext4", "debugfs", "dumpe2fs", "mkfs.vfat", "mcopy", "mdir", "sgdisk", "sfdisk", "blkid", "qemu-img", "zstd"} {
		testbed.NeedTool(t, tool)
	}
	if _, err := FindIgnition(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (required when CI=true)", err)
		}
		t.Skipf("%v; CI=true makes this a failure", err)
	}
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
	// scratch are folders the tests share, removed by TestMain.
	scratch []string
)

// staticNodezero builds the static nodezero the images carry, once per
// test binary.
func staticNodezero(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "factoryimage-test-")
		if err != nil {
			binaryErr = err
			return
		}
		scratch = append(scratch, dir)
		binaryPath = filepath.Join(dir, "nodezero")
		cmd := exec.Command("go", "build", "-o", binaryPath, "./cmd/nodezero")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = fmt.Errorf("CGO_ENABLED=0 go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatalf("build nodezero: %v", binaryErr)
	}
	return binaryPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range scratch {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// testPayload is a release as the sandbox's registry would serve it.
func testPayload() diskwrite.Payload {
	at := func(repo string) string { return "registry.nodezero.test:5000/ocp/" + repo + ":4.18.0" }
	return diskwrite.Payload{
		ReleaseImage: "registry.nodezero.test:5000/ocp/release:4.18.0-x86_64", OpenshiftVersion: "4.18.0",
		Images: diskwrite.ReleaseImages{
			Installer: at("agent-installer-orchestrator"), Controller: at("agent-installer-csr-approver"),
			MCO: at("machine-config-operator"), MustGather: at("must-gather"),
		},
	}
}

func testOptions(t *testing.T, dir string) Options {
	t.Helper()
	cache, err := DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Dir: dir, Cache: cache, Binary: staticNodezero(t), Payload: testPayload(), Log: testLog{t}}
}

// testLog sends a build's lines to the test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var (
	buildOnce   sync.Once
	buildResult *Result
	buildErr    error
)

// builtOnce is one Build shared by the tests that read its images.
func builtOnce(t *testing.T) *Result {
	t.Helper()
	needBuild(t)
	opts := testOptions(t, "")
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "factoryimage-build-")
		if err != nil {
			buildErr = err
			return
		}
		scratch = append(scratch, dir)
		opts.Dir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		buildResult, buildErr = Build(ctx, opts)
	})
	if buildErr != nil {
		t.Fatalf("Build: %v", buildErr)
	}
	return buildResult
}

// TestBuildFactoryImage: the factory image is a GPT disk whose ESP boots
// systemd-boot into its own root (label nzfactory) holding nodezero as
// `nodezero install` lays it and a payload the writer accepts; the qcow2
// is zstd-compressed.
func TestBuildFactoryImage(t *testing.T) {
	res := builtOnce(t)
	tab := readTable(t, res.Raw)
	if tab.PartitionTable.Label != "gpt" {
		t.Fatalf("%s: partition table %q, want gpt", res.Raw, tab.PartitionTable.Label)
	}
	var names []string
	for _, p := range tab.PartitionTable.Partitions {
		names = append(names, p.Name+" "+p.Type)
	}
	if d := cmp.Diff([]string{"EFI-SYSTEM " + typeESP, "root " + typeRootX86_64}, names); d != "" {
		t.Errorf("factory partitions (-want +got):\n%s", d)
	}
	espOff, _, _ := part(t, tab, "EFI-SYSTEM")
	rootOff, rootSize, rootUUID := part(t, tab, "root")
	if typ, label := blkid(t, res.Raw, espOff); typ != "vfat" || label != "EFI-SYSTEM" {
		t.Errorf("ESP: blkid TYPE=%q LABEL=%q, want vfat EFI-SYSTEM", typ, label)
	}
	if typ, label := blkid(t, res.Raw, rootOff); typ != "ext4" || label != FactoryRootLabel {
		t.Errorf("root: blkid TYPE=%q LABEL=%q, want ext4 %s", typ, label, FactoryRootLabel)
	}
	checkESP(t, res.Raw, espOff, rootUUID)

	root := extract(t, res.Raw, rootOff, rootSize)
	bin := filepath.Join(t.TempDir(), "nodezero")
	if err := os.WriteFile(bin, debugfsCat(t, root, "/usr/local/bin/nodezero"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := sha256File(t, bin), sha256File(t, staticNodezero(t)); got != want {
		t.Errorf("/usr/local/bin/nodezero has sha256 %s, want the built binary's %s", got, want)
	}
	// What nodezero install lays: every unit, the udev rule, the links.
	files, err := units.Files(units.Params{})
	if err != nil {
		t.Fatal(err)
	}
	links, err := units.Links(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got := debugfsCat(t, root, "/"+f.Path); !bytes.Equal(got, f.Data) {
			t.Errorf("/%s in the factory image differs from units.Files' rendering", f.Path)
		}
	}
	for _, l := range links {
		if s, ok := debugfsStat(t, root, "/"+l.Path); !ok || !strings.Contains(s, "Type: symlink") {
			t.Errorf("/%s: want a symlink (nodezero install's enablement link)", l.Path)
		}
	}
	for _, p := range []string{"/usr/local/bin/ignition", "/etc/systemd/system/nodezero-ignition.service"} {
		if _, ok := debugfsStat(t, root, p); ok {
			t.Errorf("%s is in the factory image; only the installed OS has it", p)
		}
	}
	// The payload: payload.json and the image, as the writer loads them.
	pdir := t.TempDir()
	pj := debugfsCat(t, root, diskwrite.DefaultPayloadDir+"/"+diskwrite.PayloadFile)
	if err := os.WriteFile(filepath.Join(pdir, diskwrite.PayloadFile), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("debugfs", "-R", "dump "+diskwrite.DefaultPayloadDir+"/"+osImageFile+" "+filepath.Join(pdir, osImageFile), root).CombinedOutput(); err != nil {
		t.Fatalf("debugfs dump: %v\n%s", err, out)
	}
	p, err := diskwrite.LoadPayload(pdir)
	if err != nil {
		t.Fatalf("the factory image's payload: %v", err)
	}
	if err := p.CheckReleaseImages(); err != nil {
		t.Errorf("the factory image's payload: %v", err)
	}
	want := res.Payload
	want.Dir = pdir
	if d := cmp.Diff(want, *p); d != "" {
		t.Errorf("payload.json (-Result +image):\n%s", d)
	}
	if p.OS.File != osImageFile || p.OS.IgnitionPartition != ignitionLabel || p.OS.EFIPartition != 1 ||
		p.OS.EFILoader != EFILoader || p.OS.EFILabel != OSImageLabel {
		t.Errorf("payload os_image = %+v, want file %s, ignition_partition %s, efi_partition 1, efi_loader %s, efi_label %q",
			p.OS, osImageFile, ignitionLabel, EFILoader, OSImageLabel)
	}
	sum, size := zstdDigest(t, p.ImagePath())
	if sum != p.OS.SHA256 || size != p.OS.Size {
		t.Errorf("the payload's image decompresses to %d bytes with sha256 %s; payload.json says %d, %s", size, sum, p.OS.Size, p.OS.SHA256)
	}
	if got := sha256File(t, res.OSImage); got != p.OS.SHA256 {
		t.Errorf("Result.OSImage %s has sha256 %s, payload.json says %s", res.OSImage, got, p.OS.SHA256)
	}

	out, err := exec.Command("qemu-img", "info", "--output=json", res.QCOW2).Output()
	if err != nil {
		t.Fatalf("qemu-img info: %v", err)
	}
	var info struct {
		Format   string `json:"format"`
		Virtual  int64  `json:"virtual-size"`
		Specific struct {
			Data struct {
				Compression string `json:"compression-type"`
			} `json:"data"`
		} `json:"format-specific"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	if info.Format != "qcow2" || info.Specific.Data.Compression != "zstd" || info.Virtual != res.RawSize {
		t.Errorf("qemu-img info %s: format %s, compression %s, virtual size %d; want qcow2, zstd, %d",
			res.QCOW2, info.Format, info.Specific.Data.Compression, info.Virtual, res.RawSize)
	}
	t.Logf("factory.raw %d MiB (%d MiB allocated), factory.qcow2 %d MiB, os.img %d MiB, os.img.zst %d MiB",
		res.RawSize>>20, res.RawAllocated>>20, res.QCOW2Size>>20, res.OSImageSize>>20, res.OSImageCompressedSize>>20)
}

// checkESP: systemd-boot at the removable-media path, the kernel and
// initramfs, and a boot entry for the root partition with the serial
// console.
func checkESP(t *testing.T, img string, off int64, rootUUID string) {
	t.Helper()
	if efi := mtype(t, img, off, "/EFI/BOOT/BOOTX64.EFI"); len(efi) < 4096 || string(efi[:2]) != "MZ" {
		t.Errorf("/EFI/BOOT/BOOTX64.EFI: %d bytes, not a PE executable", len(efi))
	}
	for _, f := range []string{"/vmlinuz", "/initrd.img"} {
		if b := mtype(t, img, off, f); len(b) < 1<<20 {
			t.Errorf("ESP %s: %d bytes, want a kernel or an initramfs", f, len(b))
		}
	}
	entry := string(mtype(t, img, off, "/loader/entries/nodezero.conf"))
	wantOpts := "options root=PARTUUID=" + strings.ToLower(rootUUID) + " rw console=ttyS0,115200\n"
	if !strings.Contains(entry, wantOpts) || !strings.Contains(entry, "linux /vmlinuz\n") || !strings.Contains(entry, "initrd /initrd.img\n") {
		t.Errorf("loader entry:\n%s\nwant linux /vmlinuz, initrd /initrd.img and %q", entry, wantOpts)
	}
}

// TestBuildInstalledOSImage: the installed OS is a GPT disk with its ESP,
// its root (label nzroot) and an all-zero 1 MiB partition named ignition;
// its root holds nodezero, ignition and the guest units enabled, and none
// of the factory's units; its GUIDs are not the factory's.
func TestBuildInstalledOSImage(t *testing.T) {
	res := builtOnce(t)
	tab := readTable(t, res.OSImage)
	var names []string
	for _, p := range tab.PartitionTable.Partitions {
		names = append(names, p.Name+" "+p.Type)
	}
	if d := cmp.Diff([]string{"EFI-SYSTEM " + typeESP, "root " + typeRootX86_64, "ignition " + typeLinuxData}, names); d != "" {
		t.Errorf("installed OS partitions (-want +got):\n%s", d)
	}
	espOff, _, _ := part(t, tab, "EFI-SYSTEM")
	rootOff, rootSize, rootUUID := part(t, tab, "root")
	ignOff, ignSize, _ := part(t, tab, ignitionLabel)
	if ignSize != ignitionSize {
		t.Errorf("ignition partition: %d bytes, want %d", ignSize, ignitionSize)
	}
	if typ, label := blkid(t, res.OSImage, rootOff); typ != "ext4" || label != OSRootLabel {
		t.Errorf("root: blkid TYPE=%q LABEL=%q, want ext4 %s", typ, label, OSRootLabel)
	}
	checkESP(t, res.OSImage, espOff, rootUUID)
	if b := readAt(t, res.OSImage, ignOff, ignSize); !bytes.Equal(b, make([]byte, ignSize)) {
		t.Error("the ignition partition is not all zeros")
	}

	root := extract(t, res.OSImage, rootOff, rootSize)
	for _, p := range []string{"/usr/local/bin/nodezero", "/usr/local/bin/ignition", "/usr/local/lib/nodezero/ignition-firstboot"} {
		s, ok := debugfsStat(t, root, p)
		if !ok || !strings.Contains(s, "Mode:  0755") {
			t.Errorf("%s: want an executable file (0755):\n%s", p, s)
		}
	}
	files, links, err := guestRendered()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got := debugfsCat(t, root, "/"+f.Path); !bytes.Equal(got, f.Data) {
			t.Errorf("/%s in the installed OS differs from guest/", f.Path)
		}
	}
	if len(links) != 1 || links[0].Path != "etc/systemd/system/sysinit.target.wants/nodezero-ignition.service" {
		t.Errorf("guest links = %+v, want nodezero-ignition.service in sysinit.target.wants", links)
	}
	for _, l := range links {
		if s, ok := debugfsStat(t, root, "/"+l.Path); !ok || !strings.Contains(s, "Type: symlink") {
			t.Errorf("/%s: want a symlink", l.Path)
		}
	}
	if _, ok := debugfsStat(t, root, "/etc/systemd/system/"+units.DaemonUnit); ok {
		t.Errorf("%s is in the installed OS; only the factory image has nodezero's units", units.DaemonUnit)
	}
	if s, ok := debugfsStat(t, root, "/etc/machine-id"); !ok || !strings.Contains(s, "Size: 0") {
		t.Errorf("/etc/machine-id: want an empty file (first boot):\n%s", s)
	}

	// Not the factory's GUIDs: both disks are attached after the reboot.
	fac := readTable(t, res.Raw)
	_, _, facRoot := part(t, fac, "root")
	if fac.PartitionTable.ID == tab.PartitionTable.ID || facRoot == rootUUID {
		t.Errorf("the installed OS shares GUIDs with the factory image (disk %s, root %s)", tab.PartitionTable.ID, rootUUID)
	}
	if res.OSImageSize >= 1<<30 {
		t.Errorf("the installed OS is %d MiB raw; the guest writes it under TCG at 15–30 MB/s: want < 1 GiB", res.OSImageSize>>20)
	}
}

// TestBuildCachedAndReproducible: a second Build with the same inputs takes
// every layer from the cache; the image layers built again from the same
// cached rootfs, in fresh caches, are byte-identical.
func TestBuildCachedAndReproducible(t *testing.T) {
	first := builtOnce(t)
	opts := testOptions(t, t.TempDir())
	again, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatalf("second Build: %v", err)
	}
	for _, l := range again.Layers {
		if !l.Cached {
			t.Errorf("second Build: layer %s was built, want it from the cache", l.Name)
		}
	}
	if again.Key != first.Key {
		t.Errorf("second Build: key %s, first %s", again.Key, first.Key)
	}
	t.Logf("second (cached) Build: %s", again.Duration)
	if got, want := sha256File(t, again.Raw), sha256File(t, first.Raw); got != want {
		t.Errorf("the cached build's factory.raw differs from the first's")
	}

	// Twice more, each in a fresh cache holding only the rootfs.
	var rootfsDir string
	for _, l := range first.Layers {
		if l.Name == LayerRootfs {
			rootfsDir = l.Dir
		}
	}
	var digests [][3]string
	for range 2 {
		cache, err := os.MkdirTemp(opts.Cache, ".repro-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { removeAll(cache) })
		if err := os.Symlink(rootfsDir, filepath.Join(cache, filepath.Base(rootfsDir))); err != nil {
			t.Fatal(err)
		}
		o := testOptions(t, t.TempDir())
		o.Cache = cache
		res, err := Build(context.Background(), o)
		if err != nil {
			t.Fatalf("Build in %s: %v", cache, err)
		}
		for _, l := range res.Layers {
			if l.Cached != (l.Name == LayerRootfs) {
				t.Errorf("Build in a fresh cache: layer %s cached=%v", l.Name, l.Cached)
			}
		}
		digests = append(digests, [3]string{sha256File(t, res.Raw), sha256File(t, res.QCOW2), sha256File(t, res.OSImage)})
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same inputs differ (factory.raw, factory.qcow2, os.img):\n%v\n%v", digests[0], digests[1])
	}
	if digests[0][0] != sha256File(t, first.Raw) {
		t.Errorf("a rebuild's factory.raw differs from the first build's")
	}
}

// TestIgnitionMustRunInGuest: an ignition that cannot run inside the tree
// (built against another release's libraries) is refused at build time,
// not found out at a host's first boot.
func TestIgnitionMustRunInGuest(t *testing.T) {
	testbed.NeedRoot(t)
	testbed.NeedTool(t, "chroot")
	st := &stage{dir: t.TempDir()}
	if err := st.writeFile(ignitionPath, 0o755, strings.NewReader("#!/lib/ld-linux-from-elsewhere.so.2\n")); err != nil {
		t.Fatal(err)
	}
	err := runsInGuest(context.Background(), st)
	if err == nil || !strings.Contains(err.Error(), "ignition does not run on Debian 12") || !strings.Contains(err.Error(), "tools/ignition/build.sh") {
		t.Errorf("runsInGuest = %v, want ignition refused, naming tools/ignition/build.sh", err)
	}
}

// TestInstalledOSTakesItsConfig: nodezero's writer installs the payload's
// image on a disk (a pre-sized file) with a role's Ignition config, and
// the first-boot script, reading that disk's ignition partition, has
// Ignition apply it: the writer and the image agree on the partition.
func TestInstalledOSTakesItsConfig(t *testing.T) {
	res := builtOnce(t)
	pdir := t.TempDir()
	if err := os.Symlink(res.OSImageCompressed, filepath.Join(pdir, osImageFile)); err != nil {
		t.Fatal(err)
	}
	if err := diskwrite.WritePayload(pdir, &res.Payload); err != nil {
		t.Fatal(err)
	}
	p, err := diskwrite.LoadPayload(pdir)
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(t.TempDir(), "disk.img")
	if err := createSparse(disk, 2<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := diskwrite.Write(context.Background(), diskwrite.Options{Device: disk, Payload: p, Ignition: []byte(roleConfig)}); err != nil {
		t.Fatalf("diskwrite.Write: %v", err)
	}
	off, size, _ := part(t, readTable(t, disk), ignitionLabel)
	console, _, _, err := firstBoot(t, readAt(t, disk, off, size))
	if err != nil || !strings.Contains(console, "NODEZERO-IGNITION applied files=4 units=2\n") {
		t.Errorf("first boot of the written disk: %v\n%s", err, console)
	}
}
