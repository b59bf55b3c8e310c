package units

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Result says what Install did, by path relative to the root.
type Result struct {
	Changed   []string // created or replaced: content, mode or link target differed
	Unchanged []string // already as rendered
	Removed   []string // enablement links to our units that the rendering no longer has
}

// Install lays the binary (read from binary) at Params.Binary under root,
// the units under root/etc/systemd/system, the udev rule under
// root/etc/udev/rules.d and the links `systemctl enable` would make for
// each unit. Files are replaced atomically (temp file, fsync, rename) and
// only when they differ, so a second run changes nothing.
//
// root must be an existing directory. Every path is resolved inside it
// (os.Root): a symlink in the tree that leads out of root, absolute ones
// included, is an error rather than a write to the machine running Install.
func Install(root string, p Params, binary io.Reader) (Result, error) {
	var res Result
	bin, err := p.binary()
	if err != nil {
		return res, err
	}
	files, err := Files(p)
	if err != nil {
		return res, err
	}
	links, err := Links(files)
	if err != nil {
		return res, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return res, fmt.Errorf("units: install into %s: %w", root, err)
	}
	defer r.Close()

	note := func(name string, changed bool) {
		if changed {
			res.Changed = append(res.Changed, name)
		} else {
			res.Unchanged = append(res.Unchanged, name)
		}
	}
	name := strings.TrimPrefix(bin, "/")
	changed, err := replaceFile(r, name, 0o755, binary)
	if err != nil {
		return res, fmt.Errorf("units: install binary into %s: %w", root, err)
	}
	note(name, changed)
	for _, f := range files {
		changed, err := replaceFile(r, f.Path, f.Mode, bytes.NewReader(f.Data))
		if err != nil {
			return res, fmt.Errorf("units: install into %s: %w", root, err)
		}
		note(f.Path, changed)
	}
	for _, l := range links {
		changed, err := replaceLink(r, l)
		if err != nil {
			return res, fmt.Errorf("units: enable in %s: %w", root, err)
		}
		note(l.Path, changed)
	}
	res.Removed, err = removeStaleLinks(r, links)
	if err != nil {
		return res, fmt.Errorf("units: enable in %s: %w", root, err)
	}
	return res, nil
}

// replaceFile makes name hold src's bytes with mode, replacing it
// atomically. It reports whether anything changed. src is read once,
// alongside the file already there; while they agree nothing is written
// (not even a temp file, so a re-install leaves directories alone too).
func replaceFile(r *os.Root, name string, mode fs.FileMode, src io.Reader) (bool, error) {
	dir := path.Dir(name)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("mkdir %s: %w", dir, err)
	}
	old, err := openSame(r, name, mode)
	if err != nil {
		return false, err
	}
	var agreed int64 // bytes of src equal to old's
	var pending []byte
	if old != nil {
		defer old.Close()
		agreed, pending, err = compare(old, src)
		if err != nil {
			return false, fmt.Errorf("compare %s: %w", name, err)
		}
		if pending == nil {
			return false, nil
		}
	}

	tmp, f, err := createTemp(r, name)
	if err != nil {
		return false, err
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			r.Remove(tmp)
		}
	}()
	if agreed > 0 {
		if _, err := io.Copy(f, io.NewSectionReader(old, 0, agreed)); err != nil {
			return false, fmt.Errorf("write %s: %w", tmp, err)
		}
	}
	if _, err := f.Write(pending); err != nil {
		return false, fmt.Errorf("write %s: %w", tmp, err)
	}
	if _, err := io.Copy(f, src); err != nil {
		return false, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Chmod(mode); err != nil {
		return false, fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("close %s: %w", tmp, err)
	}
	done = true
	if err := r.Rename(tmp, name); err != nil {
		r.Remove(tmp)
		return false, fmt.Errorf("rename %s to %s: %w", tmp, name, err)
	}
	return true, syncDir(r, dir)
}

// createTemp creates a fresh temporary file next to name.
func createTemp(r *os.Root, name string) (string, *os.File, error) {
	for range 10 {
		tmp := tempName(name)
		f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, fmt.Errorf("create temp for %s: %w", name, err)
		}
		return tmp, f, nil
	}
	return "", nil, fmt.Errorf("create temp for %s: too many name collisions", name)
}

// tempName is a hidden, random name next to name.
func tempName(name string) string {
	var b [6]byte
	rand.Read(b[:])
	return path.Join(path.Dir(name), "."+path.Base(name)+".tmp-"+hex.EncodeToString(b[:]))
}

// openSame opens name when it is a regular file with mode, the only kind
// of file a re-install may keep; otherwise it returns nil.
func openSame(r *os.Root, name string, mode fs.FileMode) (*os.File, error) {
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != mode.Perm() {
		return nil, nil
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return f, nil
}

// compare reads src and old side by side. When they are equal to the end
// it returns a nil pending. Otherwise it returns how many leading bytes
// agreed and the chunk of src read past them (non-nil, maybe empty when
// old is only longer); the rest of src is unread.
func compare(old io.Reader, src io.Reader) (agreed int64, pending []byte, err error) {
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(src, a)
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return 0, nil, err
		}
		srcDone := err != nil
		m, err := io.ReadFull(old, b[:n])
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return 0, nil, err
		}
		if m != n || !bytes.Equal(a[:n], b[:n]) {
			return agreed, a[:n:n], nil
		}
		agreed += int64(n)
		if srcDone {
			// src ended: equal only if old ends here too.
			if k, err := old.Read(b[:1]); k > 0 || (err != nil && err != io.EOF) {
				return agreed, []byte{}, err
			}
			return agreed, nil, nil
		}
	}
}

// replaceLink makes l.Path a symlink to l.Target, replacing whatever file
// or link is there atomically. It reports whether anything changed.
func replaceLink(r *os.Root, l Link) (bool, error) {
	if fi, err := r.Lstat(l.Path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := r.Readlink(l.Path); err == nil && t == l.Target {
			return false, nil
		}
	}
	dir := path.Dir(l.Path)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("mkdir %s: %w", dir, err)
	}
	tmp := tempName(l.Path)
	if err := r.Symlink(l.Target, tmp); err != nil {
		return false, fmt.Errorf("symlink %s: %w", tmp, err)
	}
	if err := r.Rename(tmp, l.Path); err != nil {
		r.Remove(tmp)
		return false, fmt.Errorf("rename %s to %s: %w", tmp, l.Path, err)
	}
	return true, syncDir(r, dir)
}

// removeStaleLinks removes links to our units from the dependency
// directories under UnitDir that are not among want: what an earlier
// rendering enabled and this one does not.
func removeStaleLinks(r *os.Root, want []Link) ([]string, error) {
	keep := map[string]bool{}
	for _, l := range want {
		keep[l.Path] = true
	}
	d, err := r.Open(UnitDir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", UnitDir, err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", UnitDir, err)
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !isDepDir(e.Name()) {
			continue
		}
		dir := path.Join(UnitDir, e.Name())
		d, err := r.Open(dir)
		if err != nil {
			return removed, fmt.Errorf("open %s: %w", dir, err)
		}
		links, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			return removed, fmt.Errorf("read %s: %w", dir, err)
		}
		for _, l := range links {
			name := path.Join(dir, l.Name())
			if l.Type()&fs.ModeSymlink == 0 || !ours(l.Name()) || keep[name] {
				continue
			}
			if err := r.Remove(name); err != nil {
				return removed, fmt.Errorf("remove stale link %s: %w", name, err)
			}
			removed = append(removed, name)
			if err := syncDir(r, dir); err != nil {
				return removed, err
			}
		}
	}
	return removed, nil
}

func isDepDir(name string) bool {
	for _, suffix := range installDirs {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// syncDir makes a rename in dir durable.
func syncDir(r *os.Root, dir string) error {
	d, err := r.Open(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
