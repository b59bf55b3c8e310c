package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/sim"
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
	// command makes the host's process (nil: exec.Command, on loopback;
	// inside its namespace with NetNS).
	command func(name string, args ...string) *exec.Cmd
	ns      string // its network namespace, with NetNS
	// onReboot, when set, is called (and must return at once) each time
	// the host reboots into its installed disk, before it starts again.
	onReboot func()

	mu      sync.Mutex
	boots   int         // processes started (boots and restarts)
	crashes int         // processes that died of a signal and were restarted
	proc    *os.Process // the running process, nil between two
	exit    error       // the last process's end, when it did not reboot
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
