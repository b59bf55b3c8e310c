package diskwrite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// realDir is a directory on a disk-backed filesystem (not tmpfs), where
// O_DIRECT and loop devices behave as on a host.
func realDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "diskwrite-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// loopDevice attaches file to a free loop device and detaches it when the
// test ends.
func loopDevice(t *testing.T, file string, extra ...string) string {
	t.Helper()
	needRoot(t)
	losetup := needTool(t, "losetup")
	args := append([]string{"--find", "--show"}, extra...)
	out, err := exec.Command(losetup, append(args, file)...).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command(losetup, "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v\n%s", dev, err, out)
		}
	})
	return dev
}

// A real block device: its size from BLKGETSIZE64, O_DIRECT writes, the
// unaligned tail through the page cache.
func TestWriteLoopDevice(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := realDir(t)
	p := writePayload(t, dir, img, compress(t, "zstd", raw))
	backing := newDisk(t, dir, img.Size+4<<20)
	dev := loopDevice(t, backing)

	res, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: []byte(testIgnition)})
	if err != nil {
		t.Fatalf("Write(%s): %v", dev, err)
	}
	if !res.Direct {
		t.Errorf("Write(%s) = {Direct: false}, want O_DIRECT on a block device", dev)
	}
	got, err := Verify(dev, img)
	if err != nil || string(got) != testIgnition {
		t.Errorf("Verify(%s) = %q, %v; want %q", dev, got, err, testIgnition)
	}
	checkInstalled(t, readFile(t, backing), raw, img, []byte(testIgnition), make([]byte, 4<<20))
}

func TestWriteLoopDeviceTooSmall(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := realDir(t)
	p := writePayload(t, dir, img, raw)
	backing := newDisk(t, dir, 4<<20)
	before := fillPattern(t, backing)
	dev := loopDevice(t, backing)

	_, err := Write(context.Background(), Options{Device: dev, Payload: p})
	if !errors.Is(err, ErrDiskTooSmall) {
		t.Fatalf("Write(%s) = %v, want ErrDiskTooSmall", dev, err)
	}
	t.Log(err)
	if !bytes.Equal(readFile(t, backing), before) {
		t.Errorf("disk changed")
	}
}

// A 4Kn disk would look for the table at byte 4096: refused.
func TestWriteLoopDevice4Kn(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := realDir(t)
	p := writePayload(t, dir, img, raw)
	backing := newDisk(t, dir, img.Size+4<<20)
	before := fillPattern(t, backing)
	dev := loopDevice(t, backing, "--sector-size", "4096")

	if _, err := Write(context.Background(), Options{Device: dev, Payload: p}); err == nil {
		t.Fatalf("Write(%s, 4096-byte sectors) succeeded", dev)
	} else {
		t.Log(err)
	}
	if !bytes.Equal(readFile(t, backing), before) {
		t.Errorf("disk changed")
	}
}

// A disk the kernel holds (here: another exclusive opener, as a mount
// would be) is refused before anything is written.
func TestWriteLoopDeviceInUse(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := realDir(t)
	p := writePayload(t, dir, img, raw)
	backing := newDisk(t, dir, img.Size)
	before := fillPattern(t, backing)
	dev := loopDevice(t, backing)
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s O_EXCL: %v", dev, err)
	}
	defer unix.Close(fd)

	_, err = Write(context.Background(), Options{Device: dev, Payload: p})
	if !errors.Is(err, ErrDiskInUse) {
		t.Fatalf("Write(%s) = %v, want ErrDiskInUse", dev, err)
	}
	t.Log(err)
	if !bytes.Equal(readFile(t, backing), before) {
		t.Errorf("disk changed")
	}
}
