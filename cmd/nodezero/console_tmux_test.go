package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// The console in a real terminal: the built binary runs in a tmux pane of
// a tmux server of the test's own (its socket in a temporary directory, so
// a person's tmux is never touched), keys go in with send-keys and the
// screen comes back with capture-pane.

// tmuxConsole is `nodezero console` as the only process of a tmux pane.
type tmuxConsole struct {
	tb   testing.TB
	tmux string // the tmux command
	sock string // the private server's socket
	name string // the session
	// stderr is the file the console's stderr goes to: tcell draws on
	// /dev/tty, so a panic or a goroutine dump lands here, not on screen.
	stderr string
}

// tmuxConf keeps the pane the whole window (no status line), keeps a
// finished pane on screen so that its exit status can be read and its last
// screen logged, and passes Esc on without waiting for a sequence.
const tmuxConf = "set -g status off\nset -g remain-on-exit on\nset -s escape-time 0\n"

// startTmuxConsole runs bin with args ("console", flags…) in a cols×rows
// tmux pane with TERM=xterm-256color. The shell and env(1) exec, so the
// pane's process is the console itself. The server is killed at Cleanup.
func startTmuxConsole(tb testing.TB, cols, rows int, bin string, args ...string) *tmuxConsole {
	tb.Helper()
	dir := tb.TempDir()
	c := &tmuxConsole{tb: tb, tmux: needTool(tb, "tmux"), sock: filepath.Join(dir, "tmux.sock"),
		name: fmt.Sprintf("nodezero-%d", time.Now().UnixNano()), stderr: filepath.Join(dir, "console.stderr")}
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte(tmuxConf), 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := append([]string{"-f", conf, "new-session", "-d", "-s", c.name, "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows),
		"/bin/sh", "-c", `log=$1; shift; exec env TERM=xterm-256color "$@" 2>"$log"`, "sh", c.stderr}, bin)
	if _, err := c.run(append(cmd, args...)...); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _, _ = c.run("kill-server") })
	if got, want := c.display("#{pane_width}x#{pane_height}"), fmt.Sprintf("%dx%d", cols, rows); got != want {
		tb.Fatalf("tmux pane is %s, want %s", got, want)
	}
	return c
}

// run is one tmux command against the private server.
func (c *tmuxConsole) run(args ...string) (string, error) {
	cmd := exec.Command(c.tmux, append([]string{"-S", c.sock}, args...)...)
	// A tmux started from inside a person's tmux must not talk to theirs.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TMUX=") })
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// display expands a tmux format for the console's pane.
func (c *tmuxConsole) display(format string) string {
	c.tb.Helper()
	out, err := c.run("display-message", "-p", "-t", c.name, format)
	if err != nil {
		c.tb.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// screen is the pane's text, one line per row.
func (c *tmuxConsole) screen() string {
	c.tb.Helper()
	out, err := c.run("capture-pane", "-p", "-t", c.name)
	if err != nil {
		c.tb.Fatal(err)
	}
	return out
}

// styled is the pane's text with its attributes and colours as SGR
// escape sequences.
func (c *tmuxConsole) styled() string {
	c.tb.Helper()
	out, err := c.run("capture-pane", "-p", "-e", "-t", c.name)
	if err != nil {
		c.tb.Fatal(err)
	}
	return out
}

// sgrRE matches an SGR escape sequence and captures its parameters.
var sgrRE = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// coloured tells whether styled text (capture-pane -e) sets a foreground
// or background colour anywhere; bold, reverse and the default colours
// (39, 49) are no colour.
func coloured(styled string) bool {
	for _, m := range sgrRE.FindAllStringSubmatch(styled, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			switch {
			case n == 38 || n == 48: // 256-colour or RGB: the rest are its arguments
				return true
			case n >= 30 && n <= 37, n >= 40 && n <= 47, n >= 90 && n <= 97, n >= 100 && n <= 107:
				return true
			}
		}
	}
	return false
}

// keys sends tmux key names (Down, Enter, Escape, q, …), one at a time.
func (c *tmuxConsole) keys(keys ...string) {
	c.tb.Helper()
	for _, k := range keys {
		if _, err := c.run("send-keys", "-t", c.name, k); err != nil {
			c.tb.Fatal(err)
		}
	}
}

// pid is the pane's process: the console.
func (c *tmuxConsole) pid() int {
	c.tb.Helper()
	p, err := strconv.Atoi(c.display("#{pane_pid}"))
	if err != nil {
		c.tb.Fatalf("pane pid: %v", err)
	}
	return p
}

// waitScreen polls the screen until cond holds and returns that screen;
// past timeout it fails with the last screen.
func (c *tmuxConsole) waitScreen(what string, timeout time.Duration, cond func(screen string) bool) string {
	c.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := c.screen()
		if cond(s) {
			return s
		}
		if c.display("#{pane_dead}") == "1" {
			c.tb.Fatalf("console exited (%s) while waiting for %s; its last screen:\n%s\nits stderr:\n%s",
				c.exit(), what, s, c.stderrText())
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("timed out after %v waiting for %s; the screen:\n%s", timeout, what, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quit presses q and waits for the console to exit; it fails unless the
// exit status is 0.
func (c *tmuxConsole) quit(timeout time.Duration) {
	c.tb.Helper()
	last := c.screen()
	c.keys("q")
	deadline := time.Now().Add(timeout)
	// tmux marks the pane dead when the terminal closes and learns the
	// exit status when it reaps the process, a moment later.
	for c.exit() == "" {
		if time.Now().After(deadline) {
			c.tb.Fatalf("console still running %v after q; the screen:\n%s\nits goroutines:\n%s", timeout, c.screen(), c.goroutines())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := c.exit(); st != "status 0" {
		c.tb.Errorf("console exit after q: %s, want status 0; the screen before q:\n%s\nits stderr:\n%s", st, last, c.stderrText())
	}
}

// stderrText is what the console wrote to stderr.
func (c *tmuxConsole) stderrText() string {
	b, err := os.ReadFile(c.stderr)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// goroutines makes a hung console write its goroutines to stderr and exit
// (SIGQUIT, the Go runtime's dump) and returns them.
func (c *tmuxConsole) goroutines() string {
	c.tb.Helper()
	pid := c.pid()
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		return fmt.Sprintf("(SIGQUIT to %d: %v)", pid, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.exit() == "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return c.stderrText()
}

// exit is "status N" or "signal N" once the console has exited and tmux
// has reaped it, else "".
func (c *tmuxConsole) exit() string {
	c.tb.Helper()
	st := c.display("#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}:#{pid}")
	f := strings.Split(st, ":")
	switch {
	case len(f) != 4 || f[0] != "1":
		return ""
	case f[1] != "":
		return "status " + f[1]
	case f[2] != "":
		return "signal " + f[2]
	}
	// The pane's terminal closed but tmux has not reaped the console: a
	// tmux built with libutempter loses a SIGCHLD that comes while
	// utempter's own handler is in, as it is when the pane closes
	// (tmux/tmux#311), and the console stays a zombie. Another SIGCHLD to
	// our server makes it reap.
	if pid, err := strconv.Atoi(f[3]); err == nil {
		_ = syscall.Kill(pid, syscall.SIGCHLD)
	}
	return ""
}

// TestConsoleInTmux drives the real console against a running service with
// three agents, one of them on undersized hardware: the host table, the
// cluster's status and failing validation, a host's detail view, the
// service restarting under it, q; then the same at 80×24 without colour.
func TestConsoleInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the console against three registering agents under tmux takes seconds")
	}
	needTool(t, "tmux")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	svc := startService(t, dir, freePort(t))
	c, ie := registerCluster(t, ctx, svc)
	names := []string{"master-0", "master-1", "undersized"}
	for i, tree := range names {
		startAgent(t, svc, ie.ID, tree, fmt.Sprintf("127.0.0.%d", 30+i))
	}
	var small *wire.Host
	waitFor(t, "three hosts, the undersized one insufficient", 2*time.Minute, func() (bool, string) {
		hs, err := svc.user.ListHosts(ctx, ie.ID)
		if err != nil {
			return false, err.Error()
		}
		small = hostsByName(hs)["undersized"]
		return len(hs) == 3 && small != nil && small.Status == wire.HostStatusInsufficient, fmt.Sprint(hs)
	})

	tokenFile := filepath.Join(dir, "auth", "user.token")
	hwRoot, err := filepath.Abs(filepath.Join("..", "..", "testdata", "hw", "master-0"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"console", "--root", t.TempDir(), "--url", "http://" + svc.addr, "--token-file", tokenFile,
		"--no-checks", "--interval", "1s", "--hardware-root", hwRoot}
	con := startTmuxConsole(t, 120, 40, nodezeroBinary(t), args...)

	// The dashboard: the host table with every host, the cluster's status
	// word and a failing cluster validation with its message. The
	// service's view is read again for each look, since it moves on while
	// the console catches up.
	var cl *wire.Cluster
	screen := con.waitScreen("the host table, the cluster status and a failing validation", time.Minute, func(s string) bool {
		var err error
		if cl, err = svc.user.GetCluster(ctx, c.ID); err != nil {
			return false
		}
		return isDashboard(s, names) && strings.Contains(s, "Status: "+string(cl.Status)) && anyFailingShown(t, s, cl.ValidationsInfo)
	})

	if !coloured(con.styled()) {
		t.Errorf("the console on xterm-256color draws without colour:\n%q", con.styled())
	}

	// The console runs on master-0's hardware (--hardware-root): its row
	// carries the this-host mark.
	rows, _ := tableRows(screen, names)
	if mark, _, _ := strings.Cut(rows[0], "master-0"); !strings.Contains(mark, "*") {
		t.Errorf("master-0's row %q has no this-host mark", rows[0])
	}

	// The undersized host's detail view, by arrow keys from the table: its
	// failing memory validation with the service's message (read again for
	// each look: the message names the role, which the service may change).
	openHost(t, con, "undersized", names)
	var msg string
	con.waitScreen("the undersized host's failing memory validation", 30*time.Second, func(s string) bool {
		h, err := svc.user.GetHost(ctx, ie.ID, small.ID)
		if err != nil {
			return false
		}
		v := validations(t, h.ValidationsInfo)["has-memory-for-role"]
		msg = v[1]
		return v[0] == "failure" && msg != "" && strings.Contains(s, "✖ has-memory-for-role: "+msg)
	})
	con.keys("Escape")
	con.waitScreen("the dashboard again", 30*time.Second, func(s string) bool {
		return isDashboard(s, names)
	})

	// The service goes away and comes back on the same address with the
	// same data: the console says so, then shows the hosts again.
	svc.kill()
	con.waitScreen(`"reconnecting"`, time.Minute, func(s string) bool {
		return strings.Contains(strings.ToLower(s), "reconnecting")
	})
	svc = startService(t, dir, svc.addr)
	con.waitScreen("the dashboard after the service came back", time.Minute, func(s string) bool {
		return !strings.Contains(strings.ToLower(s), "reconnecting") && isDashboard(s, names)
	})
	con.quit(30 * time.Second)

	// 80×24 on a terminal without colour.
	mono := startTmuxConsole(t, 80, 24, nodezeroBinary(t), append(args, "--mono", "yes")...)
	mono.waitScreen("the host table at 80×24", time.Minute, func(s string) bool {
		return isDashboard(s, names)
	})
	if styled := mono.styled(); coloured(styled) {
		t.Errorf("the console with --mono yes draws in colour:\n%q", styled)
	}
	mono.quit(30 * time.Second)
}

// anyFailingShown tells whether some failing validation of a
// validations_info document is on screen, marked failing, with its
// message.
func anyFailingShown(t *testing.T, screen, info string) bool {
	t.Helper()
	if info == "" {
		return false
	}
	for _, v := range validations(t, info) {
		if v[0] == "failure" && v[1] != "" && strings.Contains(screen, "✖ "+v[1]) {
			return true
		}
	}
	return false
}

// tableRows returns the screen's host table rows: the lines under the
// header line (HOST, ROLE, STATUS), as many as names, when each holds the
// name of its place — the table lists hosts sorted by name. ok is false
// when the screen shows no such table.
func tableRows(screen string, names []string) (rows []string, ok bool) {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if !strings.Contains(strings.Join(strings.Fields(l), " "), "HOST ROLE STATUS") {
			continue
		}
		if i+len(names) >= len(lines) {
			return nil, false
		}
		sorted := slices.Sorted(slices.Values(names))
		rows = lines[i+1 : i+1+len(sorted)]
		for j, n := range sorted {
			if !strings.Contains(rows[j], n) {
				return nil, false
			}
		}
		return rows, true
	}
	return nil, false
}

// isDashboard tells whether the screen shows the host table with names.
func isDashboard(screen string, names []string) bool {
	_, ok := tableRows(screen, names)
	return ok
}

// openHost selects host name in the table with the arrow keys — up to the
// first row, down to the host's — and opens its detail view with Enter.
func openHost(t *testing.T, con *tmuxConsole, name string, names []string) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(names))
	row := slices.Index(sorted, name)
	if row < 0 {
		t.Fatalf("%s is not among %v", name, names)
	}
	for range sorted {
		con.keys("Up")
	}
	for range row {
		con.keys("Down")
	}
	con.keys("Enter")
	con.waitScreen("the detail view of "+name, 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Host "+name) && !isDashboard(s, names)
	})
}

// TestConsoleEnvTokenInTmux: `nodezero console --url U` with the user
// token only in USER_AUTH_TOKEN (no --token-file, no rendezvous-host.env)
// reaches the service and shows its cluster; the host has no release image
// to check, so the dashboard comes up anyway with that check explained.
func TestConsoleEnvTokenInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the console against a service under tmux takes seconds")
	}
	needTool(t, "tmux")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	svc := startService(t, dir, freePort(t))
	c, _ := registerCluster(t, ctx, svc)
	// env(1) takes the variable before the command: the pane runs
	// env TERM=… USER_AUTH_TOKEN=… nodezero console ….
	con := startTmuxConsole(t, 120, 40, "USER_AUTH_TOKEN="+svc.token["user"], nodezeroBinary(t),
		"console", "--root", t.TempDir(), "--url", "http://"+svc.addr, "--interval", "1s")
	screen := con.waitScreen("the cluster's status and the checks' notice", time.Minute, func(s string) bool {
		flat := strings.Join(strings.Fields(strings.NewReplacer("║", " ").Replace(s)), " ")
		return strings.Contains(s, c.Name) && strings.Contains(s, "Status: ") &&
			strings.Contains(flat, "Connectivity checks not run: no release image to check")
	})
	for _, bad := range []string{"No cluster registered yet", "econnecting", "no such file"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the console shows %q:\n%s", bad, screen)
		}
	}
	con.quit(30 * time.Second)
}
