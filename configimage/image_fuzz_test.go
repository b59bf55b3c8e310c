package configimage_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage"
)

// Fuzz inputs are sparse images, as in isofs's FuzzISORead (the codec is
// repeated there: test helpers cannot be shared across packages). Whole
// images are mostly zeros, and Go's fuzzer minimises every new interesting
// input with a quadratic search over its bytes, which on a whole image
// takes the entire run. An input is a list of chunks: a sector number (1
// byte), an offset in the sector (2 bytes, little-endian, modulo 2048), a
// length (2 bytes, little-endian) and that many bytes. The image is zeros
// elsewhere and ends after the highest sector named.

func sparseImage(in []byte) []byte {
	type chunk struct {
		at   int
		data []byte
	}
	var chunks []chunk
	size := 0
	for len(in) >= 5 {
		sector := int(in[0])
		off := int(binary.LittleEndian.Uint16(in[1:])) % 2048
		n := int(binary.LittleEndian.Uint16(in[3:]))
		in = in[5:]
		n = min(n, 2048-off, len(in))
		chunks = append(chunks, chunk{sector*2048 + off, in[:n]})
		in = in[n:]
		size = max(size, (sector+1)*2048)
	}
	img := make([]byte, size)
	for _, c := range chunks {
		copy(img[c.at:], c.data)
	}
	return img
}

// sparseInput encodes an image of at most 256 sectors for sparseImage: one
// chunk per run of non-zero bytes, runs less than 8 zeros apart merged.
func sparseInput(t testing.TB, img []byte) []byte {
	t.Helper()
	const ss = 2048
	n := len(img) / ss
	if n > 256 || len(img)%ss != 0 {
		t.Fatalf("image of %d bytes: want at most 256 whole sectors", len(img))
	}
	var out []byte
	chunk := func(s, off int, data []byte) {
		out = append(out, byte(s), byte(off), byte(off>>8), byte(len(data)), byte(len(data)>>8))
		out = append(out, data...)
	}
	for s := range n {
		sec := img[s*ss : (s+1)*ss]
		emitted := false
		for i := 0; i < ss; {
			if sec[i] == 0 {
				i++
				continue
			}
			end := i + 1
			for j := end; j < ss && j-end < 8; j++ {
				if sec[j] != 0 {
					end = j + 1
				}
			}
			chunk(s, i, sec[i:end])
			emitted = true
			i = end
		}
		if !emitted && s == n-1 { // the last sector sets the size
			chunk(s, 0, nil)
		}
	}
	return out
}

// blankText zeroes text the reader ignores, to keep seeds small: the
// space-filled identifiers of the primary volume descriptor and the
// description of the Rock Ridge ER entry.
func blankText(img []byte) []byte {
	pvd := img[16*2048:]
	clear(pvd[8:40])    // system identifier
	clear(pvd[190:813]) // volume set, publisher, preparer, application, file identifiers
	if i := bytes.Index(img, []byte("RRIP_1991A")); i > 0 {
		clear(img[i+10 : i+10+int(img[i-3])+int(img[i-2])]) // ER descriptor and source
	}
	return img
}

// TestImageFuzzSeeds checks the committed seeds of FuzzImageRead are
// config images. UPDATE_FUZZ_SEEDS=1 rewrites them (a flag would clash with
// the package's golden-file -update).
func TestImageFuzzSeeds(t *testing.T) {
	seeds := map[string][]byte{"config-image": blankText(buildConfigImage(t, imageMembers()))}
	for name, img := range seeds {
		p := filepath.Join("testdata", "fuzz", "FuzzImageRead", name)
		if os.Getenv("UPDATE_FUZZ_SEEDS") == "1" {
			data := sparseInput(t, img)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (UPDATE_FUZZ_SEEDS=1 go test -run TestImageFuzzSeeds)", err)
		}
		var data []byte
		if _, err := fmt.Sscanf(strings.TrimPrefix(string(text), "go test fuzz v1\n"), "[]byte(%q)", &data); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		img := sparseImage(data)
		if _, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{}); err != nil {
			t.Errorf("seed %s: Read = %v, want a valid config image", p, err)
		}
	}
}

// FuzzImageRead reads any bytes as a config image. It must not panic, and
// whatever it accepts must be safe to extract.
func FuzzImageRead(f *testing.F) {
	lim := configimage.Limits{MaxArchiveSize: 1 << 20, MaxMemberSize: 1 << 16, MaxTotalSize: 1 << 20, MaxMembers: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		img := sparseImage(data)
		members, err := configimage.Read(bytes.NewReader(img), int64(len(img)), lim)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, m := range members {
			if !strings.HasPrefix(m.Path, "/") || filepath.Clean(m.Path) != m.Path || strings.Contains(m.Path+"/", "/../") {
				t.Fatalf("accepted unsafe path %q", m.Path)
			}
			if typ := m.Mode.Type(); typ != 0 && typ != fs.ModeDir {
				t.Fatalf("accepted %q of type %v", m.Path, typ)
			}
			if seen[m.Path] {
				t.Fatalf("accepted %q twice", m.Path)
			}
			seen[m.Path] = true
		}
	})
}

// FuzzImageLoad loads any bytes as a config image into an empty root, as
// a host does at boot (its inputs are FuzzImageRead's). A refused image
// leaves the root empty; an accepted one leaves exactly its members and
// their parents there, with their contents, and loads again on top of
// itself, as after a reboot.
func FuzzImageLoad(f *testing.F) {
	lim := configimage.Limits{MaxArchiveSize: 1 << 20, MaxMemberSize: 1 << 16, MaxTotalSize: 1 << 20, MaxMembers: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		img := sparseImage(data)
		root := memTempDir(t)
		members, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, lim)
		if err != nil {
			if got := tree(t, root); len(got) != 0 {
				t.Fatalf("Load failed (%v) but wrote %q", err, slices.Sorted(maps.Keys(got)))
			}
			return
		}
		want := map[string]entry{}
		for _, m := range members {
			for d := filepath.Dir(m.Path); d != "/"; d = filepath.Dir(d) {
				want[d] = entry{dir: true}
			}
			if m.Mode.IsDir() {
				want[m.Path] = entry{dir: true}
			} else {
				want[m.Path] = entry{data: string(m.Data)}
			}
		}
		got := tree(t, root)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(entry{})); diff != "" {
			t.Fatalf("Load wrote otherwise than its members (-members +root):\n%s", diff)
		}
		if _, err := configimage.Load(bytes.NewReader(img), int64(len(img)), root, lim); err != nil {
			t.Fatalf("Load on top of its own result: %v", err)
		}
		if diff := cmp.Diff(got, tree(t, root), cmp.AllowUnexported(entry{})); diff != "" {
			t.Fatalf("a second Load changed the root:\n%s", diff)
		}
	})
}

// memTempDir is a temporary directory in memory (/dev/shm) when the
// machine has one: Load fsyncs every file it writes, and on a busy disk
// that turns a fuzz run of millions of inputs into one of dozens.
func memTempDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "nodezero-fuzz-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// entry is a directory or a file's contents.
type entry struct {
	dir  bool
	data string
}

// tree lists what is under root by "/path". Anything but a directory or a
// regular file fails the test.
func tree(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		switch {
		case d.IsDir():
			out[rel] = entry{dir: true}
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = entry{data: string(b)}
		default:
			t.Fatalf("Load made %s of type %v", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
