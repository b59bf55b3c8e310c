package diskwrite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf16"
)

// The GPT as the UEFI specification (§5.3) lays it out, with 512-byte
// sectors: a protective MBR at LBA 0, the primary header at LBA 1, its
// partition entries after it, and a backup of both at the end of the disk.
const (
	sectorSize     = 512
	gptSignature   = "EFI PART"
	gptRevision    = 0x00010000
	gptHeaderSize  = 92
	gptEntrySize   = 128
	gptEntryCount  = 128
	nameUnits      = 36      // UTF-16 code units in an entry's name
	maxEntryBytes  = 1 << 20 // more partition entries than this is hostile
	maxEntrySize   = 4096
	gptEntryBlocks = gptEntryCount * gptEntrySize / sectorSize // 32 sectors
)

// partition is one used GPT entry.
type partition struct {
	Type, GUID        [16]byte
	FirstLBA, LastLBA uint64 // inclusive
	Name              string
}

// byteRange is the partition's [start, end) in bytes.
func (p partition) byteRange() (start, end int64) {
	return int64(p.FirstLBA) * sectorSize, (int64(p.LastLBA) + 1) * sectorSize
}

// gptHeader holds the header fields the parser uses.
type gptHeader struct {
	CurrentLBA, BackupLBA   uint64
	FirstUsable, LastUsable uint64
	DiskGUID                [16]byte
	EntriesLBA              uint64
	EntryCount, EntrySize   uint32
	EntriesCRC              uint32
}

// readGPT reads the primary GPT of a disk of size bytes (the image's size,
// not the device's: the image's table describes the image) and returns its
// used entries. Every number read from the disk is checked before it is
// used to read further or to compute an offset: a hostile table yields an
// error, never an out-of-range read or write.
func readGPT(r io.ReaderAt, size int64) ([]partition, error) {
	if size < 3*sectorSize {
		return nil, fmt.Errorf("gpt: disk of %d bytes is too small for a partition table", size)
	}
	sector := make([]byte, sectorSize)
	if _, err := r.ReadAt(sector, sectorSize); err != nil {
		return nil, fmt.Errorf("gpt: read header at LBA 1: %w", err)
	}
	h, err := parseGPTHeader(sector)
	if err != nil {
		return nil, err
	}
	sectors := uint64(size / sectorSize)
	if h.CurrentLBA != 1 {
		return nil, fmt.Errorf("gpt: header at LBA 1 says it is at LBA %d", h.CurrentLBA)
	}
	if h.FirstUsable > h.LastUsable || h.LastUsable >= sectors {
		return nil, fmt.Errorf("gpt: usable LBAs %d-%d do not fit a disk of %d sectors", h.FirstUsable, h.LastUsable, sectors)
	}
	entryBytes := uint64(h.EntryCount) * uint64(h.EntrySize) // both uint32: no overflow
	entrySectors := (entryBytes + sectorSize - 1) / sectorSize
	if h.EntriesLBA < 2 || h.EntriesLBA >= sectors || entrySectors > sectors-h.EntriesLBA {
		return nil, fmt.Errorf("gpt: %d partition entries at LBA %d do not fit a disk of %d sectors", h.EntryCount, h.EntriesLBA, sectors)
	}
	// Partitions may not cover LBA 0-1 or the entry array: Write places
	// Ignition into one.
	if h.FirstUsable < 2 || (entrySectors > 0 && h.EntriesLBA <= h.LastUsable && h.EntriesLBA+entrySectors > h.FirstUsable) {
		return nil, fmt.Errorf("gpt: usable LBAs %d-%d overlap the header or the entries at LBA %d-%d", h.FirstUsable, h.LastUsable, h.EntriesLBA, h.EntriesLBA+entrySectors-1)
	}
	entries := make([]byte, entryBytes)
	if _, err := r.ReadAt(entries, int64(h.EntriesLBA)*sectorSize); err != nil {
		return nil, fmt.Errorf("gpt: read partition entries at LBA %d: %w", h.EntriesLBA, err)
	}
	if got := crc32.ChecksumIEEE(entries); got != h.EntriesCRC {
		return nil, fmt.Errorf("gpt: partition entries crc32 is %#08x, header says %#08x", got, h.EntriesCRC)
	}
	return parseGPTEntries(h, entries)
}

// parseGPTHeader checks and decodes the header sector.
func parseGPTHeader(sector []byte) (gptHeader, error) {
	var h gptHeader
	if len(sector) < sectorSize {
		return h, fmt.Errorf("gpt: header sector is %d bytes", len(sector))
	}
	if string(sector[0:8]) != gptSignature {
		return h, errors.New("gpt: no \"EFI PART\" signature at LBA 1 (not a GPT disk with 512-byte sectors)")
	}
	le := binary.LittleEndian
	hsize := le.Uint32(sector[12:16])
	if hsize < gptHeaderSize || hsize > sectorSize {
		return h, fmt.Errorf("gpt: header size %d is outside %d-%d", hsize, gptHeaderSize, sectorSize)
	}
	want := le.Uint32(sector[16:20])
	hdr := make([]byte, hsize)
	copy(hdr, sector)
	clear(hdr[16:20])
	if got := crc32.ChecksumIEEE(hdr); got != want {
		return h, fmt.Errorf("gpt: header crc32 is %#08x, header says %#08x", got, want)
	}
	h.CurrentLBA = le.Uint64(sector[24:32])
	h.BackupLBA = le.Uint64(sector[32:40])
	h.FirstUsable = le.Uint64(sector[40:48])
	h.LastUsable = le.Uint64(sector[48:56])
	copy(h.DiskGUID[:], sector[56:72])
	h.EntriesLBA = le.Uint64(sector[72:80])
	h.EntryCount = le.Uint32(sector[80:84])
	h.EntrySize = le.Uint32(sector[84:88])
	h.EntriesCRC = le.Uint32(sector[88:92])
	if h.EntrySize < gptEntrySize || h.EntrySize > maxEntrySize || h.EntrySize%8 != 0 {
		return h, fmt.Errorf("gpt: partition entry size %d is not a multiple of 8 between %d and %d", h.EntrySize, gptEntrySize, maxEntrySize)
	}
	if uint64(h.EntryCount)*uint64(h.EntrySize) > maxEntryBytes {
		return h, fmt.Errorf("gpt: %d partition entries of %d bytes exceed %d bytes", h.EntryCount, h.EntrySize, maxEntryBytes)
	}
	return h, nil
}

// parseGPTEntries decodes the used entries; each must lie inside the
// header's usable LBAs.
func parseGPTEntries(h gptHeader, entries []byte) ([]partition, error) {
	le := binary.LittleEndian
	var parts []partition
	for i := range int(h.EntryCount) {
		off := i * int(h.EntrySize)
		if off+gptEntrySize > len(entries) {
			return nil, fmt.Errorf("gpt: partition entry %d is past the entry array", i+1)
		}
		e := entries[off : off+gptEntrySize]
		var p partition
		copy(p.Type[:], e[0:16])
		if p.Type == ([16]byte{}) {
			continue // unused entry
		}
		copy(p.GUID[:], e[16:32])
		p.FirstLBA = le.Uint64(e[32:40])
		p.LastLBA = le.Uint64(e[40:48])
		p.Name = decodeName(e[56:128])
		if p.FirstLBA > p.LastLBA || p.FirstLBA < h.FirstUsable || p.LastLBA > h.LastUsable {
			return nil, fmt.Errorf("gpt: partition %d (%q) LBAs %d-%d are outside the usable %d-%d", i+1, p.Name, p.FirstLBA, p.LastLBA, h.FirstUsable, h.LastUsable)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// findPartition returns the one partition named name.
func findPartition(parts []partition, name string) (partition, error) {
	var found []partition
	for _, p := range parts {
		if p.Name == name {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		names := make([]string, len(parts))
		for i, p := range parts {
			names[i] = p.Name
		}
		return partition{}, fmt.Errorf("%w: no partition named %q (the image has %q)", ErrPartitionNotFound, name, names)
	case 1:
		return found[0], nil
	default:
		return partition{}, fmt.Errorf("gpt: %d partitions are named %q", len(found), name)
	}
}

// decodeName reads a UTF-16LE name field up to its first NUL.
func decodeName(b []byte) string {
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u := binary.LittleEndian.Uint16(b[i:])
		if u == 0 {
			break
		}
		units = append(units, u)
	}
	return string(utf16.Decode(units))
}

// encodeName is decodeName's inverse, without the NUL padding.
func encodeName(s string) []uint16 {
	return utf16.Encode([]rune(s))
}
