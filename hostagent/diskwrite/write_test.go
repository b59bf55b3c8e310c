package diskwrite

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

const testIgnition = `{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core"}]}}`

func TestWriteRoundTrip(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	for _, format := range []string{"raw", "gzip", "xz", "zstd"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			p := writePayload(t, dir, img, compress(t, format, raw))
			dev := newDisk(t, dir, img.Size+3<<20)
			after := readFile(t, dev)[img.Size:]

			res, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: []byte(testIgnition)})
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			if res.Bytes != img.Size || res.SHA256 != img.SHA256 {
				t.Errorf("Write = {Bytes: %d, SHA256: %s}, want {%d, %s}", res.Bytes, res.SHA256, img.Size, img.SHA256)
			}
			checkInstalled(t, readFile(t, dev), raw, img, []byte(testIgnition), after)

			got, err := Verify(dev, img)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if string(got) != testIgnition {
				t.Errorf("Verify = %q, want %q", got, testIgnition)
			}
		})
	}
}

// A second write replaces the first image's Ignition, longer by shorter:
// the rest of the partition is zeroed, not left from before.
func TestWriteTwiceShorterIgnition(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, compress(t, "zstd", raw))
	dev := newDisk(t, dir, img.Size)
	for _, ign := range []string{testIgnition + testIgnition, `{"ignition":{}}`} {
		if _, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: []byte(ign)}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		got, err := Verify(dev, img)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if string(got) != ign {
			t.Errorf("Verify = %q, want %q", got, ign)
		}
	}
}

func TestWriteProgress(t *testing.T) {
	spec := testSpec
	spec.Size = 64 << 20 // 16 chunks
	raw, img := buildRaw(t, spec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, compress(t, "zstd", raw))
	dev := newDisk(t, dir, img.Size)
	var calls [][2]int64
	_, err := Write(context.Background(), Options{Device: dev, Payload: p, Progress: func(written, total int64) {
		calls = append(calls, [2]int64{written, total})
	}})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if len(calls) == 0 || len(calls) > 101 {
		t.Fatalf("Progress called %d times, want 1 to 101", len(calls))
	}
	if last := calls[len(calls)-1]; last != [2]int64{img.Size, img.Size} {
		t.Errorf("last Progress(%d, %d), want (%d, %d)", last[0], last[1], img.Size, img.Size)
	}
	var prev int64
	for i, c := range calls {
		if c[1] != img.Size {
			t.Errorf("Progress call %d total = %d, want %d", i, c[1], img.Size)
		}
		if c[0] <= prev || (c[0] != img.Size && c[0]-prev < img.Size/100) {
			t.Errorf("Progress call %d at %d after %d: not about 1%% further", i, c[0], prev)
		}
		prev = c[0]
	}
}

func TestWriteDigestMismatch(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	parts, err := readGPT(bytes.NewReader(raw), img.Size)
	if err != nil {
		t.Fatal(err)
	}
	root, err := findPartition(parts, "root")
	if err != nil {
		t.Fatal(err)
	}
	rs, re := root.byteRange()
	bad := bytes.Clone(raw)
	bad[(rs+re)/2] ^= 0xff
	for _, format := range []string{"raw", "gzip", "xz", "zstd"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			p := writePayload(t, dir, img, compress(t, format, bad))
			dev := newDisk(t, dir, img.Size+2<<20)
			fillPattern(t, dev)

			_, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: []byte(testIgnition)})
			if !errors.Is(err, ErrDigestMismatch) {
				t.Fatalf("Write with one byte flipped = %v, want ErrDigestMismatch", err)
			}
			t.Log(err)
			checkWiped(t, dev, img.Size)
			if _, err := Verify(dev, img); err == nil {
				t.Errorf("Verify of the wiped disk succeeded")
			}
		})
	}
}

// A flipped byte in the compressed stream is caught by the decompressor
// (or, failing that, by the digest); either way the disk is not bootable.
func TestWriteCorruptStream(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	for _, format := range []string{"gzip", "xz", "zstd"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			file := compress(t, format, raw)
			file[len(file)/2] ^= 0xff
			p := writePayload(t, dir, img, file)
			dev := newDisk(t, dir, img.Size)

			_, err := Write(context.Background(), Options{Device: dev, Payload: p})
			if !errors.Is(err, ErrBadImage) && !errors.Is(err, ErrDigestMismatch) {
				t.Fatalf("Write of a corrupt %s stream = %v, want ErrBadImage or ErrDigestMismatch", format, err)
			}
			t.Log(err)
			if _, err := Verify(dev, img); err == nil {
				t.Errorf("Verify of the disk succeeded")
			}
		})
	}
}

// checkWiped checks the head and the image's tail are zeros.
func checkWiped(t *testing.T, dev string, imageSize int64) {
	t.Helper()
	b := readFile(t, dev)
	zeros := make([]byte, wipeSize)
	if !bytes.Equal(b[:wipeSize], zeros) {
		t.Errorf("first %d bytes of the disk not zeroed", wipeSize)
	}
	if !bytes.Equal(b[imageSize-wipeSize:imageSize], zeros) {
		t.Errorf("last %d bytes of the image's extent not zeroed", wipeSize)
	}
	if !bytes.Equal(b[len(b)-wipeSize:], zeros) {
		t.Errorf("last %d bytes of the disk not zeroed", wipeSize)
	}
}

func TestWriteDiskTooSmall(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, compress(t, "zstd", raw))
	dev := newDisk(t, dir, img.Size-4096)
	before := fillPattern(t, dev)

	_, err := Write(context.Background(), Options{Device: dev, Payload: p})
	if !errors.Is(err, ErrDiskTooSmall) {
		t.Fatalf("Write = %v, want ErrDiskTooSmall", err)
	}
	t.Log(err)
	var e *Error
	if !errors.As(err, &e) || e.Device != dev {
		t.Errorf("Write error = %#v, want an *Error naming %s", err, dev)
	}
	if !bytes.Equal(readFile(t, dev), before) {
		t.Errorf("disk changed")
	}
	if fi, _ := os.Stat(dev); fi.Size() != img.Size-4096 {
		t.Errorf("disk size = %d, want it unchanged at %d", fi.Size(), img.Size-4096)
	}
}

// Refusals that must come before the first byte is written.
func TestWriteRefusedUntouched(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	start, end := ignitionRange(t, raw, img)
	tests := []struct {
		name     string
		img      func(Image) Image
		ignition []byte
		want     error
	}{
		{"ignition too big", nil, bytes.Repeat([]byte("x"), int(end-start)+1), ErrIgnitionTooLarge},
		{"no such partition", func(i Image) Image { i.IgnitionPartition = "nope"; return i }, []byte(testIgnition), ErrPartitionNotFound},
		{"NUL in ignition", nil, []byte("{\x00}"), nil},
		{"missing sha256", func(i Image) Image { i.SHA256 = ""; return i }, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writePayload(t, dir, img, compress(t, "zstd", raw))
			if tc.img != nil {
				p.OS = tc.img(p.OS)
			}
			dev := newDisk(t, dir, img.Size)
			before := fillPattern(t, dev)
			_, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: tc.ignition})
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Write = %v, want %v", err, tc.want)
			}
			t.Log(err)
			if !bytes.Equal(readFile(t, dev), before) {
				t.Errorf("disk changed")
			}
		})
	}
}

// Ignition that fills its partition exactly fits.
func TestWriteIgnitionFillsPartition(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	start, end := ignitionRange(t, raw, img)
	ign := bytes.Repeat([]byte("x"), int(end-start))
	dir := t.TempDir()
	p := writePayload(t, dir, img, raw)
	dev := newDisk(t, dir, img.Size)
	if _, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: ign}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := Verify(dev, img)
	if err != nil || !bytes.Equal(got, ign) {
		t.Errorf("Verify = %d bytes, %v; want %d bytes", len(got), err, len(ign))
	}
}

func TestWriteWrongLength(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	tests := []struct {
		name string
		file []byte
	}{
		{"raw truncated", raw[:len(raw)-512]},
		{"raw longer", append(bytes.Clone(raw), make([]byte, 512)...)},
		{"zstd truncated", compress(t, "zstd", raw[:len(raw)-1])},
		{"zstd longer", compress(t, "zstd", append(bytes.Clone(raw), 0))},
		{"gzip stream cut", compress(t, "gzip", raw)[:100]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writePayload(t, dir, img, tc.file)
			dev := newDisk(t, dir, img.Size+1<<20)
			_, err := Write(context.Background(), Options{Device: dev, Payload: p})
			if !errors.Is(err, ErrBadImage) {
				t.Fatalf("Write = %v, want ErrBadImage", err)
			}
			t.Log(err)
			if _, err := Verify(dev, img); err == nil {
				t.Errorf("Verify succeeded on a disk whose write failed")
			}
		})
	}
}

func TestWriteConcurrent(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, compress(t, "zstd", raw))
	dev := newDisk(t, dir, img.Size)
	link := filepath.Join(dir, "by-id")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}

	// The first Write holds the disk until the others have been refused.
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		_, firstErr = Write(context.Background(), Options{Device: dev, Payload: p, Ignition: []byte(testIgnition), Progress: func(int64, int64) {
			once.Do(func() { close(started); <-release })
		}})
	})
	<-started
	for _, name := range []string{dev, link} {
		_, err := Write(context.Background(), Options{Device: name, Payload: p})
		if !errors.Is(err, ErrBusy) {
			t.Errorf("second Write(%s) = %v, want ErrBusy", name, err)
		}
		t.Log(err)
	}
	old := flockWait
	flockWait = 0
	if _, err := Verify(dev, img); !errors.Is(err, ErrBusy) {
		t.Errorf("Verify during Write = %v, want ErrBusy", err)
	}
	flockWait = old
	close(release)
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("first Write: %v", firstErr)
	}
	if got, err := Verify(dev, img); err != nil || string(got) != testIgnition {
		t.Errorf("Verify = %q, %v; want %q", got, err, testIgnition)
	}
}

// Another process's installer holds the flock: the claim map cannot see it.
func TestWriteFlockHeld(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, raw)
	dev := newDisk(t, dir, img.Size)
	before := fillPattern(t, dev)
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	old := flockWait
	flockWait = 0
	defer func() { flockWait = old }()

	if _, err := Write(context.Background(), Options{Device: dev, Payload: p}); !errors.Is(err, ErrBusy) {
		t.Fatalf("Write = %v, want ErrBusy", err)
	}
	if !bytes.Equal(readFile(t, dev), before) {
		t.Errorf("disk changed")
	}
	// The refused Write released its claim: once the lock is gone, a
	// Write succeeds.
	f.Close()
	if _, err := Write(context.Background(), Options{Device: dev, Payload: p}); err != nil {
		t.Errorf("Write after the lock was released: %v", err)
	}
}

func TestWriteCanceled(t *testing.T) {
	spec := testSpec
	spec.Size = 32 << 20
	raw, img := buildRaw(t, spec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, compress(t, "zstd", raw))
	dev := newDisk(t, dir, img.Size)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Write(ctx, Options{Device: dev, Payload: p, Progress: func(int64, int64) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v, want context.Canceled", err)
	}
	checkWiped(t, dev, img.Size)
}

// A filesystem that refuses O_DIRECT gets buffered writes.
func TestWriteBufferedFallback(t *testing.T) {
	old := openDirect
	openDirect = func(string) (*os.File, error) { return nil, unix.EINVAL }
	defer func() { openDirect = old }()
	raw, img := buildRaw(t, testSpec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, raw)
	dev := newDisk(t, dir, img.Size)
	res, err := Write(context.Background(), Options{Device: dev, Payload: p, Ignition: []byte(testIgnition)})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if res.Direct {
		t.Errorf("Write = {Direct: true} with O_DIRECT refused")
	}
	checkInstalled(t, readFile(t, dev), raw, img, []byte(testIgnition), nil)
}

func TestWriteNoDevice(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	dir := t.TempDir()
	p := writePayload(t, dir, img, raw)
	missing := filepath.Join(dir, "missing")
	_, err := Write(context.Background(), Options{Device: missing, Payload: p})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write(missing) = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("Write created %s", missing)
	}
	if _, err := Write(context.Background(), Options{Device: dir, Payload: p}); err == nil {
		t.Errorf("Write(a directory) succeeded")
	}
}
