package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/tui"
)

// TestConfigWithoutReleaseImage: a host with neither a ClusterImageSet nor
// a payload still gets its dashboard; the checks are left out and the
// dashboard's notice says why and what to give.
func TestConfigWithoutReleaseImage(t *testing.T) {
	root := t.TempDir()
	cfg, err := tuiConfig(Options{Root: root, URL: "http://127.0.0.1:1", Token: "t"})
	if err != nil {
		t.Fatalf("tuiConfig() = %v, want the dashboard without checks", err)
	}
	if cfg.Source == nil || len(cfg.Checks) > 0 {
		t.Errorf("tuiConfig(): source %v, %d checks; want a source and no checks", cfg.Source, len(cfg.Checks))
	}
	for _, want := range []string{"Connectivity checks not run", filepath.Join(root, configimage.ClusterImageSetPath), "--release-image", "--no-checks"} {
		if !strings.Contains(cfg.Notice, want) {
			t.Errorf("notice %q lacks %q", cfg.Notice, want)
		}
	}
}

// TestConfigTokenFile: a token file that is missing or empty is an error
// naming it.
func TestConfigTokenFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.token")
	writeFile(t, empty, "\n")
	for _, tc := range []struct{ name, file, want string }{
		{"missing", filepath.Join(dir, "auth", "user.token"), filepath.Join(dir, "auth", "user.token") + " does not exist"},
		{"empty", empty, empty + " is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tuiConfig(Options{Root: dir, NoChecks: true, URL: "http://127.0.0.1:1", TokenFile: tc.file})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("tuiConfig(--token-file %s) = %v, want an error with %q", tc.file, err, tc.want)
			}
		})
	}
}

// TestSourceToken: the token the console sends is the token file's, else
// the one of the environment (Options.Token), else rendezvous-host.env's;
// with none of them the source says what is missing (no "reconnecting",
// no time: it never had data) instead of asking.
func TestSourceToken(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("[]"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "user.token")
	writeFile(t, tokenFile, "from-file\n")
	withEnv := t.TempDir()
	writeFile(t, filepath.Join(withEnv, onhost.RendezvousEnvPath),
		"NODE_ZERO_IP=127.0.0.1\nSERVICE_BASE_URL="+srv.URL+"/\nIMAGE_SERVICE_BASE_URL="+srv.URL+"/\nAGENT_AUTH_TOKEN=agent\nUSER_AUTH_TOKEN=from-env-file\nWORKFLOW_TYPE=install\n")

	for _, tc := range []struct {
		name string
		o    Options
		want string // the Authorization header; "" when nothing may be sent
	}{
		{"token file", Options{Root: dir, URL: srv.URL, TokenFile: tokenFile, Token: "from-environment"}, "from-file"},
		{"environment", Options{Root: dir, URL: srv.URL, Token: "from-environment"}, "from-environment"},
		{"rendezvous-host.env", Options{Root: withEnv}, "from-env-file"},
		{"none", Options{Root: dir, URL: srv.URL}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			tc.o.NoChecks = true
			cfg, err := tuiConfig(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			snap := cfg.Source.Snapshot(context.Background())
			mu.Lock()
			got := seen
			mu.Unlock()
			if tc.want == "" {
				var se *tui.SetupError
				if !errors.As(snap.Err, &se) || !strings.Contains(se.Reason, "USER_AUTH_TOKEN") ||
					!strings.Contains(se.Reason, filepath.Join(dir, onhost.RendezvousEnvPath)) || !snap.At.IsZero() || len(got) > 0 {
					t.Errorf("no token: snapshot err %v at %v after requests %q; want a SetupError naming USER_AUTH_TOKEN and the env file, no time, no request", snap.Err, snap.At, got)
				}
				return
			}
			if snap.Err != nil {
				t.Fatalf("Snapshot() err = %v", snap.Err)
			}
			if len(got) == 0 || got[0] != tc.want {
				t.Errorf("Authorization sent = %q, want the token %q", got, tc.want)
			}
		})
	}
}

// notifyWriter is a buffer that says when something was written.
type notifyWriter struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestAwaitConfig: on a factory-image host before its config image, the
// console shows the status lines (the one asking for the config image),
// not checks that cannot pass; once the configuration is there it shows
// them once more and hands over to the checks and the dashboard.
func TestAwaitConfig(t *testing.T) {
	root := t.TempDir()
	board := issue.NewBoard(root)
	if _, err := board.Set(context.Background(), issue.KeyCheckConfigImage, issue.LightRed, "Insert or mount config image to start cluster installation"); err != nil {
		t.Fatal(err)
	}
	w := &notifyWriter{wrote: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() { done <- awaitConfig(context.Background(), root, "test", w, 10*time.Millisecond) }()
	<-w.wrote
	if out := w.String(); !strings.Contains(out, "Insert or mount config image") {
		t.Fatalf("before the config image the console shows:\n%s\nwant the line asking for it", out)
	}
	if _, err := board.Set(context.Background(), issue.KeyCheckConfigImage, issue.LightGreen, "Config image loaded"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, onhost.RendezvousEnvPath), "NODE_ZERO_IP=10.0.0.10\n")
	// Configured, it goes on until the host has decided whether it is
	// node zero.
	select {
	case err := <-done:
		t.Fatalf("awaitConfig returned (%v) before the rendezvous line", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := board.Set(context.Background(), issue.KeyRendezvousHost, issue.None, "This host (10.0.0.10) is the rendezvous host."); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("awaitConfig = %v", err)
	}
	for _, want := range []string{"Config image loaded", "This host (10.0.0.10) is the rendezvous host."} {
		if out := w.String(); !strings.Contains(out, want) {
			t.Errorf("once configured the console shows:\n%s\nwant %q", out, want)
		}
	}
	// A configured host goes straight on.
	w2 := &notifyWriter{wrote: make(chan struct{}, 1)}
	if err := awaitConfig(context.Background(), root, "test", w2, time.Hour); err != nil || w2.String() != "" {
		t.Errorf("a configured host: awaitConfig = %v, wrote %q; want nil and nothing", err, w2.String())
	}
}
