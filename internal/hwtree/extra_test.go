package hwtree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteExtraWorkers(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, "extra-worker-0", "extra-worker-1"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, n := range []string{"extra-worker-0", "extra-worker-1"} {
		b, err := os.ReadFile(filepath.Join(dir, n, "sys/class/net/enp1s0/address"))
		if err != nil {
			t.Fatal(err)
		}
		mac := strings.TrimSpace(string(b))
		if other, dup := seen[mac]; dup {
			t.Fatalf("%s and %s share the MAC %s", n, other, mac)
		}
		seen[mac] = n
	}
	for _, bad := range []string{"extra-worker-", "extra-worker-01", "extra-worker-100", "extra-worker-x"} {
		if err := Write(dir, bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
