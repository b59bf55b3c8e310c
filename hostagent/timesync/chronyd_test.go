package timesync

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// startChronyd runs a chronyd of the test's own: it never touches the
// system clock (-x), serves no NTP (port 0), takes commands only on a unix
// socket in a temp dir and has no sources until the step adds them.
func startChronyd(t *testing.T) (sock string) {
	t.Helper()
	chronyd := needTool(t, "chronyd")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("chronyd test needs root in CI")
		}
		t.Skip("chronyd test needs root")
	}
	// chronyd refuses a socket directory others can enter.
	dir := filepath.Join(t.TempDir(), "chrony")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(dir, "chronyd.sock")
	conf := filepath.Join(dir, "chrony.conf")
	text := fmt.Sprintf("bindcmdaddress %s\ncmdport 0\nport 0\npidfile %s\n", sock, filepath.Join(dir, "chronyd.pid"))
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, chronyd, "-d", "-x", "-u", "root", "-f", conf)
	logf, err := os.Create(filepath.Join(dir, "chronyd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chronyd: %v", err)
	}
	var wg sync.WaitGroup
	exited := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(exited)
		_ = cmd.Wait() // killed by cancel at cleanup
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("chronyd log:\n%s", b)
		}
	})
	// Wait for the command socket; the deadline only bounds a hang.
	deadline := time.After(time.Minute)
	for {
		if _, err := os.Stat(sock); err == nil {
			return sock
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-exited:
			t.Fatal("chronyd exited before opening its command socket")
		case <-deadline:
			t.Fatal("chronyd command socket never appeared")
		}
	}
}

func TestStepChronyd(t *testing.T) {
	chronyc := needTool(t, "chronyc")
	sock := startChronyd(t)
	srv := startSNTP(t, 1, 0)
	step := Step(Options{Chronyc: []string{chronyc, "-h", sock}, Port: srv.port()})
	args := []string{`{"ntp_source":"127.0.0.1"}`}

	// The first run adds the source; chronyd needs a few iburst samples
	// before it selects it, so ask again (each run finding the source
	// present) until it is synced. The deadline only bounds a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var last string
	for {
		out, stderr, code := step(ctx, args)
		if code != 0 {
			t.Fatalf("step exit %d, stderr %q", code, stderr)
		}
		var got wire.NTPSynchronizationResponse
		if err := wire.DecodeEmbedded(out, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.NTPSources) != 1 || got.NTPSources[0].SourceName != "127.0.0.1" {
			t.Fatalf("step output = %s, want exactly source 127.0.0.1", out)
		}
		if got.NTPSources[0].SourceState == wire.SourceStateSynced {
			return
		}
		last = out
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			t.Fatalf("chronyd never synced to the test server; last output %s", last)
		}
	}
}
