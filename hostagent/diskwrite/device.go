package diskwrite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// disk is an open, locked target: a block device or a pre-sized regular
// file (the sandbox's disks).
type disk struct {
	name  string   // as the caller named it, for errors
	path  string   // symlinks resolved: the lock's key
	f     *os.File // buffered, holds the flock
	size  int64
	block bool
	// unclaim releases the process-wide claim, when one was taken.
	unclaim func()
}

// claims is the process-wide half of "one writer per disk": flock alone
// would do across processes, and it does between two descriptors of one
// process too, but a claim makes a second Write in this process fail
// before it opens anything.
var claims = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

// flockWait is how long a lock attempt keeps retrying a held flock before
// it reports the disk busy. udev takes a shared flock on a block device
// for the moment it probes it (after losetup, after a partition table
// changes); a writer that gave up at once would call that another
// installer. A real installer holds the lock for minutes. Tests shorten it.
var flockWait = 2 * time.Second

const flockPoll = 50 * time.Millisecond

// openDisk resolves device, claims it when exclusive (for writing), opens
// it without creating or truncating it, and flocks it (LOCK_EX for
// writing, LOCK_SH for reading).
func openDisk(ctx context.Context, op, device string, exclusive bool) (*disk, error) {
	fail := func(err error, hint string) error {
		return &Error{Op: op, Device: device, Err: err, Hint: hint}
	}
	if device == "" {
		return nil, fail(errors.New("no device given"), "")
	}
	path, err := filepath.EvalSymlinks(device)
	if err != nil {
		return nil, fail(err, "")
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, fail(err, "")
	}
	d := &disk{name: device, path: path, unclaim: func() {}}
	busy := fmt.Errorf("disk %s is %w", device, ErrBusy)
	if exclusive {
		claims.Lock()
		taken := claims.paths[path]
		claims.paths[path] = true
		claims.Unlock()
		if taken {
			return nil, fail(busy, "")
		}
		d.unclaim = func() {
			claims.Lock()
			delete(claims.paths, path)
			claims.Unlock()
		}
	}
	flag, how := os.O_RDONLY, unix.LOCK_SH
	if exclusive {
		flag, how = os.O_RDWR, unix.LOCK_EX
		// O_EXCL on a block device claims it from the kernel: the open
		// fails while a partition is mounted, swapped on, or held by RAID
		// or LVM. (Without O_CREAT it means nothing for other files.)
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0 {
			flag |= unix.O_EXCL
		}
	}
	d.f, err = os.OpenFile(path, flag, 0)
	if errors.Is(err, unix.EBUSY) {
		d.unclaim()
		return nil, fail(fmt.Errorf("disk %s is %w: %w", device, ErrDiskInUse, err),
			"unmount its filesystems and stop swap, RAID or LVM on it")
	}
	if err != nil {
		d.unclaim()
		return nil, fail(err, "")
	}
	if err := lockWithRetry(ctx, d.f, how); err != nil {
		d.close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fail(busy, "")
		}
		return nil, fail(fmt.Errorf("flock: %w", err), "")
	}
	if err := d.measure(); err != nil {
		d.close()
		return nil, fail(err, "")
	}
	return d, nil
}

// lockWithRetry takes a non-blocking flock, retrying for flockWait.
func lockWithRetry(ctx context.Context, f *os.File, how int) error {
	deadline := time.Now().Add(flockWait)
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(flockPoll):
		}
	}
}

// measure reads the disk's size: BLKGETSIZE64 for a block device, the
// current length for a regular file (never grown: a sandbox disk is a
// sparse file of the size its host was given).
func (d *disk) measure() error {
	fi, err := d.f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.Mode().IsRegular():
		d.size = fi.Size()
		return nil
	case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
		d.block = true
	default:
		return fmt.Errorf("%s is neither a block device nor a regular file (%s)", d.path, fi.Mode().Type())
	}
	fd := d.f.Fd()
	var size uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))); errno != 0 {
		return fmt.Errorf("BLKGETSIZE64: %w", errno)
	}
	d.size = int64(size)
	// The image's table is laid out for 512-byte sectors; firmware on a
	// 4Kn disk looks for it at byte 4096 and would not boot it.
	ssz, err := unix.IoctlGetInt(int(fd), unix.BLKSSZGET)
	if err != nil {
		return fmt.Errorf("BLKSSZGET: %w", err)
	}
	if ssz != sectorSize {
		return fmt.Errorf("disk has %d-byte logical sectors; the image's partition table is for %d-byte sectors", ssz, sectorSize)
	}
	return nil
}

// close unlocks (by closing) and releases the claim.
func (d *disk) close() error {
	err := d.f.Close()
	d.unclaim()
	return err
}

// directAlign is the alignment O_DIRECT needs of buffers, offsets and
// lengths: the largest logical block size in use (4Kn disks).
const directAlign = 4096

// openDirect opens path for O_DIRECT writes; a test replaces it to act as
// a filesystem that refuses them.
var openDirect = func(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|unix.O_DIRECT, 0)
}

// alignedBuffer returns n bytes whose start is directAlign-aligned.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	skip := 0
	if r := int(uintptr(unsafe.Pointer(&b[0])) % directAlign); r != 0 {
		skip = directAlign - r
	}
	return b[skip : skip+n : skip+n]
}

// zeroRange writes zeros over [start, end) of f with buffered writes.
func zeroRange(f *os.File, start, end int64) error {
	zeros := make([]byte, min(1<<20, max(end-start, 0)))
	for off := start; off < end; {
		n := min(int64(len(zeros)), end-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}
