// Package cpio writes and reads SVR4 "newc" cpio archives (magic 070701),
// the format of the agent config image's config.gz (reference
// docs/reference/abi-on-host.md §8.3), with the standard library only.
//
// The writer keeps member names exactly as given, the leading "/" of the
// config image's absolute host paths included (u-root's cpio strips it,
// docs/reference/dependency-notes.md §3), and writes caller-given modes and mtimes,
// sequential inode numbers and one link per member, so the same inputs give
// the same bytes. It writes directories and regular files only.
//
// The reader returns names verbatim, enforces the caller's size limits and
// refuses symlinks, device nodes, fifos, sockets and hard links with a
// *MemberError naming the member. A truncated archive is an error wrapping
// ErrTruncated; the reader never panics on any input.
package cpio

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/nodezero/nodezero/configimage/stmode"
)

// Header describes one member.
type Header struct {
	Name    string      // verbatim, e.g. "/etc/assisted/rendezvous-host.env"
	Mode    fs.FileMode // fs.ModeDir or a regular file, plus permission bits
	ModTime time.Time   // whole seconds since 1970, stored as 32 bits
	Size    int64       // data length; 0 for directories
}

// newc layout: a 6-byte magic, 13 fields of 8 hex digits, then the name
// with its NUL, padded to a multiple of 4; then the data, padded likewise.
const (
	magicNewc  = "070701"
	magicCRC   = "070702" // newc with a checksum of the data bytes
	headerLen  = 110
	trailer    = "TRAILER!!!"
	maxNameLen = 4096 // PATH_MAX, NUL included
	maxField   = 1<<32 - 1
)

// Field indexes after the magic.
const (
	fIno = iota
	fMode
	fUID
	fGID
	fNlink
	fMtime
	fFilesize
	fDevMajor
	fDevMinor
	fRdevMajor
	fRdevMinor
	fNamesize
	fCheck
	numFields
)

// Errors a caller can test with errors.Is. Member-specific ones come
// wrapped in a *MemberError.
var (
	// ErrFormat means the bytes are not a newc archive or a header is
	// malformed.
	ErrFormat = errors.New("malformed newc cpio archive")
	// ErrTruncated means the archive ends before its trailer.
	ErrTruncated = errors.New("truncated cpio archive")
	// ErrTooLarge means a member, the total or the member count exceeds
	// the reader's Limits.
	ErrTooLarge = errors.New("cpio archive exceeds a limit")
	// ErrSymlink, ErrDevice, ErrFIFO, ErrSocket and ErrHardLink refuse
	// members that are not plain directories or regular files.
	ErrSymlink  = errors.New("symbolic link members are not allowed")
	ErrDevice   = errors.New("device node members are not allowed")
	ErrFIFO     = errors.New("fifo members are not allowed")
	ErrSocket   = errors.New("socket members are not allowed")
	ErrHardLink = errors.New("hard-linked members are not allowed")
	// ErrFileType means a mode whose type is none of the above.
	ErrFileType = errors.New("unknown file type")
	// ErrChecksum means a 070702 member's data does not match its checksum.
	ErrChecksum = errors.New("cpio member checksum mismatch")
)

// MemberError is an error about one member, named verbatim.
type MemberError struct {
	Name string
	Err  error
}

func (e *MemberError) Error() string { return fmt.Sprintf("cpio: member %q: %v", e.Name, e.Err) }
func (e *MemberError) Unwrap() error { return e.Err }

// fileMode converts st_mode bits to an fs.FileMode, or the sentinel that
// refuses the type.
func fileMode(u uint32) (fs.FileMode, error) {
	m := stmode.FromUnix(u)
	switch {
	case m.IsRegular(), m.IsDir():
		return m, nil
	case m&fs.ModeSymlink != 0:
		return 0, ErrSymlink
	case m&fs.ModeDevice != 0:
		return 0, ErrDevice
	case m&fs.ModeNamedPipe != 0:
		return 0, ErrFIFO
	case m&fs.ModeSocket != 0:
		return 0, ErrSocket
	}
	return 0, fmt.Errorf("mode %#o: %w", u, ErrFileType)
}

// pad is the number of bytes that align n to 4.
func pad(n int64) int64 { return (4 - n%4) % 4 }
