package units

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/google/go-cmp/cmp"
)

// privateBus starts a dbus-daemon of our own listening on a socket in a
// temp directory and returns its address. It never touches the machine's
// system or session bus.
func privateBus(t *testing.T) string {
	t.Helper()
	exe := needTool(t, "dbus-daemon")
	sock := filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(exe, "--session", "--nofork", "--nopidfile", "--print-address", "--address=unix:path="+sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// The address is printed once the bus listens.
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(addr)
}

// fakeSystemd is the fake at the hardware edge: a stand-in for PID 1's
// org.freedesktop.systemd1.Manager, exported on a private bus. It records
// calls, answers StartUnit with a job path and, as systemd does for
// subscribed clients only, announces the job's end with JobRemoved. Its
// exported methods are exactly the D-Bus methods it serves.
type fakeSystemd struct {
	conn *dbus.Conn

	mu         sync.Mutex
	calls      []string
	subscribed bool
	jobs       uint32
	results    map[string]string // unit -> job result; "done" when absent
	onStart    map[string]func() // unit -> what happens instead of the job ending
}

const (
	managerPath  = dbus.ObjectPath("/org/freedesktop/systemd1")
	managerIface = "org.freedesktop.systemd1.Manager"
)

func startFakeSystemd(t *testing.T, addr string) *fakeSystemd {
	t.Helper()
	conn, err := dbus.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.Auth(nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Hello(); err != nil {
		t.Fatal(err)
	}
	f := &fakeSystemd{conn: conn, results: map[string]string{}, onStart: map[string]func(){}}
	if err := conn.Export(f, managerPath, managerIface); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.systemd1", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.systemd1: %v, %v", reply, err)
	}
	return f
}

func (f *fakeSystemd) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeSystemd) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Subscribe is org.freedesktop.systemd1.Manager.Subscribe.
func (f *fakeSystemd) Subscribe() *dbus.Error {
	f.record("Subscribe")
	f.mu.Lock()
	f.subscribed = true
	f.mu.Unlock()
	return nil
}

// Reload is org.freedesktop.systemd1.Manager.Reload.
func (f *fakeSystemd) Reload() *dbus.Error {
	f.record("Reload")
	return nil
}

// StartUnit is org.freedesktop.systemd1.Manager.StartUnit. It announces
// the job's end before it replies, the harder order for a client.
func (f *fakeSystemd) StartUnit(name, mode string) (dbus.ObjectPath, *dbus.Error) {
	f.record("StartUnit " + name + " " + mode)
	f.mu.Lock()
	result, ok := f.results[name]
	if !ok {
		result = "done"
	}
	then, subscribed := f.onStart[name], f.subscribed
	f.jobs++
	id := f.jobs
	f.mu.Unlock()
	if result == "no-such-unit" {
		return "", dbus.NewError("org.freedesktop.systemd1.NoSuchUnit", []any{"Unit " + name + " not found."})
	}
	job := dbus.ObjectPath(fmt.Sprintf("/org/freedesktop/systemd1/job/%d", id))
	switch {
	case then != nil:
		then()
	case subscribed:
		if err := f.conn.Emit(managerPath, managerIface+".JobRemoved", id, job, name, result); err != nil {
			return "", dbus.MakeFailedError(err)
		}
	}
	return job, nil
}

func TestSystemdOverDBus(t *testing.T) {
	addr := privateBus(t)
	fake := startFakeSystemd(t, addr)
	ctx := t.Context()
	sd, err := DialBus(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sd.Close()

	if err := sd.Reload(ctx); err != nil {
		t.Errorf("Reload: %v", err)
	}
	if err := sd.Start(ctx, DaemonUnit); err != nil {
		t.Errorf("Start(%s): %v", DaemonUnit, err)
	}

	fake.mu.Lock()
	fake.results["broken.service"] = "failed"
	fake.results["missing.service"] = "no-such-unit"
	fake.mu.Unlock()
	err = sd.Start(ctx, "broken.service")
	var jobErr *JobError
	if !errors.As(err, &jobErr) || *jobErr != (JobError{Unit: "broken.service", Result: "failed"}) {
		t.Errorf("Start(broken.service) = %v, want a JobError with result failed", err)
	}
	err = sd.Start(ctx, "missing.service")
	var dbusErr dbus.Error
	if !errors.As(err, &dbusErr) || dbusErr.Name != "org.freedesktop.systemd1.NoSuchUnit" {
		t.Errorf("Start(missing.service) = %v, want the NoSuchUnit D-Bus error", err)
	}

	// A job that never ends: Start returns when its context ends.
	hangCtx, cancel := context.WithCancel(ctx)
	fake.mu.Lock()
	fake.onStart["hang.service"] = cancel
	fake.mu.Unlock()
	if err := sd.Start(hangCtx, "hang.service"); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(hang.service) with its context canceled = %v, want context.Canceled", err)
	}

	want := []string{
		"Subscribe",
		"Reload",
		"StartUnit nodezero.service replace",
		"StartUnit broken.service replace",
		"StartUnit missing.service replace",
		"StartUnit hang.service replace",
	}
	if d := cmp.Diff(want, fake.recorded()); d != "" {
		t.Errorf("calls PID 1 saw (-want +got):\n%s", d)
	}
}

// TestDialBusNoManager: a bus without systemd on it gives an error, not a
// hang.
func TestDialBusNoManager(t *testing.T) {
	addr := privateBus(t)
	if sd, err := DialBus(t.Context(), addr); err == nil {
		sd.Close()
		t.Fatal("DialBus to a bus without org.freedesktop.systemd1 = nil error, want one")
	}
}
