package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// The sandbox on virtual machines (Options.VM, `--vm`, root): every host
// is a QEMU VM on the bridge of a test bed (package testbed), booting the
// factory image under UEFI firmware. Nothing is simulated up to the
// reboot: the config image is a CD put into each running VM over QMP, as
// a person inserts it; udev starts the config-image unit; NetworkManager
// applies the static keyfiles; the agent reads the VM's own (virtual)
// hardware; the OS image is written onto the VM's install disk and
// efibootmgr points the firmware at it; the VM reboots for real and boots
// the written disk, whose own Ignition applies the host's config. Only
// what OpenShift would do after that is simulated (sim), by the installed
// OS's nodezero-node.service.

// VMImage is the factory image a VM sandbox boots, made by cmd's
// `create factory-image` code.
type VMImage struct {
	// Create builds (or takes from its cache) into dir the factory image
	// whose payload says p (its OS image is the image's own), with env in
	// the nodezero service's environment; it returns the qcow2 path.
	Create func(ctx context.Context, dir string, p diskwrite.Payload, env []string) (string, error)
}

// Phase is a moment of a VM host's install at which Options.Inspect is
// called.
type Phase string

const (
	// PhaseWaiting: the VM booted the factory image and waits for its
	// config image, which is inserted once Inspect returns.
	PhaseWaiting Phase = "waiting for the config image"
	// PhaseWriting: the host writes its OS image, a fifth of it done (or
	// more): the moment to pull its plug. The install goes on meanwhile.
	PhaseWriting Phase = "writing its disk"
	// PhaseInstalled: the cluster is installed; the VM runs its installed
	// OS. The VMs stop once Inspect returns.
	PhaseInstalled Phase = "installed"
)

// PowerCycle switches h's VM off hard, as a pulled plug does, and on
// again with the same disks and firmware variables.
func (h *Host) PowerCycle(ctx context.Context) error {
	h.mu.Lock()
	h.cycled = make(chan struct{})
	done := h.cycled
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.cycled = nil
		h.mu.Unlock()
		close(done)
	}()
	if err := h.vm.PowerOff(ctx); err != nil {
		return err
	}
	return h.vm.Start(ctx)
}

// writingPercent matches the writing stage's progress ("Writing image to
// disk: 35%").
var writingPercent = regexp.MustCompile(`^` + string(wire.HostStageWritingImageToDisk) + `: ([0-9]+)%`)

// inspectWriting calls Inspect with PhaseWriting, once per host, when the
// host's progress (as the watch prints it) shows a fifth of its image
// written.
func (r *run) inspectWriting(ctx context.Context, name, progress string) error {
	if r.o.Inspect == nil || !r.o.VM {
		return nil
	}
	m := writingPercent.FindStringSubmatch(progress)
	if m == nil {
		return nil
	}
	if pct, _ := strconv.Atoi(m[1]); pct < 20 {
		return nil
	}
	for _, h := range r.hosts {
		if h.Name != name || h.inspectedWriting {
			continue
		}
		h.inspectedWriting = true
		return r.inspect(ctx, PhaseWriting, h)
	}
	return nil
}

// VM is h's virtual machine (nil unless the sandbox runs VMs).
func (h *Host) VM() *testbed.VM { return h.vm }

// inspect calls Options.Inspect for h at phase.
func (r *run) inspect(ctx context.Context, phase Phase, h *Host) error {
	if r.o.Inspect == nil {
		return nil
	}
	if err := r.o.Inspect(ctx, phase, h); err != nil {
		return fmt.Errorf("sandbox: %s, %s: %w", h.Name, phase, err)
	}
	return nil
}

// vmInstallDiskSize is each VM's blank install disk: above the sandbox's
// disk-size requirement; a qcow2 file takes only what is written.
const vmInstallDiskSize = 32 << 30

// vmRequirements is HW_VALIDATOR_REQUIREMENTS for VM hosts: one CPU and
// 1 GiB each, as this machine can emulate five of them; a disk written
// through an emulated controller; links through an emulated NIC.
const vmRequirements = `[{"version":"default",` +
	`"master":{"cpu_cores":1,"ram_mib":900,"disk_size_gb":20,"installation_disk_speed_threshold_ms":1000,"network_latency_threshold_ms":1000,"packet_loss_percentage":10},` +
	`"arbiter":{"cpu_cores":1,"ram_mib":900,"disk_size_gb":20,"installation_disk_speed_threshold_ms":1000,"network_latency_threshold_ms":1000,"packet_loss_percentage":10},` +
	`"worker":{"cpu_cores":1,"ram_mib":900,"disk_size_gb":20,"installation_disk_speed_threshold_ms":1000,"network_latency_threshold_ms":1000,"packet_loss_percentage":10},` +
	`"sno":{"cpu_cores":1,"ram_mib":900,"disk_size_gb":20,"installation_disk_speed_threshold_ms":1000},` +
	`"edge-worker":{"cpu_cores":1,"ram_mib":900,"disk_size_gb":15,"installation_disk_speed_threshold_ms":1000}}]`

// vmNIC is the guest's name for a VM's first NIC (a virtio-net at a fixed
// PCI slot of the q35 machine, testbed.VMNICName).
func vmNIC(i int) string { return testbed.VMNICName(i) }

// vmMAC is host i's first NIC's MAC: QEMU's locally administered range.
func vmMAC(i, nic int) string { return fmt.Sprintf("52:54:00:4e:%02x:%02x", i, nic) }

// makeVMHosts names the VM hosts and their addresses on the bed's /24 and
// makes the bed, with no namespace host: the VMs come onto its bridge.
func (r *run) makeVMHosts(ctx context.Context) error {
	for i, h := range r.hosts {
		h.NIC, h.MAC = vmNIC(0), vmMAC(i, 0)
		if r.o.Workers >= 2 && i == len(r.hosts)-1 {
			// One host shows a bond and a VLAN on real NICs: two
			// NICs in an active-backup bond, a VLAN on top.
			h.bond = []string{h.MAC, vmMAC(i, 1)}
		}
		h.Addr = r.addr(byte(10 + i))
		// The VM's files (serial log, firmware variables, QEMU's log)
		// stay in its host directory; its disks go with the others'.
		hd := filepath.Join(r.o.Dir, "hosts", h.Name)
		h.root, h.disks, h.log = hd, filepath.Join(r.o.Disks, h.Name), filepath.Join(hd, "serial.log")
		if err := os.MkdirAll(hd, 0o755); err != nil {
			return err
		}
	}
	r.zero = r.hosts[0]
	bed, err := testbed.New(ctx, testbed.Config{Prefix: r.prefix, Dir: filepath.Join(r.o.Dir, "bed")})
	if err != nil {
		return fmt.Errorf("sandbox: --vm: %w", err)
	}
	r.bed = bed
	for _, h := range r.hosts {
		h.Network = strings.TrimRight(vmNetworkConfig(h, r.prefix, bed.Gateway), "\n")
		h.Interfaces = vmInterfaces(h)
	}
	r.closers = append(r.closers, func() {
		if err := bed.Close(); err != nil {
			fmt.Fprintf(r.o.stderr(), "sandbox: %v\n", err)
		}
	})
	r.say("test bed %s: the bridge %s, %s, for %s", bed.ID, bed.Bridge, bed.Prefix, count(len(r.hosts), "VM"))
	return nil
}

// makeFactoryImage builds the factory image the VMs boot: the payload
// names the bed's release image, and node zero's service is told the VMs'
// requirements.
func (r *run) makeFactoryImage(ctx context.Context) error {
	start := time.Now()
	r.env = []string{"DISABLED_STEPS=" + disabledSteps, "HW_VALIDATOR_REQUIREMENTS=" + vmRequirements}
	img, err := r.o.VMImage.Create(ctx, filepath.Join(r.o.Dir, "image"), ReleasePayload(r.release), r.env)
	if err != nil {
		return fmt.Errorf("sandbox: factory image: %w", err)
	}
	r.vmImage = img
	r.say("factory image %s (%s); the VMs need 1 CPU and 900 MiB each (HW_VALIDATOR_REQUIREMENTS in its nodezero.service)", img, time.Since(start).Round(time.Second))
	return nil
}

// checkConfigImageIssue is the status line a factory-image host shows
// while it waits for its config image, and waitingForConfig its text
// (daemon/boot's, as ABI words it).
const checkConfigImageIssue = "/etc/issue.d/60-check-config-image.issue"

var waitingForConfig = regexp.MustCompile(`Insert or mount config image`)

// startVMs powers on every VM and, once each waits for its config image,
// inserts the config image into it, as a person would.
func (r *run) startVMs(ctx context.Context, wg *sync.WaitGroup) error {
	c, err := r.bed.Capture(ctx)
	if err != nil {
		return fmt.Errorf("sandbox: capture on the bed's bridge: %w", err)
	}
	r.capture = c
	for i, h := range r.hosts {
		var nics []testbed.VMNIC
		for _, m := range append([]string{h.MAC}, h.bondPorts()...) {
			mac, err := net.ParseMAC(m)
			if err != nil {
				return err
			}
			nics = append(nics, testbed.VMNIC{MAC: mac})
		}
		vm, err := r.bed.StartVM(ctx, testbed.VMSpec{
			Name: h.Name, Dir: h.root, DiskDir: h.disks, Boot: r.vmImage, InstallDiskSize: vmInstallDiskSize,
			NICs: nics,
			SMBIOS: testbed.SMBIOS{
				UUID:         fmt.Sprintf("4e5a0000-0000-4000-8000-%012x", i+1),
				Serial:       fmt.Sprintf("NZ-VM-%04d", i+1),
				Manufacturer: "nodezero sandbox", Product: "QEMU VM " + h.Name,
			},
		})
		if err != nil {
			return fmt.Errorf("sandbox: %s: %w", h.Name, err)
		}
		h.vm = vm
		h.log = vm.SerialLog()
	}
	r.say("started %s (%d control plane, %s); node zero is %s at %s; serial consoles in %s",
		count(len(r.hosts), "VM"), r.o.Masters, count(r.o.Workers, "worker"), r.zero.Name, r.zero.Addr, filepath.Join(r.o.Dir, "hosts/*/serial.log"))
	for _, h := range r.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.insertWhenWaiting(ctx, h)
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.superviseVM(ctx, h)
		}()
	}
	return nil
}

// insertWhenWaiting inserts the config image once h says it waits for
// one: its status line (/etc/issue.d, read through the guest agent; the
// serial line shows the console, which covers it).
func (r *run) insertWhenWaiting(ctx context.Context, h *Host) {
	if err := h.vm.WaitGuestAgent(ctx); err != nil {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		b, err := h.vm.ReadFile(ctx, checkConfigImageIssue)
		if err == nil && waitingForConfig.Match(b) {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	if err := r.inspect(ctx, PhaseWaiting, h); err != nil {
		h.mu.Lock()
		h.exit = err
		h.mu.Unlock()
		return
	}
	if err := h.vm.InsertCD(ctx, r.iso); err != nil {
		h.mu.Lock()
		h.exit = fmt.Errorf("insert the config image: %w", err)
		h.mu.Unlock()
		return
	}
	r.say("%s waits for its config image: inserted %s", h.Name, filepath.Base(r.iso))
}

// vmVLAN is the VLAN on the bond host's bond (no other host has it).
const vmVLAN = 100

// bondPorts are the MACs of h's NICs besides its first (the bond host's
// second port).
func (h *Host) bondPorts() []string {
	if len(h.bond) < 2 {
		return nil
	}
	return h.bond[1:]
}

// vmInterfaces is a VM host's agent-config interfaces: every NIC by
// name and MAC.
func vmInterfaces(h *Host) string {
	var b strings.Builder
	for i, m := range append([]string{h.MAC}, h.bondPorts()...) {
		fmt.Fprintf(&b, "  - name: %s\n    macAddress: %s\n", vmNIC(i), m)
	}
	return strings.TrimRight(b.String(), "\n")
}

// vmNetworkConfig is a VM host's networkConfig (nmstate): a static
// address on its NIC, or, on the bond host, on an active-backup bond of
// its two NICs with a VLAN on top; the bed's gateway as DNS server and
// default route.
func vmNetworkConfig(h *Host, prefix netip.Prefix, gateway netip.Addr) string {
	var b strings.Builder
	static := func(addr netip.Addr, bits int) {
		fmt.Fprintf(&b, "      ipv4:\n        enabled: true\n        dhcp: false\n        address:\n        - ip: %s\n          prefix-length: %d\n", addr, bits)
		fmt.Fprintf(&b, "      ipv6:\n        enabled: false\n")
	}
	b.WriteString("    interfaces:\n")
	dev := h.NIC
	if len(h.bond) == 0 {
		fmt.Fprintf(&b, "    - name: %s\n      type: ethernet\n      state: up\n      mac-address: %s\n", h.NIC, h.MAC)
		static(h.Addr, prefix.Bits())
	} else {
		var ports []string
		for i, m := range h.bond {
			ports = append(ports, vmNIC(i))
			fmt.Fprintf(&b, "    - name: %s\n      type: ethernet\n      state: up\n      mac-address: %s\n", vmNIC(i), m)
		}
		dev = "bond0"
		fmt.Fprintf(&b, "    - name: bond0\n      type: bond\n      state: up\n      mac-address: %s\n", h.MAC)
		static(h.Addr, prefix.Bits())
		fmt.Fprintf(&b, "      link-aggregation:\n        mode: active-backup\n        options:\n          miimon: \"100\"\n        port:\n")
		for _, p := range ports {
			fmt.Fprintf(&b, "        - %s\n", p)
		}
		// The VLAN carries no address: no other host is on VLAN 100,
		// so an address there would be one every peer's connectivity
		// check finds unreachable (assisted counts it as packet loss).
		fmt.Fprintf(&b, "    - name: bond0.%d\n      type: vlan\n      state: up\n      vlan:\n        base-iface: bond0\n        id: %d\n", vmVLAN, vmVLAN)
		fmt.Fprintf(&b, "      ipv4:\n        enabled: false\n      ipv6:\n        enabled: false\n")
	}
	fmt.Fprintf(&b, "    dns-resolver:\n      config:\n        server:\n        - %s\n", gateway)
	fmt.Fprintf(&b, "    routes:\n      config:\n      - destination: 0.0.0.0/0\n        next-hop-address: %s\n        next-hop-interface: %s\n", gateway, dev)
	return b.String()
}

// superviseVM watches h's VM until ctx ends, then switches it off: a QEMU
// that ends otherwise is the host's end, unless PowerCycle switched it
// off (it is watched again once on).
func (r *run) superviseVM(ctx context.Context, h *Host) {
	for {
		select {
		case <-h.vm.Exited():
			h.mu.Lock()
			cycled := h.cycled
			h.mu.Unlock()
			if cycled != nil {
				<-cycled
				if h.vm.Running() {
					continue
				}
			}
			err := h.vm.Wait()
			h.mu.Lock()
			h.exit = fmt.Errorf("the VM's QEMU ended: %v (its log: %s)", err, filepath.Join(h.root, "qemu.log"))
			h.mu.Unlock()
			return
		case <-ctx.Done():
			// The run ends: the VM is switched off (the bed closes
			// after the hosts' goroutines end).
			if err := h.vm.PowerOff(context.WithoutCancel(ctx)); err != nil {
				fmt.Fprintf(r.o.stderr(), "sandbox: power off %s: %v\n", h.Name, err)
			}
			return
		}
	}
}
