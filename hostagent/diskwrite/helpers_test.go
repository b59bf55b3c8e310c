package diskwrite

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/testbed"
	"github.com/ulikunitz/xz"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// needRoot is testbed.NeedRoot.
var needRoot = testbed.NeedRoot

// testSpec is the image most tests write: 4 MiB and one sector, so the
// last piece is not 4 KiB aligned and takes the buffered tail path.
var testSpec = ImageSpec{Size: 4<<20 + 512, Seed: 42, IgnitionPartition: "ignition", IgnitionSize: 64 << 10}

// buildRaw returns the raw bytes of spec's image and its description.
func buildRaw(t testing.TB, spec ImageSpec) ([]byte, Image) {
	t.Helper()
	var buf bytes.Buffer
	img, err := BuildImage(&buf, spec)
	if err != nil {
		t.Fatalf("BuildImage(%+v): %v", spec, err)
	}
	return buf.Bytes(), img
}

// compress encodes raw in format: "raw", "gzip", "xz" or "zstd".
func compress(t testing.TB, format string, raw []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	switch format {
	case "raw":
		return raw
	case "gzip":
		zw := gzip.NewWriter(&out)
		if _, err := zw.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	case "xz":
		xw, err := xz.NewWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := xw.Write(raw); err != nil {
			t.Fatal(err)
		}
		if err := xw.Close(); err != nil {
			t.Fatal(err)
		}
	case "zstd":
		if err := CompressZstd(&out, bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown format %q", format)
	}
	return out.Bytes()
}

// writePayload puts file (the image as shipped) and a payload.json
// describing img in a new directory and loads it back.
func writePayload(t testing.TB, dir string, img Image, file []byte) *Payload {
	t.Helper()
	img.File = "os.img"
	if err := os.WriteFile(filepath.Join(dir, img.File), file, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Payload{ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", OpenshiftVersion: "4.18.0", OS: img}
	if err := WritePayload(dir, p); err != nil {
		t.Fatalf("WritePayload: %v", err)
	}
	loaded, err := LoadPayload(dir)
	if err != nil {
		t.Fatalf("LoadPayload: %v", err)
	}
	return loaded
}

// newDisk makes a sparse file of size bytes standing in for a disk.
func newDisk(t testing.TB, dir string, size int64) string {
	t.Helper()
	path := filepath.Join(dir, "disk.img")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return path
}

// fillPattern writes a recognisable non-zero pattern over all of path.
func fillPattern(t testing.TB, path string) []byte {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.Repeat([]byte("nodezero"), int(fi.Size())/8+1)[:fi.Size()]
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ignitionRange is where raw's ignition partition lies.
func ignitionRange(t testing.TB, raw []byte, img Image) (start, end int64) {
	t.Helper()
	parts, err := readGPT(bytes.NewReader(raw), img.Size)
	if err != nil {
		t.Fatal(err)
	}
	p, err := findPartition(parts, img.IgnitionPartition)
	if err != nil {
		t.Fatal(err)
	}
	return p.byteRange()
}

// checkInstalled checks disk holds raw with ign in the ignition
// partition, and that nothing past the image changed from after.
func checkInstalled(t *testing.T, disk []byte, raw []byte, img Image, ign []byte, after []byte) {
	t.Helper()
	start, end := ignitionRange(t, raw, img)
	if !bytes.Equal(disk[:start], raw[:start]) {
		t.Errorf("disk before the ignition partition differs from the image (first difference at %d)", firstDiff(disk[:start], raw[:start]))
	}
	if !bytes.Equal(disk[end:img.Size], raw[end:]) {
		t.Errorf("disk after the ignition partition differs from the image (first difference at %d)", end+int64(firstDiff(disk[end:img.Size], raw[end:])))
	}
	want := make([]byte, end-start)
	copy(want, ign)
	if !bytes.Equal(disk[start:end], want) {
		t.Errorf("ignition partition holds %q..., want %q and zeros", disk[start:min(end, start+int64(len(ign))+8)], ign)
	}
	if !bytes.Equal(disk[img.Size:], after) {
		t.Errorf("bytes past the image changed")
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
