package cpio_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/configimage/cpio"
)

var update = flag.Bool("update", false, "rewrite testdata/fuzz seeds")

// seedArchives are the committed seeds of FuzzCPIORead.
func seedArchives(t testing.TB) map[string][]byte {
	return map[string][]byte{
		"members": writeArchive(t, sampleMembers()),
		"one":     writeArchive(t, []member{{cpio.Header{Name: "/etc/assisted/rendezvous-host.env", Mode: 0o644, ModTime: testTime}, "NODE_ZERO_IP=192.0.2.10\n"}}),
		"crc":     []byte(raw("070702", "/c", 0o100644, 1, "abc", 'a'+'b'+'c') + rawTrailer),
	}
}

// TestFuzzSeeds checks the committed seeds are what the writer produces
// now; -update rewrites them.
func TestFuzzSeeds(t *testing.T) {
	for name, data := range seedArchives(t) {
		p := filepath.Join("testdata", "fuzz", "FuzzCPIORead", name)
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
			t.Errorf("%s differs from the writer's output: the format changed (go test -run TestFuzzSeeds -update)", p)
		}
	}
}

// FuzzCPIORead reads any bytes as an archive. It must not panic, must
// honour the limits and must return only directories and regular files.
func FuzzCPIORead(f *testing.F) {
	lim := cpio.Limits{MaxMemberSize: 1 << 16, MaxTotalSize: 1 << 18, MaxMembers: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := cpio.NewReader(bytes.NewReader(data), lim)
		var total int64
		for n := 0; ; n++ {
			h, err := r.Next()
			if err != nil {
				return
			}
			if n >= lim.MaxMembers {
				t.Fatalf("member %d returned, limit %d", n+1, lim.MaxMembers)
			}
			if typ := h.Mode.Type(); typ != 0 && typ != fs.ModeDir {
				t.Fatalf("member %q of type %v returned", h.Name, typ)
			}
			got, err := io.Copy(io.Discard, r)
			total += got
			if h.Size > lim.MaxMemberSize || total > lim.MaxTotalSize {
				t.Fatalf("member %q: %d bytes, total %d: over the limits", h.Name, h.Size, total)
			}
			if err != nil {
				return
			}
			if got != h.Size {
				t.Fatalf("member %q: read %d bytes, header says %d", h.Name, got, h.Size)
			}
		}
	})
}
