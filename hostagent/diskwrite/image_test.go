package diskwrite

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sfdisk, not our parser, judges the partition table.
func TestBuildImageSfdisk(t *testing.T) {
	sfdisk := needTool(t, "sfdisk")
	for _, spec := range []ImageSpec{
		testSpec,
		{Size: MinImageSize + 1<<20, Seed: 1},
		{Size: 64 << 20, Seed: 7, IgnitionPartition: "config-2", IgnitionSize: 3 << 20},
	} {
		raw, img := buildRaw(t, spec)
		path := filepath.Join(t.TempDir(), "image.raw")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(sfdisk, "--json", path)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Fatalf("sfdisk --json: %v\n%s", err, stderr.String())
		}
		var got struct {
			PartitionTable struct {
				Label      string `json:"label"`
				FirstLBA   int64  `json:"firstlba"`
				LastLBA    int64  `json:"lastlba"`
				SectorSize int64  `json:"sectorsize"`
				Partitions []struct {
					Start int64  `json:"start"`
					Size  int64  `json:"size"`
					Type  string `json:"type"`
					Name  string `json:"name"`
				} `json:"partitions"`
			} `json:"partitiontable"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("sfdisk --json output: %v\n%s", err, stdout.String())
		}
		pt := got.PartitionTable
		sectors := spec.Size / sectorSize
		if pt.Label != "gpt" || pt.FirstLBA != 34 || pt.LastLBA != sectors-34 || pt.SectorSize != 512 {
			t.Errorf("sfdisk table = %s, LBAs %d-%d, %d-byte sectors; want gpt, 34-%d, 512", pt.Label, pt.FirstLBA, pt.LastLBA, pt.SectorSize, sectors-34)
		}
		var names []string
		next := int64(2048)
		for _, p := range pt.Partitions {
			names = append(names, p.Name)
			if p.Start != next || p.Start%8 != 0 || p.Size <= 0 {
				t.Errorf("partition %q at %d size %d, want it at %d, 4 KiB aligned", p.Name, p.Start, p.Size, next)
			}
			next = p.Start + p.Size
		}
		if next != pt.LastLBA+1 {
			t.Errorf("partitions end at LBA %d, want the last usable %d", next-1, pt.LastLBA)
		}
		if diff := cmp.Diff([]string{"EFI-SYSTEM", "boot", img.IgnitionPartition, "root"}, names); diff != "" {
			t.Errorf("partition names (-want +got):\n%s", diff)
		}
		if len(pt.Partitions) > 0 && pt.Partitions[0].Type != typeEFISystem {
			t.Errorf("EFI-SYSTEM type = %s, want %s", pt.Partitions[0].Type, typeEFISystem)
		}

		// --verify checks both headers, both arrays and their CRCs.
		out, err := exec.Command(sfdisk, "--verify", path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "No errors detected") {
			t.Errorf("sfdisk --verify: %v\n%s", err, out)
		}
	}
}

// The backup table must be a true copy at the end: sfdisk reads it once
// the primary is gone.
func TestBuildImageBackupGPT(t *testing.T) {
	sfdisk := needTool(t, "sfdisk")
	raw, _ := buildRaw(t, testSpec)
	clear(raw[sectorSize : 34*sectorSize])
	path := filepath.Join(t.TempDir(), "image.raw")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sfdisk, "--json", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"name": "ignition"`) {
		t.Errorf("sfdisk --json with only the backup table: %v\n%s", err, out)
	}
}

func TestBuildImageDeterministic(t *testing.T) {
	a, imgA := buildRaw(t, testSpec)
	b, imgB := buildRaw(t, testSpec)
	if !bytes.Equal(a, b) || imgA != imgB {
		t.Errorf("BuildImage twice with one spec gave different images")
	}
	sum := sha256.Sum256(a)
	if got := hex.EncodeToString(sum[:]); imgA.SHA256 != got || imgA.Size != int64(len(a)) {
		t.Errorf("BuildImage = {SHA256: %s, Size: %d}, bytes hash to %s, %d long", imgA.SHA256, imgA.Size, got, len(a))
	}
	other := testSpec
	other.Seed++
	if _, imgC := buildRaw(t, other); imgC.SHA256 == imgA.SHA256 {
		t.Errorf("seeds %d and %d gave the same image", testSpec.Seed, other.Seed)
	}
	start, end := ignitionRange(t, a, imgA)
	if !bytes.Equal(a[start:end], make([]byte, end-start)) {
		t.Errorf("ignition partition is not empty")
	}
}

// The content compresses the way an OS image does: well, but not to
// nothing.
func TestBuildImageCompressible(t *testing.T) {
	spec := testSpec
	spec.Size = 16 << 20
	raw, _ := buildRaw(t, spec)
	var zst bytes.Buffer
	if err := CompressZstd(&zst, bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.Copy(zw, bytes.NewReader(raw))
	zw.Close()
	for name, n := range map[string]int{"zstd": zst.Len(), "gzip": gz.Len()} {
		ratio := float64(len(raw)) / float64(n)
		t.Logf("%s: %d -> %d bytes (%.1fx)", name, len(raw), n, ratio)
		if ratio < 1.5 || ratio > 20 {
			t.Errorf("%s compresses the image %.1fx, want between 1.5x and 20x", name, ratio)
		}
	}
}

func TestBuildImageBadSpec(t *testing.T) {
	for _, spec := range []ImageSpec{
		{Size: 0},
		{Size: MinImageSize + 1<<20 + 100}, // not whole sectors
		{Size: MinImageSize},               // no room for the ignition partition
		{Size: 8 << 20, IgnitionSize: -1},  // negative
		{Size: 8 << 20, IgnitionPartition: strings.Repeat("n", 37)}, // name too long
	} {
		if _, err := BuildImage(io.Discard, spec); err == nil {
			t.Errorf("BuildImage(%+v) succeeded", spec)
		}
	}
}

func TestParseGUID(t *testing.T) {
	got := parseGUID(typeEFISystem)
	want := []byte{0x28, 0x73, 0x2a, 0xc1, 0x1f, 0xf8, 0xd2, 0x11, 0xba, 0x4b, 0x00, 0xa0, 0xc9, 0x3e, 0xc9, 0x3b}
	if !bytes.Equal(got[:], want) {
		t.Errorf("parseGUID(%s) = % x, want % x", typeEFISystem, got, want)
	}
}
