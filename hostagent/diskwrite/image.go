package diskwrite

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"

	"github.com/klauspost/compress/zstd"
)

// ImageSpec describes a generated test disk image.
type ImageSpec struct {
	// Size is the image's length in bytes: a multiple of 512, at least
	// MinImageSize plus IgnitionSize.
	Size int64
	// Seed determines every byte: the same spec gives the same image.
	Seed int64
	// IgnitionPartition names the empty partition the writer places
	// Ignition into; "" means "ignition".
	IgnitionPartition string
	// IgnitionSize is that partition's size in bytes, rounded up to 4 KiB;
	// 0 means 1 MiB.
	IgnitionSize int64
}

// MinImageSize is the smallest image BuildImage lays out, apart from the
// ignition partition: 1 MiB before the first partition, room for the
// three others and the backup table.
const MinImageSize = 2 << 20

// Partition type GUIDs (UEFI §5.3.3 and the Discoverable Partitions
// Specification), in their textual order.
const (
	typeEFISystem = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	typeLinuxData = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
)

// blockSize is the granule of generated content: each 64 KiB block is
// zeros, noise or repetitive text, so a compressor does what it does on a
// real OS image (a few times smaller, not thousands).
const blockSize = 64 << 10

// BuildImage writes a deterministic raw GPT disk image to w: a protective
// MBR, the primary and backup GPT with correct CRC32s, and partitions
// "EFI-SYSTEM", "boot", the empty ignition partition and "root", 4 KiB
// aligned, the first at 1 MiB. It returns the image's Size and SHA256 and
// IgnitionPartition; File is left for the caller to set.
//
// The image stands in for an OS image in the sandbox and tests: nodezero's
// writer installs it, places Ignition into its ignition partition, and
// the "installed" host verifies it. Real RHCOS images keep Ignition in a
// file on their boot partition and are written by coreos-installer
// instead, which knows that layout.
func BuildImage(w io.Writer, spec ImageSpec) (Image, error) {
	l, err := newLayout(spec)
	if err != nil {
		return Image{}, err
	}
	h := sha256.New()
	out := io.MultiWriter(w, h)
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	for off := int64(0); off < l.size; off += chunk {
		n := min(chunk, l.size-off)
		l.fill(buf[:n], off)
		if _, err := out.Write(buf[:n]); err != nil {
			return Image{}, fmt.Errorf("build image: %w", err)
		}
	}
	return Image{
		SHA256:            hex.EncodeToString(h.Sum(nil)),
		Size:              l.size,
		IgnitionPartition: l.ignitionName,
	}, nil
}

// CompressZstd compresses src into dst as one zstd stream with a content
// checksum, the way an image is shipped as os.raw.zst.
func CompressZstd(dst io.Writer, src io.Reader) error {
	enc, err := zstd.NewWriter(dst, zstd.WithEncoderCRC(true))
	if err != nil {
		return fmt.Errorf("compress zstd: %w", err)
	}
	if _, err := io.Copy(enc, src); err != nil {
		enc.Close()
		return fmt.Errorf("compress zstd: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("compress zstd: %w", err)
	}
	return nil
}

// layout is a generated image: its table and how to fill any byte range.
type layout struct {
	size         int64
	seed         int64
	ignitionName string
	parts        []partition
	primary      []byte // LBA 0 .. 33: MBR, header, entries
	backup       []byte // the last 33 sectors: entries, header
}

func newLayout(spec ImageSpec) (*layout, error) {
	l := &layout{size: spec.Size, seed: spec.Seed, ignitionName: spec.IgnitionPartition}
	if l.ignitionName == "" {
		l.ignitionName = "ignition"
	}
	if len(encodeName(l.ignitionName)) > nameUnits {
		return nil, fmt.Errorf("build image: ignition partition name %q is longer than %d UTF-16 units", l.ignitionName, nameUnits)
	}
	ignSize := spec.IgnitionSize
	if ignSize == 0 {
		ignSize = 1 << 20
	}
	if ignSize < 0 {
		return nil, fmt.Errorf("build image: ignition size %d is negative", ignSize)
	}
	const align = 8 // sectors: 4 KiB
	ignSectors := (ignSize/sectorSize + align - 1) / align * align
	if spec.Size%sectorSize != 0 || spec.Size < MinImageSize+ignSectors*sectorSize {
		return nil, fmt.Errorf("build image: size %d must be a multiple of %d and at least %d (%d plus the ignition partition)",
			spec.Size, sectorSize, MinImageSize+ignSectors*sectorSize, MinImageSize)
	}
	sectors := spec.Size / sectorSize
	firstUsable := int64(2 + gptEntryBlocks)
	lastUsable := sectors - 1 - gptEntryBlocks - 1
	start := int64(2048)
	rest := (lastUsable + 1 - start - ignSectors) / align * align
	efi := rest / 8 / align * align
	boot := rest / 4 / align * align
	sizes := []struct {
		name    string
		typ     string
		sectors int64
	}{
		{"EFI-SYSTEM", typeEFISystem, efi},
		{"boot", typeLinuxData, boot},
		{l.ignitionName, typeLinuxData, ignSectors},
		{"root", typeLinuxData, 0}, // to the last usable LBA
	}
	rng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x6e6f64657a65726f)) // "nodezero"
	for _, s := range sizes {
		if s.sectors == 0 {
			s.sectors = lastUsable + 1 - start
		}
		p := partition{Type: parseGUID(s.typ), GUID: randomGUID(rng), Name: s.name}
		p.FirstLBA = uint64(start)
		p.LastLBA = uint64(start + s.sectors - 1)
		start += s.sectors
		l.parts = append(l.parts, p)
	}
	diskGUID := randomGUID(rng)

	entries := make([]byte, gptEntryCount*gptEntrySize)
	for i, p := range l.parts {
		e := entries[i*gptEntrySize:]
		copy(e[0:16], p.Type[:])
		copy(e[16:32], p.GUID[:])
		binary.LittleEndian.PutUint64(e[32:40], p.FirstLBA)
		binary.LittleEndian.PutUint64(e[40:48], p.LastLBA)
		for j, u := range encodeName(p.Name) {
			binary.LittleEndian.PutUint16(e[56+2*j:], u)
		}
	}
	entriesCRC := crc32.ChecksumIEEE(entries)
	header := func(current, backup, entriesLBA int64) []byte {
		h := make([]byte, sectorSize)
		le := binary.LittleEndian
		copy(h[0:8], gptSignature)
		le.PutUint32(h[8:12], gptRevision)
		le.PutUint32(h[12:16], gptHeaderSize)
		le.PutUint64(h[24:32], uint64(current))
		le.PutUint64(h[32:40], uint64(backup))
		le.PutUint64(h[40:48], uint64(firstUsable))
		le.PutUint64(h[48:56], uint64(lastUsable))
		copy(h[56:72], diskGUID[:])
		le.PutUint64(h[72:80], uint64(entriesLBA))
		le.PutUint32(h[80:84], gptEntryCount)
		le.PutUint32(h[84:88], gptEntrySize)
		le.PutUint32(h[88:92], entriesCRC)
		le.PutUint32(h[16:20], crc32.ChecksumIEEE(h[:gptHeaderSize]))
		return h
	}

	l.primary = make([]byte, firstUsable*sectorSize)
	mbr := l.primary[:sectorSize]
	pe := mbr[446:462]                     // the one protective entry
	pe[1], pe[2], pe[3] = 0x00, 0x02, 0x00 // CHS of LBA 1
	pe[4] = 0xEE                           // GPT protective
	pe[5], pe[6], pe[7] = 0xFF, 0xFF, 0xFF // CHS beyond reach
	binary.LittleEndian.PutUint32(pe[8:12], 1)
	binary.LittleEndian.PutUint32(pe[12:16], uint32(min(sectors-1, 0xFFFFFFFF)))
	mbr[510], mbr[511] = 0x55, 0xAA
	copy(l.primary[sectorSize:], header(1, sectors-1, 2))
	copy(l.primary[2*sectorSize:], entries)

	l.backup = make([]byte, (gptEntryBlocks+1)*sectorSize)
	copy(l.backup, entries)
	copy(l.backup[gptEntryBlocks*sectorSize:], header(sectors-1, 1, sectors-1-gptEntryBlocks))
	return l, nil
}

// fill writes the image's bytes [off, off+len(b)) into b.
func (l *layout) fill(b []byte, off int64) {
	clear(b)
	end := off + int64(len(b))
	for _, p := range l.parts {
		if p.Name == l.ignitionName {
			continue // shipped empty
		}
		ps, pe := p.byteRange()
		s, e := max(ps, off), min(pe, end)
		for s < e {
			blk := s / blockSize
			be := min((blk+1)*blockSize, e)
			l.fillBlock(b[s-off:be-off], blk, s%blockSize)
			s = be
		}
	}
	overlay(b, off, l.primary, 0)
	overlay(b, off, l.backup, l.size-int64(len(l.backup)))
}

// fillBlock writes bytes [from, from+len(b)) of content block blk. A block
// is zeros (half of them), noise, or text-like runs of a few words.
func (l *layout) fillBlock(b []byte, blk, from int64) {
	rng := rand.New(rand.NewPCG(uint64(l.seed), uint64(blk)))
	switch rng.IntN(4) {
	case 0, 1:
		// zeros: b is cleared
	case 2:
		full := make([]byte, blockSize)
		for i := 0; i < blockSize; i += 8 {
			binary.LittleEndian.PutUint64(full[i:], rng.Uint64())
		}
		copy(b, full[from:])
	case 3:
		words := []string{"kernel ", "systemd ", "/usr/lib64/", "ostree ", "rpm ", "0x", "ELF ", "config ", "\n", "= ", "true "}
		full := make([]byte, 0, blockSize+16)
		for len(full) < blockSize {
			full = append(full, words[rng.IntN(len(words))]...)
		}
		copy(b, full[from:blockSize])
	}
}

// overlay copies src, which sits at image offset at, into b, which holds
// image offset off.
func overlay(b []byte, off int64, src []byte, at int64) {
	end := off + int64(len(b))
	s, e := max(at, off), min(at+int64(len(src)), end)
	if s < e {
		copy(b[s-off:e-off], src[s-at:e-at])
	}
}

// parseGUID encodes a textual GUID the GPT way: the first three fields
// little-endian, the rest as written.
func parseGUID(s string) [16]byte {
	var raw [16]byte
	hexDigits := make([]byte, 0, 32)
	for i := 0; i < len(s); i++ {
		if s[i] != '-' {
			hexDigits = append(hexDigits, s[i])
		}
	}
	if _, err := hex.Decode(raw[:], hexDigits); err != nil || len(hexDigits) != 32 {
		panic("diskwrite: bad GUID constant " + s)
	}
	var g [16]byte
	g[0], g[1], g[2], g[3] = raw[3], raw[2], raw[1], raw[0]
	g[4], g[5] = raw[5], raw[4]
	g[6], g[7] = raw[7], raw[6]
	copy(g[8:], raw[8:])
	return g
}

// randomGUID is a version 4 GUID from rng.
func randomGUID(rng *rand.Rand) [16]byte {
	var g [16]byte
	binary.LittleEndian.PutUint64(g[0:8], rng.Uint64())
	binary.LittleEndian.PutUint64(g[8:16], rng.Uint64())
	g[7] = g[7]&0x0F | 0x40 // version 4 (byte 7: high byte of the LE third field)
	g[8] = g[8]&0x3F | 0x80 // RFC 4122 variant
	return g
}
