package notify

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// listen opens a real unix datagram socket as systemd's notify socket.
func listen(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return c
}

func recv(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("no datagram: %v", err)
	}
	return string(buf[:n])
}

func TestMessagesOnTheSocket(t *testing.T) {
	c := listen(t)
	n := New(nil)
	n.Ready()
	n.Status("Waiting for the configuration\nsecond line dropped")
	n.Status("Waiting for the configuration") // same line: not sent again
	n.Status("This host (10.0.0.2) is the rendezvous host.")
	n.Stopping()
	want := []string{
		"READY=1",
		"STATUS=Waiting for the configuration",
		"STATUS=This host (10.0.0.2) is the rendezvous host.",
		"STOPPING=1",
	}
	for _, w := range want {
		if got := recv(t, c); got != w {
			t.Fatalf("got %q, want %q", got, w)
		}
	}
}

func TestWatchdogPingsOnlyWhileHealthy(t *testing.T) {
	c := listen(t)
	t.Setenv("WATCHDOG_USEC", "40000") // 40 ms: pings every 20 ms
	n := New(nil)
	var mu sync.Mutex
	healthy := true
	calls := 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Watchdog(ctx, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if !healthy {
				return context.DeadlineExceeded
			}
			return nil
		})
	}()
	if got := recv(t, c); got != "WATCHDOG=1" {
		t.Fatalf("got %q, want WATCHDOG=1", got)
	}
	mu.Lock()
	healthy = false
	seen := calls
	mu.Unlock()
	// Wait until the unhealthy check has run twice, then no ping may be
	// waiting beyond the one possibly sent before the switch.
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n >= seen+2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	drain(c)
	mu.Lock()
	at := calls
	mu.Unlock()
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n >= at+2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := drain(c); len(got) != 0 {
		t.Fatalf("pinged while unhealthy: %q", got)
	}
	mu.Lock()
	healthy = true
	mu.Unlock()
	if got := recv(t, c); got != "WATCHDOG=1" {
		t.Fatalf("after recovery got %q, want WATCHDOG=1", got)
	}
	cancel()
	<-done
}

// TestWatchdogOffWithoutSystemd: outside systemd Watchdog returns at once
// without checking health, and messages are not sent, without an error or
// a warning.
func TestWatchdogOffWithoutSystemd(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	t.Setenv("NOTIFY_SOCKET", "")
	var log strings.Builder
	n := New(slog.New(slog.NewTextHandler(&log, nil)))
	type result struct {
		state string
		sent  bool
		err   error
	}
	var results []result
	send := n.send
	n.send = func(state string) (bool, error) {
		sent, err := send(state)
		results = append(results, result{state, sent, err})
		return sent, err
	}

	checks := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A context that never ends: only the missing watchdog lets it return.
		n.Watchdog(context.Background(), func(context.Context) error { checks++; return nil })
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Watchdog without WATCHDOG_USEC did not return")
	}
	if checks != 0 {
		t.Errorf("health checked %d times without a watchdog, want 0", checks)
	}

	n.Ready()
	n.Status("Waiting for the configuration")
	want := []result{{"READY=1", false, nil}, {"STATUS=Waiting for the configuration", false, nil}}
	if diff := cmp.Diff(want, results, cmp.AllowUnexported(result{}), cmpopts.EquateErrors()); diff != "" {
		t.Errorf("messages without a socket (-want +got):\n%s", diff)
	}
	if log.Len() != 0 {
		t.Errorf("logged without systemd: %q, want nothing", log.String())
	}
}

// drain returns every datagram already queued.
func drain(c *net.UnixConn) []string {
	var out []string
	buf := make([]byte, 4096)
	for {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			return out
		}
		out = append(out, strings.Clone(string(buf[:n])))
	}
}
