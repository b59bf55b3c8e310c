package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadInstallDir: wait-for --dir names each file it misses and what
// writes it, and finds node zero's HTTPS CA, the kubeconfig and the
// password when they are there.
func TestReadInstallDir(t *testing.T) {
	write := func(t *testing.T, dir, name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		files   map[string]string
		wantErr []string // substrings; nil: no error
		check   func(t *testing.T, d InstallDir)
	}{
		{name: "empty", wantErr: []string{"rendezvousIP: missing; 'nodezero create config-image --dir", "auth/watcher.token: missing"}},
		{name: "bad address", files: map[string]string{"rendezvousIP": "node0\n", "auth/watcher.token": "t"},
			wantErr: []string{`rendezvousIP: "node0" is not an IP address`}},
		{name: "http", files: map[string]string{"rendezvousIP": "192.168.111.80\n", "auth/watcher.token": "t"},
			check: func(t *testing.T, d InstallDir) {
				if d.RendezvousIP != "192.168.111.80" || d.CACert != "" || d.Kubeconfig != "" || d.PasswordFile != "" {
					t.Errorf("got %+v, want the address and nothing else", d)
				}
			}},
		{name: "https and credentials", files: map[string]string{"rendezvousIP": "fd00::5", "auth/watcher.token": "t",
			"tls/api.crt": "x", "tls/ca.crt": "x", "auth/kubeconfig": "x", "auth/kubeadmin-password": "x"},
			check: func(t *testing.T, d InstallDir) {
				if !strings.HasSuffix(d.CACert, "tls/ca.crt") || !strings.HasSuffix(d.Kubeconfig, "auth/kubeconfig") ||
					!strings.HasSuffix(d.PasswordFile, "auth/kubeadmin-password") {
					t.Errorf("got %+v, want tls/ca.crt, auth/kubeconfig, auth/kubeadmin-password", d)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				write(t, dir, name, data)
			}
			d, err := ReadInstallDir(dir)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("ReadInstallDir: %v", err)
				}
				tc.check(t, d)
				return
			}
			if err == nil {
				t.Fatalf("ReadInstallDir = %+v, want an error", d)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ReadInstallDir error %q, want it to contain %q", err, w)
				}
			}
		})
	}
	if _, err := ReadInstallDir(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("ReadInstallDir(missing dir) = %v, want 'not a directory'", err)
	}
}
