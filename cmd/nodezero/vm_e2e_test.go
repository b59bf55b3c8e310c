//go:build vme2e

package main

// The long VM runs, behind `make vm-e2e` (build tag vme2e): five virtual
// machines under software emulation take tens of minutes.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/sandbox"
)

// TestVMCluster installs 3 + 2 VMs to installed: every host boots the
// factory image and gets its config image as a CD; worker-1's network is
// an active-backup bond of its two NICs with a VLAN on top, applied by
// NetworkManager from static keyfiles; the bootstrap host's console shows
// the other control-plane hosts joined before its own reboot; every host
// boots its written disk, where Ignition applied its role's config.
func TestVMCluster(t *testing.T) {
	needVMs(t)
	sum := runVMSandbox(t, 3, 2, 90*time.Minute, func(ctx context.Context, phase sandbox.Phase, h *sandbox.Host) error {
		switch phase {
		case sandbox.PhaseWaiting:
			return checkWaitingIssue(ctx, h)
		case sandbox.PhaseInstalled:
			if err := checkInstalled(ctx, t, h); err != nil {
				return err
			}
			if h.Name == "worker-1" {
				return checkBond(ctx, h)
			}
		}
		return nil
	})
	serial, err := os.ReadFile(sum.Hosts[0].Log)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Index(string(serial), "nodezero: install: the control plane joined: master-1, master-2")
	reboot := strings.Index(string(serial), "nodezero: install: Rebooting")
	if joined < 0 || reboot < 0 || joined > reboot {
		t.Errorf("node zero's serial console (%s): the control plane joined at %d, its reboot at %d; want both, joined first", sum.Hosts[0].Log, joined, reboot)
	}
}

// checkBond: worker-1's bond and VLAN, as the kernel and NetworkManager
// have them on the installed OS (its keyfiles copied there).
func checkBond(ctx context.Context, h *sandbox.Host) error {
	vm := h.VM()
	bond, err := guest(ctx, vm, "cat", "/proc/net/bonding/bond0")
	if err != nil {
		return err
	}
	for _, want := range []string{"Bonding Mode: fault-tolerance (active-backup)", "Slave Interface: enp0s16", "Slave Interface: enp0s17"} {
		if !strings.Contains(bond, want) {
			return fmt.Errorf("/proc/net/bonding/bond0 has no %q:\n%s", want, bond)
		}
	}
	vlan, err := guest(ctx, vm, "ip", "-d", "link", "show", "bond0.100")
	if err != nil {
		return err
	}
	if !strings.Contains(vlan, "vlan protocol 802.1Q id 100") {
		return fmt.Errorf("bond0.100 is not VLAN 100 on bond0:\n%s", vlan)
	}
	active, err := guest(ctx, vm, "nmcli", "-t", "-f", "NAME,DEVICE,TYPE", "con", "show", "--active")
	if err != nil {
		return err
	}
	for _, dev := range []string{":bond0:", ":bond0.100:", ":enp0s16:", ":enp0s17:"} {
		if !strings.Contains(active, dev) {
			return fmt.Errorf("NetworkManager has no active connection on %s:\n%s", strings.Trim(dev, ":"), active)
		}
	}
	return nil
}
