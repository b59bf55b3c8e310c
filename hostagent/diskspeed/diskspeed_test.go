package diskspeed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

func TestPercentile(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		var ds []time.Duration
		for _, v := range vs {
			ds = append(ds, time.Duration(v)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	tests := []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{"none", nil, 99, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"two", ms(1, 9), 99, 9 * time.Millisecond},
		{"hundred p99", ms(hundred...), 99, 99 * time.Millisecond},
		{"hundred p50", ms(hundred...), 50, 50 * time.Millisecond},
		{"hundred p100", ms(hundred...), 100, 100 * time.Millisecond},
		{"hundred p1", ms(hundred...), 1, 1 * time.Millisecond},
		{"outlier above p99", append(ms(hundred[:99]...), 5000), 99, 99 * time.Millisecond},
		{"p0 clamps to the least", ms(3, 1, 2), 0, 1 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.ds, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.ds, tt.p, got, tt.want)
			}
		})
	}
}

func TestPercentileLeavesInput(t *testing.T) {
	ds := []time.Duration{3, 1, 2}
	Percentile(ds, 99)
	if diff := cmp.Diff([]time.Duration{3, 1, 2}, ds); diff != "" {
		t.Errorf("Percentile changed its input (-want +got):\n%s", diff)
	}
}

// tempDisk is a regular file standing in for a disk.
func tempDisk(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMeasureWritesTheRegion(t *testing.T) {
	p := tempDisk(t)
	opts := Options{Size: 100_000, BlockSize: 2300}
	if _, err := Measure(context.Background(), p, opts); err != nil {
		t.Fatalf("Measure(%s): %v", p, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Exactly Size bytes, each block the same non-zero pattern (the last
	// one cut short).
	if len(b) != 100_000 {
		t.Fatalf("file has %d bytes after Measure, want 100000", len(b))
	}
	if bytes.IndexByte(b, 0) >= 0 {
		t.Errorf("file holds a zero byte: a block was not written")
	}
	if !bytes.Equal(b[:2300], b[2300:4600]) {
		t.Errorf("blocks differ")
	}
}

func TestMeasureErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "none"), os.ErrNotExist},
		{"directory", dir, nil},
		{"char device", os.DevNull, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Measure(context.Background(), tt.path, Options{Size: 4096})
			if err == nil {
				t.Fatalf("Measure(%s) succeeded", tt.path)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Measure(%s) = %v, want %v", tt.path, err, tt.want)
			}
		})
	}
}

func TestMeasureCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Measure(ctx, tempDisk(t), Options{Size: 1 << 20})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Measure with a cancelled ctx = %v, want context.Canceled", err)
	}
}

func TestStep(t *testing.T) {
	p := tempDisk(t)
	out, stderr, code := Step(Options{Size: 50_000})(context.Background(), []string{`{"path":"` + p + `"}`, "600"})
	if code != 0 {
		t.Fatalf("step exit %d, stderr %q", code, stderr)
	}
	var got wire.DiskSpeedCheckResponse
	if err := wire.DecodeEmbedded(out, &got); err != nil {
		t.Fatal(err)
	}
	// The duration depends on the machine; that it is a number of ms at
	// all is what the wire needs.
	if got.Path != p || got.IOSyncDuration < 0 {
		t.Errorf("step output = %s, want path %s and a duration ≥ 0", out, p)
	}
}

// TestStepDevice: with Device the step writes the mapped file and reports
// the path it was asked for; a mapping error is the step's error.
func TestStepDevice(t *testing.T) {
	file := tempDisk(t)
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Size: 20_000, Device: func(p string) (string, error) {
		if p != "/dev/disk/by-id/wwn-0x1" {
			return "", fmt.Errorf("no disk %s", p)
		}
		return file, nil
	}}
	out, stderr, code := Step(opts)(context.Background(), []string{`{"path":"/dev/disk/by-id/wwn-0x1"}`, "60"})
	if code != 0 || !strings.Contains(out, `"path":"/dev/disk/by-id/wwn-0x1"`) {
		t.Fatalf("step = %q, %q, %d; want the asked path measured", out, stderr, code)
	}
	after, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, after) {
		t.Error("the mapped file was not written")
	}
	out, stderr, code = Step(opts)(context.Background(), []string{`{"path":"/dev/sdz"}`, "60"})
	if code != step.ExitNotRun || !strings.Contains(stderr, "no disk /dev/sdz") || out != `{"path":"/dev/sdz"}` {
		t.Errorf("unmapped disk: %q, %q, %d", out, stderr, code)
	}
}

func TestStepBothRunsFail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "none")
	out, stderr, code := Step(Options{})(context.Background(), []string{`{"path":"` + p + `"}`, "10"})
	want := `{"path":"` + p + `"}`
	if code != step.ExitNotRun || out != want || !strings.Contains(stderr, "no such file") {
		t.Errorf("step = %q, %q, %d; want %q, the open error, %d", out, stderr, code, want, step.ExitNotRun)
	}
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Args
		wantErr string
	}{
		{"ok", []string{`{"path":"/dev/sda"}`, "120"}, Args{Path: "/dev/sda", Timeout: 120 * time.Second}, ""},
		{"fraction", []string{`{"path":"/dev/sda"}`, "1.5"}, Args{Path: "/dev/sda", Timeout: 1500 * time.Millisecond}, ""},
		{"one arg", []string{`{"path":"/dev/sda"}`}, Args{}, "disk performance cmd accepts 2 params in args"},
		{"no path", []string{`{}`, "1"}, Args{}, "path in body is required"},
		{"bad timeout", []string{`{"path":"/dev/sda"}`, "soon"}, Args{}, "invalid syntax"},
		{"negative timeout", []string{`{"path":"/dev/sda"}`, "-1"}, Args{}, "out of range"},
		{"huge timeout", []string{`{"path":"/dev/sda"}`, "1e300"}, Args{}, "out of range"},
		{"not json", []string{`/dev/sda`, "1"}, Args{}, "disk performance args"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeArgs(%q) error = %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs(%q): %v", tt.args, err)
			}
			if got != tt.want {
				t.Errorf("DecodeArgs(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func FuzzDecodeArgs(f *testing.F) {
	f.Add(`{"path":"/dev/sda"}`, "30")
	f.Add(`{}`, "NaN")
	f.Add(`{"path":""}`, "-0")
	f.Fuzz(func(t *testing.T, req, timeout string) {
		a, err := DecodeArgs([]string{req, timeout})
		if err != nil {
			return
		}
		if a.Path == "" || a.Timeout < 0 {
			t.Fatalf("DecodeArgs(%q, %q) = %+v", req, timeout, a)
		}
	})
}
