package isofs_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/configimage/isofs"
)

var update = flag.Bool("update", false, "rewrite testdata/fuzz seeds")

// seedImages are the committed seeds of FuzzISORead.
func seedImages(t testing.TB) map[string][]byte {
	small := []testFile{{"config.gz", 0o444, []byte("\x1f\x8b\x08\x00gzip")}}
	tree := []testFile{
		{"config.gz", 0o444, []byte("data")},
		{"etc/assisted/rendezvous-host.env", 0o600, []byte("NODE_ZERO_IP=192.0.2.10\n")},
		{"etc/assisted/" + string(bytes.Repeat([]byte("long-"), 45)) + ".yaml", 0o644, []byte("long")},
	}
	return map[string][]byte{
		"config-image": sparseInput(t, blankText(buildImage(t, small))),
		"tree":         sparseInput(t, blankText(buildImage(t, tree))),
	}
}

// TestFuzzSeeds checks the committed seeds are what the writer produces
// now; -update rewrites them.
func TestFuzzSeeds(t *testing.T) {
	for name, data := range seedImages(t) {
		p := filepath.Join("testdata", "fuzz", "FuzzISORead", name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test -run TestFuzzSeeds -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s differs from the writer's output: the image format changed (go test -run TestFuzzSeeds -update)", p)
		}
	}
}

// FuzzISORead opens any bytes as an image, walks it and reads every file.
// It must not panic and must end quickly; errors are expected.
func FuzzISORead(f *testing.F) {
	// The writer's images are in testdata/fuzz/FuzzISORead (TestFuzzSeeds).
	if xorriso, err := exec.LookPath("xorriso"); err == nil {
		// A real image with Rock Ridge, Joliet and a continuation area.
		dir := f.TempDir()
		src := filepath.Join(dir, "src")
		if err := os.MkdirAll(filepath.Join(src, "etc"), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "etc", "config.gz"), []byte("data"), 0o644); err != nil {
			f.Fatal(err)
		}
		iso := filepath.Join(dir, "x.iso")
		out, err := exec.Command(xorriso, "-as", "mkisofs", "-R", "-J", "-no-pad", "-V", "agent_configimage", "-o", iso, src).CombinedOutput()
		if err != nil {
			f.Fatalf("xorriso: %v\n%s", err, out)
		}
		img, err := os.ReadFile(iso)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(sparseInput(f, img))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		img := sparseImage(data)
		if label, err := isofs.Label(bytes.NewReader(img)); err == nil && len(label) > 32 {
			t.Fatalf("Label() = %d bytes, want at most 32", len(label))
		}
		im, err := isofs.Open(bytes.NewReader(img), int64(len(img)))
		if err != nil {
			return
		}
		err = fs.WalkDir(im, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			f, err := im.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			n, err := io.Copy(io.Discard, f)
			if err != nil {
				return err
			}
			if n != fi.Size() {
				t.Errorf("read %d bytes of %q, Stat says %d", n, p, fi.Size())
			}
			return nil
		})
		if err != nil {
			t.Errorf("Open succeeded but walking failed: %v", err)
		}
	})
}
