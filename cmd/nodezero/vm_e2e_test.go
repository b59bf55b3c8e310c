//go:build vme2e

package main

// The long VM runs, behind `make vm-e2e` (build tag vme2e): five virtual
// machines under software emulation take tens of minutes.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	dir := t.TempDir()
	sum := runVMSandbox(t, dir, 3, 2, 90*time.Minute, func(ctx context.Context, phase sandbox.Phase, h *sandbox.Host) error {
		switch phase {
		case sandbox.PhaseWaiting:
			if err := checkWaitingIssue(ctx, h); err != nil {
				return err
			}
			if h.Name == "worker-0" {
				return checkOtherReleaseRefused(ctx, t, filepath.Join(dir, "install"), h)
			}
			return nil
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

// checkOtherReleaseRefused inserts a config image made from the same
// inputs for another release: the host refuses it on its console (its
// factory image installs its own release only) and loads nothing; the CD
// is taken out again (the sandbox then inserts the right one).
func checkOtherReleaseRefused(ctx context.Context, t *testing.T, installDir string, h *sandbox.Host) error {
	other := t.TempDir()
	for _, f := range []string{"install-config.yaml", "agent-config.yaml"} {
		b, err := os.ReadFile(filepath.Join(installDir, f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(other, f), b, 0o600); err != nil {
			return err
		}
	}
	if err := sandboxConfigImage().Create(ctx, other, "registry.sandbox.nodezero.test:5000/ocp/release:4.19.0-x86_64"); err != nil {
		return err
	}
	vm := h.VM()
	if err := vm.InsertCD(ctx, filepath.Join(other, "agentconfig.noarch.iso")); err != nil {
		return err
	}
	if _, err := vm.WaitSerial(ctx, regexp.MustCompile(`cluster-image-set in archive does not match current release`)); err != nil {
		return fmt.Errorf("the console never refused the config image for another release: %w", err)
	}
	if _, err := vm.ReadFile(ctx, "/etc/assisted/rendezvous-host.env"); err == nil {
		return fmt.Errorf("the config image for another release was loaded (rendezvous-host.env exists)")
	}
	t.Logf("%s refused the config image for another release on its console", h.Name)
	return vm.RemoveCD(ctx)
}
