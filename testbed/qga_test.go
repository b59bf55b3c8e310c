package testbed

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentVM returns a VM whose guest agent is a real qemu-ga listening on a
// unix socket on this machine (its -m unix-listen transport): the protocol
// judged by the agent itself, without booting a guest. Commands it runs run
// here, so the tests run only harmless ones; every RPC that could change
// the machine is blocked.
func agentVM(t *testing.T) *VM {
	t.Helper()
	qga := needTool(t, "qemu-ga")
	dir := t.TempDir()
	sock := filepath.Join(dir, "qga.sock")
	blocked := "guest-shutdown,guest-suspend-disk,guest-suspend-ram,guest-suspend-hybrid,guest-set-time," +
		"guest-fsfreeze-freeze,guest-fsfreeze-freeze-list,guest-fsfreeze-thaw,guest-fstrim,guest-set-vcpus," +
		"guest-set-memory-blocks,guest-set-user-password,guest-ssh-add-authorized-keys," +
		"guest-ssh-remove-authorized-keys,guest-file-write"
	cmd := exec.Command(qga, "-m", "unix-listen", "-p", sock, "-t", dir, "-f", filepath.Join(dir, "qga.pid"), "-b", blocked)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	run := &vmRun{cmd: cmd, done: done}
	go func() { run.err = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("qemu-ga log:\n%s", log.String())
		}
	})
	v := &VM{Name: "agent", plan: vmPlan{qga: sock}, run: run, changed: make(chan struct{})}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The socket appears once qemu-ga listens; WaitGuestAgent polls.
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("qemu-ga made no socket: %s", log.String())
		case <-done:
			t.Fatalf("qemu-ga exited: %v: %s", run.err, log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := v.WaitGuestAgent(ctx); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGuestAgent(t *testing.T) {
	v := agentVM(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	t.Run("exec", func(t *testing.T) {
		out, exit, err := v.Exec(ctx, "sh", "-c", "printf 'one\\ntwo'; printf oops >&2")
		if err != nil || exit != 0 || string(out) != "one\ntwo" {
			t.Errorf("Exec = %q, %d, %v; want \"one\\ntwo\", 0, nil", out, exit, err)
		}
	})
	t.Run("exit status", func(t *testing.T) {
		out, exit, err := v.Exec(ctx, "sh", "-c", "echo partial; echo broken >&2; exit 3")
		var ge *GuestExitError
		if !errors.As(err, &ge) || exit != 3 || ge.Exit != 3 || string(ge.Stderr) != "broken\n" || string(out) != "partial\n" {
			t.Errorf("Exec = %q, %d, %v; want \"partial\\n\", 3, a *GuestExitError with stderr \"broken\\n\"", out, exit, err)
		}
	})
	t.Run("signal", func(t *testing.T) {
		_, exit, err := v.Exec(ctx, "sh", "-c", "kill -TERM $$")
		var ge *GuestExitError
		if !errors.As(err, &ge) || exit != -1 || ge.Signal != int(syscall.SIGTERM) {
			t.Errorf("Exec = %d, %v; want -1 and a *GuestExitError with signal %d", exit, err, syscall.SIGTERM)
		}
	})
	t.Run("no such command", func(t *testing.T) {
		_, _, err := v.Exec(ctx, "/nonexistent/nodezero-command")
		var qe *QMPError
		if !errors.As(err, &qe) {
			t.Errorf("Exec of a missing command = %v, want a *QMPError from guest-exec", err)
		}
	})
	t.Run("read file", func(t *testing.T) {
		// Larger than one guest-file-read, with every byte value.
		want := make([]byte, agentChunk*2+12345)
		for i := range want {
			want[i] = byte(i * 7)
		}
		path := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := v.ReadFile(ctx, path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ReadFile = %d bytes, %v; want the %d bytes written", len(got), err, len(want))
		}
		empty := filepath.Join(t.TempDir(), "empty")
		if err := os.WriteFile(empty, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := v.ReadFile(ctx, empty); err != nil || len(got) != 0 {
			t.Errorf("ReadFile(empty) = %q, %v; want nothing, nil", got, err)
		}
		if _, err := v.ReadFile(ctx, filepath.Join(t.TempDir(), "missing")); err == nil {
			t.Error("ReadFile of a missing file = nil error")
		}
	})
	t.Run("after a broken conversation", func(t *testing.T) {
		// Another client left half a request in the agent's parser.
		c, err := net.Dial("unix", v.plan.qga)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write([]byte(`{"execute":"guest-exec","arguments":{"path":"tr`)); err != nil {
			t.Fatal(err)
		}
		c.Close()
		out, _, err := v.Exec(ctx, "echo", "still here")
		if err != nil || strings.TrimSpace(string(out)) != "still here" {
			t.Errorf("Exec after a broken conversation = %q, %v; want \"still here\"", out, err)
		}
	})
	t.Run("vm off", func(t *testing.T) {
		off := &VM{Name: "off", plan: v.plan, changed: make(chan struct{})}
		if _, _, err := off.Exec(ctx, "true"); !errors.Is(err, ErrVMNotRunning) {
			t.Errorf("Exec on a VM never started = %v, want ErrVMNotRunning", err)
		}
		if err := off.WaitGuestAgent(ctx); !errors.Is(err, ErrVMNotRunning) {
			t.Errorf("WaitGuestAgent on a VM never started = %v, want ErrVMNotRunning", err)
		}
	})
}
