package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/onhost"
)

// TestVerifyApplied: on a real machine the installed OS's Ignition applied
// the host's files to its root; the simulated controller starts only when
// they say this host is the one the boot record names.
func TestVerifyApplied(t *testing.T) {
	d := &onhost.BootDisk{HostID: "3f1c6a9e-0000-4000-8000-000000000001", Role: "bootstrap", Live: true}
	write := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for p, c := range files {
			full := filepath.Join(root, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	good := map[string]string{
		"etc/hostname":         "master-0\n",
		"etc/nodezero/role":    "master\n",
		"etc/nodezero/host-id": d.HostID + "\n",
	}
	tests := []struct {
		name    string
		change  func(map[string]string)
		wantErr string
	}{
		{"applied", func(map[string]string) {}, ""},
		{"no hostname", func(m map[string]string) { delete(m, "etc/hostname") }, "no /etc/hostname"},
		{"no role", func(m map[string]string) { delete(m, "etc/nodezero/role") }, "has no /etc/nodezero/role"},
		{"another host", func(m map[string]string) { m["etc/nodezero/host-id"] = "someone-else\n" }, `host-id is "someone-else"`},
		{"worker's config", func(m map[string]string) { m["etc/nodezero/role"] = "worker\n" }, `role is "worker"; this host wants "master"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range good {
				files[k] = v
			}
			tt.change(files)
			err := VerifyApplied(d, write(t, files))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("got %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
