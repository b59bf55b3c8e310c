package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// The sandbox's hosts and their supervisor: one `nodezero run` process per
// host, started again after its reboot (sim.ExitReboot) and, as systemd's
// Restart=always does, after a crash.

// Host is one host of the sandbox. Its exported fields are read-only.
type Host struct {
	Name, Role, NIC, MAC string
	Addr                 netip.Addr
	hw, root, disks, log string
	args                 []string
	env                  []string // added to the process's environment
	// command makes the host's process (nil: exec.Command, on loopback;
	// inside its namespace with NetNS).
	command func(name string, args ...string) *exec.Cmd
	ns      string      // its network namespace, with NetNS
	vm      *testbed.VM // the host's virtual machine, with VM
	// Network and Interfaces are the host's networkConfig and interfaces
	// in agent-config.yaml (VMs: static addresses, every NIC), indented for
	// the template; "" is none, and the one NIC.
	Network, Interfaces string
	bond                []string // the MACs of the bond's ports (a VM host with a bond)
	inspectedWriting    bool     // Inspect saw it at PhaseWriting
	// onReboot, when set, is called (and must return at once) each time
	// the host reboots into its installed disk, before it starts again.
	onReboot func()

	mu      sync.Mutex
	boots   int         // processes started (boots and restarts)
	crashes int         // processes that died of a signal and were restarted
	proc    *os.Process // the running process, nil between two
	exit    error       // the last process's end, when it did not reboot
	// discovery: the running process is being stopped to boot the host
	// into discovery again (RebootIntoDiscovery).
	discovery bool
	// cycled is open while PowerCycle switches the VM off and on.
	cycled chan struct{}
}

// RebootIntoDiscovery does what a person does with a host that a reset
// left in resetting-pending-user-action: reboot it into the discovery
// image. The host's process is stopped (SIGTERM) and started again as a
// fresh discovery boot: the fake firmware forgets the installed disk and
// the installer its journal, so the host registers again instead of
// booting or resuming an install; its config image and, on node zero, the
// service's store stay, as the live image and node zero's data do. It
// reports whether a process was running.
func (h *Host) RebootIntoDiscovery() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proc == nil {
		return false
	}
	h.discovery = true
	return h.proc.Signal(syscall.SIGTERM) == nil
}

// forgetInstall removes what a discovery boot does not find: the fake
// firmware's record of an installed disk and the install journal.
func (h *Host) forgetInstall() error {
	for _, p := range []string{onhost.BootDiskPath, installer.JournalPath} {
		if err := os.Remove(filepath.Join(h.root, p)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Kill sends SIGKILL to the host's running process, as a crash would end
// it; the supervisor restarts it as systemd does (Restart=always). It
// reports whether a process was running.
func (h *Host) Kill() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.proc == nil {
		return false
	}
	return h.proc.Signal(syscall.SIGKILL) == nil
}

// Counts returns the processes started and those killed.
func (h *Host) Counts() (boots, crashes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.boots, h.crashes
}

// Log is the file the host's processes write to, one after the other.
func (h *Host) Log() string { return h.log }

// supervise runs a host's `nodezero run`, starting it again each time it
// reboots, until ctx ends.
func supervise(ctx context.Context, bin string, h *Host, say func(string, ...any)) {
	for {
		logf, err := os.OpenFile(h.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			h.setExit(err)
			return
		}
		h.mu.Lock()
		h.boots++
		boot := h.boots
		h.mu.Unlock()
		fmt.Fprintf(logf, "==== boot %d ====\n", boot)
		var cmd *exec.Cmd
		if h.command != nil {
			cmd = h.command(bin, h.args...)
		} else {
			cmd = exec.Command(bin, h.args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		}
		if len(h.env) > 0 {
			cmd.Env = append(os.Environ(), h.env...)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			logf.Close()
			h.setExit(err)
			return
		}
		h.mu.Lock()
		h.proc = cmd.Process
		h.mu.Unlock()
		done := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			h.mu.Lock()
			h.proc = nil
			h.mu.Unlock()
			done <- err
		}()
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			logf.Close()
			return
		case err = <-done:
		}
		logf.Close()
		h.mu.Lock()
		discovery := h.discovery
		h.discovery = false
		h.mu.Unlock()
		if discovery {
			if err := h.forgetInstall(); err != nil {
				h.setExit(err)
				return
			}
			say("%s rebooted into discovery (reset): it registers again", h.Name)
			continue
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == sim.ExitReboot {
			say("%s rebooted into its installed disk", h.Name)
			if h.onReboot != nil {
				h.onReboot()
			}
			continue
		}
		if ws, ok := exitSignal(ee); ok {
			// The daemon's unit restarts it whatever ended it
			// (Restart=always); a signal is how a crash shows here.
			h.mu.Lock()
			h.crashes++
			h.mu.Unlock()
			say("%s: its nodezero process was killed (%s); restarting it as systemd would", h.Name, ws)
			if !backoff.Sleep(ctx, restartDelay) {
				return
			}
			continue
		}
		if err == nil {
			err = errors.New("exited")
		}
		say("%s: its nodezero process ended: %v (log %s)", h.Name, err, h.log)
		h.setExit(err)
		return
	}
}

// restartDelay is the pause before a killed host process starts again
// (the unit's RestartSec is 3 s; the sandbox is in a hurry).
const restartDelay = 200 * time.Millisecond

// exitSignal returns the signal that ended a process, if one did.
func exitSignal(ee *exec.ExitError) (syscall.Signal, bool) {
	if ee == nil {
		return 0, false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return ws.Signal(), true
}

func (h *Host) setExit(err error) {
	h.mu.Lock()
	h.exit = err
	h.mu.Unlock()
}

// rebootResetHosts reboots into discovery every host a reset left waiting
// for the person (resetting-pending-user-action), once per time it gets
// there, as the person would.
func (r *run) rebootResetHosts(c *wire.Cluster) {
	if r.resetting == nil {
		r.resetting = map[string]bool{}
	}
	for _, wh := range c.Hosts {
		if wh.Status != wire.HostStatusResettingPendingUserAction {
			delete(r.resetting, wh.ID)
			continue
		}
		if r.resetting[wh.ID] {
			continue
		}
		for _, h := range r.hosts {
			if h.Name == wh.RequestedHostname && h.RebootIntoDiscovery() {
				r.resetting[wh.ID] = true
				r.say("%s is %s: rebooting it into discovery, as a person would", h.Name, wh.Status)
			}
		}
	}
}
