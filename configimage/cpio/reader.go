package cpio

import (
	"fmt"
	"io"
	"time"
)

// Limits bound what a Reader accepts. A zero field takes its default.
type Limits struct {
	MaxMemberSize int64 // data bytes of one member; default 64 MiB
	MaxTotalSize  int64 // data bytes of all members; default 256 MiB
	MaxMembers    int   // members before the trailer; default 10,000
}

// Default limits.
const (
	DefaultMaxMemberSize = 64 << 20
	DefaultMaxTotalSize  = 256 << 20
	DefaultMaxMembers    = 10_000
)

func (l Limits) withDefaults() Limits {
	if l.MaxMemberSize <= 0 {
		l.MaxMemberSize = DefaultMaxMemberSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = DefaultMaxTotalSize
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultMaxMembers
	}
	return l
}

// Reader reads a newc archive member by member: Next, then Read the data.
type Reader struct {
	r       io.Reader
	lim     Limits
	off     int64 // bytes consumed, for alignment and messages
	name    string
	remain  int64 // data bytes of the current member not yet read
	padding int64
	check   bool   // the current member carries a checksum (070702)
	want    uint32 // its checksum
	sum     uint32 // the sum of the bytes read so far
	members int
	total   int64
	err     error // sticky: after an error or the trailer
}

// NewReader returns a Reader of r with the limits lim.
func NewReader(r io.Reader, lim Limits) *Reader {
	return &Reader{r: r, lim: lim.withDefaults()}
}

// Next skips the rest of the current member and returns the next header.
// At the trailer it returns io.EOF; bytes after the trailer (block padding)
// are not read.
func (r *Reader) Next() (*Header, error) {
	if r.err != nil {
		return nil, r.err
	}
	h, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return h, nil
}

func (r *Reader) next() (*Header, error) {
	if r.remain > 0 {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, err
		}
	}
	if err := r.skip(r.padding); err != nil {
		return nil, err
	}
	r.padding = 0
	start := r.off
	var raw [headerLen]byte
	if err := r.full(raw[:], "header"); err != nil {
		return nil, err
	}
	magic := string(raw[:6])
	if magic != magicNewc && magic != magicCRC {
		return nil, fmt.Errorf("cpio: header at offset %d: magic %q, want %q: %w", start, raw[:6], magicNewc, ErrFormat)
	}
	var f [numFields]uint32
	for i := range f {
		v, ok := parseHex(raw[6+8*i : 14+8*i])
		if !ok {
			return nil, fmt.Errorf("cpio: header at offset %d: field %d %q is not hex: %w", start, i, raw[6+8*i:14+8*i], ErrFormat)
		}
		f[i] = v
	}
	if f[fNamesize] < 2 || f[fNamesize] > maxNameLen {
		return nil, fmt.Errorf("cpio: header at offset %d: name size %d, want 2 to %d: %w", start, f[fNamesize], maxNameLen, ErrFormat)
	}
	nameBuf := make([]byte, f[fNamesize])
	if err := r.full(nameBuf, "name"); err != nil {
		return nil, err
	}
	name := string(nameBuf[:len(nameBuf)-1])
	for i, c := range nameBuf {
		if (c == 0) != (i == len(nameBuf)-1) {
			return nil, fmt.Errorf("cpio: header at offset %d: name %q: NUL misplaced: %w", start, nameBuf, ErrFormat)
		}
	}
	if name == trailer {
		// Whatever follows, its own padding or GNU's 512-byte block
		// padding, is not ours to read.
		return nil, io.EOF
	}
	if err := r.skip(pad(r.off)); err != nil {
		return nil, err
	}
	fail := func(err error) (*Header, error) { return nil, &MemberError{Name: name, Err: err} }
	if r.members++; r.members > r.lim.MaxMembers {
		return fail(fmt.Errorf("more than %d members: %w", r.lim.MaxMembers, ErrTooLarge))
	}
	mode, err := fileMode(f[fMode])
	if err != nil {
		return fail(err)
	}
	size := int64(f[fFilesize])
	switch {
	case mode.IsDir() && size != 0:
		return fail(fmt.Errorf("directory with %d data bytes: %w", size, ErrFormat))
	case !mode.IsDir() && f[fNlink] > 1:
		return fail(fmt.Errorf("%d links: %w", f[fNlink], ErrHardLink))
	case size > r.lim.MaxMemberSize:
		return fail(fmt.Errorf("%d bytes, limit %d: %w", size, r.lim.MaxMemberSize, ErrTooLarge))
	case r.total+size > r.lim.MaxTotalSize:
		return fail(fmt.Errorf("archive data over %d bytes: %w", r.lim.MaxTotalSize, ErrTooLarge))
	}
	r.total += size
	r.name, r.remain, r.padding = name, size, pad(size)
	r.check, r.want, r.sum = magic == magicCRC, f[fCheck], 0
	return &Header{
		Name:    name,
		Mode:    mode,
		ModTime: time.Unix(int64(f[fMtime]), 0).UTC(),
		Size:    size,
	}, nil
}

// Read reads data of the current member; it returns io.EOF at its end.
func (r *Reader) Read(p []byte) (int, error) {
	if r.remain == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.remain {
		p = p[:r.remain]
	}
	n, err := r.r.Read(p)
	r.off += int64(n)
	r.remain -= int64(n)
	if r.check {
		for _, c := range p[:n] {
			r.sum += uint32(c)
		}
		if r.remain == 0 && r.sum != r.want {
			return n, &MemberError{Name: r.name, Err: ErrChecksum}
		}
	}
	switch {
	case r.remain == 0:
		return n, nil
	case err == io.EOF:
		return n, &MemberError{Name: r.name, Err: fmt.Errorf("%d data bytes missing: %w", r.remain, ErrTruncated)}
	case err != nil:
		return n, fmt.Errorf("cpio: read %q: %w", r.name, err)
	}
	return n, nil
}

// full reads len(b) bytes; an early end is ErrTruncated.
func (r *Reader) full(b []byte, what string) error {
	n, err := io.ReadFull(r.r, b)
	r.off += int64(n)
	switch {
	case err == nil:
		return nil
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		// Compared as values: a wrapped EOF is the source's own error.
		return fmt.Errorf("cpio: %s at offset %d: archive ends before its trailer: %w", what, r.off, ErrTruncated)
	}
	return fmt.Errorf("cpio: read %s at offset %d: %w", what, r.off, err)
}

func (r *Reader) skip(n int64) error {
	if n == 0 {
		return nil
	}
	var b [4]byte
	return r.full(b[:n], "padding")
}

// parseHex parses 8 hex digits, upper or lower case.
func parseHex(b []byte) (uint32, bool) {
	var v uint32
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}
