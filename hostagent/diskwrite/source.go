package diskwrite

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compression formats by their magic bytes.
var magics = []struct {
	name  string
	magic []byte
}{
	{"gzip", []byte{0x1f, 0x8b}},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}},
}

// imageReader is an open image file, decompressing as it is read.
type imageReader struct {
	io.Reader
	format string // "gzip", "xz", "zstd" or "raw"
	close  func()
}

// openImage opens path and picks the decompressor its first bytes name;
// anything else is read as a raw image.
func openImage(path string) (*imageReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	head, err := br.Peek(6)
	if err != nil && err != io.EOF {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	format := "raw"
	for _, m := range magics {
		if bytes.HasPrefix(head, m.magic) {
			format = m.name
			break
		}
	}
	img := &imageReader{Reader: br, format: format, close: func() { f.Close() }}
	switch format {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: gzip: %w", ErrBadImage, path, err)
		}
		img.Reader = zr
	case "xz":
		xr, err := xz.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: xz: %w", ErrBadImage, path, err)
		}
		img.Reader = xr
	case "zstd":
		// One decoding goroutine: it decompresses faster than sha256
		// hashes, and the pipeline already runs it beside the hash; more
		// only compete with the hash for cores.
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s: zstd: %w", ErrBadImage, path, err)
		}
		img.Reader = zr
		img.close = func() { zr.Close(); f.Close() }
	}
	return img, nil
}
