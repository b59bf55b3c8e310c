package boot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestConfiguredHostname(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, HostnamesDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "52:54:00:aa:bb:02"), []byte("master-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := []Link{{Name: "lo"}, {Name: "eth0", MAC: "52:54:00:aa:bb:01"}, {Name: "eth1", MAC: "52:54:00:AA:BB:02"}}
	name, mac, ok, err := ConfiguredHostname(root, links)
	if err != nil || !ok || name != "master-1" || mac != "52:54:00:AA:BB:02" {
		t.Fatalf("ConfiguredHostname = %q %q %v %v, want master-1 by eth1's MAC", name, mac, ok, err)
	}
	if _, _, ok, err := ConfiguredHostname(root, links[:2]); ok || err != nil {
		t.Errorf("a host with no hostname file: ok=%v err=%v, want neither", ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "52:54:00:aa:bb:01"), []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ConfiguredHostname(root, links); err == nil {
		t.Error("an empty hostname file gave no error")
	}

	if err := (RootHostname{Root: root}).SetHostname(context.Background(), "master-1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "etc/hostname")); string(b) != "master-1\n" {
		t.Errorf("/etc/hostname = %q", b)
	}
}
