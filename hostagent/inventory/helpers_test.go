package inventory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hwDir holds the committed synthetic trees (written by internal/hwgen).
const hwDir = "../../testdata/hw"

// hwTree returns the path of a committed tree.
func hwTree(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(hwDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("hardware tree %s: %v (run go generate ./hostagent/inventory)", name, err)
	}
	return p
}

// hwTrees lists the committed trees.
func hwTrees(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(hwDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("no hardware trees under %s", hwDir)
	}
	return names
}

// writeRoot builds a root directory in a temporary directory. Keys are paths
// inside the root; a value starting with "->" makes a symlink to the rest.
func writeRoot(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// nicFiles returns the sysfs files of one physical NIC for writeRoot.
func nicFiles(name, mac string, ifindex string) map[string]string {
	dev := "sys/devices/pci0000:00/0000:00:0" + ifindex + ".0/net/" + name
	return map[string]string{
		dev + "/address":        mac + "\n",
		dev + "/ifindex":        ifindex + "\n",
		dev + "/mtu":            "1500\n",
		dev + "/flags":          "0x1003\n",
		dev + "/operstate":      "up\n",
		dev + "/carrier":        "1\n",
		dev + "/type":           "1\n",
		"sys/class/net/" + name: "->../../devices/pci0000:00/0000:00:0" + ifindex + ".0/net/" + name,
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
