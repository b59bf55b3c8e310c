package isofs_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/nodezero/nodezero/configimage/isofs"
)

// Fuzz inputs are sparse images. Whole images are mostly zeros, and Go's
// fuzzer minimises every new interesting input with a quadratic search
// over its bytes, which on a whole image takes the entire run. An input is
// a list of chunks: a sector number (1 byte), an offset in the sector (2
// bytes, little-endian, modulo 2048), a length (2 bytes, little-endian)
// and that many bytes. The image is zeros elsewhere and ends after the
// highest sector named.

func sparseImage(in []byte) []byte {
	type chunk struct {
		at   int
		data []byte
	}
	var chunks []chunk
	size := 0
	for len(in) >= 5 {
		sector := int(in[0])
		off := int(binary.LittleEndian.Uint16(in[1:])) % isofs.SectorSize
		n := int(binary.LittleEndian.Uint16(in[3:]))
		in = in[5:]
		n = min(n, isofs.SectorSize-off, len(in))
		chunks = append(chunks, chunk{sector*isofs.SectorSize + off, in[:n]})
		in = in[n:]
		size = max(size, (sector+1)*isofs.SectorSize)
	}
	img := make([]byte, size)
	for _, c := range chunks {
		copy(img[c.at:], c.data)
	}
	return img
}

// sparseInput encodes an image of at most 256 sectors for sparseImage: one
// chunk per run of non-zero bytes, runs less than 8 zeros apart merged.
func sparseInput(t testing.TB, img []byte) []byte {
	t.Helper()
	const ss = isofs.SectorSize
	n := len(img) / ss
	if n > 256 || len(img)%ss != 0 {
		t.Fatalf("image of %d bytes: want at most 256 whole sectors", len(img))
	}
	var out []byte
	chunk := func(s, off int, data []byte) {
		out = append(out, byte(s), byte(off), byte(off>>8), byte(len(data)), byte(len(data)>>8))
		out = append(out, data...)
	}
	for s := range n {
		sec := img[s*ss : (s+1)*ss]
		emitted := false
		for i := 0; i < ss; {
			if sec[i] == 0 {
				i++
				continue
			}
			end := i + 1
			for j := end; j < ss && j-end < 8; j++ {
				if sec[j] != 0 {
					end = j + 1
				}
			}
			chunk(s, i, sec[i:end])
			emitted = true
			i = end
		}
		if !emitted && s == n-1 { // the last sector sets the size
			chunk(s, 0, nil)
		}
	}
	return out
}

// blankText zeroes text the reader ignores, to keep seeds small: the
// space-filled identifiers of the primary volume descriptor and the
// description of the Rock Ridge ER entry.
func blankText(img []byte) []byte {
	pvd := img[16*isofs.SectorSize:]
	clear(pvd[8:40])    // system identifier
	clear(pvd[190:813]) // volume set, publisher, preparer, application, file identifiers
	if i := bytes.Index(img, []byte("RRIP_1991A")); i > 0 {
		clear(img[i+10 : i+10+int(img[i-3])+int(img[i-2])]) // ER descriptor and source
	}
	return img
}

func TestSparseRoundTrip(t *testing.T) {
	img := buildImage(t, sampleFiles())
	in := sparseInput(t, img)
	if got := sparseImage(in); string(got) != string(img) {
		t.Errorf("sparseImage(sparseInput(img)) differs from img (%d and %d bytes)", len(got), len(img))
	}
	if len(in) > len(img)/4 {
		t.Errorf("sparse input of %d bytes for a %d-byte image, want it much smaller", len(in), len(img))
	}
}
