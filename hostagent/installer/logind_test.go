package installer

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/google/go-cmp/cmp"
)

// fakeLogind is the part of org.freedesktop.login1.Manager the rebooter
// calls; it records each call.
type fakeLogind struct {
	mu       sync.Mutex
	calls    []string
	usec     uint64
	failWith *dbus.Error
}

func (f *fakeLogind) record(call string) *dbus.Error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.failWith
}

func (f *fakeLogind) SetWallMessage(message string, enable bool) *dbus.Error {
	return f.record("SetWallMessage " + message + " " + boolText(enable))
}

func (f *fakeLogind) ScheduleShutdown(kind string, usec uint64) *dbus.Error {
	f.mu.Lock()
	f.usec = usec
	f.mu.Unlock()
	return f.record("ScheduleShutdown " + kind)
}

func (f *fakeLogind) Reboot(interactive bool) *dbus.Error {
	return f.record("Reboot " + boolText(interactive))
}

func (f *fakeLogind) Calls() ([]string, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...), f.usec
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// privateBus starts a dbus-daemon of the test's own on a socket in a temp
// dir and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	daemon := needTool(t, "dbus-daemon")
	sock := filepath.Join(t.TempDir(), "bus")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, daemon, "--session", "--nofork", "--nopidfile", "--address=unix:path="+sock, "--print-address")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start dbus-daemon: %v", err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = cmd.Wait() // killed by cancel at cleanup
	}()
	return strings.TrimSpace(line)
}

// serveLogind claims logind's name on the bus at addr and exports f.
func serveLogind(t *testing.T, addr string, f *fakeLogind) {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Export(f, logindPath, logindManager); err != nil {
		t.Fatal(err)
	}
	// An earlier subtest's fake may still hold the name while the bus
	// notices its connection closed: take it over.
	reply, err := conn.RequestName(logindName, dbus.NameFlagAllowReplacement|dbus.NameFlagReplaceExisting|dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName = %v, %v", reply, err)
	}
}

func TestLogindRebooter(t *testing.T) {
	addr := privateBus(t)

	t.Run("scheduled", func(t *testing.T) {
		f := &fakeLogind{}
		serveLogind(t, addr, f)
		before := time.Now()
		if err := LogindRebooterAt(addr).Reboot(context.Background(), time.Minute, RebootMessage); err != nil {
			t.Fatalf("Reboot = %v", err)
		}
		after := time.Now()
		calls, usec := f.Calls()
		want := []string{"SetWallMessage " + RebootMessage + " true", "ScheduleShutdown reboot"}
		if diff := cmp.Diff(want, calls); diff != "" {
			t.Errorf("logind calls (-want +got):\n%s", diff)
		}
		lo, hi := uint64(before.Add(time.Minute).UnixMicro()), uint64(after.Add(time.Minute).UnixMicro())
		if usec < lo || usec > hi {
			t.Errorf("ScheduleShutdown usec = %d, want a minute from the call (%d..%d)", usec, lo, hi)
		}
	})

	t.Run("now", func(t *testing.T) {
		f := &fakeLogind{}
		serveLogind(t, addr, f)
		if err := LogindRebooterAt(addr).Reboot(context.Background(), 0, ""); err != nil {
			t.Fatalf("Reboot = %v", err)
		}
		calls, _ := f.Calls()
		if diff := cmp.Diff([]string{"Reboot false"}, calls); diff != "" {
			t.Errorf("logind calls (-want +got):\n%s", diff)
		}
	})

	t.Run("refused", func(t *testing.T) {
		f := &fakeLogind{failWith: dbus.NewError("org.freedesktop.DBus.Error.AccessDenied", []any{"Access denied"})}
		serveLogind(t, addr, f)
		if err := LogindRebooterAt(addr).Reboot(context.Background(), time.Minute, RebootMessage); err == nil {
			t.Fatal("Reboot = nil, want logind's refusal")
		}
		// The wall message's refusal does not stop the reboot call.
		calls, _ := f.Calls()
		if len(calls) != 2 {
			t.Errorf("logind calls = %v, want both", calls)
		}
	})

}

func TestLogindRebooterNoLogind(t *testing.T) {
	addr := privateBus(t)
	if err := LogindRebooterAt(addr).Reboot(context.Background(), time.Minute, ""); err == nil {
		t.Fatal("Reboot = nil with nobody serving logind")
	}
}

func TestLogindRebooterNoSystemBus(t *testing.T) {
	// Pointing the system bus at a socket that does not exist keeps the
	// test away from the machine's real logind.
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "missing"))
	err := LogindRebooter().Reboot(context.Background(), 0, "")
	if err == nil || !strings.Contains(err.Error(), "no system bus") {
		t.Fatalf("Reboot = %v, want a no-system-bus error", err)
	}
}
