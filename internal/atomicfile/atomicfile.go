// Package atomicfile replaces small files so that a reader, or a crash,
// sees the old content or the new, never a part: a temporary file in the
// same directory, written, given its mode, synced, renamed over the
// target. The daemon's env, status, token and failure files all go
// through it. It imports no other package of this module.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write replaces path with data and mode perm, creating its directory
// (0755) when missing.
func Write(path string, data []byte, perm os.FileMode) error {
	return Stream(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Stream replaces path with what fill writes, mode perm, creating its
// directory (0755) when missing. fill's error (kept for errors.As) leaves
// path as it was and no temporary file behind; the temporary file is named
// "."+base(path)+".*" until it is renamed. The directory is synced after
// the rename, so the new file survives a power cut.
func Stream(path string, perm os.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // nothing left to remove once renamed
	err = f.Chmod(perm)
	if err == nil {
		err = fill(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
