package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Where the hosts' disk files lie, what they take, and how leftovers go.
// By default under DIR/disks, on whatever disk DIR is; --disks-tmpfs puts
// them in /dev/shm (memory), named after DIR so that `sandbox clean`
// finds them. A run that installs removes them unless --keep.

// shmRoot is where --disks-tmpfs puts a sandbox's disks, and shmPrefix
// how their directory's name starts.
const (
	shmRoot   = "/dev/shm"
	shmPrefix = "nodezero-sandbox-"
	// ownerFile, in a tmpfs disks directory, names the sandbox's DIR.
	ownerFile = "sandbox-dir"
)

// tmpfsDisks is DIR's disks directory in /dev/shm: the directory's name and
// a hash of its path, the same for every run in DIR.
func tmpfsDisks(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(shmRoot, shmPrefix+filepath.Base(dir)+"-"+hex.EncodeToString(sum[:4]))
}

// isSandboxShm reports whether p is a sandbox's disks directory in
// /dev/shm (never anything else: clean and --fresh remove it).
func isSandboxShm(p string) bool {
	return filepath.Dir(p) == shmRoot && strings.HasPrefix(filepath.Base(p), shmPrefix)
}

// onTmpfs reports whether p lies on a tmpfs (memory: its fsync is free).
func onTmpfs(p string) bool {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(p, &fs); err != nil {
		return false
	}
	const tmpfsMagic = 0x01021994
	return fs.Type == tmpfsMagic
}

// usage is the space the files under p take (allocated blocks: a sparse
// disk file counts what was written), 0 when p is missing.
func usage(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(path, &st) == nil {
			n += st.Blocks * 512
		}
		return nil
	})
	return n
}

// mib formats bytes as MiB, one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// CleanOptions say what Clean removes.
type CleanOptions struct {
	// Dir, when set, is a sandbox directory whose disks go (DIR/disks and
	// its tmpfs directory); the rest of DIR stays.
	Dir string
	// Stdout gets a line per removal and the total freed.
	Stdout io.Writer
}

// Clean removes sandboxes' leftover disks: every /dev/shm/nodezero-sandbox-*
// whose sandbox is not running (older versions left theirs under random
// names), and with Dir that directory's disks. It prints what it removed
// and the space freed.
func Clean(o CleanOptions) error {
	var freed int64
	var errs []error
	remove := func(p, why string) {
		n := usage(p)
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			return
		}
		freed += n
		fmt.Fprintf(o.Stdout, "removed %s (%s, %s)\n", p, mib(n), why)
	}
	if o.Dir != "" {
		dir, err := filepath.Abs(o.Dir)
		if err != nil {
			return err
		}
		if locked(dir) {
			return fmt.Errorf("sandbox clean: a sandbox runs in %s: stop it first", dir)
		}
		if st, err := readState(dir); err == nil && st.Disks != "" && (isSandboxShm(st.Disks) || st.Disks == filepath.Join(dir, "disks")) {
			if exists(st.Disks) {
				remove(st.Disks, "the disks of "+dir)
			}
		}
		for _, p := range []string{filepath.Join(dir, "disks"), tmpfsDisks(dir)} {
			if exists(p) {
				remove(p, "the disks of "+dir)
			}
		}
	}
	ents, err := os.ReadDir(shmRoot)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), shmPrefix) || !e.IsDir() {
			continue
		}
		p := filepath.Join(shmRoot, e.Name())
		owner := "an older sandbox"
		if b, err := os.ReadFile(filepath.Join(p, ownerFile)); err == nil {
			d := strings.TrimSpace(string(b))
			if locked(d) {
				fmt.Fprintf(o.Stdout, "kept %s: the sandbox in %s is running\n", p, d)
				continue
			}
			owner = "the disks of " + d
		}
		remove(p, owner)
	}
	fmt.Fprintf(o.Stdout, "freed %s\n", mib(freed))
	return errors.Join(errs...)
}
