package node

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKeyfileUUID(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "eno1.nmconnection")
	os.WriteFile(p, []byte("[connection]\nid=eno1\nuuid=3f0c6e4a-1b2c-5d6e-8f90-a1b2c3d4e5f6\ntype=ethernet\n\n[vlan]\nuuid=not-this-one\n"), 0o600)
	if got, err := keyfileUUID(p); err != nil || got != "3f0c6e4a-1b2c-5d6e-8f90-a1b2c3d4e5f6" {
		t.Errorf("uuid %q %v", got, err)
	}
	os.WriteFile(p, []byte("[ethernet]\nuuid=x\n"), 0o600)
	if _, err := keyfileUUID(p); err == nil {
		t.Error("no [connection] uuid: no error")
	}
}

func TestLocalURL(t *testing.T) {
	for in, want := range map[string]string{
		"[::]:8090":        "http://127.0.0.1:8090",
		"0.0.0.0:8090":     "http://127.0.0.1:8090",
		"10.231.0.10:8090": "http://10.231.0.10:8090",
		"[fd00::10]:8090":  "http://[fd00::10]:8090",
	} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := localURL(a); got != want {
			t.Errorf("localURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestOptionsDefaults: the directories not given are the host's own,
// under its root; those given are kept.
func TestOptionsDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Options
		want Options
	}{
		{"none given", Options{Root: "/h"}, Options{Root: "/h", DataDir: "/h/var/lib/nodezero", HardwareRoot: "/h",
			Disks: "/h/var/lib/nodezero/disks", Payload: "/h/usr/share/nodezero/payload"}},
		{"live", Options{Root: "/"}, Options{Root: "/", DataDir: "/var/lib/nodezero", HardwareRoot: "/",
			Disks: "/var/lib/nodezero/disks", Payload: "/usr/share/nodezero/payload"}},
		{"all given", Options{Root: "/h", DataDir: "/d", HardwareRoot: "/hw", Disks: "/k", Payload: "/p"},
			Options{Root: "/h", DataDir: "/d", HardwareRoot: "/hw", Disks: "/k", Payload: "/p"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.withDefaults()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("withDefaults (-want +got):\n%s", diff)
			}
		})
	}
}
