package factoryimage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// Reading the images as a person would, without a mount: sfdisk for the
// table, blkid for a filesystem's type and label, debugfs for ext4, mtools
// for FAT.

// sfdiskTable is what sfdisk --json says of a disk image.
type sfdiskTable struct {
	PartitionTable struct {
		Label      string `json:"label"`
		ID         string `json:"id"`
		Partitions []struct {
			Start int64  `json:"start"`
			Size  int64  `json:"size"`
			Type  string `json:"type"`
			UUID  string `json:"uuid"`
			Name  string `json:"name"`
		} `json:"partitions"`
	} `json:"partitiontable"`
}

func readTable(t *testing.T, img string) sfdiskTable {
	t.Helper()
	out, err := exec.Command("sfdisk", "--json", img).Output()
	if err != nil {
		t.Fatalf("sfdisk --json %s: %v", img, err)
	}
	var tab sfdiskTable
	if err := json.Unmarshal(out, &tab); err != nil {
		t.Fatal(err)
	}
	return tab
}

// part is the partition named name: its byte offset and size.
func part(t *testing.T, tab sfdiskTable, name string) (off, size int64, uuid string) {
	t.Helper()
	for _, p := range tab.PartitionTable.Partitions {
		if p.Name == name {
			return p.Start * sector, p.Size * sector, p.UUID
		}
	}
	t.Fatalf("no partition named %q in %+v", name, tab.PartitionTable.Partitions)
	return 0, 0, ""
}

// extract copies a partition of img into a file of its own (debugfs and
// blkid read a filesystem from its first byte).
func extract(t *testing.T, img string, off, size int64) string {
	t.Helper()
	in, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(t.TempDir(), "part.img")
	if err := createSparse(p, 0); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, io.NewSectionReader(in, off, size)); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// blkid says a filesystem's TYPE and LABEL, probing at an offset in img.
func blkid(t *testing.T, img string, off int64) (typ, label string) {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-O", itoa(off), "-o", "export", img).Output()
	if err != nil {
		t.Fatalf("blkid -p -O %d %s: %v", off, img, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "TYPE="); ok {
			typ = v
		}
		if v, ok := strings.CutPrefix(l, "LABEL="); ok {
			label = v
		}
	}
	return typ, label
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// debugfsCat reads a file of an ext4 image with debugfs (no mount).
func debugfsCat(t *testing.T, fsimg, path string) []byte {
	t.Helper()
	out, err := exec.Command("debugfs", "-R", "cat "+path, fsimg).Output()
	if err != nil {
		t.Fatalf("debugfs cat %s: %v", path, err)
	}
	return out
}

// debugfsStat says whether path exists in an ext4 image and its
// debugfs `stat` text.
func debugfsStat(t *testing.T, fsimg, path string) (string, bool) {
	t.Helper()
	out, _ := exec.Command("debugfs", "-R", "stat "+path, fsimg).CombinedOutput()
	s := string(out)
	return s, strings.Contains(s, "Inode:") && !strings.Contains(s, "File not found")
}

// mtype reads a file of the FAT filesystem at off in img (mtools, no mount).
func mtype(t *testing.T, img string, off int64, path string) []byte {
	t.Helper()
	cmd := exec.Command("mtype", "-i", img+"@@"+itoa(off), "::"+path)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mtype %s: %v", path, err)
	}
	return out
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	d, err := fileDigest(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// zstdDigest decompresses a file and returns the sha256 and length of
// what it holds.
func zstdDigest(t *testing.T, path string) (string, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	h := sha256.New()
	n, err := io.Copy(h, dec)
	if err != nil {
		t.Fatalf("decompress %s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

func readAt(t *testing.T, path string, off, n int64) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}
