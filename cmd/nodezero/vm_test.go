package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// needVMs fails under CI=true, and skips elsewhere, when this machine
// cannot run the VM sandbox: root, QEMU, OVMF, and what the factory image
// is built with.
func needVMs(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: a VM install takes minutes under emulation")
	}
	testbed.NeedRoot(t)
	for _, tool := range []string{"qemu-system-x86_64", "qemu-img", "mmdebstrap", "mkfs.vfat", "mcopy", "sgdisk", "mkfs.ext4", "zstd", "dnsmasq", "docker-registry", "ip"} {
		testbed.NeedTool(t, tool)
	}
}

// vmRun is a VM sandbox run and what its test saw.
type vmRun struct {
	t      *testing.T
	dir    string
	mu     sync.Mutex
	out    bytes.Buffer
	phases map[string]time.Duration // when each host reached each phase, from the start
	start  time.Time
}

func (v *vmRun) Write(p []byte) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.out.Write(p)
}

func (v *vmRun) mark(what string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.phases[what] = time.Since(v.start).Round(time.Second)
	v.t.Logf("%s: %s", v.phases[what], what)
}

// guest runs argv in the VM through its guest agent and returns its
// output; a non-zero exit fails the check.
func guest(ctx context.Context, vm *testbed.VM, argv ...string) (string, error) {
	out, code, err := vm.Exec(ctx, argv...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	if code != 0 {
		return string(out), fmt.Errorf("%s: exit %d: %s", strings.Join(argv, " "), code, out)
	}
	return string(out), nil
}

// TestVMSingleNode installs a single node on a real (virtual) machine: the
// factory image boots under UEFI, waits for its config image, which is
// hot-plugged; udev starts the config-image unit; NetworkManager applies
// the static keyfile; the agent reads the VM's hardware; the OS image is
// written onto the VM's install disk and efibootmgr points the firmware
// at it; the VM reboots for real into the written disk, whose Ignition
// (coreos/ignition itself) applies the host's files and units; the
// simulated node then completes the install. What only a real machine
// shows is checked on the way: systemd's view of the daemon (READY,
// STATUS, the watchdog, a restart after a kill), the journal's fields,
// NetworkManager's active connections, the firmware's boot order after
// the reboot.
func TestVMSingleNode(t *testing.T) {
	needVMs(t)
	runVMSandbox(t, t.TempDir(), 1, 0, 40*time.Minute, func(ctx context.Context, phase sandbox.Phase, h *sandbox.Host) error {
		switch phase {
		case sandbox.PhaseWaiting:
			return checkWaiting(ctx, t, h)
		case sandbox.PhaseWriting:
			// The plug pulled mid-write: the host must come back
			// and write its disk again.
			t.Logf("%s: powered off while writing its disk, and on again", h.Name)
			return h.PowerCycle(ctx)
		case sandbox.PhaseInstalled:
			if err := checkInstalled(ctx, t, h); err != nil {
				return err
			}
			return checkRewritten(ctx, h)
		}
		return nil
	})
}

// checkRewritten: the factory disk's journal holds two boots (before and
// after the power cut), and in the second the installer wrote the image
// again from the start.
func checkRewritten(ctx context.Context, h *sandbox.Host) error {
	const journal = "/run/nodezero/factory/var/log/journal"
	boots, err := guest(ctx, h.VM(), "journalctl", "-D", journal, "--list-boots", "-q")
	if err != nil {
		return err
	}
	if n := len(strings.Split(strings.TrimSpace(boots), "\n")); n != 2 {
		return fmt.Errorf("the factory disk's journal holds %d boots, want 2 (before and after the power cut):\n%s", n, boots)
	}
	written, err := guest(ctx, h.VM(), "journalctl", "-D", journal, "-b", "0", "-o", "cat", "-u", "nodezero.service", "-g", "image written")
	if err != nil || !strings.Contains(written, "image written") {
		return fmt.Errorf("after the power cut the installer did not write the image again: %q %v", written, err)
	}
	return nil
}

// runVMSandbox installs masters + workers VMs (the sandbox in dir) to installed within
// timeout, inspect checking each VM at each phase, and returns the run's
// summary; the output and the phases' times go to the test's log.
func runVMSandbox(t *testing.T, dir string, masters, workers int, timeout time.Duration, inspect func(context.Context, sandbox.Phase, *sandbox.Host) error) sandbox.Summary {
	v := &vmRun{t: t, dir: dir, phases: map[string]time.Duration{}, start: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Minute)
	defer cancel()
	bin := nodezeroBinary(t)
	o := sandbox.Options{
		Dir: v.dir, Bin: bin, LogLevel: "info", Masters: masters, Workers: workers,
		Timeout: timeout, CheckInterval: 30 * time.Second,
		VM: true, NetNS: true, KubeAPI: "no",
		VMImage:     sandboxVMImage(bin),
		ConfigImage: sandboxConfigImage(),
		Stdout:      v,
		Inspect: func(ctx context.Context, phase sandbox.Phase, h *sandbox.Host) error {
			v.mark(h.Name + " " + string(phase))
			return inspect(ctx, phase, h)
		},
	}
	err := sandbox.Run(ctx, o)
	v.mu.Lock()
	log := v.out.String()
	v.mu.Unlock()
	if err != nil {
		t.Fatalf("the VM install did not complete: %v\n%s", err, log)
	}
	sum := readSummary(t, v.dir)
	if sum.Status != wire.ClusterStatusInstalled {
		t.Fatalf("cluster %s (%s)\n%s", sum.Status, sum.StatusInfo, log)
	}
	t.Logf("sandbox output:\n%s", log)
	return sum
}

// checkWaiting checks the factory image's boot, before the config image:
// the status line on the serial console, and the daemon under real
// systemd — ready (Type=notify), its status text, its watchdog — brought
// back by systemd after it is killed.
func checkWaiting(ctx context.Context, t *testing.T, h *sandbox.Host) error {
	if err := checkWaitingIssue(ctx, h); err != nil {
		return err
	}
	vm := h.VM()
	show := func() (map[string]string, error) {
		out, err := guest(ctx, vm, "systemctl", "show", "-p", "ActiveState,SubState,StatusText,NRestarts,WatchdogUSec,MainPID,Type", "nodezero.service")
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			k, val, _ := strings.Cut(l, "=")
			m[k] = val
		}
		return m, nil
	}
	before, err := show()
	if err != nil {
		return err
	}
	if before["Type"] != "notify" || before["ActiveState"] != "active" || before["StatusText"] == "" || before["WatchdogUSec"] == "0" {
		return fmt.Errorf("nodezero.service under systemd: %v; want a notify service, active (READY sent), with a status text and a watchdog", before)
	}
	if _, err := guest(ctx, vm, "kill", "-9", before["MainPID"]); err != nil {
		return err
	}
	// systemd restarts it (Restart=always, RestartSec=3) and it says
	// READY again: poll systemd's own view until it does.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		after, err := show()
		if err != nil {
			return err
		}
		if after["NRestarts"] != before["NRestarts"] && after["ActiveState"] == "active" && after["MainPID"] != before["MainPID"] {
			t.Logf("nodezero.service killed (pid %s) and restarted by systemd (pid %s, NRestarts %s, status %q)", before["MainPID"], after["MainPID"], after["NRestarts"], after["StatusText"])
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nodezero.service was not restarted after a kill: %v", after)
		case <-tick.C:
		}
	}
}

// checkWaitingIssue: before its config image, a host's status lines ask
// for it.
func checkWaitingIssue(ctx context.Context, h *sandbox.Host) error {
	vm := h.VM()
	if err := vm.WaitGuestAgent(ctx); err != nil {
		return err
	}
	issue, err := guestIssue(ctx, vm)
	if err != nil {
		return err
	}
	if !strings.Contains(string(issue), "Insert or mount config image") {
		return fmt.Errorf("/etc/issue.d before the config image: %q, want the line asking for it", issue)
	}
	// The serial console shows it too (the console prints the status
	// lines until the host is configured).
	if _, err := vm.WaitSerial(ctx, regexp.MustCompile(`Insert or mount config image`)); err != nil {
		return fmt.Errorf("the serial console never showed the line asking for the config image: %w", err)
	}
	return nil
}

// checkSerialAfter: after the config image, the serial console showed the
// host's rendezvous line (node zero or not) before the checks took over.
func checkSerialAfter(h *sandbox.Host) error {
	b, err := os.ReadFile(h.VM().SerialLog())
	if err != nil {
		return err
	}
	if !regexp.MustCompile(`This host (\(\S+\) is|is not) the rendezvous host`).Match(b) {
		return fmt.Errorf("the serial console (%s) never showed the rendezvous line after the config image", h.VM().SerialLog())
	}
	return nil
}

// guestIssue is every /etc/issue.d file of the guest, joined.
func guestIssue(ctx context.Context, vm *testbed.VM) ([]byte, error) {
	out, err := guest(ctx, vm, "sh", "-c", "cat /etc/issue.d/*.issue")
	return []byte(out), err
}

// checkInstalled checks the installed OS: booted from the written disk
// through the boot entry efibootmgr made, which the firmware kept across
// the reboot; Ignition applied the host's files, its user and its unit
// (the simulated node, which is running); and, on the factory disk still
// attached, what happened before the reboot: the udev rule started the
// config-image unit, the daemon's journal fields, NetworkManager's view.
func checkInstalled(ctx context.Context, t *testing.T, h *sandbox.Host) error {
	vm := h.VM()
	if err := vm.WaitGuestAgent(ctx); err != nil {
		return err
	}
	var problems []string
	if err := checkSerialAfter(h); err != nil {
		problems = append(problems, err.Error())
	}
	check := func(what string, ok bool, got string) {
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: got %q", what, got))
		}
	}
	root, err := guest(ctx, vm, "findmnt", "-n", "-o", "SOURCE,LABEL", "/")
	check("the root is the written disk's (label nzroot)", err == nil && strings.Contains(root, "nzroot"), root+fmt.Sprint(err))
	role := "master"
	if h.Role == "worker" {
		role = "worker"
	}
	for path, want := range map[string]string{"/etc/nodezero/role": role, "/etc/hostname": h.Name} {
		b, err := vm.ReadFile(ctx, path)
		check("Ignition's "+path, err == nil && strings.TrimSpace(string(b)) == want, string(b)+fmt.Sprint(err))
	}
	id, err := guest(ctx, vm, "id", "core")
	check("Ignition's user core", err == nil, id+fmt.Sprint(err))
	unit, err := guest(ctx, vm, "systemctl", "show", "-p", "ActiveState,StatusText,UnitFileState", "nodezero-node.service")
	check("Ignition's unit nodezero-node.service, enabled and active, READY sent", err == nil && strings.Contains(unit, "ActiveState=active") && strings.Contains(unit, "UnitFileState=enabled"), unit+fmt.Sprint(err))
	efi, err := guest(ctx, vm, "efibootmgr")
	check("the firmware booted the entry efibootmgr made, first in BootOrder", err == nil && bootedFirst(efi), efi+fmt.Sprint(err))
	active, err := guest(ctx, vm, "nmcli", "-t", "-f", "NAME,DEVICE,TYPE", "con", "show", "--active")
	check("NetworkManager: the host's keyfile active on the installed OS (--copy-network)", err == nil && strings.Contains(active, h.NIC), active+fmt.Sprint(err))

	// The factory boot's journal, on the factory disk.
	const journal = "/run/nodezero/factory/var/log/journal"
	udev, err := guest(ctx, vm, "journalctl", "-D", journal, "-o", "cat", "-u", "nodezero-config-image@sr0.service")
	check("udev started nodezero-config-image@sr0.service on the hot-plugged CD", err == nil && strings.Contains(udev, "load the config image"), udev+fmt.Sprint(err))
	fields, err := guest(ctx, vm, "journalctl", "-D", journal, "-o", "json", "-u", "nodezero.service", "STAGE=network")
	check("journald fields: the daemon's STAGE=network records", err == nil && journalHas(fields, "STAGE", "network"), tail(fields)+fmt.Sprint(err))
	nm, err := guest(ctx, vm, "journalctl", "-D", journal, "-o", "cat", "-u", "NetworkManager.service")
	check("NetworkManager activated the host's keyfile on the factory boot", err == nil && strings.Contains(nm, "Activation: successful"), tail(nm)+fmt.Sprint(err))
	if len(problems) > 0 {
		return fmt.Errorf("the installed VM:\n  %s", strings.Join(problems, "\n  "))
	}
	t.Logf("%s installed: root %s; efibootmgr:\n%s", h.Name, strings.TrimSpace(root), efi)
	return nil
}

// bootedFirst: efibootmgr's BootCurrent is the first of BootOrder, and
// that entry is the installed OS's.
func bootedFirst(out string) bool {
	cur := regexp.MustCompile(`(?m)^BootCurrent: (\w+)`).FindStringSubmatch(out)
	order := regexp.MustCompile(`(?m)^BootOrder: (\w+)`).FindStringSubmatch(out)
	if cur == nil || order == nil || cur[1] != order[1] {
		return false
	}
	return regexp.MustCompile(`(?m)^Boot` + cur[1] + `\*? .*installed OS`).MatchString(out)
}

// journalHas: one of journalctl -o json's records has field = value.
func journalHas(out, field, value string) bool {
	for _, l := range strings.Split(out, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec[field] == value {
			return true
		}
	}
	return false
}

func tail(s string) string {
	if len(s) > 800 {
		return "…" + s[len(s)-800:]
	}
	return s
}
