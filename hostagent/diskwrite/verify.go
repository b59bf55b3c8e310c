package diskwrite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// Verify is the installed host's check of its own disk: the first
// img.Size bytes must hash to img.SHA256 when the ignition partition's
// bytes are read as zeros (the image ships that partition empty and Write
// fills it). It returns the Ignition config found there, up to its first
// NUL byte; empty when none was placed. Errors are *Error; a disk that
// does not match is ErrDigestMismatch. Verify takes a shared lock, so it
// reports ErrBusy while a Write runs.
func Verify(device string, img Image) ([]byte, error) {
	fail := func(err error) error {
		return &Error{Op: "verify", Device: device, Err: err}
	}
	if ps := img.problemsForVerify(); len(ps) > 0 {
		errs := make([]error, len(ps))
		for i, p := range ps {
			errs[i] = errors.New("image: " + p)
		}
		return nil, fail(errors.Join(errs...))
	}
	d, err := openDisk(context.Background(), "verify", device, false)
	if err != nil {
		return nil, err
	}
	defer d.close()
	if d.size < img.Size {
		return nil, fail(fmt.Errorf("%w: %s is %s, the image is %s", ErrDiskTooSmall, device, humanize(d.size), humanize(img.Size)))
	}
	parts, err := readGPT(d.f, img.Size)
	if err != nil {
		return nil, fail(err)
	}
	p, err := findPartition(parts, img.IgnitionPartition)
	if err != nil {
		return nil, fail(err)
	}
	ignStart, ignEnd := p.byteRange()

	h := sha256.New()
	var ign []byte
	ended := false // the config's NUL has been seen
	buf := make([]byte, chunkSize)
	for off := int64(0); off < img.Size; {
		b := buf[:min(chunkSize, img.Size-off)]
		if _, err := d.f.ReadAt(b, off); err != nil && err != io.EOF {
			return nil, fail(fmt.Errorf("read at byte %d: %w", off, err))
		}
		s, e := max(ignStart, off), min(ignEnd, off+int64(len(b)))
		if s < e {
			part := b[s-off : e-off]
			if !ended {
				if i := bytes.IndexByte(part, 0); i >= 0 {
					ign = append(ign, part[:i]...)
					ended = true
				} else {
					ign = append(ign, part...)
				}
			}
			clear(part)
		}
		h.Write(b)
		off += int64(len(b))
	}
	want, _ := hex.DecodeString(img.SHA256) // checked above
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return nil, fail(fmt.Errorf("%w: disk has sha256 %x (ignition partition read as zeros), payload says %s", ErrDigestMismatch, got, img.SHA256))
	}
	return ign, nil
}

// problemsForVerify is problems without the file: Verify reads a disk.
func (img Image) problemsForVerify() []string {
	img.File = "unused"
	return img.problems()
}
