// Package stmode converts between Go's fs.FileMode and the POSIX st_mode
// bits that archive formats carry (newc cpio headers, Rock Ridge PX
// entries). It imports only the standard library.
package stmode

import "io/fs"

// The st_mode file type bits.
const (
	IFMT   = 0o170000
	IFSOCK = 0o140000
	IFLNK  = 0o120000
	IFREG  = 0o100000
	IFBLK  = 0o060000
	IFDIR  = 0o040000
	IFCHR  = 0o020000
	IFIFO  = 0o010000
)

// ToUnix converts the mode of a directory or regular file to st_mode.
func ToUnix(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	if m.IsDir() {
		return u | IFDIR
	}
	return u | IFREG
}

// FromUnix converts st_mode to an fs.FileMode; an unknown file type is
// fs.ModeIrregular.
func FromUnix(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	switch u & IFMT {
	case IFREG:
	case IFDIR:
		m |= fs.ModeDir
	case IFLNK:
		m |= fs.ModeSymlink
	case IFBLK:
		m |= fs.ModeDevice
	case IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case IFIFO:
		m |= fs.ModeNamedPipe
	case IFSOCK:
		m |= fs.ModeSocket
	default:
		m |= fs.ModeIrregular
	}
	return m
}
