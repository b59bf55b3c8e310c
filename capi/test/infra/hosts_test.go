package infra

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/sim"
)

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(50 * time.Millisecond) // polling a process table, not synchronising
	}
}

// A host's process runs with the workload kubeconfig under its root and
// the config image as given; killed, it is started again (as systemd
// would); Stop ends it and removes its folder and its disks; the hardware
// tree it held is free again; Close ends the rest and takes no new host.
func TestHosts(t *testing.T) {
	dir := t.TempDir()
	hs, err := New(Config{Bin: servicetest.Binary(t), Dir: filepath.Join(dir, "m"), Disks: filepath.Join(dir, "disks"),
		Prefix: mustPrefix(t, "127.201.7.0/24"), DNS: "127.201.7.1:53", Payload: dir, Kubeconfig: []byte("kubeconfig\n"), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	// Not a config image: the host waits for one, as a host without its
	// config image does.
	h, err := hs.Ensure("ns/m-0", "master", []byte("not an ISO"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := hs.Ensure("ns/m-0", "master", []byte("other")); err != nil || again != h {
		t.Fatalf("Ensure of a running host = %v, %v; want the same host", again, err)
	}
	if h.Tree != "master-0" || h.Addr.String() != "127.201.7.10" {
		t.Errorf("host: tree %s on %s; want master-0 on 127.201.7.10", h.Tree, h.Addr)
	}
	if b, err := os.ReadFile(filepath.Join(h.Root(), sim.KubeconfigPath)); err != nil || string(b) != "kubeconfig\n" {
		t.Errorf("the host's kubeconfig: %q, %v", b, err)
	}
	waitFor(t, "the host's process runs", h.Running)

	h.mu.Lock()
	pid := h.proc.Pid
	h.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed host started again", func() bool { return h.Boots() == 2 && h.Running() })
	if err := h.Err(); err != nil {
		t.Fatalf("a killed host's supervisor gave up: %v", err)
	}

	// Three master trees: the fourth host has none.
	for _, k := range []string{"ns/m-1", "ns/m-2"} {
		if _, err := hs.Ensure(k, "master", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := hs.Ensure("ns/m-3", "master", []byte("x")); err == nil || !strings.Contains(err.Error(), "every master hardware tree is in use") {
		t.Errorf("a fourth master = %v; want every master tree in use", err)
	}
	if _, err := hs.Ensure("ns/x", "gpu", []byte("x")); err == nil || !strings.Contains(err.Error(), `hardware "gpu"`) {
		t.Errorf("hardware gpu = %v; want it named", err)
	}

	if ran, err := hs.Stop("ns/m-0"); !ran || err != nil {
		t.Fatalf("Stop = %v, %v", ran, err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the stopped host's first process: kill 0 = %v; want it gone", err)
	}
	for _, p := range []string{h.Dir, h.disks} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Stop: %v; want it removed", p, err)
		}
	}
	if hs.Get("ns/m-0") != nil {
		t.Error("a stopped host is still listed")
	}
	again, err := hs.Ensure("ns/m-3", "master", []byte("x"))
	if err != nil || again.Tree != "master-0" {
		t.Fatalf("a host after one stopped: %v, %v; want master-0 free again", again, err)
	}
	hs.Close()
	for _, k := range []string{"ns/m-1", "ns/m-2", "ns/m-3"} {
		if hs.Get(k).Running() {
			t.Errorf("%s runs after Close", k)
		}
	}
	if _, err := hs.Ensure("ns/m-4", "worker", []byte("x")); err == nil {
		t.Error("Ensure after Close started a host")
	}
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
