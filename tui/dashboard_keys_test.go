package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// TestDashboardKeys drives the running console: Down selects master-1,
// Enter opens its detail with its failing validation, Esc returns to the
// dashboard and q ends Run.
func TestDashboardKeys(t *testing.T) {
	snap := failingSnapshot()
	src := SourceFunc(func(context.Context) Snapshot { return snap })
	r := runApp(t, Config{Source: src, Refresh: time.Hour}, 80, 24)
	r.waitFor(t, "ocp-edge", "master-1", "Waiting for master-1")

	r.key(tcell.KeyDown, 0)
	r.key(tcell.KeyEnter, 0)
	r.waitFor(t, "Host master-1", "✖ has-memory-for-role: Require at least 16.00 GiB RAM", "Esc back")

	r.key(tcell.KeyEscape, 0)
	r.waitFor(t, "Hosts: 5", dashboardHelp)

	quit(t, r)
}

// quit presses q and waits for Run to return. Tests end their console
// this way: stopping it from the cleanup races with the stop that Run
// arranges on the test's context (tview writes Application.screen
// unlocked once its loop ends).
func quit(t *testing.T, r *running) {
	t.Helper()
	r.key(tcell.KeyRune, 'q')
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup, which waits for it too
		if err != nil {
			t.Errorf("Run() = %v after q, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run() did not return after q")
	}
}

// TestDashboardNetworkKey: n opens the network page.
func TestDashboardNetworkKey(t *testing.T) {
	snap := healthySnapshot()
	r := runApp(t, Config{Source: SourceFunc(func(context.Context) Snapshot { return snap }), Refresh: time.Hour}, 80, 24)
	r.waitFor(t, "master-0")
	r.key(tcell.KeyRune, 'n')
	deadline := time.Now().Add(10 * time.Second)
	for {
		var current string
		r.app.QueueUpdate(func() { current = r.current })
		if current == pageNetwork {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after n the console shows page %q, want %q", current, pageNetwork)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.key(tcell.KeyEscape, 0)
	r.waitFor(t, dashboardHelp)
	quit(t, r)
}

// TestDashboardRefreshKeepsSelection: the selected host stays selected
// when a refresh reorders the hosts, and the detail page follows its
// host's changes.
func TestDashboardRefreshKeepsSelection(t *testing.T) {
	a := New(Config{Source: SourceFunc(nil)})
	p := a.dashboard
	p.apply(failingSnapshot())
	drawText(t, p.root, 120, 40)
	down := p.table.InputHandler()
	for range 3 {
		down(tcell.NewEventKey(tcell.KeyDown, 0, tcell.ModNone), func(tview.Primitive) {})
	}
	if p.selected != idWorker0 {
		t.Fatalf("after three Downs the selected host is %q, want worker-0", p.selected)
	}

	// worker-0 is renamed (it now sorts first) and master-2 is gone.
	s := failingSnapshot()
	s.Hosts[3].RequestedHostname = "a-worker-0"
	s.Hosts = slices.Delete(s.Hosts, 2, 3)
	p.apply(s)
	row, _ := p.table.GetSelection()
	if got := p.hosts[row-1].Host.ID; got != idWorker0 || p.selected != idWorker0 {
		t.Errorf("after the refresh row %d (%s) is selected, want worker-0", row, got)
	}

	// The selected host leaves: the selection stays on a row that exists.
	s.Hosts = s.Hosts[1:]
	p.apply(s)
	if row, _ := p.table.GetSelection(); row < 1 || row > len(p.hosts) {
		t.Errorf("after the selected host left row %d is selected of %d", row, len(p.hosts))
	}

	p.showHost(idMaster1)
	if got := drawText(t, p.hostRoot, 80, 24); !strings.Contains(got, "Status: insufficient") {
		t.Fatalf("host page:\n%s", got)
	}
	fixed := failingSnapshot()
	fixed.Hosts[1] = buildHosts(fiveHosts())[1]
	p.apply(fixed)
	if got := drawText(t, p.hostRoot, 80, 24); !strings.Contains(got, "Status: known") || strings.Contains(got, "✖ has-memory") {
		t.Errorf("host page after master-1 was fixed:\n%s", got)
	}
	p.apply(Snapshot{At: fixtureTime, Cluster: fixed.Cluster})
	if got := drawText(t, p.hostRoot, 80, 24); !strings.Contains(got, "no longer registered") {
		t.Errorf("host page after master-1 left:\n%s", got)
	}
}

// TestDashboardEventsKey: e opens every event in full, wrapped, the
// failing host's long reason included (the dashboard's tail cuts it);
// Esc returns.
func TestDashboardEventsKey(t *testing.T) {
	snap := failedSnapshot()
	r := runApp(t, Config{Source: SourceFunc(func(context.Context) Snapshot { return snap }), Refresh: time.Hour}, 80, 24)
	r.waitFor(t, "Installation failed on master-0")
	r.key(tcell.KeyRune, 'e')
	screen := r.waitFor(t, "Events: the newest 5, newest last", "Esc back")
	// The reason, cut at the dashboard's edge, reads in full here.
	flat := strings.Join(strings.Fields(strings.NewReplacer("║", " ").Replace(screen)), " ")
	if want := "(Failed - " + notJoinedReason + ")"; !strings.Contains(flat, want) {
		t.Errorf("events page lacks %q:\n%s", want, screen)
	}
	r.key(tcell.KeyEscape, 0)
	r.waitFor(t, "Hosts: 5", dashboardHelp)
	quit(t, r)
}

// TestDashboardResetKey: after a failed installation, r asks, then resets
// the cluster through Config.Reset and says what to do next; before, the
// key does nothing and the help does not offer it.
func TestDashboardResetKey(t *testing.T) {
	var mu sync.Mutex
	snap := failingSnapshot()
	var resets []string
	reset := func(_ context.Context, id string) error {
		mu.Lock()
		defer mu.Unlock()
		resets = append(resets, id)
		return nil
	}
	src := SourceFunc(func(context.Context) Snapshot { mu.Lock(); defer mu.Unlock(); return snap })
	r := runApp(t, Config{Source: src, Refresh: 10 * time.Millisecond, Reset: reset}, 80, 24)
	r.waitFor(t, "Waiting for master-1", dashboardHelp)
	r.key(tcell.KeyRune, 'r') // not failed: nothing to reset
	mu.Lock()
	snap = failedSnapshot()
	mu.Unlock()
	r.waitFor(t, "Installation failed on master-0", "press r to reset the cluster", dashboardResetHelp)
	r.key(tcell.KeyRune, 'r')
	r.waitFor(t, "The installation starts", "Reset     Cancel")
	r.key(tcell.KeyEnter, 0) // the first button: Reset
	r.waitFor(t, "The cluster was reset: now reboot every host from the discovery image")
	mu.Lock()
	got := slices.Clone(resets)
	mu.Unlock()
	if want := []string{fixtureClusterID}; !slices.Equal(got, want) {
		t.Errorf("resets asked = %q, want %q", got, want)
	}
	quit(t, r)
}

// TestDashboardTab: Tab moves the focus through the validations, the
// table and the events, and the focused section's label shows it.
func TestDashboardTab(t *testing.T) {
	a := New(Config{Source: SourceFunc(nil)})
	p := a.dashboard
	a.app.SetFocus(p.table)
	p.apply(failingSnapshot())
	keys := p.root.InputHandler()
	setFocus := func(pr tview.Primitive) { a.app.SetFocus(pr) }
	focusedLabel := func() string {
		screen := drawText(t, p.root, 80, 24)
		for _, l := range strings.Split(screen, "\n") {
			if i := strings.Index(l, "▶ "); i >= 0 {
				return strings.TrimRight(strings.Trim(l[i+len("▶ "):], "║"), " ")
			}
		}
		return ""
	}
	var got []string
	for _, k := range []tcell.Key{tcell.KeyTab, tcell.KeyTab, tcell.KeyTab, tcell.KeyBacktab} {
		keys(tcell.NewEventKey(k, 0, tcell.ModNone), setFocus)
		got = append(got, focusedLabel())
	}
	want := []string{"Events   (e: all of them, in full)", "Cluster validations failing: 2", "Hosts: 5   (* this host)", "Cluster validations failing: 2"}
	if !slices.Equal(got, want) {
		t.Errorf("labels focused by Tab, Tab, Tab, Backtab = %q, want %q", got, want)
	}
}

// BenchmarkDashboardApply measures one refresh of the dashboard: apply a
// snapshot and draw the page on a 120×40 simulation screen. Two snapshots
// with equal content but separate strings alternate, as successive fetches
// decode them.
func BenchmarkDashboardApply(b *testing.B) {
	for _, n := range []int{5, 200} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			snaps := [2]Snapshot{manyHostsSnapshot(b, n), manyHostsSnapshot(b, n)}
			a := New(Config{Source: SourceFunc(nil)})
			sim := tcell.NewSimulationScreen("UTF-8")
			if err := sim.Init(); err != nil {
				b.Fatal(err)
			}
			defer sim.Fini()
			sim.SetSize(120, 40)
			root := a.dashboard.root
			root.SetRect(0, 0, 120, 40)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				a.dashboard.apply(snaps[i%2])
				root.Draw(sim)
				sim.Show()
				i++
			}
		})
	}
}
