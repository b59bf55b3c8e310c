package testbed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"syscall"
)

// Command returns a command that runs name inside h's namespace, through
// `ip netns exec` (which also bind-mounts /etc/netns/<ns>/ files over /etc).
// The child leads its own process group and gets SIGKILL when the thread
// that started it exits (Pdeathsig: do not start it from a goroutine that
// locked its OS thread and then returns); cancelling ctx kills the whole
// group, and so does Bed.Close.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return nsCommand(ctx, h.NS, name, args...)
}

// SwitchCommand is Command for the switch namespace, where the bridge and
// the gateway address live (for dnsmasq and other services of the bed).
func (b *Bed) SwitchCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return nsCommand(ctx, b.Switch, name, args...)
}

func nsCommand(ctx context.Context, ns, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error {
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	return cmd
}

// SetLink cuts (up false) or restores (up true) h's cable: it sets the
// switch side of h's veth down or up, so h's NIC loses or regains carrier
// while its own configuration is left alone.
func (h *Host) SetLink(ctx context.Context, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	if _, err := runIP(ctx, "-n", h.bed.Switch, "link", "set", "dev", h.Port, state); err != nil {
		return fmt.Errorf("set host %s link %s: %w", h.Name, state, err)
	}
	return nil
}

// Addrs returns the addresses h's NIC holds now, link-local ones included.
func (h *Host) Addrs(ctx context.Context) ([]netip.Prefix, error) {
	out, err := runIP(ctx, "-n", h.NS, "-j", "addr", "show", "dev", h.NIC)
	if err != nil {
		return nil, fmt.Errorf("read host %s addresses: %w", h.Name, err)
	}
	var l ipAddrs
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, fmt.Errorf("read host %s addresses: %w", h.Name, err)
	}
	ps, err := l.prefixes()
	if err != nil {
		return nil, fmt.Errorf("read host %s addresses: %w", h.Name, err)
	}
	return ps, nil
}

// AddAddr adds address p to device dev in namespace ns, one of the bed's
// namespaces (for services started later, e.g. a second address on the
// bridge). It refuses a prefix that is not inside the bed's Prefix or
// Prefix6 (ErrOutsideRange) and a namespace the bed did not make. IPv6
// addresses are added without duplicate address detection.
func (b *Bed) AddAddr(ctx context.Context, ns, dev string, p netip.Prefix) error {
	b.mu.Lock()
	ours := !b.closed && slices.Contains(b.namespaces, ns)
	b.mu.Unlock()
	if !ours {
		return fmt.Errorf("add address %s to %s in namespace %q: not a namespace of test bed %s: %w", p, dev, ns, b.ID, ErrOutsideRange)
	}
	return b.addAddr(ctx, ns, dev, p)
}

// addAddr is the one place a bed adds an address; it checks the prefix.
func (b *Bed) addAddr(ctx context.Context, ns, dev string, p netip.Prefix) error {
	if !b.owns(p) {
		return fmt.Errorf("add address %s to %s in namespace %s: not inside %s: %w", p, dev, ns, b.prefixes(), ErrOutsideRange)
	}
	args := []string{"-n", ns, "addr", "add", p.String(), "dev", dev}
	if p.Addr().Is6() {
		args = append(args, "nodad")
	}
	if _, err := runIP(ctx, args...); err != nil {
		return fmt.Errorf("add address %s to %s in namespace %s: %w", p, dev, ns, err)
	}
	return nil
}

// owns reports whether p lies wholly inside one of the bed's prefixes.
func (b *Bed) owns(p netip.Prefix) bool {
	if !p.IsValid() {
		return false
	}
	for _, q := range []netip.Prefix{b.Prefix, b.Prefix6} {
		if q.IsValid() && p.Addr().BitLen() == q.Addr().BitLen() && p.Bits() >= q.Bits() && q.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

func (b *Bed) prefixes() string {
	if b.Prefix6.IsValid() {
		return b.Prefix.String() + " or " + b.Prefix6.String()
	}
	return b.Prefix.String()
}
