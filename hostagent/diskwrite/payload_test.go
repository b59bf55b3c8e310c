package diskwrite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goodSHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestLoadPayload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "os.raw.zst"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := `{"release_image": "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
 "openshift_version": "4.18.0", "future_key": 1,
 "os_image": {"file": "os.raw.zst", "sha256": "` + goodSHA + `",
              "size": 33554432, "ignition_partition": "ignition"}}`
	if err := os.WriteFile(filepath.Join(dir, PayloadFile), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPayload(dir)
	if err != nil {
		t.Fatalf("LoadPayload: %v", err)
	}
	want := &Payload{
		ReleaseImage:     "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64",
		OpenshiftVersion: "4.18.0",
		OS:               Image{File: "os.raw.zst", SHA256: goodSHA, Size: 33554432, IgnitionPartition: "ignition"},
		Dir:              dir,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadPayload (-want +got):\n%s", diff)
	}
	if got.ImagePath() != filepath.Join(dir, "os.raw.zst") {
		t.Errorf("ImagePath() = %s", got.ImagePath())
	}
}

// Each problem is reported, each naming the file and the field: a person
// fixes payload.json in one pass.
func TestLoadPayloadErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []string // one line per problem, after "<path>"
	}{
		{
			name: "everything wrong",
			json: `{"os_image": {"file": "", "sha256": "zz", "size": 0}}`,
			want: []string{
				": os_image.file: missing",
				`: os_image.sha256: "zz" is not hex`,
				": os_image.size: must be > 0, got 0",
				": os_image.ignition_partition: missing",
			},
		},
		{
			name: "short sha, odd size, escaping file",
			json: `{"os_image": {"file": "../os.raw", "sha256": "abcd", "size": 1000, "ignition_partition": "ignition"}}`,
			want: []string{
				`: os_image.file: "../os.raw" must be a path inside the payload directory`,
				`: os_image.sha256: "abcd" is 4 hex digits, want 64`,
				": os_image.size: 1000 is not a multiple of 512-byte sectors",
			},
		},
		{
			name: "missing sha256, file absent",
			json: `{"os_image": {"file": "os.raw.zst", "size": 512, "ignition_partition": "ignition"}}`,
			want: []string{
				": os_image.sha256: missing",
				": os_image.file: stat {dir}/os.raw.zst: no such file or directory",
			},
		},
		{
			name: "syntax error",
			json: "{\n  \"os_image\": {\n    \"size\": 1,,\n}}",
			want: []string{":3:15: invalid character ',' looking for beginning of object key string"},
		},
		{
			name: "wrong type",
			json: "{\"os_image\": {\n\"size\": \"big\"}}",
			want: []string{`:2:13: os_image.size: string is not a int64`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, PayloadFile)
			if err := os.WriteFile(path, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPayload(dir)
			if err == nil {
				t.Fatalf("LoadPayload succeeded")
			}
			var want []string
			for i, w := range tc.want {
				w = path + strings.ReplaceAll(w, "{dir}", dir)
				if i == 0 {
					w = "load payload: " + w
				}
				want = append(want, w)
			}
			if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("LoadPayload error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadPayloadMissing(t *testing.T) {
	if _, err := LoadPayload(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadPayload(empty dir) = %v, want ErrNotExist", err)
	}
}

func TestWritePayload(t *testing.T) {
	dir := t.TempDir()
	p := &Payload{ReleaseImage: "r", OpenshiftVersion: "4.18.0", OS: Image{File: "os.raw", SHA256: goodSHA, Size: 512, IgnitionPartition: "ignition"}}
	if err := WritePayload(dir, p); err != nil {
		t.Fatalf("WritePayload: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "os.raw"), make([]byte, 512), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPayload(dir)
	if err != nil {
		t.Fatalf("LoadPayload: %v", err)
	}
	p.Dir = dir
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("payload dir holds %d entries, want payload.json and os.raw (no temporary left)", len(entries))
	}
	bad := *p
	bad.OS.Size = 0
	if err := WritePayload(dir, &bad); err == nil {
		t.Errorf("WritePayload(size 0) succeeded")
	}
}

func TestHumanize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 bytes (0 bytes)"},
		{1023, "1023 bytes (1023 bytes)"},
		{1024, "1 KiB (1024 bytes)"},
		{33554432, "32 MiB (33554432 bytes)"},
		{8<<20 + 512, "8192.5 KiB (8389120 bytes)"},
		{4<<20 + 1<<10, "4097 KiB (4195328 bytes)"},
		{1500, "1.5 KiB (1500 bytes)"},
		{1025, "1025 bytes (1025 bytes)"},
		{500107862016, "465.8 GiB (500107862016 bytes)"},
		{1 << 40, "1 TiB (1099511627776 bytes)"},
		{1536 << 30, "1.5 TiB (1649267441664 bytes)"},
	}
	for _, tc := range tests {
		if got := humanize(tc.n); got != tc.want {
			t.Errorf("humanize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
