package gather

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestHostName(t *testing.T) {
	for _, tc := range []struct {
		name, hostname, want string
	}{
		{"plain", "master-0\n", "master-0"},
		{"odd characters", "node zero/1 ü\n", "node_zero_1__"},
		{"none", "", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.hostname != "" {
				if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "etc/hostname"), []byte(tc.hostname), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := HostName(root, false); got != tc.want {
				t.Errorf("HostName(%q) = %q, want %q", tc.hostname, got, tc.want)
			}
		})
	}
}

// TestForRootAndWriteFile: a sandbox-like host's options name the bundle
// after the host and the time, collect the run.log beside the root, and
// WriteFile leaves a 0600 bundle, or nothing when its directory is missing.
func TestForRootAndWriteFile(t *testing.T) {
	hostDir := t.TempDir()
	root := filepath.Join(hostDir, "root")
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/hostname"), []byte("worker-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostDir, "run.log"), []byte("level=info msg=started\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 1, 14, 0, 5, 0, time.FixedZone("CEST", 2*3600))
	o := ForRoot(root, "", "", "v-test", now)
	if o.Dir != "agent-gather-worker-1-20250601T120005Z" || o.Host != "worker-1" || o.Journal {
		t.Errorf("ForRoot = dir %q, host %q, journal %v; want agent-gather-worker-1-20250601T120005Z, worker-1, no journal", o.Dir, o.Host, o.Journal)
	}
	if len(o.ExtraLogs) != 1 || o.ExtraLogs[0] != filepath.Join(hostDir, "run.log") {
		t.Errorf("ExtraLogs = %q, want the run.log beside the root", o.ExtraLogs)
	}
	o.LookPath = func(string) (string, error) { return "", os.ErrNotExist }
	out := filepath.Join(t.TempDir(), "bundle.tar.gz")
	rep, err := WriteFile(context.Background(), o, out)
	if err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 || rep == nil {
		t.Fatalf("bundle: %v, mode %v, report %v; want a 0600 file and a report", err, fi, rep)
	}
	b, _ := os.ReadFile(out)
	if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("bundle starts %x, want gzip", b[:min(len(b), 2)])
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "bundle.tar.gz")
	if _, err := WriteFile(context.Background(), o, missing); err == nil {
		t.Error("WriteFile into a missing directory: no error")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("WriteFile into a missing directory left a file")
	}
}
