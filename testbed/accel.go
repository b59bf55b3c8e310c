package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Accel is how QEMU runs a guest's CPU.
type Accel string

const (
	// AccelKVM: hardware virtualisation, used only when a KVM guest was
	// seen to run on this machine (see DetectAccel).
	AccelKVM Accel = "kvm"
	// AccelTCG: QEMU's software emulation; slow but it runs everywhere.
	AccelTCG Accel = "tcg"
)

// AccelEnv overrides DetectAccel with "kvm" or "tcg".
const AccelEnv = "NODEZERO_VM_ACCEL"

// accelArgs are the QEMU flags for a.
func accelArgs(a Accel) []string {
	if a == AccelKVM {
		return []string{"-accel", "kvm", "-cpu", "host"}
	}
	// Multi-threaded TCG with a large translation cache, and every CPU
	// feature TCG emulates (docs/reference/vm-testbed-facts.md, step 2).
	return []string{"-accel", "tcg,thread=multi,tb-size=256", "-cpu", "max"}
}

// probeBound is how long the KVM probe waits for the firmware's first boot
// manager line. Under working KVM, OVMF prints it within a second or two;
// a nested emulator that crawls never gets there.
const probeBound = 30 * time.Second

// accelCache holds DetectAccel's answer for this process.
var accelCache struct {
	sync.Mutex
	key   string
	accel Accel
}

// DetectAccel says which accelerator VMs get: NODEZERO_VM_ACCEL when set,
// else KVM only when a KVM guest really runs here. /dev/kvm existing is not
// enough (a nested "PVM" hypervisor provides one that cannot run a stock
// guest: docs/reference/vm-testbed-facts.md, step 1), so the probe boots
// OVMF alone under -accel kvm -cpu host and waits, at most probeBound, for
// its boot manager's first line on the serial port. The answer is kept in
// the user's cache directory, keyed by the kernel's boot_id and the QEMU
// binary, so it is paid once per boot of the machine.
func DetectAccel(ctx context.Context) (Accel, error) {
	switch v := os.Getenv(AccelEnv); v {
	case "":
	case string(AccelKVM), string(AccelTCG):
		return Accel(v), nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", AccelEnv, v, AccelKVM, AccelTCG)
	}
	key, err := accelKey()
	if err != nil {
		return "", fmt.Errorf("detect accelerator: %w", err)
	}
	accelCache.Lock()
	defer accelCache.Unlock()
	if accelCache.key == key {
		return accelCache.accel, nil
	}
	file := accelCachePath()
	a, ok := readAccelCache(file, key)
	if !ok {
		a, err = accelProbe(ctx)
		if err != nil {
			return "", fmt.Errorf("detect accelerator: %w", err)
		}
		// A cache that cannot be written only costs the next process a
		// probe: not a reason to fail.
		_ = writeAccelCache(file, key, a)
	}
	accelCache.key, accelCache.accel = key, a
	return a, nil
}

// The probe and the cache's place, replaceable by tests.
var (
	accelProbe     = probeAccel
	accelCachePath = accelCacheFile
)

// accelKey names this boot of the machine and this QEMU binary.
func accelKey() (string, error) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	qemu, err := exec.LookPath(qemuBinary)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(qemu)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s %d %d", strings.TrimSpace(string(boot)), qemu, fi.Size(), fi.ModTime().UnixNano()), nil
}

// accelCacheFile is where DetectAccel keeps its answer between processes.
func accelCacheFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "nodezero", "vm-accel.json")
}

type accelRecord struct {
	Key   string `json:"key"`
	Accel Accel  `json:"accel"`
}

func readAccelCache(file, key string) (Accel, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	var r accelRecord
	if json.Unmarshal(b, &r) != nil || r.Key != key || (r.Accel != AccelKVM && r.Accel != AccelTCG) {
		return "", false
	}
	return r.Accel, true
}

// writeAccelCache replaces file atomically (two tests may probe at once).
func writeAccelCache(file, key string, a Accel) error {
	b, err := json.Marshal(accelRecord{Key: key, Accel: a})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".vm-accel-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// probeAccel boots OVMF alone under KVM (no disk, no network) and answers
// AccelKVM only if its boot manager speaks on the serial port in time.
func probeAccel(ctx context.Context) (Accel, error) {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return AccelTCG, nil // no usable KVM at all: nothing to boot
	}
	f.Close()
	fw, err := FindOVMF()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "nodezero-accel-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	vars := filepath.Join(dir, "vars.fd")
	if err := copyFile(fw.Vars, vars); err != nil {
		return "", err
	}
	serial := filepath.Join(dir, "serial.log")
	args := append([]string{"-machine", "q35", "-m", "256", "-smp", "1",
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-nic", "none",
		"-drive", "if=pflash,format=raw,unit=0,readonly=on,file=" + qemuEscape(fw.Code),
		"-drive", "if=pflash,format=raw,unit=1,file=" + qemuEscape(vars),
		"-serial", "file:" + serial,
	}, accelArgs(AccelKVM)...)
	if err := checkArgv(args); err != nil {
		return "", err
	}
	cmd := exec.Command(qemuBinary, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", qemuBinary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}()
	bound := time.NewTimer(probeBound)
	defer bound.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(serial)
		if bytes.Contains(b, []byte(firmwareMarker)) {
			return AccelKVM, nil
		}
		select {
		case <-exited:
			// QEMU gave up (e.g. "failed to set MSR"): not KVM. Read
			// the log once more in case the marker came last.
			if b, _ := os.ReadFile(serial); bytes.Contains(b, []byte(firmwareMarker)) {
				return AccelKVM, nil
			}
			return AccelTCG, nil
		case <-bound.C:
			return AccelTCG, nil // KVM crawls or hangs here
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
	}
}

// firmwareMarker starts the lines OVMF's boot manager prints on the serial
// port as it loads each boot option ("BdsDxe: loading Boot0001 ...").
const firmwareMarker = "BdsDxe: "
