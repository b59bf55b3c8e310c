package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Virtual machines as a second kind of host: QEMU under UEFI firmware
// (OVMF), its NICs virtio-net on taps on the bed's bridge, started inside
// the switch namespace where the bridge is. A VM is driven from outside
// through QMP (qmp.go: power, events, the config CD), the QEMU guest agent
// (qga.go: commands and files in the guest) and its serial log (serial.go).
// docs/reference/vm-testbed-facts.md holds the measured facts this follows.
//
// A VM never has QEMU user networking (checkArgv refuses any command line
// with it): its only way out is its taps, into the bed.

// VMSpec describes one VM. Only Name is required.
type VMSpec struct {
	// Name names the VM, by HostSpec.Name's rules; no host or other VM of
	// the bed may have it.
	Name string
	// Dir holds the VM's files: the boot overlay, the install disk, the
	// OVMF variable store, the serial log, QEMU's log and the sockets.
	// Empty means Bed.Dir/<Name>, made new and removed by Bed.Close; a
	// given Dir is created if needed and left in place by Close (StartVM
	// replaces the VM's files in it).
	Dir string
	// DiskDir is where the boot overlay and the install disk go (they
	// are big, and a caller may drop them while keeping the logs); empty
	// means Dir. It is created if needed and left in place.
	DiskDir string
	// Boot is the base disk image (qcow2 or raw). The VM boots a qcow2
	// overlay in Dir backed onto it, so Boot is never written. Empty: no
	// boot disk.
	Boot string
	// InstallDiskSize makes a blank qcow2 install disk of this many bytes,
	// on virtio-blk with serial "install" (/dev/disk/by-id/virtio-install
	// in a Linux guest). 0: none.
	InstallDiskSize int64
	// NICs are virtio-net devices, each on its own tap on the bed's bridge.
	NICs []VMNIC
	// SMBIOS is the VM's type 1 (system) identity, which an inventory reads.
	SMBIOS SMBIOS
	// MemoryMiB (default 1024) and CPUs (default 1).
	MemoryMiB, CPUs int
	// NoReboot makes a guest reboot end QEMU (event SHUTDOWN, reason
	// guest-reset) instead of resetting the VM in place; Start powers it on
	// again.
	NoReboot bool
}

// VMNIC is one NIC of a VM.
type VMNIC struct {
	// MAC is the NIC's address; default 02:xx:xx:xx:xx:<0x80+n>, derived
	// from the bed ID like hosts' MACs, n counting the bed's VM NICs.
	MAC net.HardwareAddr
	// Tap is set by StartVM: the NIC's tap in the switch namespace,
	// t<bed ID><n>, enslaved to the bridge.
	Tap string
}

// SMBIOS is a VM's system (type 1) identity. Empty fields are derived from
// the bed ID and VM name (UUID and serial, so each VM has its own) or set
// to "nodezero" (manufacturer) and "testbed VM" (product).
type SMBIOS struct {
	UUID, Serial, Manufacturer, Product string
}

// VM is a virtual machine of a bed. Its exported fields are read-only.
type VM struct {
	Name        string
	Dir         string
	Accel       Accel   // how QEMU runs it (DetectAccel)
	NICs        []VMNIC // MACs and taps filled in
	SMBIOS      SMBIOS  // every field filled in
	Vars        string  // its own copy of OVMF_VARS: BootOrder lives here across power cycles
	Overlay     string  // the boot disk, backed onto VMSpec.Boot ("" without one)
	InstallDisk string  // "" without one

	bed  *Bed
	plan vmPlan

	mu         sync.Mutex
	run        *vmRun // the latest power-on
	bootOffset int64  // the serial log's size when run started
	events     []Event
	taken      []bool        // events[i] was returned by WaitEvent
	changed    chan struct{} // closed and replaced when events or run change
	cd         bool          // a CD is inserted (InsertCD)
	starting   bool          // Start is under way

	agent sync.Mutex // one guest agent conversation at a time
}

// vmRun is one power-on: a QEMU process and its QMP connection.
type vmRun struct {
	cmd  *exec.Cmd
	qmp  *qmpConn
	done chan struct{} // closed once QEMU has exited and QMP is drained
	err  error         // cmd.Wait's, set before done closes
}

// Errors a caller can tell apart with errors.Is.
var (
	// ErrVMNotRunning: the VM is powered off.
	ErrVMNotRunning = errors.New("vm not running")
	// ErrVMRunning: Start on a VM that is powered on.
	ErrVMRunning = errors.New("vm already running")
	// ErrClosed: the bed is closed.
	ErrClosed = errors.New("test bed closed")
)

// StartVM makes a VM's files (OVMF variables copied, the boot overlay, the
// install disk) and taps, and powers it on; it returns once QEMU runs the
// guest and answers on QMP. The VM stays on after ctx ends; PowerOff,
// Shutdown or Bed.Close end it, and it dies with this process.
func (b *Bed) StartVM(ctx context.Context, s VMSpec) (*VM, error) {
	for _, tool := range []string{qemuBinary, qemuImgBinary} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("start vm %q: %w", s.Name, err)
		}
	}
	fw, err := FindOVMF()
	if err != nil {
		return nil, fmt.Errorf("start vm %q: %w", s.Name, err)
	}
	accel, err := DetectAccel(ctx)
	if err != nil {
		return nil, fmt.Errorf("start vm %q: %w", s.Name, err)
	}
	v, madeDir, err := b.reserveVM(s, fw, accel)
	if err != nil {
		return nil, err
	}
	if err := b.setUpVM(ctx, v); err != nil {
		return nil, errors.Join(err, b.forgetVM(v, madeDir))
	}
	return v, nil
}

// reserveVM checks s against the bed, plans the VM and records it (its
// name, MACs and NIC indices are taken from here on).
func (b *Bed) reserveVM(s VMSpec, fw Firmware, accel Accel) (v *VM, madeDir bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false, fmt.Errorf("start vm %q: %w", s.Name, ErrClosed)
	}
	taken := slices.ContainsFunc(b.Hosts, func(h *Host) bool { return h.Name == s.Name }) ||
		slices.ContainsFunc(b.vms, func(v *VM) bool { return v.Name == s.Name })
	if taken {
		return nil, false, fmt.Errorf("start vm %q: name: a host or vm of the bed has it: %w", s.Name, ErrInvalid)
	}
	dir := s.Dir
	if dir == "" {
		dir = filepath.Join(b.Dir, s.Name)
	}
	p, err := planVM(b.ID, s, dir, b.vmNICs, fw)
	if err != nil {
		return nil, false, fmt.Errorf("start vm: %w", err)
	}
	seen := b.vmMACsInUse()
	for i, n := range p.nics {
		if other, dup := seen[n.MAC.String()]; dup {
			return nil, false, fmt.Errorf("start vm %q: nics[%d]: MAC %s is already used by %s: %w", s.Name, i, n.MAC, other, ErrInvalid)
		}
		seen[n.MAC.String()] = fmt.Sprintf("its nics[%d]", i)
	}
	if s.Dir == "" {
		if err := os.Mkdir(p.dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("start vm %q: make its directory: %w", s.Name, err)
		}
		madeDir = true
		b.dirs = append(b.dirs, p.dir)
	} else if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("start vm %q: make its directory: %w", s.Name, err)
	}
	v = &VM{
		Name: s.Name, Dir: p.dir, Accel: accel, NICs: slices.Clone(p.nics), SMBIOS: p.smbios,
		Vars: p.vars, Overlay: p.overlay, InstallDisk: p.install,
		bed: b, plan: p, changed: make(chan struct{}),
	}
	b.vmNICs += len(p.nics)
	b.vms = append(b.vms, v)
	return v, madeDir, nil
}

// setUpVM makes v's files and taps and powers it on.
func (b *Bed) setUpVM(ctx context.Context, v *VM) error {
	if err := v.plan.prepare(ctx); err != nil {
		return fmt.Errorf("start vm %s: %w", v.Name, err)
	}
	for _, n := range v.NICs {
		err := runAll(ctx, [][]string{
			{"-n", b.Switch, "tuntap", "add", "dev", n.Tap, "mode", "tap"},
			{"-n", b.Switch, "link", "set", "dev", n.Tap, "master", b.Bridge, "up"},
		})
		if err != nil {
			return fmt.Errorf("start vm %s: tap: %w", v.Name, err)
		}
	}
	return v.Start(ctx)
}

// forgetVM undoes a VM whose start failed: QEMU, taps, the directory it
// made, its place in the bed.
func (b *Bed) forgetVM(v *VM, madeDir bool) error {
	v.kill()
	var errs []error
	b.mu.Lock()
	defer b.mu.Unlock()
	b.vms = slices.DeleteFunc(b.vms, func(x *VM) bool { return x == v })
	if b.closed {
		return nil // Close took everything down
	}
	for _, n := range v.NICs {
		if _, err := runIP(context.Background(), "-n", b.Switch, "link", "del", "dev", n.Tap); err != nil &&
			!strings.Contains(err.Error(), "Cannot find device") {
			errs = append(errs, err)
		}
	}
	if madeDir {
		b.dirs = slices.DeleteFunc(b.dirs, func(d string) bool { return d == v.Dir })
		if err := os.RemoveAll(v.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// VMs returns the bed's VMs, in the order they were started.
func (b *Bed) VMs() []*VM {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.vms)
}

// Start powers the VM on (again) with the same disks and the same OVMF
// variable store, so a BootOrder set in the guest holds; the serial log
// goes on where it was (BootOffset marks where this power-on starts). It
// returns once QEMU runs the guest and answers on QMP.
func (v *VM) Start(ctx context.Context) error {
	v.bed.mu.Lock()
	closed := v.bed.closed
	v.bed.mu.Unlock()
	if closed {
		return fmt.Errorf("start vm %s: %w", v.Name, ErrClosed)
	}
	v.mu.Lock()
	if v.starting || (v.run != nil && !isDone(v.run.done)) {
		v.mu.Unlock()
		return fmt.Errorf("start vm %s: %w", v.Name, ErrVMRunning)
	}
	v.starting = true
	v.mu.Unlock()
	run, offset, err := v.launch(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.starting = false
	if err != nil {
		return fmt.Errorf("start vm %s: %w", v.Name, err)
	}
	v.run, v.bootOffset, v.cd = run, offset, false
	v.notifyLocked()
	return nil
}

// launch starts QEMU and connects to its QMP socket; it returns the run
// and the serial log's size before it.
func (v *VM) launch(ctx context.Context) (*vmRun, int64, error) {
	p := v.plan
	argv := p.argv(v.Accel)
	if err := checkArgv(argv); err != nil {
		return nil, 0, err
	}
	for _, sock := range []string{p.qmp, p.qga} {
		if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, 0, err
		}
	}
	fi, err := os.Stat(p.serial)
	if err != nil {
		return nil, 0, fmt.Errorf("serial log: %w", err)
	}
	log, err := os.OpenFile(p.qemuLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, err
	}
	defer log.Close() // the child has its own descriptor
	// Through `ip netns exec`, which execs QEMU in place: the process
	// started is QEMU, with Pdeathsig and its own process group.
	cmd := v.bed.SwitchCommand(context.Background(), qemuBinary, argv...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	q, err := dialQMP(ctx, p.qmp, exited, v.addEvent)
	if err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		return nil, 0, fmt.Errorf("%w%s", err, logTail(p.qemuLog))
	}
	run := &vmRun{cmd: cmd, qmp: q, done: make(chan struct{})}
	go func() {
		<-exited
		<-q.done
		run.err = waitErr
		close(run.done)
		v.mu.Lock()
		v.notifyLocked()
		v.mu.Unlock()
	}()
	return run, fi.Size(), nil
}

// PowerOff turns the VM off hard (QMP quit: the guest gets no say) and
// waits for QEMU to exit; if ctx ends first QEMU is killed. A VM that is
// off already is not an error.
func (v *VM) PowerOff(ctx context.Context) error {
	run := v.current()
	if run == nil || isDone(run.done) {
		return nil
	}
	// QEMU may exit before it answers: the wait below is what counts.
	_ = run.qmp.execute(ctx, "quit", nil, nil)
	select {
	case <-run.done:
	case <-ctx.Done():
		v.kill()
	}
	return nil
}

// Shutdown presses the power button (ACPI, QMP system_powerdown) and waits
// for the guest to power off and QEMU to exit. Firmware alone, or a guest
// that ignores the button, keeps running: then ctx's end is the error and
// the VM is left on.
func (v *VM) Shutdown(ctx context.Context) error {
	run := v.current()
	if run == nil || isDone(run.done) {
		return nil
	}
	if err := run.qmp.execute(ctx, "system_powerdown", nil, nil); err != nil {
		return fmt.Errorf("shut down vm %s: %w", v.Name, err)
	}
	select {
	case <-run.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shut down vm %s: still on: %w", v.Name, ctx.Err())
	}
}

// Wait waits for the current power-on to end and returns how QEMU exited:
// nil for a power-off (by the guest, PowerOff or Shutdown), else the exit
// status with the end of QEMU's log.
func (v *VM) Wait() error {
	run := v.current()
	if run == nil {
		return nil
	}
	<-run.done
	if run.err != nil {
		return fmt.Errorf("vm %s: qemu: %w%s", v.Name, run.err, logTail(v.plan.qemuLog))
	}
	return nil
}

// Exited is closed when the current power-on ends.
func (v *VM) Exited() <-chan struct{} {
	if run := v.current(); run != nil {
		return run.done
	}
	done := make(chan struct{})
	close(done)
	return done
}

// Running reports whether the VM is powered on.
func (v *VM) Running() bool {
	run := v.current()
	return run != nil && !isDone(run.done)
}

// PID is the current QEMU process's ID (0 before the first power-on).
func (v *VM) PID() int {
	if run := v.current(); run != nil {
		return run.cmd.Process.Pid
	}
	return 0
}

func (v *VM) current() *vmRun {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.run
}

// kill ends QEMU at once (its process group) and waits for it.
func (v *VM) kill() {
	run := v.current()
	if run == nil {
		return
	}
	if !isDone(run.done) {
		_ = syscall.Kill(-run.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-run.done
}

// notifyLocked wakes every waiter on v.changed; the caller holds v.mu.
func (v *VM) notifyLocked() {
	close(v.changed)
	v.changed = make(chan struct{})
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// logTail returns ": " and the last lines of a log file, for an error.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ": " + strings.Join(lines, "; ")
}
