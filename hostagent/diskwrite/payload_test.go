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
 "images": {"installer": "quay.io/ocp/installer:4.18.0", "controller": "quay.io/ocp/controller:4.18.0",
            "mco": "quay.io/ocp/mco:4.18.0", "must_gather": "quay.io/ocp/must-gather:4.18.0"},
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
		Images: ReleaseImages{Installer: "quay.io/ocp/installer:4.18.0", Controller: "quay.io/ocp/controller:4.18.0",
			MCO: "quay.io/ocp/mco:4.18.0", MustGather: "quay.io/ocp/must-gather:4.18.0"},
		OS:  Image{File: "os.raw.zst", SHA256: goodSHA, Size: 33554432, IgnitionPartition: "ignition"},
		Dir: dir,
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

// What node zero needs of its payload: the release and the images its
// install step names, each problem naming payload.json and the field.
func TestCheckReleaseImages(t *testing.T) {
	good := Payload{
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", OpenshiftVersion: "4.18.0",
		Images: ReleaseImages{
			Installer:  "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + goodSHA,
			Controller: "127.0.0.2:5000/ocp/controller:4.18.0", MCO: "registry.example.com/ocp/mco:4.18.0",
			MustGather: "quay.io/ocp/must-gather:4.18.0",
		},
		Dir: "/payload",
	}
	tests := []struct {
		name string
		mod  func(*Payload)
		want []string
	}{
		{"complete", func(*Payload) {}, nil},
		{"with an agent image", func(p *Payload) { p.Images.Agent = "quay.io/ocp/agent:4.18.0" }, nil},
		{"no images", func(p *Payload) { p.Images = ReleaseImages{} }, []string{
			"payload for node zero: /payload/payload.json: images.installer: missing (node zero names it in every host's install step)",
			"/payload/payload.json: images.controller: missing (node zero names it in every host's install step)",
			"/payload/payload.json: images.mco: missing (node zero names it in every host's install step)",
			"/payload/payload.json: images.must_gather: missing (node zero names it in every host's install step)",
		}},
		{"no release", func(p *Payload) { p.ReleaseImage, p.OpenshiftVersion = "", "" }, []string{
			"payload for node zero: /payload/payload.json: release_image: missing (node zero names it in every host's install step)",
			"/payload/payload.json: openshift_version: missing",
		}},
		{"not references", func(p *Payload) { p.Images.MCO, p.Images.Agent = "Quay.io/MCO", "a b" }, []string{
			`payload for node zero: /payload/payload.json: images.mco: "Quay.io/MCO" is not an image reference (registry/repository:tag or @sha256:digest)`,
			`/payload/payload.json: images.agent: "a b" is not an image reference (registry/repository:tag or @sha256:digest)`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			tc.mod(&p)
			err := p.CheckReleaseImages()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckReleaseImages (-want +got):\n%s", diff)
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
	p := &Payload{ReleaseImage: "r", OpenshiftVersion: "4.18.0", OS: Image{File: "os.raw", SHA256: goodSHA, Size: 512, IgnitionPartition: "ignition"},
		Images: ReleaseImages{Installer: "i:1", Controller: "c:1", MCO: "m:1", MustGather: "g:1", Agent: "a:1"}}
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
