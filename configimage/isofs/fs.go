package isofs

import (
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// lookup finds name (an io/fs path) in the index.
func (im *Image) lookup(op, name string) (*entry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	e := im.root
	if name == "." {
		return e, nil
	}
	for _, part := range strings.Split(name, "/") {
		if !e.mode.IsDir() {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		i, ok := slices.BinarySearchFunc(e.children, part, func(c *entry, n string) int { return strings.Compare(c.name, n) })
		if !ok {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		e = e.children[i]
	}
	return e, nil
}

// Open opens the file or directory name. Regular files implement
// io.ReaderAt and io.Seeker as well; other Rock Ridge types (symlinks,
// devices) cannot be opened.
func (im *Image) Open(name string) (fs.File, error) {
	e, err := im.lookup("open", name)
	if err != nil {
		return nil, err
	}
	switch {
	case e.mode.IsDir():
		return &dirFile{entry: e}, nil
	case e.mode.IsRegular():
		return &file{entry: e, SectionReader: io.NewSectionReader(im.r, e.off, e.size)}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("file type %v: %w", e.mode.Type(), ErrUnsupported)}
}

// ReadDir lists the directory name sorted by name.
func (im *Image) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := im.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !e.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fmt.Errorf("not a directory: %w", fs.ErrInvalid)}
	}
	return dirEntries(e.children), nil
}

// Stat describes name.
func (im *Image) Stat(name string) (fs.FileInfo, error) {
	e, err := im.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ReadFile returns the contents of the regular file name. Its size is
// bounded by the image size; use Open and io.LimitReader for a lower bound.
func (im *Image) ReadFile(name string) ([]byte, error) {
	e, err := im.lookup("readfile", name)
	if err != nil {
		return nil, err
	}
	if !e.mode.IsRegular() {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fmt.Errorf("file type %v: %w", e.mode.Type(), ErrUnsupported)}
	}
	buf := make([]byte, e.size)
	if n, err := im.r.ReadAt(buf, e.off); n < len(buf) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: err}
	}
	return buf, nil
}

func dirEntries(children []*entry) []fs.DirEntry {
	out := make([]fs.DirEntry, len(children))
	for i, c := range children {
		out[i] = c
	}
	return out
}

// entry implements fs.FileInfo and fs.DirEntry.

func (e *entry) Name() string               { return e.name }
func (e *entry) Size() int64                { return e.size }
func (e *entry) Mode() fs.FileMode          { return e.mode }
func (e *entry) ModTime() time.Time         { return e.modTime }
func (e *entry) IsDir() bool                { return e.mode.IsDir() }
func (e *entry) Sys() any                   { return nil }
func (e *entry) Type() fs.FileMode          { return e.mode.Type() }
func (e *entry) Info() (fs.FileInfo, error) { return e, nil }

// file is an open regular file.
type file struct {
	*entry
	*io.SectionReader
}

func (f *file) Stat() (fs.FileInfo, error) { return f.entry, nil }
func (f *file) Close() error               { return nil }

// Size resolves the clash between entry.Size and SectionReader.Size.
func (f *file) Size() int64 { return f.entry.size }

// dirFile is an open directory.
type dirFile struct {
	*entry
	pos int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.entry, nil }
func (d *dirFile) Close() error               { return nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: fmt.Errorf("is a directory: %w", fs.ErrInvalid)}
}

// ReadDir implements fs.ReadDirFile.
func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.children[d.pos:]
	if n > 0 && len(rest) == 0 {
		return nil, io.EOF
	}
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.pos += len(rest)
	return dirEntries(rest), nil
}
