package tui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
)

func TestParseRendezvousIP(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for an error
	}{
		{"192.168.111.80", "192.168.111.80"},
		{"  192.168.111.80 ", "192.168.111.80"},
		{"fd2e:6f44:5dd8:c956::50", "fd2e:6f44:5dd8:c956::50"},
		{"::ffff:10.0.0.1", "10.0.0.1"},
		{"fe80::1%eth0", "fe80::1%eth0"},
		{"", ""},
		{"192.168.111", ""},
		{"master-0", ""},
		{"0.0.0.0", ""},
		{"::", ""},
		{"224.0.0.1", ""},
		{"10.0.0.1/24", ""},
	} {
		got, err := parseRendezvousIP(tc.in)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("parseRendezvousIP(%q) = %v, want an error", tc.in, got)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("parseRendezvousIP(%q) = %v, %v, want %s", tc.in, got, err, tc.want)
		}
	}
	_, err := parseRendezvousIP("")
	if want := "The IP address <blank> is not a valid IPv4 or IPv6 address"; err == nil || err.Error() != want {
		t.Errorf("parseRendezvousIP(\"\") error = %v, want %q", err, want)
	}
	_, err = parseRendezvousIP("10.0.0")
	if want := "The IP address 10.0.0 is not a valid IPv4 or IPv6 address"; err == nil || err.Error() != want {
		t.Errorf("parseRendezvousIP(\"10.0.0\") error = %v, want %q", err, want)
	}
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestRendezvousCandidates(t *testing.T) {
	in := addrs("127.0.0.1", "::1", "fd2e::14", "192.168.111.20", "fe80::1", "169.254.3.4",
		"::ffff:172.22.0.10", "192.168.111.20", "0.0.0.0", "ff02::1", "2001:db8::7")
	want := addrs("192.168.111.20", "172.22.0.10", "fd2e::14", "2001:db8::7")
	if diff := cmp.Diff(want, rendezvousCandidates(in), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("rendezvousCandidates (-want +got):\n%s", diff)
	}
	if got := rendezvousCandidates(nil); len(got) != 0 {
		t.Errorf("rendezvousCandidates(nil) = %v, want none", got)
	}
}

func TestRendezvousTexts(t *testing.T) {
	a := netip.MustParseAddr("192.168.111.80")
	for _, tc := range []struct{ got, want string }{
		{savedText(a, false), "Successfully saved 192.168.111.80 as the rendezvous node IP."},
		{savedText(a, true), "Successfully saved 192.168.111.80 as the rendezvous node IP. " +
			"Enter 192.168.111.80 as the rendezvous node IP on the other nodes that will form the cluster."},
		{checkingText(a), "Checking connectivity to 192.168.111.80"},
		{saveErrorText(errors.New("disk full")), "Error saving rendezvous IP address to /etc/assisted/rendezvous-host.env: disk full"},
		{prefilledText(a, 20*time.Second), "Rendezvous IP has been set to 192.168.111.80.\n\n" +
			"Press <Modify> to change it, or <Quit> to exit.\n\nThis prompt will automatically exit in 20 seconds."},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestRenderRendezvousEnv(t *testing.T) {
	a := netip.MustParseAddr("fd2e::50")
	for _, tc := range []struct {
		name    string
		tmpl    []byte
		want    string
		wantErr bool
	}{
		{"no template", nil, "NODE_ZERO_IP=fd2e::50\n", false},
		{"agent's template", []byte("NODE_ZERO_IP={{.RendezvousIP}}\nSERVICE_BASE_URL=http://[{{.RendezvousIP}}]:8090/\n"),
			"NODE_ZERO_IP=fd2e::50\nSERVICE_BASE_URL=http://[fd2e::50]:8090/\n", false},
		{"already rendered: kept", []byte("NODE_ZERO_IP=10.0.0.1\n"), "NODE_ZERO_IP=10.0.0.1\n", false},
		{"broken template", []byte("NODE_ZERO_IP={{.RendezvousIP"), "", true},
		{"unknown field", []byte("X={{.NodeZero}}"), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderRendezvousEnv(tc.tmpl, a)
			if (err != nil) != tc.wantErr {
				t.Fatalf("renderRendezvousEnv error = %v, want error %v", err, tc.wantErr)
			}
			if string(got) != tc.want {
				t.Errorf("renderRendezvousEnv = %q, want %q", got, tc.want)
			}
		})
	}
}

const envTemplate = "NODE_ZERO_IP={{.RendezvousIP}}\nSERVICE_BASE_URL=http://{{.RendezvousIP}}:8090/\n"

// rendezvousRoot is a host root with /etc/assisted holding files.
func rendezvousRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "etc", "assisted")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func readEnv(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "etc", "assisted", "rendezvous-host.env"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveRendezvousIP(t *testing.T) {
	a := netip.MustParseAddr("192.168.111.80")
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"from the template", map[string]string{
			"rendezvous-host.env.template": envTemplate,
			"rendezvous-host.env":          "NODE_ZERO_IP=10.9.9.9\n",
		}, "NODE_ZERO_IP=192.168.111.80\nSERVICE_BASE_URL=http://192.168.111.80:8090/\n"},
		{"the env file as its template", map[string]string{"rendezvous-host.env": envTemplate},
			"NODE_ZERO_IP=192.168.111.80\nSERVICE_BASE_URL=http://192.168.111.80:8090/\n"},
		{"no file at all", nil, "NODE_ZERO_IP=192.168.111.80\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := rendezvousRoot(t, tc.files)
			if err := saveRendezvousIP(root, a); err != nil {
				t.Fatalf("saveRendezvousIP: %v", err)
			}
			if got := readEnv(t, root); got != tc.want {
				t.Errorf("rendezvous-host.env = %q, want %q", got, tc.want)
			}
			fi, err := os.Stat(filepath.Join(root, "etc", "assisted", "rendezvous-host.env"))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("rendezvous-host.env mode = %v, want 0644", fi.Mode().Perm())
			}
			entries, err := os.ReadDir(filepath.Join(root, "etc", "assisted"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}

	t.Run("no directory at all", func(t *testing.T) {
		root := t.TempDir()
		if err := saveRendezvousIP(root, a); err != nil {
			t.Fatalf("saveRendezvousIP: %v", err)
		}
		if got, want := readEnv(t, root), "NODE_ZERO_IP=192.168.111.80\n"; got != want {
			t.Errorf("rendezvous-host.env = %q, want %q", got, want)
		}
	})
	t.Run("broken template: nothing written", func(t *testing.T) {
		root := rendezvousRoot(t, map[string]string{
			"rendezvous-host.env.template": "{{.RendezvousIP",
			"rendezvous-host.env":          "NODE_ZERO_IP=10.9.9.9\n",
		})
		if err := saveRendezvousIP(root, a); err == nil {
			t.Fatal("saveRendezvousIP succeeded with a broken template")
		}
		if got := readEnv(t, root); got != "NODE_ZERO_IP=10.9.9.9\n" {
			t.Errorf("rendezvous-host.env = %q, want it untouched", got)
		}
	})
	t.Run("etc/assisted is a file", func(t *testing.T) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "etc", "assisted"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := saveRendezvousIP(root, a); err == nil {
			t.Fatal("saveRendezvousIP succeeded without a directory to write to")
		}
	})
}

func TestRendezvousAPIURL(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"192.168.111.80", "http://192.168.111.80:8090/api/assisted-install/v2"},
		{"fd2e::50", "http://[fd2e::50]:8090/api/assisted-install/v2"},
		{"fe80::1%eth0", "http://[fe80::1%25eth0]:8090/api/assisted-install/v2"},
	} {
		if got := rendezvousAPIURL(netip.MustParseAddr(tc.addr), 8090); got != tc.want {
			t.Errorf("rendezvousAPIURL(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestProbeURL(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler()) // any answer counts
	defer srv.Close()
	if err := probeURL(t.Context(), srv.URL+"/api/assisted-install/v2"); err != nil {
		t.Errorf("probeURL(answering server) = %v, want nil", err)
	}

	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	if err := probeURL(t.Context(), "http://"+closed+"/api/assisted-install/v2"); err == nil {
		t.Errorf("probeURL(closed port) = nil, want an error")
	}

	// A server that accepts and never answers: the probe gives up.
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)
	if err := probeURL(t.Context(), slow.URL); err == nil {
		t.Errorf("probeURL(silent server) = nil, want an error")
	}
}

// fakeRendezvous is a Rendezvous config writing under a temporary root,
// whose probe answers as told.
type fakeRendezvous struct {
	mu     sync.Mutex
	probed []netip.Addr
	err    error
}

func (f *fakeRendezvous) config(t *testing.T, local []netip.Addr) *Rendezvous {
	return &Rendezvous{
		Root:       rendezvousRoot(t, map[string]string{"rendezvous-host.env.template": envTemplate}),
		LocalAddrs: func() ([]netip.Addr, error) { return local, nil },
		Probe: func(_ context.Context, addr netip.Addr) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.probed = append(f.probed, addr)
			return f.err
		},
	}
}

var threeAddrs = addrs("fe80::5054:ff:feaa:bb02", "192.168.111.20", "172.22.0.10", "fd2e:6f44:5dd8:c956::14", "127.0.0.1")

func TestRendezvousGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		app  func(t *testing.T) *App
	}{
		{"empty", func(t *testing.T) *App {
			f := &fakeRendezvous{}
			return newTestApp(t, Config{Rendezvous: f.config(t, threeAddrs), ConfigureNetwork: func() error { return nil }})
		}},
		{"invalid", func(t *testing.T) *App {
			f := &fakeRendezvous{}
			a := newTestApp(t, Config{Rendezvous: f.config(t, threeAddrs), ConfigureNetwork: func() error { return nil }})
			a.rendez.input.SetText("192.168.111")
			a.rendez.saveTyped()
			return a
		}},
		{"select", func(t *testing.T) *App {
			f := &fakeRendezvous{}
			a := newTestApp(t, Config{Rendezvous: f.config(t, threeAddrs)})
			a.rendez.showSelect()
			return a
		}},
		{"saved", func(t *testing.T) *App {
			f := &fakeRendezvous{}
			a := newTestApp(t, Config{Rendezvous: f.config(t, threeAddrs)})
			a.rendez.showSelect()
			a.rendez.saveAndConfirm(netip.MustParseAddr("192.168.111.20"), true)
			return a
		}},
		{"unreachable", func(t *testing.T) *App {
			f := &fakeRendezvous{}
			a := newTestApp(t, Config{Rendezvous: f.config(t, threeAddrs), ConfigureNetwork: func() error { return nil }})
			a.rendez.input.SetText("192.168.111.80")
			a.rendez.unreachable(netip.MustParseAddr("192.168.111.80"))
			return a
		}},
		{"prefilled", func(t *testing.T) *App {
			f := &fakeRendezvous{}
			cfg := f.config(t, threeAddrs)
			cfg.Prefill = netip.MustParseAddr("192.168.111.80")
			a := newTestApp(t, Config{Rendezvous: cfg})
			a.rendez.prompted = true // no background start: the dialog opens here
			a.rendez.promptPrefilled()
			return a
		}},
	} {
		for _, s := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", tc.name, s.w, s.h), func(t *testing.T) {
				a := tc.app(t)
				a.rendez.prompted = true
				golden(t, fmt.Sprintf("rendezvous-%s-%dx%d", tc.name, s.w, s.h), drawText(t, a.pages, s.w, s.h))
			})
		}
	}
}

// typeText types s into the focused field.
func (r *running) typeText(s string) {
	for _, ch := range s {
		r.key(tcell.KeyRune, ch)
	}
}

func TestRendezvousFlow(t *testing.T) {
	t.Run("save a reachable IP", func(t *testing.T) {
		f := &fakeRendezvous{}
		cfg := f.config(t, threeAddrs)
		r := runApp(t, Config{Rendezvous: cfg}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, rendezvousTitle, "Rendezvous IP", "<Save rendezvous IP>")
		r.typeText("192.168.111.80")
		r.key(tcell.KeyTab, 0) // to <Save rendezvous IP>
		r.key(tcell.KeyEnter, 0)
		r.waitScreen(t, "Successfully saved", "192.168.111.80 as the", "<Continue>")
		if got, want := readEnv(t, cfg.Root), "NODE_ZERO_IP=192.168.111.80\nSERVICE_BASE_URL=http://192.168.111.80:8090/\n"; got != want {
			t.Errorf("rendezvous-host.env = %q, want %q", got, want)
		}
		f.mu.Lock()
		probed := fmt.Sprint(f.probed)
		f.mu.Unlock()
		if probed != "[192.168.111.80]" {
			t.Errorf("probed %s, want [192.168.111.80]", probed)
		}
		// <Continue>: no checks, no dashboard: the console ends.
		r.key(tcell.KeyEnter, 0)
		r.waitDone(t)
	})

	t.Run("an invalid IP says so", func(t *testing.T) {
		f := &fakeRendezvous{}
		cfg := f.config(t, threeAddrs)
		r := runApp(t, Config{Rendezvous: cfg}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, rendezvousTitle)
		r.typeText("192.168.1111.5")
		r.key(tcell.KeyEnter, 0) // Enter in the field saves too
		r.waitScreen(t, "The IP address", "192.168.1111.5 is not a", "<Back>")
		r.key(tcell.KeyEnter, 0)
		screen := r.waitScreen(t, rendezvousTitle, "192.168.1111.5")
		if strings.Contains(screen, "not a valid") {
			t.Errorf("the error dialog stayed open:\n%s", screen)
		}
		if _, err := os.Stat(filepath.Join(cfg.Root, "etc", "assisted", "rendezvous-host.env")); err == nil {
			t.Errorf("an invalid IP was saved")
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.probed) != 0 {
			t.Errorf("an invalid IP was probed: %v", f.probed)
		}
	})

	t.Run("an unreachable IP warns; Save and Continue saves it", func(t *testing.T) {
		f := &fakeRendezvous{err: errors.New("connection refused")}
		cfg := f.config(t, threeAddrs)
		r := runApp(t, Config{Rendezvous: cfg, ConfigureNetwork: func() error { return nil }}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, rendezvousTitle)
		r.typeText("fd2e:6f44:5dd8:c956::50")
		r.key(tcell.KeyTab, 0)
		r.key(tcell.KeyEnter, 0)
		r.waitScreen(t, "Warning: the specified", "<Save and Continue>", "<Back>", "<Configure Network>")
		if _, err := os.Stat(filepath.Join(cfg.Root, "etc", "assisted", "rendezvous-host.env")); err == nil {
			t.Errorf("the IP was saved before the person chose to")
		}
		r.key(tcell.KeyEnter, 0)
		r.waitDone(t)
		if got, want := readEnv(t, cfg.Root), "NODE_ZERO_IP=fd2e:6f44:5dd8:c956::50\nSERVICE_BASE_URL=http://fd2e:6f44:5dd8:c956::50:8090/\n"; got != want {
			t.Errorf("rendezvous-host.env = %q, want %q", got, want)
		}
	})

	t.Run("this is the rendezvous node: pick the second address", func(t *testing.T) {
		f := &fakeRendezvous{}
		cfg := f.config(t, threeAddrs)
		r := runApp(t, Config{Rendezvous: cfg}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, rendezvousTitle)
		r.key(tcell.KeyTab, 0)
		r.key(tcell.KeyTab, 0) // to <This is the rendezvous node>
		r.key(tcell.KeyEnter, 0)
		screen := r.waitScreen(t, rendezvousSelectTitle, "192.168.111.20", "172.22.0.10", "fd2e:6f44:5dd8:c956::14", "<Back>")
		for _, hidden := range []string{"127.0.0.1", "fe80::"} {
			if strings.Contains(screen, hidden) {
				t.Errorf("the select page offers %s:\n%s", hidden, screen)
			}
		}
		r.key(tcell.KeyDown, 0)
		r.key(tcell.KeyEnter, 0)
		r.waitScreen(t, "Successfully saved", "172.22.0.10 as the", "other nodes")
		if got, want := readEnv(t, cfg.Root), "NODE_ZERO_IP=172.22.0.10\nSERVICE_BASE_URL=http://172.22.0.10:8090/\n"; got != want {
			t.Errorf("rendezvous-host.env = %q, want %q", got, want)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.probed) != 0 {
			t.Errorf("picking this host's address probed %v", f.probed)
		}
	})

	t.Run("select page Back and Esc return", func(t *testing.T) {
		f := &fakeRendezvous{}
		r := runApp(t, Config{Rendezvous: f.config(t, threeAddrs)}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, rendezvousTitle)
		r.key(tcell.KeyBacktab, 0)
		r.key(tcell.KeyEnter, 0) // <This is the rendezvous node>: the ring wraps
		r.waitScreen(t, rendezvousSelectTitle)
		r.key(tcell.KeyUp, 0) // wraps to <Back>
		r.key(tcell.KeyEnter, 0)
		r.waitScreen(t, rendezvousTitle, "<Save rendezvous IP>")
		r.key(tcell.KeyEnter, 0) // the focus stayed on <This is the rendezvous node>
		r.waitScreen(t, rendezvousSelectTitle)
		r.key(tcell.KeyEscape, 0)
		r.waitScreen(t, rendezvousTitle, "<Save rendezvous IP>")
	})

	t.Run("prefilled: the prompt goes on by itself", func(t *testing.T) {
		f := &fakeRendezvous{}
		cfg := f.config(t, threeAddrs)
		cfg.Prefill = netip.MustParseAddr("192.168.111.80")
		r := runApp(t, Config{Rendezvous: cfg, Countdown: 2 * time.Second}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, "has been", "<Modify>", "<Quit>")
		r.waitDone(t)
	})

	t.Run("prefilled: Modify leaves the address to edit", func(t *testing.T) {
		f := &fakeRendezvous{}
		cfg := f.config(t, threeAddrs)
		cfg.Prefill = netip.MustParseAddr("192.168.111.80")
		r := runApp(t, Config{Rendezvous: cfg}, 80, 24)
		defer r.quit(t)
		r.waitScreen(t, "has been", "<Modify>")
		r.key(tcell.KeyEnter, 0)
		screen := r.waitScreen(t, rendezvousTitle, "192.168.111.80")
		if strings.Contains(screen, "has been set to") {
			t.Errorf("the prompt stayed open:\n%s", screen)
		}
		// Typing goes to the field, q included.
		r.typeText("q")
		r.waitScreen(t, "192.168.111.80q")
	})
}
