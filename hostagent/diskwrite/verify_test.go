package diskwrite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestVerify(t *testing.T) {
	raw, img := buildRaw(t, testSpec)
	start, _ := ignitionRange(t, raw, img)
	dir := t.TempDir()
	// The image as shipped, copied byte for byte (as dd would): no
	// Ignition placed.
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Verify(plain, img); err != nil || len(got) != 0 {
		t.Errorf("Verify(image as shipped) = %q, %v; want empty, nil", got, err)
	}

	// Ignition placed by hand is read back up to its NUL.
	withIgn := filepath.Join(dir, "ign")
	placed := append([]byte(nil), raw...)
	copy(placed[start:], testIgnition)
	if err := os.WriteFile(withIgn, placed, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Verify(withIgn, img); err != nil || string(got) != testIgnition {
		t.Errorf("Verify = %q, %v; want %q", got, err, testIgnition)
	}

	bad := append([]byte(nil), raw...)
	bad[start-1] ^= 1 // the byte before the ignition partition counts
	badPath := filepath.Join(dir, "bad")
	if err := os.WriteFile(badPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dev  string
		img  func(Image) Image
		want error
	}{
		{"flipped byte", badPath, nil, ErrDigestMismatch},
		{"other sha256", plain, func(i Image) Image { i.SHA256 = goodSHA; return i }, ErrDigestMismatch},
		{"image larger than disk", plain, func(i Image) Image { i.Size += 512; return i }, ErrDiskTooSmall},
		{"no such partition", plain, func(i Image) Image { i.IgnitionPartition = "config"; return i }, ErrPartitionNotFound},
		{"missing disk", filepath.Join(dir, "missing"), nil, os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			i := img
			if tc.img != nil {
				i = tc.img(i)
			}
			_, err := Verify(tc.dev, i)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			t.Log(err)
		})
	}
}
