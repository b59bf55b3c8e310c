package configimage_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/cpio"
	"github.com/nodezero/nodezero/configimage/isofs"
	"github.com/nodezero/nodezero/onhost"
)

// isoWith makes an image with the given label, files and directories.
func isoWith(t testing.TB, label string, files map[string][]byte, dirs ...string) []byte {
	t.Helper()
	w, err := isofs.NewWriter(label, imageTime)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := w.AddDir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		if err := w.AddFile(name, 0o444, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cpioArchive is a cpio archive of regular files, names kept as given.
func cpioArchive(t testing.TB, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := cpio.NewWriter(&buf)
	for i := 0; i < len(files); i += 2 {
		h := &cpio.Header{Name: files[i], Mode: 0o644, ModTime: imageTime, Size: int64(len(files[i+1]))}
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawMember is a newc member of any mode, which the writer refuses to make.
func rawMember(name string, mode uint32, data string) []byte {
	s := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		1, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name)+1, 0) + name + "\x00"
	s += strings.Repeat("\x00", (4-len(s)%4)%4) + data
	return []byte(s + strings.Repeat("\x00", (4-len(data)%4)%4))
}

// configImage is an image whose config.gz is gzip(cpio bytes).
func configImage(t testing.TB, cpioBytes []byte) []byte {
	return isoWith(t, configimage.VolumeLabel, map[string][]byte{"config.gz": gzipped(t, cpioBytes)})
}

// rootExtent is the sector of the root directory, from the primary volume
// descriptor.
func rootExtent(img []byte) uint32 { return binary.LittleEndian.Uint32(img[16*2048+156+2:]) }

// patchRecord changes the extent of the directory record with the ISO
// identifier ident, searched from the root directory on (the path tables
// come before it).
func patchRecord(t *testing.T, img []byte, ident string, extent uint32) []byte {
	t.Helper()
	from := int(rootExtent(img)) * 2048
	i := from + bytes.Index(img[from:], append([]byte{byte(len(ident))}, ident...))
	if i < from+32 {
		t.Fatalf("no record %q", ident)
	}
	binary.LittleEndian.PutUint32(img[i-30:], extent)
	binary.BigEndian.PutUint32(img[i-26:], extent)
	return img
}

const rv = onhost.RendezvousEnvPath

func TestReadRefusesHostileImages(t *testing.T) {
	valid := cpioArchive(t, "/etc/issue", "hi", rv, "NODE_ZERO_IP=192.0.2.10\n")
	trailer := valid[len(valid)-124:]
	tests := []struct {
		name string
		img  func(t *testing.T) []byte
		lim  configimage.Limits
		want []error
	}{
		{"path traversal", func(t *testing.T) []byte { return configImage(t, cpioArchive(t, "../etc/passwd", "x", rv, "")) }, configimage.Limits{}, []error{configimage.ErrMemberPath}},
		{"absolute escape after clean", func(t *testing.T) []byte { return configImage(t, cpioArchive(t, "/../../etc/passwd", "x", rv, "")) }, configimage.Limits{}, []error{configimage.ErrMemberPath}},
		{"relative", func(t *testing.T) []byte { return configImage(t, cpioArchive(t, "etc/passwd", "x", rv, "")) }, configimage.Limits{}, []error{configimage.ErrMemberPath}},
		{"not clean", func(t *testing.T) []byte { return configImage(t, cpioArchive(t, "/etc/./passwd", "x", rv, "")) }, configimage.Limits{}, []error{configimage.ErrMemberPath}},
		{"duplicate", func(t *testing.T) []byte {
			return configImage(t, cpioArchive(t, "/etc/issue", "a", "/etc/issue", "b", rv, ""))
		}, configimage.Limits{}, []error{configimage.ErrDuplicateMember}},
		{"symlink member", func(t *testing.T) []byte {
			return configImage(t, append(rawMember("/etc/assisted/link", 0o120777, "/etc/shadow"), trailer...))
		}, configimage.Limits{}, []error{cpio.ErrSymlink}},
		{"device node member", func(t *testing.T) []byte {
			return configImage(t, append(rawMember("/dev/sda", 0o060660, ""), trailer...))
		}, configimage.Limits{}, []error{cpio.ErrDevice}},
		{"member over the size limit", func(t *testing.T) []byte { return configImage(t, valid) }, configimage.Limits{MaxMemberSize: 10}, []error{configimage.ErrTooLarge, cpio.ErrTooLarge}},
		{"too many members", func(t *testing.T) []byte { return configImage(t, valid) }, configimage.Limits{MaxMembers: 1}, []error{configimage.ErrTooLarge, cpio.ErrTooLarge}},
		{"config.gz over the limit", func(t *testing.T) []byte { return configImage(t, valid) }, configimage.Limits{MaxArchiveSize: 10}, []error{configimage.ErrTooLarge}},
		{"zeros after the trailer", func(t *testing.T) []byte { return configImage(t, append(valid, make([]byte, 4<<20)...)) }, configimage.Limits{MaxTotalSize: 1 << 20, MaxMembers: 10}, []error{configimage.ErrTooLarge}},
		{"truncated gzip", func(t *testing.T) []byte {
			gz := gzipped(t, valid)
			return isoWith(t, configimage.VolumeLabel, map[string][]byte{"config.gz": gz[:len(gz)-6]})
		}, configimage.Limits{}, []error{configimage.ErrCorruptArchive}},
		{"not gzip", func(t *testing.T) []byte {
			return isoWith(t, configimage.VolumeLabel, map[string][]byte{"config.gz": valid})
		}, configimage.Limits{}, []error{configimage.ErrCorruptArchive}},
		{"truncated cpio", func(t *testing.T) []byte { return configImage(t, valid[:len(valid)-40]) }, configimage.Limits{}, []error{cpio.ErrTruncated}},
		{"wrong label", func(t *testing.T) []byte {
			return isoWith(t, "AGENT_CONFIGIMAGE", map[string][]byte{"config.gz": gzipped(t, valid)})
		}, configimage.Limits{}, []error{configimage.ErrWrongLabel}},
		{"no config.gz", func(t *testing.T) []byte {
			return isoWith(t, configimage.VolumeLabel, map[string][]byte{"config.cpio.gz": gzipped(t, valid)})
		}, configimage.Limits{}, []error{configimage.ErrNoConfigArchive}},
		{"config.gz is a directory", func(t *testing.T) []byte {
			return isoWith(t, configimage.VolumeLabel, nil, "config.gz")
		}, configimage.Limits{}, []error{configimage.ErrNoConfigArchive}},
		{"extent past the end", func(t *testing.T) []byte {
			img := configImage(t, valid)
			return patchRecord(t, img, "CONFIG.GZ;1", uint32(len(img)/2048+1))
		}, configimage.Limits{}, []error{isofs.ErrOutOfBounds}},
		{"directory loop", func(t *testing.T) []byte {
			img := isoWith(t, configimage.VolumeLabel, map[string][]byte{"config.gz": gzipped(t, valid), "d/x": nil})
			return patchRecord(t, img, "D", rootExtent(img))
		}, configimage.Limits{}, []error{isofs.ErrLoop}},
		{"not an image", func(t *testing.T) []byte { return gzipped(t, valid) }, configimage.Limits{}, []error{isofs.ErrNotISO}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := tc.img(t)
			members, err := configimage.Read(bytes.NewReader(img), int64(len(img)), tc.lim)
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("Read = %v, want %v", err, want)
				}
			}
			if members != nil {
				t.Errorf("Read returned %d members with its error", len(members))
			}
		})
	}
}

func TestReadNamesWrongLabel(t *testing.T) {
	img := isoWith(t, "OTHER", map[string][]byte{"config.gz": nil})
	_, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{})
	if err == nil || !strings.Contains(err.Error(), `"OTHER"`) {
		t.Errorf("Read = %v, want an error naming the label \"OTHER\"", err)
	}
}
