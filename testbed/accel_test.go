package testbed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeAccel replaces the probe and the cache file for one test.
func fakeAccel(t *testing.T, answer Accel) (probes *int, file string) {
	t.Helper()
	probes = new(int)
	file = filepath.Join(t.TempDir(), "nodezero", "vm-accel.json")
	oldProbe, oldPath := accelProbe, accelCachePath
	accelProbe = func(context.Context) (Accel, error) { *probes++; return answer, nil }
	accelCachePath = func() string { return file }
	forget := func() {
		accelCache.Lock()
		accelCache.key = ""
		accelCache.Unlock()
	}
	forget()
	t.Cleanup(func() { accelProbe, accelCachePath = oldProbe, oldPath; forget() })
	return probes, file
}

func TestDetectAccelCache(t *testing.T) {
	needTool(t, qemuBinary)
	t.Setenv(AccelEnv, "")
	probes, file := fakeAccel(t, AccelKVM)
	ctx := t.Context()
	for i := range 2 {
		if a, err := DetectAccel(ctx); err != nil || a != AccelKVM {
			t.Fatalf("DetectAccel #%d = %q, %v; want kvm (the probe's answer)", i+1, a, err)
		}
	}
	if *probes != 1 {
		t.Errorf("probed %d times in one process, want 1", *probes)
	}
	// Another process (no memory of this one's answer) reads the file.
	accelCache.Lock()
	accelCache.key = ""
	accelCache.Unlock()
	if a, err := DetectAccel(ctx); err != nil || a != AccelKVM || *probes != 1 {
		t.Errorf("DetectAccel with the cache file = %q, %v after %d probes; want kvm from the file, 1 probe", a, err, *probes)
	}
	// A record of another boot (or QEMU) is not believed.
	key, err := accelKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAccelCache(file, "another-boot"+key, AccelTCG); err != nil {
		t.Fatal(err)
	}
	accelCache.Lock()
	accelCache.key = ""
	accelCache.Unlock()
	if a, err := DetectAccel(ctx); err != nil || a != AccelKVM || *probes != 2 {
		t.Errorf("DetectAccel with a stale record = %q, %v after %d probes; want kvm from a new probe (2)", a, err, *probes)
	}
	if got, ok := readAccelCache(file, key); !ok || got != AccelKVM {
		t.Errorf("cache after a new probe = %q, %v; want kvm under this boot's key", got, ok)
	}
}

func TestDetectAccelEnv(t *testing.T) {
	probes, _ := fakeAccel(t, AccelKVM)
	for _, c := range []struct {
		env     string
		want    Accel
		wantErr string
	}{
		{"tcg", AccelTCG, ""},
		{"kvm", AccelKVM, ""},
		{"hvf", "", `NODEZERO_VM_ACCEL="hvf": want "kvm" or "tcg"`},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(AccelEnv, c.env)
			a, err := DetectAccel(t.Context())
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("DetectAccel with %s=%s = %q, %v; want an error saying %q", AccelEnv, c.env, a, err, c.wantErr)
				}
				return
			}
			if err != nil || a != c.want {
				t.Errorf("DetectAccel with %s=%s = %q, %v; want %q", AccelEnv, c.env, a, err, c.want)
			}
		})
	}
	if *probes != 0 {
		t.Errorf("the override still probed %d times", *probes)
	}
}

// TestProbeAccel runs the real probe: it must answer (kvm or tcg) within
// its bound, whatever this machine's KVM does. Whether the answer is right
// is judged by TestVMFirmware, which boots the firmware under it.
func TestProbeAccel(t *testing.T) {
	needTool(t, qemuBinary)
	needOVMF(t)
	start := time.Now()
	a, err := probeAccel(t.Context())
	if err != nil || (a != AccelKVM && a != AccelTCG) {
		t.Fatalf("probeAccel = %q, %v; want kvm or tcg", a, err)
	}
	t.Logf("probe: %s in %s", a, time.Since(start).Round(time.Millisecond))
	if _, err := os.Stat("/dev/kvm"); err != nil && a == AccelKVM {
		t.Errorf("probe said kvm without /dev/kvm")
	}
}
