package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nodezero/nodezero/watch"
)

// The command's tests: its flags, and one run against the real service.
// What wait-for prints through an install, package watch's tests say.

// wfBuffer is a log buffer a wait-for writes while a test reads.
type wfBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *wfBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *wfBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// wfContainsInOrder fails unless each of want is part of a line of got,
// in that order.
func wfContainsInOrder(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	i := 0
	for _, line := range got {
		if i < len(want) && strings.Contains(line, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("%s: %q missing or out of order; got:\n%s", what, want[i], strings.Join(got, "\n"))
	}
}

// wfRunWait runs `nodezero wait-for` with args in the background; the test
// ends it if it is still running.
func wfRunWait(t *testing.T, args ...string) (out *wfBuffer, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &wfBuffer{}
	ch := make(chan error, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		ch <- runWaitFor(ctx, args, io.Discard, out)
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return out, ch
}

// wfResult waits for a background wait-for to end.
func wfResult(t *testing.T, done <-chan error, out *wfBuffer) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("wait-for did not end within a minute; output:\n%s", out)
		return nil
	}
}

func TestWaitForArgs(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "watcher.token")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"--url", "http://127.0.0.1:1"}, "which target?"},
		{"unknown target", []string{"cluster-complete", "--url", "http://127.0.0.1:1"}, `unknown target "cluster-complete"`},
		{"no node zero", []string{"bootstrap-complete", "--token", "t"}, "give --url or --rendezvous-ip"},
		{"both addresses", []string{"bootstrap-complete", "--url", "http://127.0.0.1:1", "--rendezvous-ip", "127.0.0.1"}, "--url and --rendezvous-ip: give one"},
		{"bad ip", []string{"bootstrap-complete", "--rendezvous-ip", "node0"}, `--rendezvous-ip "node0" is not an IP address`},
		{"bad url", []string{"bootstrap-complete", "--url", "node0:8090"}, "want http(s)://host[:port]"},
		{"both tokens", []string{"bootstrap-complete", "--url", "http://127.0.0.1:1", "--token", "t", "--token-file", tokenFile}, "--token and --token-file: give one"},
		{"missing token file", []string{"bootstrap-complete", "--url", "http://127.0.0.1:1", "--token-file", tokenFile}, "--token-file: open"},
		{"zero interval", []string{"bootstrap-complete", "--url", "http://127.0.0.1:1", "--interval", "0s"}, "want an interval above 0"},
		{"two targets", []string{"bootstrap-complete", "install-complete", "--url", "http://127.0.0.1:1"}, "unexpected arguments"},
		{"bad level", []string{"bootstrap-complete", "--url", "http://127.0.0.1:1", "--log-level", "loud"}, `--log-level "loud"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := runWaitFor(context.Background(), tc.args, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("runWaitFor(%q) = %v, want %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestWaitURL(t *testing.T) {
	for _, tc := range []struct{ url, ip, want string }{
		{"http://192.168.111.80:8090", "", "http://192.168.111.80:8090"},
		{"", "192.168.111.80", "http://192.168.111.80:8090"},
		{"", "fd2e:6f44:5dd8:c956::50", "http://[fd2e:6f44:5dd8:c956::50]:8090"},
	} {
		if got, err := waitURL(tc.url, tc.ip); err != nil || got != tc.want {
			t.Errorf("waitURL(%q, %q) = %q, %v, want %q", tc.url, tc.ip, got, err, tc.want)
		}
	}
}

// TestWaitForFlags: the target before, between or after the flags; an
// install directory gives the address, token, CA, kubeconfig and password
// file, and the flags override it.
func TestWaitForFlags(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{rendezvousIPFile: "192.168.111.80\n", watcherTokenFile: "dir-token\n",
		"tls/api.crt": "x", "tls/ca.crt": "x", kubeconfigFile: "x", kubeadminFile: "x"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want watch.WaitOptions
	}{
		{"target first", []string{"bootstrap-complete", "--url", "http://127.0.0.1:8090", "--token", "t", "--interval", "5ms"},
			watch.WaitOptions{Target: watch.BootstrapComplete, URL: "http://127.0.0.1:8090", Token: "t", Interval: 5 * time.Millisecond}},
		{"target last", []string{"--url", "http://127.0.0.1:8090", "--token", "t", "--interval", "5ms", "--timeout", "300ms", "install-complete"},
			watch.WaitOptions{Target: watch.InstallComplete, URL: "http://127.0.0.1:8090", Token: "t", Interval: 5 * time.Millisecond, Timeout: 300 * time.Millisecond}},
		{"target between", []string{"--rendezvous-ip", "192.168.111.80", "install-complete", "--token", "t"},
			watch.WaitOptions{Target: watch.InstallComplete, URL: "http://192.168.111.80:8090", Token: "t", Interval: watch.DefaultInterval}},
		{"install directory", []string{"install-complete", "--dir", dir},
			watch.WaitOptions{Target: watch.InstallComplete, URL: "https://192.168.111.80:8090", Token: "dir-token", Interval: watch.DefaultInterval,
				CACert: filepath.Join(dir, "tls/ca.crt"), Kubeconfig: filepath.Join(dir, kubeconfigFile), PasswordFile: filepath.Join(dir, kubeadminFile)}},
		{"install directory, flags first", []string{"install-complete", "--dir", dir, "--url", "http://127.0.0.1:8090", "--token", "t", "--kubeconfig", "/k", "--cacert", "/ca.crt"},
			watch.WaitOptions{Target: watch.InstallComplete, URL: "http://127.0.0.1:8090", Token: "t", Interval: watch.DefaultInterval,
				CACert: "/ca.crt", Kubeconfig: "/k", PasswordFile: filepath.Join(dir, kubeadminFile)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := waitForOptions(tc.args, io.Discard)
			if err != nil {
				t.Fatalf("waitForOptions(%q): %v", tc.args, err)
			}
			if got.Log == nil {
				t.Error("no logger")
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(watch.WaitOptions{}, "Log")); diff != "" {
				t.Errorf("waitForOptions(%q) (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

// TestWaitForCommand runs `nodezero wait-for` against the real service: the
// watcher token it is given is the one it sends, its lines are at the
// level asked for, and the run ends with the exit status of its phase
// (5) after --timeout; a token the service refuses ends it at once.
func TestWaitForCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs the service")
	}
	ctx := context.Background()
	s := startService(t, t.TempDir(), "127.0.0.1:0")
	registerCluster(t, ctx, s)
	url := "http://" + s.addr

	var out wfBuffer
	err := runWaitFor(ctx, []string{"--url", url, "--token", s.token["watcher"], "--interval", "5ms", "--timeout", "300ms",
		"--log-level", "debug", "bootstrap-complete"}, io.Discard, &out)
	var st interface{ ExitStatus() int }
	if !errors.As(err, &st) || st.ExitStatus() != 5 || !strings.Contains(err.Error(), "bootstrap failed to complete: timed out after") {
		t.Fatalf("wait-for = %v (%T), want exit status 5 after the timeout\n%s", err, err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	wfContainsInOrder(t, "wait-for", lines,
		`level=info msg="User input is required to continue cluster installation"`,
		`level=debug msg="Cluster validation: The pull secret is set."`,
		`level=error msg="Bootstrap failed to complete: timed out after`)
	wfContainsInOrder(t, "wait-for", lines, `level=warning msg="Cluster validation: The cluster must have exactly 3 dedicated control plane nodes.`)

	out = wfBuffer{}
	err = runWaitFor(ctx, []string{"bootstrap-complete", "--url", url, "--token", s.token["user"], "--interval", "5ms"}, io.Discard, &out)
	if !errors.Is(err, watch.ErrRefused) || errors.As(err, &st) || !strings.Contains(err.Error(), "answered 403") {
		t.Errorf("wait-for with the user token = %v, want the refusal (403) without an exit status", err)
	}
}
