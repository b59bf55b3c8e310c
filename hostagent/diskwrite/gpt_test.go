package diskwrite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// gptImage is a small built image's table region, for tampering.
func gptImage(t testing.TB) ([]byte, Image) {
	t.Helper()
	return buildRaw(t, ImageSpec{Size: MinImageSize + 1<<20, Seed: 3})
}

// reseal recomputes the primary header's CRCs after a change, so the
// parser's other checks are what a test meets.
func reseal(b []byte) {
	le := binary.LittleEndian
	h := b[sectorSize : 2*sectorSize]
	count, size := le.Uint32(h[80:84]), le.Uint32(h[84:88])
	lba := le.Uint64(h[72:80])
	if n := uint64(count) * uint64(size); lba < uint64(len(b))/sectorSize && n <= uint64(len(b))-lba*sectorSize {
		le.PutUint32(h[88:92], crc32.ChecksumIEEE(b[lba*sectorSize:lba*sectorSize+n]))
	}
	hs := le.Uint32(h[12:16])
	clear(h[16:20])
	if hs >= gptHeaderSize && hs <= sectorSize {
		le.PutUint32(h[16:20], crc32.ChecksumIEEE(h[:hs]))
	}
}

func TestReadGPTHostile(t *testing.T) {
	le := binary.LittleEndian
	entry := 2 * sectorSize // the first partition entry
	tests := []struct {
		name   string
		tamper func(b []byte)
	}{
		{"no signature", func(b []byte) { b[sectorSize] = 'X' }},
		{"header crc", func(b []byte) { b[sectorSize+16] ^= 1 }},
		{"entries crc", func(b []byte) { b[entry+60] ^= 1 }},
		{"header size huge", func(b []byte) { le.PutUint32(b[sectorSize+12:], 1<<31); reseal(b) }},
		{"entry count huge", func(b []byte) { le.PutUint32(b[sectorSize+80:], 1<<31); reseal(b) }},
		{"entry size small", func(b []byte) { le.PutUint32(b[sectorSize+84:], 64); reseal(b) }},
		{"entries past the end", func(b []byte) { le.PutUint64(b[sectorSize+72:], 1<<62); reseal(b) }},
		{"entries at LBA 0", func(b []byte) { le.PutUint64(b[sectorSize+72:], 0); reseal(b) }},
		{"last usable past the end", func(b []byte) { le.PutUint64(b[sectorSize+48:], 1<<40); reseal(b) }},
		{"partition past last usable", func(b []byte) { le.PutUint64(b[entry+40:], 1<<63); reseal(b) }},
		{"partition ends before it starts", func(b []byte) { le.PutUint64(b[entry+40:], 100); reseal(b) }},
		{"first usable LBA 1", func(b []byte) { le.PutUint64(b[sectorSize+40:], 1); le.PutUint64(b[entry+32:], 1); reseal(b) }},
		{"entries inside the usable LBAs", func(b []byte) { le.PutUint64(b[sectorSize+40:], 20); reseal(b) }},
		{"header not at LBA 1", func(b []byte) { le.PutUint64(b[sectorSize+24:], 5); reseal(b) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, img := gptImage(t)
			tc.tamper(b)
			if parts, err := readGPT(bytes.NewReader(b), img.Size); err == nil {
				t.Errorf("readGPT = %+v, want an error", parts)
			} else {
				t.Log(err)
			}
		})
	}
}

func TestFindPartition(t *testing.T) {
	b, img := gptImage(t)
	parts, err := readGPT(bytes.NewReader(b), img.Size)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := findPartition(parts, "ignition"); err != nil || p.Name != "ignition" {
		t.Errorf(`findPartition("ignition") = %+v, %v`, p, err)
	}
	if _, err := findPartition(parts, "Ignition"); !errors.Is(err, ErrPartitionNotFound) {
		t.Errorf(`findPartition("Ignition") = %v, want ErrPartitionNotFound`, err)
	}
	twice := append(parts, parts[2])
	if _, err := findPartition(twice, "ignition"); err == nil {
		t.Errorf("findPartition with two partitions of one name succeeded")
	}
}

// The first chunk's check says nothing when the table lies beyond it.
func TestCheckIgnitionFitsShortPrefix(t *testing.T) {
	b, img := gptImage(t)
	if err := checkIgnitionFits(prefixReader(b[:3*sectorSize]), img, 1<<30); err != nil {
		t.Errorf("checkIgnitionFits(3 sectors) = %v, want nil (undecided)", err)
	}
	if err := checkIgnitionFits(prefixReader(b[:64<<10]), img, 1<<30); !errors.Is(err, ErrIgnitionTooLarge) {
		t.Errorf("checkIgnitionFits(64 KiB) = %v, want ErrIgnitionTooLarge", err)
	}
}

// FuzzGPT feeds hostile tables to the parser: it must return an error or
// partitions inside the disk, never panic or read out of range.
func FuzzGPT(f *testing.F) {
	b, _ := gptImage(f)
	f.Add(b[:64<<10], int64(len(b)))
	f.Add(b[:34*sectorSize], int64(34*sectorSize))
	f.Add([]byte("EFI PART"), int64(1<<20))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		if size < 0 || size > int64(len(data))+1<<20 {
			size = int64(len(data))
		}
		// A tampered header usually fails its CRC; reseal half the inputs
		// so the checks behind it are reached too.
		if len(data) >= 2*sectorSize && data[len(data)-1]&1 == 1 {
			data = bytes.Clone(data) // the engine's bytes are not ours to change
			reseal(data)
		}
		r := prefixReader(data)
		parts, err := readGPT(r, size)
		if err != nil {
			return
		}
		for _, p := range parts {
			s, e := p.byteRange()
			if s < 0 || e > size || s >= e {
				t.Fatalf("partition %q at [%d, %d) outside a disk of %d bytes", p.Name, s, e, size)
			}
		}
		_, _ = findPartition(parts, "ignition")
		_ = checkIgnitionFits(r, Image{Size: size, IgnitionPartition: "ignition"}, 100)
	})
}
