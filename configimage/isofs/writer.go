package isofs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// Writer collects directories and files and writes them as one ISO 9660
// image. Every time in the image is the writer's modTime, and entries are
// laid out in name order, so equal inputs give equal bytes.
type Writer struct {
	volumeID string
	modTime  time.Time
	root     *wnode
}

// wnode is a directory or file added to a Writer.
type wnode struct {
	name     string // real name, carried by Rock Ridge NM
	mode     fs.FileMode
	data     []byte
	parent   *wnode
	children map[string]*wnode // directories only, by real name

	// Layout, filled by WriteTo.
	ident   isoIdent
	sorted  []*wnode  // children in ECMA-119 9.3 order
	records []*record // directories: ".", ".." and the children
	dirNum  int       // directories: path table number, root is 1
	extent  uint32
	size    uint32
}

// record is one directory record to be written.
type record struct {
	ident  []byte
	flags  byte
	target *wnode
	inline []byte // SUSP entries inside the record
	cont   []byte // SUSP entries in a continuation area, nil if none

	contBlock, contOffset uint32
}

// NewWriter returns a Writer for a volume with the given identifier (1-32
// printable ASCII characters, kept as given, lowercase included) whose
// timestamps are all modTime (1970-2155).
func NewWriter(volumeID string, modTime time.Time) (*Writer, error) {
	if volumeID == "" || len(volumeID) > maxVolumeID {
		return nil, fmt.Errorf("isofs: volume identifier %q: want 1 to %d bytes", volumeID, maxVolumeID)
	}
	for i := 0; i < len(volumeID); i++ {
		if c := volumeID[i]; c < 0x20 || c > 0x7e {
			return nil, fmt.Errorf("isofs: volume identifier %q: byte %#x is not printable ASCII", volumeID, c)
		}
	}
	if err := checkTime(modTime); err != nil {
		return nil, err
	}
	root := &wnode{mode: fs.ModeDir | 0o755, children: map[string]*wnode{}}
	return &Writer{volumeID: volumeID, modTime: modTime, root: root}, nil
}

// AddDir adds the directory name (an io/fs path such as "a/b", no leading
// slash) with permissions perm. Missing parents are created with 0755.
// Adding a directory again only changes its permissions.
func (w *Writer) AddDir(name string, perm fs.FileMode) error {
	n, err := w.add(name, perm, true)
	if err != nil {
		return err
	}
	n.mode = fs.ModeDir | perm
	return nil
}

// AddFile adds the regular file name (an io/fs path) with permissions perm
// and contents data. The Writer keeps data until WriteTo; the caller must
// not change it meanwhile. Missing parents are created with 0755.
func (w *Writer) AddFile(name string, perm fs.FileMode, data []byte) error {
	if int64(len(data)) > maxFileSize {
		return fmt.Errorf("isofs: add %q: %d bytes: %w (files are at most 4 GiB-1)", name, len(data), ErrLimit)
	}
	n, err := w.add(name, perm, false)
	if err != nil {
		return err
	}
	n.data = data
	return nil
}

// add validates name and perm, creates missing parents and returns the
// node for name, new or (for directories) existing.
func (w *Writer) add(name string, perm fs.FileMode, dir bool) (*wnode, error) {
	if perm&^(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		return nil, fmt.Errorf("isofs: add %q: mode %v: want permission bits only: %w", name, perm, fs.ErrInvalid)
	}
	if !fs.ValidPath(name) || name == "." {
		return nil, fmt.Errorf("isofs: add %q: want a relative slash-separated path without . or .. elements: %w", name, fs.ErrInvalid)
	}
	parts := strings.Split(name, "/")
	levels := len(parts) + 1 // the root is level 1
	if !dir {
		levels-- // a file sits in its parent's level
	}
	if levels > maxLevels {
		return nil, fmt.Errorf("isofs: add %q: deeper than %d directory levels: %w", name, maxLevels, ErrLimit)
	}
	for _, p := range parts {
		if len(p) > maxNameLen || strings.IndexByte(p, 0) >= 0 {
			return nil, fmt.Errorf("isofs: add %q: element %q: want at most %d bytes and no NUL: %w", name, p, maxNameLen, fs.ErrInvalid)
		}
	}
	// Check the whole path before creating any parent.
	cur := w.root
	for i, p := range parts[:len(parts)-1] {
		next, ok := cur.children[p]
		if !ok {
			break
		}
		if next.children == nil {
			return nil, fmt.Errorf("isofs: add %q: %q is a file: %w", name, strings.Join(parts[:i+1], "/"), fs.ErrExist)
		}
		cur = next
	}
	cur = w.root
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur.children[p]
		if !ok {
			next = &wnode{name: p, mode: fs.ModeDir | 0o755, parent: cur, children: map[string]*wnode{}}
			cur.children[p] = next
		}
		cur = next
	}
	base := parts[len(parts)-1]
	if n, ok := cur.children[base]; ok {
		if dir && n.children != nil {
			return n, nil
		}
		return nil, fmt.Errorf("isofs: add %q: already added: %w", name, fs.ErrExist)
	}
	n := &wnode{name: base, mode: perm, parent: cur}
	if dir {
		n.children = map[string]*wnode{}
	}
	cur.children[base] = n
	return n, nil
}

// layout is where everything goes, in sectors.
type layout struct {
	dirs         []*wnode // path table order
	files        []*wnode // data order
	ptSize       uint32
	lPath, mPath uint32
	conts        []*record
	contStart    uint32
	dataStart    uint32
	total        uint32
}

// WriteTo writes the image to out. It may be called more than once.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	l, err := w.layout()
	if err != nil {
		return 0, err
	}
	meta := make([]byte, int(l.dataStart)*SectorSize)
	w.putVolumeDescriptors(meta, l)
	for i, big := range []bool{false, true} {
		at := []uint32{l.lPath, l.mPath}[i]
		putPathTable(meta[int(at)*SectorSize:], l.dirs, big)
	}
	for _, d := range l.dirs {
		w.putDirectory(meta[int(d.extent)*SectorSize:], d)
	}
	for _, r := range l.conts {
		copy(meta[int(r.contBlock)*SectorSize+int(r.contOffset):], r.cont)
	}
	n, err := out.Write(meta)
	written := int64(n)
	if err != nil {
		return written, fmt.Errorf("isofs: write image: %w", err)
	}
	var pad [SectorSize]byte
	for _, f := range l.files {
		if len(f.data) == 0 {
			continue
		}
		n, err := out.Write(f.data)
		written += int64(n)
		if err == nil {
			n, err = out.Write(pad[:(SectorSize-len(f.data)%SectorSize)%SectorSize])
			written += int64(n)
		}
		if err != nil {
			return written, fmt.Errorf("isofs: write image: %w", err)
		}
	}
	return written, nil
}

// layout assigns identifiers, records, sectors and sizes.
func (w *Writer) layout() (*layout, error) {
	l := &layout{}
	// Breadth first with sorted children gives the path table order of
	// ECMA-119 6.9.1: by level, then parent number, then identifier.
	w.root.dirNum = 1
	queue := []*wnode{w.root}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		l.dirs = append(l.dirs, d)
		assignIdents(d)
		for _, c := range d.sorted {
			if c.children != nil {
				c.dirNum = len(l.dirs) + len(queue) + 1
				if c.dirNum > 0xffff {
					return nil, fmt.Errorf("isofs: more than 65535 directories: %w", ErrLimit)
				}
				queue = append(queue, c)
			} else {
				l.files = append(l.files, c)
			}
		}
	}
	for _, d := range l.dirs {
		l.ptSize += uint32(8 + len(pathTableIdent(d)) + len(pathTableIdent(d))%2)
	}
	ptSectors := sectors(int64(l.ptSize))
	l.lPath = pvdSector + 2
	l.mPath = l.lPath + ptSectors
	next := int64(l.mPath + ptSectors)

	for _, d := range l.dirs {
		if err := w.buildRecords(d); err != nil {
			return nil, err
		}
		d.extent = uint32(next)
		d.size = dirSectors(d.records) * SectorSize
		next += int64(d.size / SectorSize)
	}
	l.contStart = uint32(next)
	off := 0
	for _, d := range l.dirs {
		for _, r := range d.records {
			if r.cont == nil {
				continue
			}
			if off%SectorSize+len(r.cont) > SectorSize {
				off = int(sectors(int64(off))) * SectorSize
			}
			r.contBlock = l.contStart + uint32(off/SectorSize)
			r.contOffset = uint32(off % SectorSize)
			off += len(r.cont)
			l.conts = append(l.conts, r)
		}
	}
	next += int64(sectors(int64(off)))
	l.dataStart = uint32(next)
	for _, f := range l.files {
		f.size = uint32(len(f.data))
		if f.size > 0 { // empty files point at sector 0, as is usual
			f.extent = uint32(next)
			next += int64(sectors(int64(f.size)))
		}
	}
	if next > 1<<32-1 {
		return nil, fmt.Errorf("isofs: image of %d sectors: %w", next, ErrLimit)
	}
	l.total = uint32(next)
	return l, nil
}

// assignIdents gives d's children level-1 identifiers and sorts them.
func assignIdents(d *wnode) {
	names := make([]string, 0, len(d.children))
	for name := range d.children {
		names = append(names, name)
	}
	slices.Sort(names) // counters for clashing names follow the real names
	used := map[string]bool{}
	d.sorted = d.sorted[:0]
	for _, name := range names {
		c := d.children[name]
		c.ident = levelOneIdent(name, c.children != nil, used)
		d.sorted = append(d.sorted, c)
	}
	slices.SortFunc(d.sorted, func(a, b *wnode) int {
		switch {
		case a.ident.less(b.ident):
			return -1
		case b.ident.less(a.ident):
			return 1
		}
		return 0
	})
}

func pathTableIdent(d *wnode) []byte {
	if d.parent == nil {
		return []byte{0}
	}
	return d.ident.bytes()
}

// nlink is the PX link count: a directory is linked from its parent, its
// own "." and each subdirectory's "..".
func (n *wnode) nlink() uint32 {
	if n.children == nil {
		return 1
	}
	links := uint32(2)
	for _, c := range n.children {
		if c.children != nil {
			links++
		}
	}
	return links
}

// buildRecords makes d's directory records with their Rock Ridge entries.
func (w *Writer) buildRecords(d *wnode) error {
	parent := d.parent
	if parent == nil {
		parent = d
	}
	attrs := func(n *wnode) [][]byte {
		return [][]byte{pxEntry(n.mode, n.nlink()), tfEntry(w.modTime)}
	}
	self := append([][]byte{rrEntry(rrPX | rrTF)}, attrs(d)...)
	if d.parent == nil {
		// SUSP 5.3: SP opens the root's "." system use area; ER names
		// the Rock Ridge extension.
		self = append([][]byte{spEntry()}, self...)
		self = append(self, erEntry())
	}
	recs := []*record{
		{ident: []byte{0}, flags: flagDirectory, target: d},
		{ident: []byte{1}, flags: flagDirectory, target: parent},
	}
	entries := [][][]byte{self, append([][]byte{rrEntry(rrPX | rrTF)}, attrs(parent)...)}
	for _, c := range d.sorted {
		r := &record{ident: c.ident.bytes(), target: c}
		if c.children != nil {
			r.flags = flagDirectory
		}
		recs = append(recs, r)
		e := append([][]byte{rrEntry(rrPX | rrTF | rrNM)}, attrs(c)...)
		entries = append(entries, append(e, nmEntries(c.name)...))
	}
	for i, r := range recs {
		r.inline, r.cont = splitSUSP(fixedLen(r.ident), entries[i])
		if len(r.cont) > SectorSize {
			return fmt.Errorf("isofs: system use entries of %q do not fit a sector: %w", r.target.name, ErrLimit)
		}
	}
	d.records = recs
	return nil
}

// fixedLen is a record's length without system use entries.
func fixedLen(ident []byte) int {
	return recordHeaderLen + len(ident) + 1 - len(ident)%2
}

// splitSUSP keeps as many entries in the record as fit (records are at
// most 255 bytes and even) and moves the rest to a continuation area,
// leaving room for the CE entry that points there.
func splitSUSP(fixed int, entries [][]byte) (inline, cont []byte) {
	space := maxRecordLen - 1 - fixed
	all := bytes.Join(entries, nil)
	if len(all) <= space {
		return all, nil
	}
	space -= ceLen
	i := 0
	for ; i < len(entries) && len(inline)+len(entries[i]) <= space; i++ {
		inline = append(inline, entries[i]...)
	}
	return inline, bytes.Join(entries[i:], nil)
}

func (r *record) length() int {
	n := fixedLen(r.ident) + len(r.inline)
	if r.cont != nil {
		n += ceLen
	}
	return n + n%2
}

// dirSectors is the number of sectors the records take; a record never
// crosses a sector boundary (ECMA-119 6.8.1.1).
func dirSectors(recs []*record) uint32 {
	off := 0
	for _, r := range recs {
		if off%SectorSize+r.length() > SectorSize {
			off = int(sectors(int64(off))) * SectorSize
		}
		off += r.length()
	}
	return sectors(int64(off))
}

func sectors(n int64) uint32 { return uint32((n + SectorSize - 1) / SectorSize) }

func (w *Writer) putDirectory(b []byte, d *wnode) {
	off := 0
	for _, r := range d.records {
		n := r.length()
		if off%SectorSize+n > SectorSize {
			off = int(sectors(int64(off))) * SectorSize
		}
		w.putRecord(b[off:off+n], r)
		off += n
	}
}

func (w *Writer) putRecord(b []byte, r *record) {
	b[0] = byte(len(b))
	putBoth32(b[2:], r.target.extent)
	putBoth32(b[10:], r.target.size)
	putRecordingDate(b[18:], w.modTime)
	b[25] = r.flags
	putBoth16(b[28:], 1) // volume sequence number
	b[32] = byte(len(r.ident))
	copy(b[33:], r.ident)
	p := fixedLen(r.ident)
	p += copy(b[p:], r.inline)
	if r.cont != nil {
		copy(b[p:], ceEntry(r.contBlock, r.contOffset, uint32(len(r.cont))))
	}
}

// putPathTable writes the L (little-endian) or M (big-endian) path table
// (ECMA-119 9.4).
func putPathTable(b []byte, dirs []*wnode, big bool) {
	order := binary.ByteOrder(binary.LittleEndian)
	if big {
		order = binary.BigEndian
	}
	off := 0
	for _, d := range dirs {
		id := pathTableIdent(d)
		parent := 1
		if d.parent != nil {
			parent = d.parent.dirNum
		}
		b[off] = byte(len(id))
		order.PutUint32(b[off+2:], d.extent)
		order.PutUint16(b[off+6:], uint16(parent))
		copy(b[off+8:], id)
		off += 8 + len(id) + len(id)%2
	}
}

// putVolumeDescriptors writes the primary volume descriptor (ECMA-119 8.4)
// and the set terminator into the first sectors of b.
func (w *Writer) putVolumeDescriptors(b []byte, l *layout) {
	p := b[pvdSector*SectorSize : (pvdSector+1)*SectorSize]
	p[0] = vdTypePrimary
	copy(p[1:6], standardID)
	p[6] = 1
	fill := func(from, to int, s string) {
		copy(p[from:to], s+strings.Repeat(" ", to-from-len(s)))
	}
	fill(8, 40, "")            // system identifier
	fill(40, 72, w.volumeID)   // volume identifier
	putBoth32(p[80:], l.total) // volume space size
	putBoth16(p[120:], 1)      // volume set size
	putBoth16(p[124:], 1)      // volume sequence number
	putBoth16(p[128:], SectorSize)
	putBoth32(p[132:], l.ptSize)
	binary.LittleEndian.PutUint32(p[140:], l.lPath)
	binary.BigEndian.PutUint32(p[148:], l.mPath)
	root := &record{ident: []byte{0}, flags: flagDirectory, target: w.root}
	w.putRecord(p[156:156+34], root)
	fill(190, 318, "")                // volume set identifier
	fill(318, 446, "")                // publisher
	fill(446, 574, "")                // data preparer
	fill(574, 702, "")                // application
	fill(702, 739, "")                // copyright file
	fill(739, 776, "")                // abstract file
	fill(776, 813, "")                // bibliographic file
	putVolumeDate(p[813:], w.modTime) // creation
	putVolumeDate(p[830:], w.modTime) // modification
	copy(p[847:], "0000000000000000") // expiration: not specified
	putVolumeDate(p[864:], w.modTime) // effective
	p[881] = 1                        // file structure version

	t := b[(pvdSector+1)*SectorSize:]
	t[0] = vdTypeTerminator
	copy(t[1:6], standardID)
	t[6] = 1
}
