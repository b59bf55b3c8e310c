package diskwrite

import (
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWriteVsDD writes one 256 MiB image to one target file on a
// disk-backed filesystem, alternately with
//
//	dd if=<raw> of=<target> bs=4M oflag=direct conv=notrunc
//
// and with Write from the zstd-compressed image (decompressing and
// hashing as it goes, Ignition placed, fsynced), and reports both
// throughputs and their ratio (write/dd; the goal is >= 0.9). With
// verification on, Write cannot beat sha256 on one core: the benchmark
// also hashes the raw image alone and reports write/ceiling, Write against
// the slower of dd and that hash, which says how much the pipeline itself
// loses where the target is faster than the hash.
func BenchmarkWriteVsDD(b *testing.B) {
	dd := needTool(b, "dd")
	dir := realDir(b)
	raw, img := buildRaw(b, ImageSpec{Size: 256 << 20, Seed: 1})
	rawPath := filepath.Join(dir, "os.raw")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	p := writePayload(b, dir, img, compress(b, "zstd", raw))
	target := newDisk(b, dir, img.Size)
	ign := []byte(testIgnition)

	runDD := func() time.Duration {
		start := time.Now()
		out, err := exec.Command(dd, "if="+rawPath, "of="+target, "bs=4M", "oflag=direct", "conv=notrunc").CombinedOutput()
		if err != nil {
			b.Fatalf("dd: %v\n%s", err, out)
		}
		return time.Since(start)
	}
	runWrite := func() (time.Duration, bool) {
		start := time.Now()
		res, err := Write(context.Background(), Options{Device: target, Payload: p, Ignition: ign})
		if err != nil {
			b.Fatalf("Write: %v", err)
		}
		return time.Since(start), res.Direct
	}
	// Once each untimed: the target's blocks allocated, the inputs cached.
	runDD()
	runWrite()

	runHash := func() time.Duration {
		start := time.Now()
		sha256.Sum256(raw)
		return time.Since(start)
	}

	var ddTime, writeTime, hashTime time.Duration
	direct := true
	n := 0
	for b.Loop() {
		ddTime += runDD()
		d, dir := runWrite()
		writeTime += d
		direct = direct && dir
		hashTime += runHash()
		n++
	}
	mb := float64(img.Size) * float64(n) / 1e6
	ddRate, writeRate, hashRate := mb/ddTime.Seconds(), mb/writeTime.Seconds(), mb/hashTime.Seconds()
	b.ReportMetric(ddRate, "dd-MB/s")
	b.ReportMetric(writeRate, "write-MB/s")
	b.ReportMetric(writeRate/ddRate, "write/dd")
	b.ReportMetric(hashRate, "sha256-MB/s")
	b.ReportMetric(writeRate/min(ddRate, hashRate), "write/ceiling")
	if !direct {
		b.Logf("Write fell back to buffered writes on %s", dir)
	}
}
