package diskwrite

import (
	"errors"
	"fmt"
	"strings"
)

// Conditions a caller branches on. Test them with errors.Is; the error that
// carries one says which disk and which numbers.
var (
	// ErrBusy: another Write holds the disk, in this process or another.
	ErrBusy = errors.New("being written by another installer")
	// ErrDiskInUse: the kernel holds the block device (a mounted
	// filesystem, swap, RAID or LVM on it).
	ErrDiskInUse = errors.New("in use by the system")
	// ErrDiskTooSmall: the target holds fewer bytes than the image.
	ErrDiskTooSmall = errors.New("disk too small")
	// ErrDigestMismatch: the bytes written do not hash to the payload's
	// sha256. The disk is wiped so it cannot boot them.
	ErrDigestMismatch = errors.New("image digest mismatch")
	// ErrBadImage: the image file could not be decompressed, or it holds
	// more or fewer bytes than the payload's size.
	ErrBadImage = errors.New("bad image file")
	// ErrPartitionNotFound: the image's partition table has no partition
	// with the payload's ignition_partition name.
	ErrPartitionNotFound = errors.New("ignition partition not found")
	// ErrIgnitionTooLarge: the Ignition config does not fit its partition.
	ErrIgnitionTooLarge = errors.New("ignition config larger than its partition")
)

// Error is what Write and Verify return: the operation, the disk and the
// cause. Hint, when set, tells a person what to do about it.
type Error struct {
	Op     string // "write", "verify", "lock", "place ignition"...
	Device string // the disk as the caller named it
	Err    error
	Hint   string
}

func (e *Error) Error() string {
	s := e.Op + " " + e.Device + ": " + e.Err.Error()
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// humanize renders a byte count as "32 MiB (33554432 bytes)": the unit a
// person reads and the exact number a person compares.
func humanize(n int64) string {
	return fmt.Sprintf("%s (%d bytes)", binarySize(n), n)
}

// binarySize renders n in the largest binary unit that shows it without
// pretending: whole values as integers, others with one decimal, in a
// smaller unit when one decimal would round to a whole number ("4096.5
// KiB", not "4.0 MiB").
func binarySize(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for i < len(units)-1 && abs(n) >= int64(1)<<(10*(i+1)) {
		i++
	}
	for ; i > 0; i-- {
		unit := int64(1) << (10 * i)
		if n%unit == 0 {
			return fmt.Sprintf("%d %s", n/unit, units[i])
		}
		s := fmt.Sprintf("%.1f", float64(n)/float64(unit))
		if !strings.HasSuffix(s, ".0") {
			return s + " " + units[i]
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
