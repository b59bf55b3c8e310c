package diskwrite

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// checkIgnitionFits finds the image's ignition partition in r, which
// holds the image's first bytes, and checks n bytes of Ignition fit in it.
// When the table lies beyond what r holds it says nothing: the check after
// writing decides.
func checkIgnitionFits(r io.ReaderAt, img Image, n int) error {
	parts, err := readGPT(r, img.Size)
	if errors.Is(err, errBeyondPrefix) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	p, err := findPartition(parts, img.IgnitionPartition)
	if err != nil {
		return err
	}
	return fits(p, n)
}

func fits(p partition, n int) error {
	start, end := p.byteRange()
	if int64(n) > end-start {
		return fmt.Errorf("%w: the config is %s, partition %q holds %s", ErrIgnitionTooLarge, humanize(int64(n)), p.Name, humanize(end-start))
	}
	return nil
}

// placeIgnition writes ign at the start of the image's ignition partition,
// read from the disk's own partition table, and zeroes the rest of it.
func placeIgnition(f *os.File, img Image, ign []byte) error {
	parts, err := readGPT(f, img.Size)
	if err != nil {
		return err
	}
	p, err := findPartition(parts, img.IgnitionPartition)
	if err != nil {
		return err
	}
	if err := fits(p, len(ign)); err != nil {
		return err
	}
	start, end := p.byteRange()
	if _, err := f.WriteAt(ign, start); err != nil {
		return err
	}
	return zeroRange(f, start+int64(len(ign)), end)
}

// errBeyondPrefix: a read past the bytes a prefixReader holds.
var errBeyondPrefix = errors.New("read beyond the image's first chunk")

// prefixReader reads the first bytes of an image.
type prefixReader []byte

func (b prefixReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) || int64(len(p)) > int64(len(b))-off {
		return 0, errBeyondPrefix
	}
	return copy(p, b[off:]), nil
}
