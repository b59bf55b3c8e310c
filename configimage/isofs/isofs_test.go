package isofs_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/isofs"
)

var testTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

type testFile struct {
	path string
	mode fs.FileMode
	data []byte
}

// sampleFiles covers the cases the config image and its neighbours need:
// a root file, nested directories, mixed case and dotted names, a name
// long enough for a continuation area, an empty file and a multi-sector
// file.
func sampleFiles() []testFile {
	return []testFile{
		{"config.gz", 0o444, []byte("\x1f\x8b pretend gzip")},
		{"Mixed.Case.Name.txt", 0o644, []byte("mixed")},
		{"etc/assisted/rendezvous-host.env", 0o600, []byte("NODE_ZERO_IP=192.0.2.10\n")},
		{"etc/assisted/" + strings.Repeat("long-name-", 24) + ".yaml", 0o644, []byte("long")},
		{"etc/assisted/empty", 0o644, nil},
		{"opt/agent/tls/big.crt", 0o640, bytes.Repeat([]byte("0123456789abcdef"), 700)},
		{"a/b/c/d/e/f/g/deepest", 0o644, []byte("eight levels")},
	}
}

func buildImage(t testing.TB, files []testFile) []byte {
	t.Helper()
	w, err := isofs.NewWriter("agent_configimage", testTime)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddDir("emptydir", 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := w.AddFile(f.path, f.mode, f.data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n%isofs.SectorSize != 0 {
		t.Fatalf("WriteTo = %d bytes, wrote %d, want equal and a multiple of %d", n, buf.Len(), isofs.SectorSize)
	}
	return buf.Bytes()
}

func openImage(t *testing.T, img []byte) *isofs.Image {
	t.Helper()
	im, err := isofs.Open(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return im
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func TestRoundTrip(t *testing.T) {
	files := sampleFiles()
	im := openImage(t, buildImage(t, files))
	if got, want := im.Label(), "agent_configimage"; got != want {
		t.Errorf("Label() = %q, want %q", got, want)
	}
	if !im.RockRidge() {
		t.Errorf("RockRidge() = false, want true")
	}
	for _, f := range files {
		got, err := im.ReadFile(f.path)
		if err != nil {
			t.Errorf("ReadFile(%q): %v", f.path, err)
			continue
		}
		if !bytes.Equal(got, f.data) {
			t.Errorf("ReadFile(%q) = %d bytes, want the %d written", f.path, len(got), len(f.data))
		}
		fi, err := im.Stat(f.path)
		if err != nil || fi.Mode() != f.mode || !fi.ModTime().Equal(testTime) {
			t.Errorf("Stat(%q) = %v %v (%v), want %v %v", f.path, fi.Mode(), fi.ModTime(), err, f.mode, testTime)
		}
	}
	fi, err := im.Stat("emptydir")
	if err != nil || fi.Mode() != fs.ModeDir|0o700 {
		t.Errorf("Stat(emptydir) = %v (%v), want drwx------", fi.Mode(), err)
	}
	var walked []string
	err = fs.WalkDir(im, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("WalkDir: %v", err)
	}
	var want []string
	for _, f := range files {
		want = append(want, f.path)
	}
	if diff := cmp.Diff(sorted(want), walked); diff != "" {
		t.Errorf("WalkDir files (-want +got):\n%s", diff)
	}
}

func TestImplementsFS(t *testing.T) {
	files := sampleFiles()
	im := openImage(t, buildImage(t, files))
	var names []string
	for _, f := range files {
		names = append(names, f.path)
	}
	if err := fstest.TestFS(im, names...); err != nil {
		t.Error(err)
	}
}

func TestReproducible(t *testing.T) {
	a := buildImage(t, sampleFiles())
	b := buildImage(t, sampleFiles())
	if !bytes.Equal(a, b) {
		t.Fatalf("two builds differ: sha256 %x and %x", sha256.Sum256(a), sha256.Sum256(b))
	}
	w, err := isofs.NewWriter("agent_configimage", testTime.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sampleFiles() {
		if err := w.AddFile(f.path, f.mode, f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddDir("emptydir", 0o700); err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if _, err := w.WriteTo(&c); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c.Bytes()) {
		t.Errorf("builds one second apart are identical, want the time recorded")
	}
}

func TestWriterRefuses(t *testing.T) {
	tests := []struct {
		name string
		add  func(w *isofs.Writer) error
		want error
	}{
		{"leading slash", func(w *isofs.Writer) error { return w.AddFile("/config.gz", 0o644, nil) }, fs.ErrInvalid},
		{"dot dot", func(w *isofs.Writer) error { return w.AddFile("a/../b", 0o644, nil) }, fs.ErrInvalid},
		{"root", func(w *isofs.Writer) error { return w.AddDir(".", 0o755) }, fs.ErrInvalid},
		{"type bits", func(w *isofs.Writer) error { return w.AddFile("l", fs.ModeSymlink|0o777, nil) }, fs.ErrInvalid},
		{"name too long", func(w *isofs.Writer) error { return w.AddFile(strings.Repeat("n", 256), 0o644, nil) }, fs.ErrInvalid},
		{"nine levels", func(w *isofs.Writer) error { return w.AddFile("a/b/c/d/e/f/g/h/file", 0o644, nil) }, isofs.ErrLimit},
		{"twice", func(w *isofs.Writer) error {
			_ = w.AddFile("f", 0o644, nil)
			return w.AddFile("f", 0o644, nil)
		}, fs.ErrExist},
		{"file as parent", func(w *isofs.Writer) error {
			_ = w.AddFile("f", 0o644, nil)
			return w.AddFile("f/g", 0o644, nil)
		}, fs.ErrExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, err := isofs.NewWriter("v", testTime)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.add(w); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	for _, id := range []string{"", strings.Repeat("v", 33), "tab\there"} {
		if _, err := isofs.NewWriter(id, testTime); err == nil {
			t.Errorf("NewWriter(%q) = nil error, want an error", id)
		}
	}
	if _, err := isofs.NewWriter("v", time.Time{}); err == nil {
		t.Errorf("NewWriter with the zero time = nil error, want an error")
	}
}

// TestPlainNames reads the level-1 names a reader without Rock Ridge sees,
// by removing the SP entry that announces Rock Ridge.
func TestPlainNames(t *testing.T) {
	img := buildImage(t, sampleFiles())
	rootDir := int(le32(img[16*2048+156+2:])) * 2048
	if got := string(img[rootDir+34 : rootDir+36]); got != "SP" {
		t.Fatalf("root . record system use starts %q, want SP", got)
	}
	img[rootDir+34] = 'X'
	im := openImage(t, img)
	if im.RockRidge() {
		t.Fatalf("RockRidge() = true after removing SP")
	}
	var got []string
	err := fs.WalkDir(im, ".", func(p string, d fs.DirEntry, err error) error {
		got = append(got, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".", "a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/e", "a/b/c/d/e/f", "a/b/c/d/e/f/g", "a/b/c/d/e/f/g/deepest",
		"config.gz", "emptydir", "etc", "etc/assisted", "etc/assisted/empty", "etc/assisted/long_nam.yam",
		"etc/assisted/rendezvo.env", "mixed_ca.txt", "opt", "opt/agent", "opt/agent/tls", "opt/agent/tls/big.crt",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("plain names (-want +got):\n%s", diff)
	}
}

func TestLabel(t *testing.T) {
	img := buildImage(t, sampleFiles())
	// Label reads only the descriptors: the image cut after them will do.
	got, err := isofs.Label(bytes.NewReader(img[:18*2048]))
	if err != nil || got != "agent_configimage" {
		t.Errorf("Label() = %q, %v, want agent_configimage", got, err)
	}
	for name, r := range map[string]io.ReaderAt{
		"empty":          bytes.NewReader(nil),
		"zeros":          bytes.NewReader(make([]byte, 40*2048)),
		"no primary":     bytes.NewReader(append(make([]byte, 16*2048), append([]byte("\xffCD001\x01"), make([]byte, 2041)...)...)),
		"cut in sixteen": bytes.NewReader(img[:16*2048+100]),
	} {
		if _, err := isofs.Label(r); !errors.Is(err, isofs.ErrNotISO) {
			t.Errorf("Label(%s) error = %v, want ErrNotISO", name, err)
		}
	}
}
