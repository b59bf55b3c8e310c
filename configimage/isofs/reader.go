package isofs

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Reader limits. Config images are a few sectors; installer ISOs have a few
// hundred entries. The limits keep a hostile image from costing more than
// a few hundred MiB of reads and a few MiB of memory.
const (
	maxDescriptors = 64       // volume descriptors scanned for the primary one
	maxDirSize     = 16 << 20 // bytes of one directory
	maxEntries     = 1 << 17  // entries in the whole tree
	maxDepth       = 64       // directory nesting
	maxMetaBytes   = 256 << 20
)

// Image is an ISO 9660 volume indexed by Open. It implements fs.FS,
// fs.ReadDirFS, fs.ReadFileFS and fs.StatFS with io/fs paths ("." is the
// root, "etc/x" a file); use fs.WalkDir to walk it. It is safe for
// concurrent use if the io.ReaderAt is.
type Image struct {
	r         io.ReaderAt
	size      int64
	label     string
	rockRidge bool
	root      *entry
}

// entry is one indexed directory or file.
type entry struct {
	name     string
	mode     fs.FileMode
	modTime  time.Time
	off      int64    // data offset in the image, regular files only
	size     int64    // data length
	children []*entry // directories: sorted by name
}

// Open reads the volume descriptors and indexes the whole directory tree of
// the image r of size bytes. Errors wrap ErrNotISO, ErrCorrupt,
// ErrOutOfBounds, ErrLoop, ErrLimit or ErrUnsupported.
func Open(r io.ReaderAt, size int64) (*Image, error) {
	pvd, err := findPVD(r, size)
	if err != nil {
		return nil, err
	}
	if bs := binary.LittleEndian.Uint16(pvd[128:]); bs != SectorSize {
		return nil, fmt.Errorf("isofs: logical block size %d: %w", bs, ErrUnsupported)
	}
	rootRec, err := parseRecord(pvd[156:190])
	if err != nil {
		return nil, fmt.Errorf("isofs: root directory record: %w", err)
	}
	if rootRec.flags&flagDirectory == 0 {
		return nil, fmt.Errorf("isofs: root directory record is not a directory: %w", ErrCorrupt)
	}
	im := &Image{r: r, size: size, label: volumeLabel(pvd)}
	im.root = &entry{name: ".", mode: fs.ModeDir | 0o555, modTime: rootRec.date}
	ix := &indexer{Image: im, seen: map[uint32]string{rootRec.extent: "/"}}
	queue := []pendingDir{{e: im.root, path: "", extent: rootRec.extent, size: rootRec.size}}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		subdirs, err := ix.readDir(d)
		if err != nil {
			return nil, err
		}
		queue = append(queue, subdirs...)
	}
	im.rockRidge = ix.rr
	return im, nil
}

// Label returns the volume identifier of the ISO 9660 image r with
// trailing spaces and NULs removed, reading only its volume descriptors.
func Label(r io.ReaderAt) (string, error) {
	pvd, err := findPVD(r, -1)
	if err != nil {
		return "", err
	}
	return volumeLabel(pvd), nil
}

// Label is the volume identifier, trailing spaces and NULs removed.
func (im *Image) Label() string { return im.label }

// RockRidge reports whether the volume carries Rock Ridge entries (SUSP SP
// in the root directory), whose names and modes the index then uses.
func (im *Image) RockRidge() bool { return im.rockRidge }

func volumeLabel(pvd []byte) string {
	return strings.TrimRight(string(pvd[40:72]), " \x00")
}

// findPVD returns the primary volume descriptor. size < 0 means unknown.
func findPVD(r io.ReaderAt, size int64) ([]byte, error) {
	buf := make([]byte, SectorSize)
	for i := int64(0); i < maxDescriptors; i++ {
		off := (pvdSector + i) * SectorSize
		if size >= 0 && off+SectorSize > size {
			return nil, fmt.Errorf("isofs: image of %d bytes ends before a primary volume descriptor: %w", size, ErrNotISO)
		}
		if n, err := r.ReadAt(buf, off); n < len(buf) {
			return nil, fmt.Errorf("isofs: read volume descriptor at %d: %w: %w", off, ErrNotISO, err)
		}
		if string(buf[1:6]) != string(standardID) {
			return nil, fmt.Errorf("isofs: no %q at byte %d: %w", standardID, off+1, ErrNotISO)
		}
		switch buf[0] {
		case vdTypePrimary:
			return buf, nil
		case vdTypeTerminator:
			return nil, fmt.Errorf("isofs: no primary volume descriptor: %w", ErrNotISO)
		}
	}
	return nil, fmt.Errorf("isofs: no primary volume descriptor in %d descriptors: %w", maxDescriptors, ErrNotISO)
}

// rawRecord is a parsed directory record.
type rawRecord struct {
	extent, size uint32
	xattr        uint32 // extended attribute record length, in sectors
	date         time.Time
	flags        byte
	ident        []byte
	sua          []byte // system use area
}

// parseRecord parses the directory record at the start of b.
func parseRecord(b []byte) (rawRecord, error) {
	if len(b) < recordHeaderLen+1 || int(b[0]) < recordHeaderLen+1 || int(b[0]) > len(b) {
		return rawRecord{}, fmt.Errorf("directory record length %d: %w", b[0], ErrCorrupt)
	}
	b = b[:b[0]]
	n := int(b[32])
	if n == 0 || recordHeaderLen+n > len(b) {
		return rawRecord{}, fmt.Errorf("identifier length %d in a %d-byte record: %w", n, len(b), ErrCorrupt)
	}
	rec := rawRecord{
		xattr:  uint32(b[1]),
		extent: binary.LittleEndian.Uint32(b[2:]),
		size:   binary.LittleEndian.Uint32(b[10:]),
		date:   parseRecordingDate(b[18:25]),
		flags:  b[25],
		ident:  b[recordHeaderLen : recordHeaderLen+n],
	}
	if s := fixedLen(rec.ident); s < len(b) {
		rec.sua = b[s:]
	}
	if b[26] != 0 || b[27] != 0 {
		return rawRecord{}, fmt.Errorf("interleaved file: %w", ErrUnsupported)
	}
	return rec, nil
}

// indexer builds the tree of an Image with a budget.
type indexer struct {
	*Image
	rr        bool
	skip      int               // SUSP len_skp from the SP entry
	seen      map[uint32]string // directory extent -> path
	entries   int
	metaBytes int64 // directory and continuation bytes read
}

type pendingDir struct {
	e            *entry
	path         string // "" for the root, else "a/b"
	extent, size uint32
	depth        int
}

func (d pendingDir) display() string { return "/" + d.path }

// read reads n bytes at sector block plus offset, within the image and the
// metadata budget.
func (ix *indexer) read(what string, block uint32, offset, n int64) ([]byte, error) {
	start := int64(block)*SectorSize + offset
	if start+n > ix.size {
		return nil, fmt.Errorf("isofs: %s: bytes [%d, %d) past the image end %d: %w", what, start, start+n, ix.size, ErrOutOfBounds)
	}
	ix.metaBytes += n
	if ix.metaBytes > min(ix.size, maxMetaBytes) {
		return nil, fmt.Errorf("isofs: %s: more directory data than the image holds (overlapping extents): %w", what, ErrLimit)
	}
	buf := make([]byte, n)
	if got, err := ix.r.ReadAt(buf, start); got < len(buf) {
		return nil, fmt.Errorf("isofs: %s: read at %d: %w", what, start, err)
	}
	return buf, nil
}

// readDir indexes the records of directory d and returns its
// subdirectories.
func (ix *indexer) readDir(d pendingDir) ([]pendingDir, error) {
	what := "directory " + d.display()
	if d.size == 0 || d.size > maxDirSize {
		return nil, fmt.Errorf("isofs: %s: size %d, want 1 to %d bytes: %w", what, d.size, maxDirSize, ErrLimit)
	}
	buf, err := ix.read(what, d.extent, 0, int64(d.size))
	if err != nil {
		return nil, err
	}
	var subdirs []pendingDir
	for off := 0; off < len(buf); {
		if buf[off] == 0 { // the rest of the sector is unused
			off = (off/SectorSize + 1) * SectorSize
			continue
		}
		end := min(len(buf), (off/SectorSize+1)*SectorSize)
		rec, err := parseRecord(buf[off:end])
		if err != nil {
			return nil, fmt.Errorf("isofs: %s: record at offset %d: %w", what, off, err)
		}
		off += int(buf[off])
		if len(rec.ident) == 1 && rec.ident[0] <= 1 { // "." or ".."
			if d.path == "" && rec.ident[0] == 0 {
				ix.detectRockRidge(rec.sua)
			}
			continue
		}
		sub, err := ix.addEntry(d, rec)
		if err != nil {
			return nil, fmt.Errorf("isofs: %s: %w", what, err)
		}
		if sub != nil {
			subdirs = append(subdirs, *sub)
		}
	}
	slices.SortFunc(d.e.children, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(d.e.children); i++ {
		if d.e.children[i].name == d.e.children[i-1].name {
			return nil, fmt.Errorf("isofs: %s: name %q appears twice: %w", what, d.e.children[i].name, ErrCorrupt)
		}
	}
	return subdirs, nil
}

// detectRockRidge looks for the SUSP SP entry that opens the system use
// area of the root's "." record (SUSP 5.3).
func (ix *indexer) detectRockRidge(sua []byte) {
	if len(sua) >= 7 && string(sua[:2]) == "SP" && sua[2] >= 7 && sua[4] == 0xBE && sua[5] == 0xEF {
		ix.rr = true
		ix.skip = int(sua[6])
	}
}

// addEntry indexes one record of directory d. It returns the subdirectory
// to read next, if the record is one.
func (ix *indexer) addEntry(d pendingDir, rec rawRecord) (*pendingDir, error) {
	if rec.flags&flagAssociated != 0 {
		return nil, nil
	}
	var info rrInfo
	if ix.rr {
		if err := ix.readSUSP(rec, &info); err != nil {
			return nil, err
		}
	}
	if info.relocated {
		return nil, nil // shown where its CL placeholder is; see below
	}
	name := plainName(rec.ident)
	if info.hasName {
		name = string(info.name)
	}
	// io/fs paths are UTF-8; a name that is not could not be looked up.
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || !utf8.ValidString(name) {
		return nil, fmt.Errorf("invalid name %q: %w", name, ErrCorrupt)
	}
	if info.childLink {
		return nil, fmt.Errorf("%q: relocated directory (Rock Ridge CL): %w", name, ErrUnsupported)
	}
	if rec.flags&flagMultiExtent != 0 {
		return nil, fmt.Errorf("%q: multi-extent file: %w", name, ErrUnsupported)
	}
	if ix.entries++; ix.entries > maxEntries {
		return nil, fmt.Errorf("more than %d entries: %w", maxEntries, ErrLimit)
	}
	isDir := rec.flags&flagDirectory != 0
	e := &entry{name: name, modTime: rec.date, size: int64(rec.size)}
	switch {
	case info.hasMode && isDir != info.mode.IsDir():
		return nil, fmt.Errorf("%q: Rock Ridge mode %v disagrees with the directory flag: %w", name, info.mode, ErrCorrupt)
	case info.hasMode:
		e.mode = info.mode
	case isDir:
		e.mode = fs.ModeDir | 0o555
	default:
		e.mode = 0o444
	}
	if !info.modTime.IsZero() {
		e.modTime = info.modTime
	}
	d.e.children = append(d.e.children, e)
	path := name
	if d.path != "" {
		path = d.path + "/" + name
	}
	if !isDir {
		e.off = (int64(rec.extent) + int64(rec.xattr)) * SectorSize
		if e.size > 0 && e.off+e.size > ix.size {
			return nil, fmt.Errorf("file %q: bytes [%d, %d) past the image end %d: %w", name, e.off, e.off+e.size, ix.size, ErrOutOfBounds)
		}
		return nil, nil
	}
	if d.depth+1 > maxDepth {
		return nil, fmt.Errorf("%q: deeper than %d levels: %w", name, maxDepth, ErrLimit)
	}
	if other, ok := ix.seen[rec.extent]; ok {
		return nil, fmt.Errorf("directory %q at sector %d is also %s: %w", name, rec.extent, other, ErrLoop)
	}
	ix.seen[rec.extent] = "/" + path
	return &pendingDir{e: e, path: path, extent: rec.extent, size: rec.size, depth: d.depth + 1}, nil
}

// readSUSP reads a record's Rock Ridge entries, following continuation
// areas (each within one sector and the image, at most maxContHops).
func (ix *indexer) readSUSP(rec rawRecord, info *rrInfo) error {
	area := rec.sua
	if ix.skip >= len(area) {
		area = nil
	} else {
		area = area[ix.skip:]
	}
	next, ok := parseSUSP(area, info)
	for hops := 0; ok && next != nil; hops++ {
		if hops == maxContHops {
			return fmt.Errorf("record %q: more than %d continuation areas: %w", rec.ident, maxContHops, ErrLimit)
		}
		c := *next
		if c.offset >= SectorSize || c.length > SectorSize-c.offset {
			return fmt.Errorf("record %q: continuation area offset %d length %d crosses a sector: %w", rec.ident, c.offset, c.length, ErrCorrupt)
		}
		buf, err := ix.read(fmt.Sprintf("record %q: continuation area", rec.ident), c.block, int64(c.offset), int64(c.length))
		if err != nil {
			return err
		}
		next, ok = parseSUSP(buf, info)
	}
	if !ok {
		return fmt.Errorf("record %q: malformed system use entry: %w", rec.ident, ErrCorrupt)
	}
	return nil
}
