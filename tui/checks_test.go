package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
)

const testImage = "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64"

// fakeChecks are agent-tui's four checks whose outcomes a test switches
// (like agent-tui's AppTester): nil passes, an error fails with it.
type fakeChecks struct {
	mu   sync.Mutex
	errs map[CheckID]error
	runs map[CheckID]int
}

func newFakeChecks() *fakeChecks {
	return &fakeChecks{errs: map[CheckID]error{}, runs: map[CheckID]int{}}
}

func (f *fakeChecks) set(id CheckID, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[id] = err
}

func (f *fakeChecks) checks() []Check {
	mk := func(id CheckID, title string) Check {
		return Check{ID: id, Title: title, Run: func(context.Context) (string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.runs[id]++
			if err := f.errs[id]; err != nil {
				return "output of " + title + "\n" + err.Error(), err
			}
			return "ok", nil
		}}
	}
	return []Check{
		mk(CheckReleaseImagePull, "podman pull "+testImage),
		mk(CheckDNS, "nslookup quay.io"),
		mk(CheckPing, "ping quay.io"),
		mk(CheckHTTP, "https://quay.io responds to http GET"),
	}
}

// testChecks are the four checks without a Run, for pages drawn alone.
func testChecks() []Check { return newFakeChecks().checks() }

// newTestApp is New(cfg) whose background work ends with the test.
func newTestApp(t *testing.T, cfg Config) *App {
	t.Helper()
	a := New(cfg)
	t.Cleanup(func() {
		a.cancel()
		a.wg.Wait()
	})
	return a
}

func passed(c Check) CheckResult { return checkResult(c, "ok", nil, time.Time{}) }
func failed(c Check, out, msg string) CheckResult {
	return checkResult(c, out, errors.New(msg), time.Time{})
}

func results(rs ...CheckResult) map[CheckID]CheckResult {
	m := map[CheckID]CheckResult{}
	for _, r := range rs {
		m[r.ID] = r
	}
	return m
}

func TestChecksOutcome(t *testing.T) {
	cs := testChecks()
	pull, dns := cs[0], cs[1]
	for _, tc := range []struct {
		name          string
		checks        []Check
		results       map[CheckID]CheckResult
		known, passed bool
	}{
		{"nothing yet", cs, results(), false, false},
		{"only dns", cs, results(failed(dns, "", "x")), false, false},
		{"pull passed, dns failed", cs, results(passed(pull), failed(dns, "", "x")), true, true},
		{"pull failed", cs, results(failed(pull, "", "x"), passed(dns)), true, false},
		{"no pull check, one pending", cs[1:], results(passed(dns)), false, false},
		{"no pull check, all passed", cs[1:], results(passed(cs[1]), passed(cs[2]), passed(cs[3])), true, true},
		{"no pull check, one failed", cs[1:], results(passed(cs[1]), failed(cs[2], "", "x"), passed(cs[3])), true, false},
		{"no checks", nil, results(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			known, ok := checksOutcome(tc.checks, tc.results)
			if known != tc.known || ok != tc.passed {
				t.Errorf("checksOutcome = %v, %v, want %v, %v", known, ok, tc.known, tc.passed)
			}
		})
	}
}

func TestCheckRows(t *testing.T) {
	cs := testChecks()
	pull, dns, ping := cs[0], cs[1], cs[2]
	for _, tc := range []struct {
		name    string
		image   string
		results map[CheckID]CheckResult
		pull    checkRow
		others  []checkRow
	}{
		{
			name: "pending", image: testImage, results: results(),
			pull: checkRow{CheckPending, "…", "checking", testImage},
			others: []checkRow{
				{CheckPending, "…", "checking", "nslookup quay.io"},
				{CheckPending, "…", "checking", "ping quay.io"},
				{CheckPending, "…", "checking", "https://quay.io responds to http GET"},
			},
		},
		{
			name: "mixed", image: testImage, results: results(failed(pull, "", "x"), passed(dns), failed(ping, "", "y")),
			pull: checkRow{CheckFailed, "✖", "failed", testImage},
			others: []checkRow{
				{CheckPassed, "✓", "passed", "nslookup quay.io"},
				{CheckFailed, "✖", "failed", "ping quay.io"},
				{CheckPending, "…", "checking", "https://quay.io responds to http GET"},
			},
		},
		{
			name: "no image: the pull's title", results: results(passed(pull)),
			pull: checkRow{CheckPassed, "✓", "passed", "podman pull " + testImage},
			others: []checkRow{
				{CheckPending, "…", "checking", "nslookup quay.io"},
				{CheckPending, "…", "checking", "ping quay.io"},
				{CheckPending, "…", "checking", "https://quay.io responds to http GET"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pullRow(tc.image, cs, tc.results); got != tc.pull {
				t.Errorf("pullRow = %+v, want %+v", got, tc.pull)
			}
			if diff := cmp.Diff(tc.others, otherRows(cs, tc.results)); diff != "" {
				t.Errorf("otherRows (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckErrorsText(t *testing.T) {
	cs := testChecks()
	pull, dns, ping, http := cs[0], cs[1], cs[2], cs[3]
	for _, tc := range []struct {
		name    string
		results map[CheckID]CheckResult
		want    string
	}{
		{"none failing", results(passed(pull), passed(dns)), ""},
		{
			"pull first, agent-tui's headings",
			results(failed(dns, "** server can't find quay.io: NXDOMAIN", "exit status 1"),
				failed(pull, "Error: initializing source: pinging container registry", "exit status 125"),
				passed(ping),
				failed(http, "", "Get \"https://quay.io\": dial tcp: lookup quay.io: no such host\nmore")),
			"release image pull error: exit status 125\n" +
				"Error: initializing source: pinging container registry\n" +
				"\nnslookup failure: exit status 1\n" +
				"** server can't find quay.io: NXDOMAIN\n" +
				"\nhttp server not responding: Get \"https://quay.io\": dial tcp: lookup quay.io: no such host\n",
		},
		{
			"other check",
			results(failed(Check{ID: "ntp", Title: "chronyc sources"}, "", "no source")),
			"",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, checkErrorsText(cs, tc.results)); diff != "" {
				t.Errorf("checkErrorsText (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("unknown check's heading", func(t *testing.T) {
		c := Check{ID: "ntp", Title: "chronyc sources"}
		got := checkErrorsText([]Check{c}, results(failed(c, "", "no source")))
		if want := "chronyc sources failure: no source\n"; got != want {
			t.Errorf("checkErrorsText = %q, want %q", got, want)
		}
	})

	t.Run("bounded", func(t *testing.T) {
		line := strings.Repeat("x", 99) + "\n"
		long := strings.Repeat(line, 100) + "the reason at the end"
		rs := map[CheckID]CheckResult{}
		var many []Check
		for i := range 20 {
			c := Check{ID: CheckID(fmt.Sprint(i)), Title: fmt.Sprint("check ", i)}
			many = append(many, c)
			rs[c.ID] = failed(c, long, "failed")
		}
		got := checkErrorsText(many, rs)
		if len(got) > maxCheckErrors+10 {
			t.Errorf("checkErrorsText is %d bytes, want about %d at most", len(got), maxCheckErrors)
		}
		if !strings.Contains(got, "…\n"+line) || !strings.Contains(got, "the reason at the end") {
			t.Errorf("checkErrorsText does not keep the output's end, cut at a line:\n%.500s", got)
		}
		if !strings.HasSuffix(got, "\n…") {
			t.Errorf("checkErrorsText cut does not say so: ...%q", got[len(got)-20:])
		}
	})
}

func TestCountdownText(t *testing.T) {
	for _, tc := range []struct {
		left time.Duration
		want string
	}{
		{20 * time.Second, "20 seconds"},
		{19*time.Second + time.Millisecond, "20 seconds"},
		{time.Second, "1 second"},
		{300 * time.Millisecond, "1 second"},
		{0, "0 seconds"},
		{-time.Second, "0 seconds"},
	} {
		if got := secondsLeft(tc.left); got != tc.want {
			t.Errorf("secondsLeft(%v) = %q, want %q", tc.left, got, tc.want)
		}
	}
	got := countdownText(20 * time.Second)
	for _, want := range []string{
		"Agent-based installer connectivity checks passed. No additional network configuration is required. Do you",
		"This prompt will timeout in 20 seconds.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("countdownText = %q, want it to contain %q", got, want)
		}
	}
}

func TestRunCheck(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	now := func() time.Time { return at }
	t.Run("passes", func(t *testing.T) {
		c := Check{ID: CheckDNS, Title: "nslookup quay.io", Run: func(context.Context) (string, error) { return "Address: 1.2.3.4", nil }}
		got := runCheck(t.Context(), c, time.Minute, now)
		want := CheckResult{ID: CheckDNS, Title: "nslookup quay.io", State: CheckPassed, Output: "Address: 1.2.3.4", At: at}
		if got != want {
			t.Errorf("runCheck = %+v, want %+v", got, want)
		}
	})
	t.Run("fails with the first line of its error", func(t *testing.T) {
		c := Check{ID: CheckPing, Run: func(context.Context) (string, error) {
			return "100% packet loss", errors.New("exit status 1\nping: details")
		}}
		got := runCheck(t.Context(), c, time.Minute, now)
		if got.State != CheckFailed || got.Err != "exit status 1" || got.Output != "100% packet loss" {
			t.Errorf("runCheck = %+v, want failed with exit status 1 and the output", got)
		}
	})
	t.Run("a check ignoring its context times out", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		c := Check{ID: CheckReleaseImagePull, Run: func(context.Context) (string, error) {
			<-release
			return "", nil
		}}
		got := runCheck(t.Context(), c, 50*time.Millisecond, now)
		if got.State != CheckFailed || !strings.Contains(got.Err, "timed out") {
			t.Errorf("runCheck = %+v, want failed with a time-out", got)
		}
	})
	t.Run("a check keeping to its context times out too", func(t *testing.T) {
		c := Check{ID: CheckReleaseImagePull, Run: func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "partial", ctx.Err()
		}}
		got := runCheck(t.Context(), c, 50*time.Millisecond, now)
		if got.State != CheckFailed || !strings.Contains(got.Err, "timed out") {
			t.Errorf("runCheck = %+v, want failed with a time-out", got)
		}
	})
}

// checksApp is an App on the checks page with rs applied, not running.
func checksApp(t *testing.T, rs ...CheckResult) *App {
	t.Helper()
	a := newTestApp(t, Config{Checks: testChecks(), ReleaseImage: testImage, ConfigureNetwork: func() error { return nil }})
	for _, r := range rs {
		a.checks.results[r.ID] = r
	}
	a.checks.render()
	a.replacePage(pageChecks)
	return a
}

func TestChecksGolden(t *testing.T) {
	cs := testChecks()
	pull, dns, ping, http := cs[0], cs[1], cs[2], cs[3]
	pullOutput := "Trying to pull " + testImage + "...\n" +
		"Error: initializing source docker://" + testImage + ": pinging container registry quay.io: " +
		"Get \"https://quay.io/v2/\": dial tcp: lookup quay.io on 192.168.122.1:53: server misbehaving"
	for _, tc := range []struct {
		name string
		app  func(t *testing.T) *App
	}{
		{"splash", func(t *testing.T) *App {
			return newTestApp(t, Config{Checks: testChecks(), ReleaseImage: testImage})
		}},
		{"passing", func(t *testing.T) *App {
			return checksApp(t, passed(pull), passed(dns), passed(ping), passed(http))
		}},
		{"failing", func(t *testing.T) *App {
			return checksApp(t, failed(pull, pullOutput, "exit status 125"),
				failed(dns, ";; connection timed out; no servers could be reached", "exit status 1"),
				passed(ping),
				failed(http, "", "Get \"https://quay.io\": dial tcp: lookup quay.io: server misbehaving"))
		}},
		{"pending", func(t *testing.T) *App {
			return checksApp(t, failed(pull, pullOutput, "exit status 125"), passed(dns))
		}},
		{"countdown", func(t *testing.T) *App {
			a := checksApp(t, passed(pull), passed(dns), passed(ping), passed(http))
			a.checks.openCountdown()
			return a
		}},
	} {
		for _, s := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", tc.name, s.w, s.h), func(t *testing.T) {
				a := tc.app(t)
				golden(t, fmt.Sprintf("checks-%s-%dx%d", tc.name, s.w, s.h), drawText(t, a.pages, s.w, s.h))
			})
		}
	}
}

// checksConfig runs f's checks every few milliseconds; a countdown of a
// minute never ends during a test unless the test wants it to.
func checksConfig(f *fakeChecks) Config {
	return Config{Checks: f.checks(), ReleaseImage: testImage, CheckInterval: 20 * time.Millisecond, Countdown: time.Minute}
}

func TestChecksFlow(t *testing.T) {
	const countdown = "connectivity checks"

	t.Run("initial failure then recovery shows the countdown", func(t *testing.T) {
		f := newFakeChecks()
		f.set(CheckReleaseImagePull, errors.New("exit status 125"))
		r := runApp(t, checksConfig(f), 80, 24)
		defer r.quit(t)
		r.waitScreen(t, "✖ failed", "release image pull error: exit status 125", "Additional checks")
		f.set(CheckReleaseImagePull, nil)
		screen := r.waitScreen(t, countdown, "<Yes>", "<No>")
		if strings.Contains(screen, "Check Errors") {
			t.Errorf("the errors still show once the pull passed:\n%s", screen)
		}
	})

	t.Run("after a key the countdown does not come back", func(t *testing.T) {
		f := newFakeChecks()
		f.set(CheckReleaseImagePull, errors.New("exit status 125"))
		r := runApp(t, checksConfig(f), 80, 24)
		defer r.quit(t)
		r.waitScreen(t, "release image pull error")
		r.key(tcell.KeyTab, 0)
		r.waitScreen(t, "release image pull error")
		f.set(CheckReleaseImagePull, nil)
		r.waitScreen(t, "✓ passed")
		// Let the checks run several more times: no dialog.
		runs := r.runs(f, CheckReleaseImagePull)
		for r.runs(f, CheckReleaseImagePull) < runs+5 {
			time.Sleep(10 * time.Millisecond)
		}
		if screen := r.waitScreen(t, "✓ passed"); strings.Contains(screen, countdown) {
			t.Errorf("the countdown came back after a key:\n%s", screen)
		}
	})

	t.Run("pull failing during the countdown closes it", func(t *testing.T) {
		f := newFakeChecks()
		r := runApp(t, checksConfig(f), 80, 24)
		defer r.quit(t)
		r.waitScreen(t, countdown)
		f.set(CheckReleaseImagePull, errors.New("exit status 125"))
		screen := r.waitScreen(t, "release image pull error")
		if strings.Contains(screen, countdown) {
			t.Errorf("the countdown stayed open:\n%s", screen)
		}
		// It comes back when the pull passes again: nobody touched a key.
		f.set(CheckReleaseImagePull, nil)
		r.waitScreen(t, countdown)
	})

	t.Run("Yes stays on the checks page", func(t *testing.T) {
		f := newFakeChecks()
		r := runApp(t, checksConfig(f), 80, 24)
		defer r.quit(t)
		r.waitScreen(t, countdown)
		r.key(tcell.KeyEnter, 0) // <Yes> is focused
		screen := r.waitScreen(t, checksTitle, "<Quit>")
		if strings.Contains(screen, countdown) {
			t.Errorf("the countdown stayed open:\n%s", screen)
		}
	})

	t.Run("No ends the console without a dashboard", func(t *testing.T) {
		f := newFakeChecks()
		r := runApp(t, checksConfig(f), 80, 24)
		defer r.quit(t)
		r.waitScreen(t, countdown)
		r.key(tcell.KeyTab, 0)
		r.key(tcell.KeyEnter, 0)
		r.waitDone(t)
	})

	t.Run("No goes on to the dashboard and stops the checks", func(t *testing.T) {
		f := newFakeChecks()
		cfg := checksConfig(f)
		cfg.Source = SourceFunc(func(context.Context) Snapshot { return Snapshot{} })
		r := runApp(t, cfg, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, countdown)
		r.key(tcell.KeyTab, 0)
		r.key(tcell.KeyEnter, 0)
		deadline := time.Now().Add(10 * time.Second)
		for {
			var page string
			var stopped bool
			r.app.QueueUpdate(func() { page, stopped = r.current, r.checks.runCtx.Err() != nil })
			if page == pageDashboard {
				if !stopped {
					t.Error("the checks still run behind the dashboard")
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the console shows page %q, want %q", page, pageDashboard)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("countdown expiry ends the console", func(t *testing.T) {
		f := newFakeChecks()
		cfg := checksConfig(f)
		cfg.Countdown = 2 * time.Second
		r := runApp(t, cfg, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, countdown, "<No>")
		r.waitDone(t)
	})

	t.Run("Configure Network runs it and shows the network page", func(t *testing.T) {
		f := newFakeChecks()
		f.set(CheckReleaseImagePull, errors.New("exit status 125"))
		cfg := checksConfig(f)
		configured := make(chan struct{}, 1)
		cfg.ConfigureNetwork = func() error { configured <- struct{}{}; return nil }
		cfg.NetState = func(context.Context) (NetState, error) { return healthyNet(), nil }
		r := runApp(t, cfg, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, "release image pull error")
		r.key(tcell.KeyEnter, 0) // <Configure Network> has the focus
		r.waitScreen(t, networkTitle, "bond0.42 (vlan), default route")
		select {
		case <-configured:
		default:
			t.Fatal("ConfigureNetwork did not run")
		}
		r.key(tcell.KeyEscape, 0)
		r.waitScreen(t, checksTitle, "release image pull error")
	})
}

// runs is how often f's check id has run.
func (r *running) runs(f *fakeChecks, id CheckID) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[id]
}

// waitDone waits for Run to return by itself and checks that it returned
// nil.
func (r *running) waitDone(t *testing.T) {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
		r.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatalf("Run did not return; the screen shows:\n%s", screenText(r.sim))
	}
}

// waitScreen is waitFor that fails instead of hanging when the App has
// stopped: tview's QueueUpdate never returns then.
func (r *running) waitScreen(t *testing.T, texts ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var screen string
	for {
		got := make(chan string, 1)
		go r.app.QueueUpdate(func() { got <- screenText(r.sim) })
		select {
		case screen = <-got:
		case <-time.After(time.Second):
		}
		missing := false
		for _, s := range texts {
			if !strings.Contains(screen, s) {
				missing = true
				break
			}
		}
		if !missing {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q; it shows:\n%s", texts, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// quit stops the App and waits for Run to return, inside the test: the
// skeleton's cleanup stops it a second time, and so does Run's watch on
// t.Context(), which ends before cleanups run; a Stop racing with the
// end of tview's Run is a data race (Run clears its screen without the
// lock). After quit both find it stopped.
func (r *running) quit(t *testing.T) {
	t.Helper()
	r.app.Stop()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Errorf("Run did not return after Stop")
	}
}
