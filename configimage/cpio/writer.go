package cpio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/nodezero/nodezero/configimage/stmode"
)

// ErrWriteTooLong is returned by Write past the size in the header.
var ErrWriteTooLong = errors.New("cpio: write past the member size")

// Writer writes a newc archive: WriteHeader, Write the member's Size
// bytes, repeat, then Close to add the trailer.
type Writer struct {
	w       io.Writer
	ino     uint32
	name    string // current member
	remain  int64  // data bytes the current member still needs
	padding int64  // bytes that align the current member's data
	closed  bool
	err     error // sticky write error
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteHeader finishes the previous member and starts h. The name is kept
// exactly as given; it must be non-empty, without NUL, at most 4095 bytes
// and not the trailer name. Mode must be a directory or a regular file;
// ModTime must fit 32-bit seconds since 1970.
func (w *Writer) WriteHeader(h *Header) error {
	if err := w.finish(); err != nil {
		return err
	}
	if err := checkHeader(h); err != nil {
		return err
	}
	w.ino++
	var f [numFields]uint32
	f[fIno] = w.ino
	f[fMode] = stmode.ToUnix(h.Mode)
	f[fNlink] = 1
	f[fMtime] = uint32(h.ModTime.Unix())
	f[fFilesize] = uint32(h.Size)
	f[fNamesize] = uint32(len(h.Name) + 1)
	if err := w.writeHeader(f, h.Name); err != nil {
		return err
	}
	w.name, w.remain, w.padding = h.Name, h.Size, pad(h.Size)
	return nil
}

func checkHeader(h *Header) error {
	bad := func(format string, args ...any) error {
		return &MemberError{Name: h.Name, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case h.Name == "" || strings.IndexByte(h.Name, 0) >= 0 || len(h.Name)+1 > maxNameLen:
		return bad("name: want 1 to %d bytes without NUL: %w", maxNameLen-1, fs.ErrInvalid)
	case h.Name == trailer:
		return bad("name is the trailer name: %w", fs.ErrInvalid)
	case h.Mode&^(fs.ModeDir|fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0:
		return bad("mode %v: only directories and regular files: %w", h.Mode, fs.ErrInvalid)
	case h.Size < 0 || h.Size > maxField:
		return bad("size %d: want 0 to %d: %w", h.Size, int64(maxField), fs.ErrInvalid)
	case h.Mode.IsDir() && h.Size != 0:
		return bad("directory with size %d: %w", h.Size, fs.ErrInvalid)
	case h.ModTime.Unix() < 0 || h.ModTime.Unix() > maxField:
		return bad("mtime %v: outside 1970-2106: %w", h.ModTime, fs.ErrInvalid)
	}
	return nil
}

// Write writes data of the current member.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if int64(len(p)) > w.remain {
		n, err := w.Write(p[:w.remain])
		if err == nil {
			err = ErrWriteTooLong
		}
		return n, err
	}
	n, err := w.w.Write(p)
	w.remain -= int64(n)
	if err != nil {
		w.err = fmt.Errorf("cpio: write %q: %w", w.name, err)
		return n, w.err
	}
	return n, nil
}

// Close finishes the last member and writes the trailer. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	if err := w.finish(); err != nil {
		return err
	}
	w.closed = true
	var f [numFields]uint32
	f[fNlink] = 1
	f[fNamesize] = uint32(len(trailer) + 1)
	return w.writeHeader(f, trailer)
}

// finish checks the current member is complete and pads its data.
func (w *Writer) finish() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("cpio: writer is closed")
	}
	if w.remain > 0 {
		return &MemberError{Name: w.name, Err: fmt.Errorf("%d data bytes missing", w.remain)}
	}
	if w.padding > 0 {
		if _, err := w.w.Write(make([]byte, w.padding)); err != nil {
			w.err = fmt.Errorf("cpio: write %q: %w", w.name, err)
			return w.err
		}
		w.padding = 0
	}
	return nil
}

func (w *Writer) writeHeader(f [numFields]uint32, name string) error {
	b := make([]byte, 0, headerLen+len(name)+4)
	b = append(b, magicNewc...)
	for _, v := range f {
		b = fmt.Appendf(b, "%08X", v)
	}
	b = append(b, name...)
	b = append(b, 0)
	b = append(b, make([]byte, pad(int64(len(b))))...)
	if _, err := w.w.Write(b); err != nil {
		w.err = fmt.Errorf("cpio: write header of %q: %w", name, err)
		return w.err
	}
	return nil
}
