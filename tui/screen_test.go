package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/rivo/tview"
)

var update = flag.Bool("update", false, "rewrite the golden screen dumps in testdata/")

// sizes are the terminal sizes every page is dumped at.
var sizes = []struct{ w, h int }{{80, 24}, {120, 40}}

// drawText draws p alone on a w×h simulation screen and returns the
// screen as text: one line per row, trailing blanks cut.
func drawText(t *testing.T, p tview.Primitive, w, h int) string {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	defer sim.Fini()
	sim.SetSize(w, h)
	p.SetRect(0, 0, w, h)
	p.Draw(sim)
	sim.Show()
	return screenText(sim)
}

// screenText is what a simulation screen shows, as text.
func screenText(sim tcell.SimulationScreen) string {
	cells, w, h := sim.GetContents()
	var b strings.Builder
	for y := 0; y < h; y++ {
		var line strings.Builder
		for x := 0; x < w; x++ {
			c := cells[y*w+x]
			if len(c.Runes) == 0 {
				line.WriteByte(' ')
				continue
			}
			line.WriteString(string(c.Runes))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// golden compares got with testdata/<name>.golden; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// running is an App running on a simulation screen, for key tests.
type running struct {
	*App
	sim  tcell.SimulationScreen
	done chan error
}

// runApp starts New(cfg) on a w×h simulation screen; the test's cleanup
// stops it through Run's context, the one way the console is stopped from
// outside (a second Stop racing Run's own end is a data race in tview).
func runApp(t *testing.T, cfg Config, w, h int) *running {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	cfg.Screen = sim
	a := New(cfg)
	sim.SetSize(w, h)
	r := &running{App: a, sim: sim, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { r.done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// waitFor waits until the screen shows every one of texts and returns the
// screen; it fails the test with the screen after 10 s.
func (r *running) waitFor(t *testing.T, texts ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var screen string
		got := make(chan string, 1)
		// In a goroutine: QueueUpdate waits for good once the app stopped.
		go r.app.QueueUpdate(func() { got <- screenText(r.sim) })
		select {
		case screen = <-got:
		case <-time.After(time.Second):
			screen = "(the console does not draw: stopped?)"
		}
		ok := true
		for _, s := range texts {
			if !strings.Contains(screen, s) {
				ok = false
				break
			}
		}
		if ok {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q; it shows:\n%s", texts, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// key injects a key; key(tcell.KeyRune, 'q') for a letter.
func (r *running) key(k tcell.Key, ch rune) {
	r.sim.InjectKey(k, ch, tcell.ModNone)
}
