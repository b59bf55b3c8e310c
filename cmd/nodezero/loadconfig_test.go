package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/onhost"
)

// TestLoadConfigImageCommand runs the binary on an image file and on a
// "device" found by label under a fake root.
func TestLoadConfigImageCommand(t *testing.T) {
	img, err := configimage.Build([]configimage.Member{
		{Path: "/etc/assisted/hostnames/52:54:00:aa:bb:01", Mode: 0o644, Data: []byte("master-0\n")},
		{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("NODE_ZERO_IP=192.168.111.80\n")},
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	iso := filepath.Join(dir, "agentconfig.noarch.iso")
	if err := os.WriteFile(iso, img, 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	out := runBinary(t, "load-config-image", "--root", root, "--file", iso)
	if !strings.Contains(out, "2 files from") {
		t.Errorf("output = %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/assisted/hostnames/52:54:00:aa:bb:01")); err != nil || string(b) != "master-0\n" {
		t.Errorf("hostname file = %q, %v", b, err)
	}
	// --device auto finds the image by label among the root's block devices.
	root2 := filepath.Join(dir, "root2")
	for _, d := range []string{"sys/class/block/sr0", "sys/class/block/vda", "dev"} {
		if err := os.MkdirAll(filepath.Join(root2, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root2, "dev/sr0"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	runBinary(t, "load-config-image", "--root", root2, "--device", "auto")
	if _, err := os.Stat(filepath.Join(root2, onhost.RendezvousEnvPath)); err != nil {
		t.Errorf("--device auto: %v", err)
	}
}

func runBinary(t *testing.T, args ...string) string {
	t.Helper()
	p := start(t, filepath.Join(t.TempDir(), "out.log"), nil, args...)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("nodezero %v: %v\n%s", args, err, p.output())
	}
	return p.output()
}
