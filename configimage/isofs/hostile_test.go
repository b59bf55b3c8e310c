package isofs_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"testing"

	"github.com/nodezero/nodezero/configimage/isofs"
)

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func putBoth32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

// record returns the offset of the directory record with the given ISO
// identifier, searched from the root directory on (the path tables come
// before it).
func record(t *testing.T, img []byte, ident string) int {
	t.Helper()
	from := int(le32(img[16*2048+156+2:])) * 2048
	i := from + bytes.Index(img[from:], append([]byte{byte(len(ident))}, ident...))
	if i < from+32 {
		t.Fatalf("no record %q in the image", ident)
	}
	return i - 32
}

// replace replaces the only occurrence of old in img by new, of the same
// length.
func replace(t *testing.T, img []byte, old, new string) {
	t.Helper()
	if len(old) != len(new) || bytes.Count(img, []byte(old)) != 1 {
		t.Fatalf("replace %q: want one occurrence and the same length", old)
	}
	copy(img[bytes.Index(img, []byte(old)):], new)
}

func TestOpenRefusesHostileImages(t *testing.T) {
	sectors := func(img []byte) uint32 { return uint32(len(img) / isofs.SectorSize) }
	tests := []struct {
		name  string
		patch func(t *testing.T, img []byte) []byte
		want  error
	}{
		{"not an image", func(t *testing.T, img []byte) []byte { return make([]byte, len(img)) }, isofs.ErrNotISO},
		{"shorter than the descriptors", func(t *testing.T, img []byte) []byte { return img[:16*2048] }, isofs.ErrNotISO},
		{"truncated", func(t *testing.T, img []byte) []byte { return img[:len(img)-2048] }, isofs.ErrOutOfBounds},
		{"block size 512", func(t *testing.T, img []byte) []byte {
			binary.LittleEndian.PutUint16(img[16*2048+128:], 512)
			return img
		}, isofs.ErrUnsupported},
		{"file extent past the end", func(t *testing.T, img []byte) []byte {
			putBoth32(img[record(t, img, "CONFIG.GZ;1")+2:], sectors(img)+10)
			return img
		}, isofs.ErrOutOfBounds},
		{"file size past the end", func(t *testing.T, img []byte) []byte {
			putBoth32(img[record(t, img, "CONFIG.GZ;1")+10:], 1<<31)
			return img
		}, isofs.ErrOutOfBounds},
		{"directory extent past the end", func(t *testing.T, img []byte) []byte {
			putBoth32(img[record(t, img, "OPT")+2:], sectors(img))
			return img
		}, isofs.ErrOutOfBounds},
		{"directory of 1 GiB", func(t *testing.T, img []byte) []byte {
			putBoth32(img[record(t, img, "OPT")+10:], 1<<30)
			return img
		}, isofs.ErrLimit},
		{"directory loop to the root", func(t *testing.T, img []byte) []byte {
			putBoth32(img[record(t, img, "ETC")+2:], le32(img[16*2048+156+2:]))
			return img
		}, isofs.ErrLoop},
		{"directory listed twice", func(t *testing.T, img []byte) []byte {
			putBoth32(img[record(t, img, "OPT")+2:], le32(img[record(t, img, "ETC")+2:]))
			return img
		}, isofs.ErrLoop},
		{"record length too small", func(t *testing.T, img []byte) []byte {
			img[record(t, img, "CONFIG.GZ;1")] = 20
			return img
		}, isofs.ErrCorrupt},
		{"identifier longer than the record", func(t *testing.T, img []byte) []byte {
			img[record(t, img, "CONFIG.GZ;1")+32] = 250
			return img
		}, isofs.ErrCorrupt},
		{"rock ridge name with a slash", func(t *testing.T, img []byte) []byte {
			replace(t, img, "\x00config.gz", "\x00../../etc")
			return img
		}, isofs.ErrCorrupt},
		{"same name twice", func(t *testing.T, img []byte) []byte {
			replace(t, img, "NM\x08\x01\x00etc", "NM\x08\x01\x00opt")
			return img
		}, isofs.ErrCorrupt},
		{"malformed system use entry", func(t *testing.T, img []byte) []byte {
			replace(t, img, "NM\x0e\x01\x00config.gz", "NM\xff\x01\x00config.gz")
			return img
		}, isofs.ErrCorrupt},
		{"continuation area past the end", func(t *testing.T, img []byte) []byte {
			ce := bytes.LastIndex(img, []byte("CE\x1c\x01")) // the long name's
			putBoth32(img[ce+4:], sectors(img)+1)
			return img
		}, isofs.ErrOutOfBounds},
		{"continuation area across a sector", func(t *testing.T, img []byte) []byte {
			ce := bytes.LastIndex(img, []byte("CE\x1c\x01")) // the long name's
			putBoth32(img[ce+12:], 2040)
			return img
		}, isofs.ErrCorrupt},
		{"mode says directory", func(t *testing.T, img []byte) []byte {
			nm := bytes.Index(img, []byte("NM\x0e\x01\x00config.gz"))
			px := bytes.LastIndex(img[:nm], []byte("PX\x24\x01"))
			putBoth32(img[px+4:], 0o40755)
			return img
		}, isofs.ErrCorrupt},
		{"multi-extent file", func(t *testing.T, img []byte) []byte {
			img[record(t, img, "CONFIG.GZ;1")+25] |= 0x80
			return img
		}, isofs.ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img := tc.patch(t, buildImage(t, sampleFiles()))
			im, err := isofs.Open(bytes.NewReader(img), int64(len(img)))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open = %v, want %v", err, tc.want)
			}
			if im != nil {
				t.Errorf("Open returned an image with its error")
			}
		})
	}
}

func TestLookupErrors(t *testing.T) {
	im := openImage(t, buildImage(t, sampleFiles()))
	tests := []struct {
		name string
		want error
	}{
		{"/config.gz", fs.ErrInvalid},
		{"missing", fs.ErrNotExist},
		{"config.gz/below", fs.ErrNotExist},
		{"etc", isofs.ErrUnsupported}, // ReadFile of a directory
	}
	for _, tc := range tests {
		if _, err := im.ReadFile(tc.name); !errors.Is(err, tc.want) {
			t.Errorf("ReadFile(%q) = %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := im.ReadDir("config.gz"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("ReadDir(config.gz) = %v, want %v", err, fs.ErrInvalid)
	}
}
