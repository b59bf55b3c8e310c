// Package isofs writes and reads ISO 9660 images with Rock Ridge names, in
// pure Go and with the standard library only.
//
// The writer produces what the agent config image needs (reference
// docs/reference/abi-on-host.md §8.3, docs/reference/dependency-notes.md §2): a volume identifier kept
// exactly as given (lowercase "agent_configimage" included, which is what
// blkid reports as LABEL), level-1 ISO names plus Rock Ridge NM/PX/TF so
// files keep their real names, L and M path tables, and every timestamp
// taken from the caller so the same inputs give the same bytes.
//
// The reader treats the image as hostile: every extent and continuation
// area is checked against the image size, the whole tree is indexed once
// at Open with limits on directory size, entry count and depth, and a
// directory reached twice (a loop) is refused. It reads Rock Ridge names
// when the volume has them, else ISO names with the version suffix removed
// (lowercased when they are plain d-character names). Joliet is ignored.
package isofs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// SectorSize is the logical block size of every image this package writes
// and the only one it reads.
const SectorSize = 2048

// Layout constants of ISO 9660 (ECMA-119).
const (
	systemAreaSectors = 16        // sectors 0-15 are left to the system
	pvdSector         = 16        // first volume descriptor
	vdTypePrimary     = 1         // primary volume descriptor
	vdTypeTerminator  = 255       // volume descriptor set terminator
	maxVolumeID       = 32        // bytes of the volume identifier field
	recordHeaderLen   = 33        // directory record bytes before the identifier
	maxRecordLen      = 255       // a directory record's length is one byte
	flagDirectory     = 0x02      // file flags: directory
	flagAssociated    = 0x04      // file flags: associated file
	flagMultiExtent   = 0x80      // file flags: not the final record of a file
	maxNameLen        = 255       // longest Rock Ridge name written or read
	maxFileSize       = 1<<32 - 1 // data length is a 32-bit field
	maxLevels         = 8         // ECMA-119 6.8.2.1: at most eight directory levels
)

var standardID = []byte("CD001")

// Errors a caller can test with errors.Is. The error text says where.
var (
	// ErrNotISO means no ISO 9660 primary volume descriptor was found.
	ErrNotISO = errors.New("not an ISO 9660 image")
	// ErrCorrupt means a structure of the image is malformed.
	ErrCorrupt = errors.New("corrupt ISO 9660 image")
	// ErrOutOfBounds means an extent or a continuation area lies (partly)
	// outside the image.
	ErrOutOfBounds = errors.New("extent outside the image")
	// ErrLoop means a directory is reached twice while indexing the tree.
	ErrLoop = errors.New("directory loop")
	// ErrLimit means a reader or writer limit was exceeded (directory size,
	// entry count, depth, name length, file size).
	ErrLimit = errors.New("limit exceeded")
	// ErrUnsupported means a valid but unsupported feature (a block size
	// other than 2048, multi-extent or interleaved files, relocated
	// directories).
	ErrUnsupported = errors.New("unsupported ISO 9660 feature")
)

// putBoth16 writes v in both byte orders (ECMA-119 7.2.3).
func putBoth16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b[0:2], v)
	binary.BigEndian.PutUint16(b[2:4], v)
}

// putBoth32 writes v in both byte orders (ECMA-119 7.3.3).
func putBoth32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b[0:4], v)
	binary.BigEndian.PutUint32(b[4:8], v)
}

// checkTime refuses times the 7-byte recording date cannot hold.
func checkTime(t time.Time) error {
	u := t.UTC()
	if u.Year() < 1970 || u.Year() > 2155 {
		return fmt.Errorf("isofs: time %s outside 1970-2155", t.Format(time.RFC3339))
	}
	return nil
}

// putRecordingDate writes the 7-byte date of a directory record (ECMA-119
// 9.1.5) in UTC.
func putRecordingDate(b []byte, t time.Time) {
	u := t.UTC()
	b[0] = byte(u.Year() - 1900)
	b[1] = byte(u.Month())
	b[2] = byte(u.Day())
	b[3] = byte(u.Hour())
	b[4] = byte(u.Minute())
	b[5] = byte(u.Second())
	b[6] = 0 // offset from GMT in 15-minute units
}

// putVolumeDate writes the 17-byte date of a volume descriptor (ECMA-119
// 8.4.26.1) in UTC.
func putVolumeDate(b []byte, t time.Time) {
	u := t.UTC()
	s := fmt.Sprintf("%04d%02d%02d%02d%02d%02d%02d", u.Year(), int(u.Month()), u.Day(),
		u.Hour(), u.Minute(), u.Second(), u.Nanosecond()/10_000_000)
	copy(b, s)
	b[16] = 0
}

// parseRecordingDate reads a 7-byte date; a zero month means "not recorded".
func parseRecordingDate(b []byte) time.Time {
	if len(b) < 7 || b[1] == 0 {
		return time.Time{}
	}
	zone := time.UTC
	if off := int(int8(b[6])); off != 0 {
		zone = time.FixedZone("", off*15*60)
	}
	return time.Date(1900+int(b[0]), time.Month(b[1]), int(b[2]), int(b[3]), int(b[4]), int(b[5]), 0, zone)
}
