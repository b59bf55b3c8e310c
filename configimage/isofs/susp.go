package isofs

import (
	"encoding/binary"
	"io/fs"
	"time"

	"github.com/nodezero/nodezero/configimage/stmode"
)

// System Use Sharing Protocol (SUSP 1.12) and Rock Ridge (RRIP 1.09)
// entries. Every entry starts with a two-letter signature, a length byte
// and a version byte.

const (
	suspHeaderLen = 4
	ceLen         = 28  // CE: continuation area pointer
	pxLen         = 36  // PX: POSIX attributes, RRIP 1.09 form (no inode)
	tfLen         = 26  // TF: three short-form times
	nmChunk       = 250 // name bytes per NM entry
	maxContHops   = 16  // continuation areas followed per record
	maxEntryName  = 1024
)

// RR entry flags (RRIP 1.09 4.1.1): which Rock Ridge entries a record holds.
const (
	rrPX = 0x01
	rrNM = 0x08
	rrTF = 0x80
)

// NM flags (RRIP 4.1.4).
const (
	nmContinue = 0x01
	nmCurrent  = 0x02
	nmParent   = 0x04
)

// TF flags (RRIP 4.1.6).
const (
	tfCreation   = 0x01
	tfModify     = 0x02
	tfAccess     = 0x04
	tfAttributes = 0x08
	tfLongForm   = 0x80
)

// POSIX file type bits as PX stores them.
const ()

// The extension reference of RRIP 1.09 as mkisofs and libisofs write it;
// readers look at the identifier only.
const (
	erID  = "RRIP_1991A"
	erDes = "THE ROCK RIDGE INTERCHANGE PROTOCOL PROVIDES SUPPORT FOR POSIX FILE SYSTEM SEMANTICS"
	erSrc = "PLEASE CONTACT DISC PUBLISHER FOR SPECIFICATION SOURCE.  SEE PUBLISHER IDENTIFIER IN PRIMARY VOLUME DESCRIPTOR FOR CONTACT INFORMATION."
)

func suspEntry(sig string, body ...byte) []byte {
	e := make([]byte, 0, suspHeaderLen+len(body))
	e = append(e, sig[0], sig[1], byte(suspHeaderLen+len(body)), 1)
	return append(e, body...)
}

// spEntry marks the volume as using SUSP; it must open the system use
// area of the root's "." record.
func spEntry() []byte { return suspEntry("SP", 0xBE, 0xEF, 0) }

func rrEntry(flags byte) []byte { return suspEntry("RR", flags) }

func erEntry() []byte {
	body := []byte{byte(len(erID)), byte(len(erDes)), byte(len(erSrc)), 1}
	body = append(body, erID...)
	body = append(body, erDes...)
	body = append(body, erSrc...)
	return suspEntry("ER", body...)
}

func pxEntry(mode fs.FileMode, nlink uint32) []byte {
	body := make([]byte, pxLen-suspHeaderLen)
	putBoth32(body[0:], stmode.ToUnix(mode))
	putBoth32(body[8:], nlink)
	// uid and gid stay 0 (root).
	return suspEntry("PX", body...)
}

func tfEntry(t time.Time) []byte {
	body := make([]byte, tfLen-suspHeaderLen)
	body[0] = tfModify | tfAccess | tfAttributes
	for i := 0; i < 3; i++ {
		putRecordingDate(body[1+7*i:], t)
	}
	return suspEntry("TF", body...)
}

// nmEntries splits name into NM entries of at most nmChunk bytes, all but
// the last flagged "continues".
func nmEntries(name string) [][]byte {
	var out [][]byte
	for len(name) > 0 {
		n := min(len(name), nmChunk)
		flags := byte(0)
		if n < len(name) {
			flags = nmContinue
		}
		out = append(out, suspEntry("NM", append([]byte{flags}, name[:n]...)...))
		name = name[n:]
	}
	return out
}

func ceEntry(block, offset, length uint32) []byte {
	body := make([]byte, ceLen-suspHeaderLen)
	putBoth32(body[0:], block)
	putBoth32(body[8:], offset)
	putBoth32(body[16:], length)
	return suspEntry("CE", body...)
}

// rrInfo is what the reader takes from a record's Rock Ridge entries.
type rrInfo struct {
	name      []byte
	hasName   bool
	nameDone  bool // an NM without the continue flag was seen
	mode      fs.FileMode
	hasMode   bool
	modTime   time.Time
	relocated bool // RE: a relocated directory, listed elsewhere via CL
	childLink bool // CL: placeholder for a relocated directory
}

// continuation is a pending CE pointer.
type continuation struct {
	block, offset, length uint32
}

// parseSUSP reads the entries of one system use area into info and
// returns the continuation area it points to, if any. ok is false when the
// area is malformed.
func parseSUSP(area []byte, info *rrInfo) (next *continuation, ok bool) {
	for len(area) >= suspHeaderLen {
		if area[0] == 0 && area[1] == 0 {
			break // zero padding ends the area
		}
		n := int(area[2])
		if n < suspHeaderLen || n > len(area) {
			return nil, false
		}
		e, body := area[:n], area[suspHeaderLen:n]
		area = area[n:]
		switch string(e[:2]) {
		case "ST":
			return next, true
		case "CE":
			if len(body) < 24 {
				return nil, false
			}
			next = &continuation{
				block:  binary.LittleEndian.Uint32(body[0:]),
				offset: binary.LittleEndian.Uint32(body[8:]),
				length: binary.LittleEndian.Uint32(body[16:]),
			}
		case "NM":
			if len(body) < 1 {
				return nil, false
			}
			if body[0]&(nmCurrent|nmParent) != 0 || info.nameDone {
				continue
			}
			if len(info.name)+len(body)-1 > maxEntryName {
				return nil, false
			}
			info.name = append(info.name, body[1:]...)
			info.hasName = true
			info.nameDone = body[0]&nmContinue == 0
		case "PX":
			if len(body) < 4 {
				return nil, false
			}
			info.mode = stmode.FromUnix(binary.LittleEndian.Uint32(body[0:]))
			info.hasMode = true
		case "TF":
			info.modTime = parseTF(body, info.modTime)
		case "RE":
			info.relocated = true
		case "CL":
			info.childLink = true
		}
	}
	return next, true
}

// parseTF returns the modification time of a TF entry, or def.
func parseTF(body []byte, def time.Time) time.Time {
	if len(body) < 1 {
		return def
	}
	flags := body[0]
	size := 7
	if flags&tfLongForm != 0 {
		size = 17
	}
	off := 1
	if flags&tfCreation != 0 {
		off += size
	}
	if flags&tfModify == 0 || size != 7 || off+size > len(body) {
		return def // long-form times are left to the record date
	}
	return parseRecordingDate(body[off : off+size])
}
