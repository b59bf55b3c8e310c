package testbed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needVMs skips (or fails under CI=true) a test that runs QEMU.
func needVMs(t *testing.T) {
	t.Helper()
	needRoot(t)
	for _, tool := range []string{"ip", qemuBinary, qemuImgBinary} {
		needTool(t, tool)
	}
	needOVMF(t)
}

// firmwareLine is OVMF's boot manager taking its first boot option, the
// first thing the firmware says on the serial port: with a NIC and no disk
// that is network boot, which prints no BdsDxe line before it gives up.
var firmwareLine = regexp.MustCompile(`BdsDxe: (loading|starting) Boot[0-9A-F]{4}|>>Start PXE over IPv4`)

// TestVMFirmware runs one real VM with no disk: OVMF alone. Its boot
// manager speaks on the serial log; QMP answers; a config image goes in
// and out as a CD with the tray events; a hard power-off ends QEMU and a
// power-on reuses the same variable store; a capture of the bridge meanwhile
// sees nothing outside the bed; Close leaves no QEMU, tap or namespace.
func TestVMFirmware(t *testing.T) {
	needVMs(t)
	needTool(t, "xorriso")
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	b := NewT(t, Config{Prefix: freePrefix(t)})
	capture, err := b.Capture(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { capture.Stop() })

	start := time.Now()
	v, err := b.StartVM(ctx, VMSpec{Name: "fw", NICs: []VMNIC{{}}, MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("accelerator %s; QEMU up and on QMP after %s", v.Accel, time.Since(start).Round(time.Millisecond))
	pid := v.PID()
	parent := t
	logs := func() {
		if parent.Failed() {
			for _, f := range []string{v.SerialLog(), filepath.Join(v.Dir, "qemu.log")} {
				b, _ := os.ReadFile(f)
				t.Logf("%s:\n%s", f, cleanLog(b))
			}
		}
	}
	t.Cleanup(logs) // if the test stops before Close

	t.Run("in the switch namespace, on a tap on the bridge", func(t *testing.T) {
		pids, err := nsPids(ctx, b.Switch)
		if err != nil || !slices.Contains(pids, pid) {
			t.Errorf("QEMU (pid %d) not among the switch namespace's processes %v (%v): Close and Reap would miss it", pid, pids, err)
		}
		out, err := runIP(ctx, "-n", b.Switch, "-j", "link", "show", "dev", v.NICs[0].Tap)
		var links []struct {
			Master string `json:"master"`
		}
		if err != nil || json.Unmarshal(out, &links) != nil || len(links) != 1 || links[0].Master != b.Bridge {
			t.Errorf("tap %s: %s, %v; want it enslaved to %s", v.NICs[0].Tap, out, err, b.Bridge)
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if err := checkArgv(strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")); err != nil {
			t.Errorf("the running QEMU's command line: %v", err)
		}
	})

	t.Run("firmware on the serial log", func(t *testing.T) {
		line, err := v.WaitSerial(ctx, firmwareLine)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("firmware's first boot line after %s: %q", time.Since(start).Round(time.Millisecond), line)
		// Network boot sends on the bridge: wait for the VM's first frame
		// (its tap receives what the VM sends) so the capture has the VM's
		// traffic to judge.
		for tapRx(ctx, t, b, v.NICs[0].Tap) == 0 {
			select {
			case <-ctx.Done():
				t.Fatal("the VM sent nothing on its tap")
			case <-time.After(100 * time.Millisecond):
			}
		}
	})

	t.Run("qmp", func(t *testing.T) {
		var st struct {
			Status  string `json:"status"`
			Running bool   `json:"running"`
		}
		if err := v.QMP(ctx, "query-status", nil, &st); err != nil || !st.Running || st.Status != "running" {
			t.Errorf("query-status = %+v, %v; want running", st, err)
		}
		var qe *QMPError
		if err := v.QMP(ctx, "no-such-command", nil, nil); !errors.As(err, &qe) || qe.Class != "CommandNotFound" {
			t.Errorf("an unknown command = %v, want a *QMPError of class CommandNotFound", err)
		}
	})

	t.Run("config cd", func(t *testing.T) {
		iso := configISO(t)
		if err := v.InsertCD(ctx, iso); err != nil {
			t.Fatal(err)
		}
		cd, ok := queryCD(ctx, t, v)
		if !ok || cd.Inserted == nil || cd.Inserted.File != iso || !cd.Inserted.RO || cd.TrayOpen || !cd.Removable {
			t.Errorf("query-block for the cd = %+v (found %v), want %s inserted read-only, tray closed", cd, ok, iso)
		}
		for _, open := range []bool{true, false} {
			e, err := v.WaitEvent(ctx, "DEVICE_TRAY_MOVED")
			var d struct {
				ID   string `json:"id"`
				Open bool   `json:"tray-open"`
			}
			if err != nil || json.Unmarshal(e.Data, &d) != nil || d.ID != cdID || d.Open != open {
				t.Errorf("DEVICE_TRAY_MOVED = %s, %v; want id %s, tray-open %v", e.Data, err, cdID, open)
			}
		}
		if err := v.InsertCD(ctx, iso); err == nil {
			t.Error("a second InsertCD = nil error, want one (one cd at a time)")
		}
		if err := v.RemoveCD(ctx); err != nil {
			t.Fatal(err)
		}
		if cd, ok := queryCD(ctx, t, v); ok {
			t.Errorf("query-block after RemoveCD still has the cd: %+v", cd)
		}
		e, err := v.WaitEvent(ctx, "DEVICE_DELETED")
		var d struct {
			Device string `json:"device"`
		}
		if err != nil || json.Unmarshal(e.Data, &d) != nil || d.Device != cdID {
			t.Errorf("DEVICE_DELETED = %s, %v; want the cd's", e.Data, err)
		}
		// Insert, remove, insert: the nodes' names are free again.
		if err := v.InsertCD(ctx, iso); err != nil {
			t.Errorf("InsertCD after RemoveCD: %v", err)
		}
	})

	tmpl, err := os.ReadFile(needOVMF(t).Vars)
	if err != nil {
		t.Fatal(err)
	}
	varsBefore, err := os.Stat(v.Vars)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("power off", func(t *testing.T) {
		if err := v.PowerOff(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-v.Exited():
		default:
			t.Fatal("PowerOff returned with the VM still on")
		}
		if err := v.Wait(); err != nil {
			t.Errorf("Wait after PowerOff = %v, want nil", err)
		}
		if alive(pid) {
			t.Errorf("QEMU %d still runs after PowerOff", pid)
		}
		if e, err := v.WaitEvent(ctx, "SHUTDOWN"); err != nil || !bytes.Contains(e.Data, []byte("host-qmp-quit")) {
			t.Errorf("SHUTDOWN = %s, %v; want reason host-qmp-quit", e.Data, err)
		}
		if err := v.QMP(ctx, "query-status", nil, nil); !errors.Is(err, ErrVMNotRunning) {
			t.Errorf("QMP on a VM that is off = %v, want ErrVMNotRunning", err)
		}
		vars, err := os.ReadFile(v.Vars)
		if err != nil || bytes.Equal(vars, tmpl) {
			t.Errorf("the VM's variable store is still the template (%v): the firmware did not write its own copy", err)
		}
	})

	t.Run("power on again", func(t *testing.T) {
		offset, err := v.SerialOffset()
		if err != nil {
			t.Fatal(err)
		}
		again := time.Now()
		if err := v.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if err := v.Start(ctx); !errors.Is(err, ErrVMRunning) {
			t.Errorf("Start on a running VM = %v, want ErrVMRunning", err)
		}
		if v.BootOffset() != offset || offset == 0 {
			t.Errorf("BootOffset = %d, want the log's size before the power-on, %d", v.BootOffset(), offset)
		}
		line, _, err := v.WaitSerialFrom(ctx, v.BootOffset(), firmwareLine)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("second power-on: %q after %s", line, time.Since(again).Round(time.Millisecond))
		varsAfter, err := os.Stat(v.Vars)
		if err != nil || !os.SameFile(varsBefore, varsAfter) {
			t.Errorf("variable store %s replaced by the power-on (%v)", v.Vars, err)
		}
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(v.PID()) + "/cmdline")
		if !bytes.Contains(cmdline, []byte("file="+v.Vars+"\x00")) {
			t.Errorf("the new QEMU does not use %s: %q", v.Vars, cmdline)
		}
		if log, _ := os.ReadFile(v.SerialLog()); len(firmwareLine.FindAll(log, -1)) < 2 {
			t.Errorf("the serial log lost the first power-on's lines")
		}
	})

	t.Run("nothing outside the bed", func(t *testing.T) {
		packets := capture.Stop()
		if err := capture.Err(); err != nil {
			t.Fatal(err)
		}
		mac := v.NICs[0].MAC
		fromVM := filter(packets, func(p Packet) bool { return slices.Equal(p.SrcMAC, mac) })
		t.Logf("captured %d frames, %d from the VM:\n%s", len(packets), len(fromVM), dump(packets))
		if len(fromVM) == 0 {
			t.Error("the capture has no frame from the VM: it would prove nothing")
		}
		for _, p := range outsideBed(b, packets) {
			t.Errorf("outside the bed: %s", p)
		}
	})

	t.Run("close", func(t *testing.T) {
		logs()
		pid := v.PID()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if alive(pid) {
			t.Errorf("QEMU %d survived Close", pid)
		}
		if nsExists(b.Switch) {
			t.Errorf("namespace %s survived Close", b.Switch)
		}
		if out, err := runIP(ctx, "-j", "link", "show", "dev", v.NICs[0].Tap); err == nil {
			t.Errorf("tap %s is in the root namespace: %s", v.NICs[0].Tap, out)
		}
		if _, err := os.Stat(v.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the VM's directory survived Close: %v", err)
		}
		if left := qemuProcesses(t, v.Dir); len(left) > 0 {
			t.Errorf("QEMU processes of the VM left: %v", left)
		}
		if err := v.Start(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Start after Close = %v, want ErrClosed", err)
		}
	})
}

// tapRx is how many frames tap received: what the VM on it sent.
func tapRx(ctx context.Context, t *testing.T, b *Bed, tap string) int {
	t.Helper()
	out, err := runIP(ctx, "-n", b.Switch, "-j", "-s", "link", "show", "dev", tap)
	var links []struct {
		Stats struct {
			RX struct {
				Packets int `json:"packets"`
			} `json:"rx"`
		} `json:"stats64"`
	}
	if err != nil || json.Unmarshal(out, &links) != nil || len(links) != 1 {
		t.Fatalf("ip -s link show dev %s: %s, %v", tap, out, err)
	}
	return links[0].Stats.RX.Packets
}

// configISO makes an ISO labelled as a config image.
func configISO(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "root"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "root", "config.gz"), []byte("not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(dir, "agentconfig.noarch.iso")
	out, err := exec.Command("xorriso", "-as", "mkisofs", "-V", "agent_configimage", "-J", "-r", "-o", iso, filepath.Join(dir, "root")).CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso: %v: %s", err, out)
	}
	return iso
}

// blockInfo is the part of query-block a test reads.
type blockInfo struct {
	Device    string `json:"device"`
	QDev      string `json:"qdev"`
	Removable bool   `json:"removable"`
	TrayOpen  bool   `json:"tray_open"`
	Inserted  *struct {
		File string `json:"file"`
		RO   bool   `json:"ro"`
	} `json:"inserted"`
}

// queryCD returns the cd drive's entry in query-block, if it is there.
func queryCD(ctx context.Context, t *testing.T, v *VM) (blockInfo, bool) {
	t.Helper()
	var blocks []blockInfo
	if err := v.QMP(ctx, "query-block", nil, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b.QDev == "/machine/peripheral/"+cdID || strings.HasPrefix(b.QDev, cdID+"/") || b.QDev == cdID {
			return b, true
		}
	}
	return blockInfo{}, false
}

// outsideBed returns the frames with an address outside the bed: IPv4
// outside its prefix (DHCP's 0.0.0.0 and broadcast, and link multicast,
// excepted), ARP about such an address, IPv6 beyond the link.
func outsideBed(b *Bed, packets []Packet) []Packet {
	in := func(a netip.Addr) bool {
		return b.Prefix.Contains(a) || a == netip.IPv4Unspecified() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) ||
			netip.MustParsePrefix("224.0.0.0/24").Contains(a)
	}
	return filter(packets, func(p Packet) bool {
		switch p.EtherType {
		case EtherTypeARP:
			return !in(p.SenderIP) || !in(p.TargetIP)
		case EtherTypeIPv4:
			return !in(p.Src) || !in(p.Dst)
		case EtherTypeIPv6:
			return !(p.Src.IsLinkLocalUnicast() || p.Src.IsUnspecified()) ||
				!(p.Dst.IsLinkLocalUnicast() || p.Dst.IsLinkLocalMulticast() || p.Dst.IsInterfaceLocalMulticast())
		}
		return false
	})
}

// qemuProcesses lists QEMU processes whose command line names dir.
func qemuProcesses(t *testing.T, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmdline, []byte(qemuBinary)) && bytes.Contains(cmdline, []byte(dir)) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cleanLog is a serial log as lines read on a terminal.
func cleanLog(b []byte) string {
	var lines []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		lines = append(lines, cleanLine(l))
	}
	return strings.Join(lines, "\n")
}

// vmReport is what vmHelper prints for the parent test.
type vmReport struct {
	Switch, Dir, Tap string
	PID              int
	Error            string
}

// vmHelper builds a bed with one VM, reports, and waits to be killed.
func vmHelper() {
	var rep vmReport
	defer func() {
		_ = json.NewEncoder(os.Stdout).Encode(rep)
		_, _ = io.Copy(io.Discard, os.Stdin)
	}()
	ctx := context.Background()
	b, err := New(ctx, Config{Prefix: netip.MustParsePrefix(os.Getenv("NZB_TESTBED_PREFIX"))})
	if err != nil {
		rep.Error = err.Error()
		return
	}
	v, err := b.StartVM(ctx, VMSpec{Name: "orphan", NICs: []VMNIC{{}}, MemoryMiB: 256})
	if err != nil {
		rep.Error = err.Error()
		return
	}
	rep = vmReport{Switch: b.Switch, Dir: b.Dir, Tap: v.NICs[0].Tap, PID: v.PID()}
}

// TestVMDiesWithCreator kills a process that started a VM: QEMU dies with
// it (parent-death signal), and the next Reap takes the stale bed's
// namespace, tap and directory, the VM's files with it.
func TestVMDiesWithCreator(t *testing.T) {
	needVMs(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe)
	child.Env = append(os.Environ(), helperEnv+"=vm", quickRaceExit(), "NZB_TESTBED_PREFIX="+freePrefix(t).String())
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var rep vmReport
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("read child's report: %v", err)
	}
	if err := json.Unmarshal(line, &rep); err != nil || rep.Error != "" {
		t.Fatalf("child's report %s: %v", line, err)
	}
	t.Cleanup(func() { // in case the test fails before the reap
		_ = syscall.Kill(rep.PID, syscall.SIGKILL)
		_ = os.RemoveAll(rep.Dir)
		if nsExists(rep.Switch) {
			_ = deleteNetns(context.Background(), rep.Switch)
		}
	})
	if !alive(rep.PID) {
		t.Fatalf("QEMU %d is not running: the test proves nothing", rep.PID)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The parent-death signal is delivered asynchronously; wait (boundedly)
	// for it to land.
	for deadline := time.Now().Add(20 * time.Second); alive(rep.PID); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("QEMU %d outlived the process that started it", rep.PID)
		}
	}
	if !nsExists(rep.Switch) {
		t.Fatalf("namespace %s vanished with its creator: the reap below proves nothing", rep.Switch)
	}

	reaped, err := Reap(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(reaped, rep.Switch) || !slices.Contains(reaped, rep.Dir) {
		t.Errorf("Reap = %v, want it to hold %s and %s", reaped, rep.Switch, rep.Dir)
	}
	if nsExists(rep.Switch) {
		t.Errorf("stale namespace %s (with tap %s) survived Reap", rep.Switch, rep.Tap)
	}
	if _, err := os.Stat(rep.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale bed directory %s (with the VM's files) survived Reap: %v", rep.Dir, err)
	}
}
