package factoryimage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// A stage is an image's tree before it becomes a filesystem: the cached
// rootfs as hard links (cp -al: instant, and only what a layer adds takes
// space), plus the layer's files. Every inode it shares with the cache is
// the cache's own, so a layer never writes into an existing file, nor
// changes its mode or times: it writes a new file and renames it over the
// old (units.Install and diskwrite.WritePayload do that too).
type stage struct {
	dir   string
	epoch time.Time
}

// newStage makes dir a hard-linked copy of the rootfs tree; dir must be on
// the cache's filesystem and not exist yet.
func newStage(ctx context.Context, o *resolved, rootfs, dir string) (*stage, error) {
	if err := run(ctx, o.Log, nil, "cp", "-al", rootfs, dir); err != nil {
		return nil, fmt.Errorf("stage %s: %w", dir, err)
	}
	return &stage{dir: dir, epoch: o.epoch}, nil
}

// path is rel's path in the tree.
func (s *stage) path(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// writeFile puts a new file at rel with mode, its content read from r.
func (s *stage) writeFile(rel string, mode fs.FileMode, r io.Reader) error {
	p := s.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".nodezero-tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", rel, err)
	}
	if err := f.Chmod(mode); err != nil { // past the umask
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, p)
}

// copyFile puts a copy of the file src at rel with mode.
func (s *stage) copyFile(rel string, mode fs.FileMode, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return s.writeFile(rel, mode, f)
}

// linkFile puts a hard link to src (a file of the cache the stage lives
// in, which nothing writes) at rel.
func (s *stage) linkFile(rel, src string) error {
	p := s.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Link(src, p)
}

// symlink puts a symbolic link to target at rel.
func (s *stage) symlink(rel, target string) error {
	p := s.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Symlink(target, p)
}

// seal gives everything the layer added the epoch's times.
func (s *stage) seal() error { return clamp(s.dir, s.epoch) }

func (s *stage) remove() error { return removeAll(s.dir) }

// lchtimes sets a path's atime and mtime, not following a final link.
func lchtimes(p string, t time.Time) error {
	tv := unix.NsecToTimeval(t.UnixNano())
	if err := unix.Lutimes(p, []unix.Timeval{tv, tv}); err != nil {
		return &fs.PathError{Op: "lutimes", Path: p, Err: err}
	}
	return nil
}
