package boot

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/onhost"
)

// TestReadEnvServiceCA: the CA the config image carried is the clients'
// only with an https:// SERVICE_BASE_URL.
func TestReadEnvServiceCA(t *testing.T) {
	ip := netip.MustParseAddr("192.168.111.80")
	for _, tc := range []struct {
		name   string
		env    []byte
		withCA bool
		want   bool
	}{
		{"https with the CA", onhost.RendezvousEnvHTTPS(ip, "A", "U", onhost.WorkflowInstall), true, true},
		{"https without a CA: the system's roots", onhost.RendezvousEnvHTTPS(ip, "A", "U", onhost.WorkflowInstall), false, false},
		{"http: no TLS whatever is there", onhost.RendezvousEnv(ip, "A", "U", onhost.WorkflowInstall), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write := func(p string, b []byte) {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, p), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(onhost.RendezvousEnvPath, tc.env)
			if tc.withCA {
				write(configimage.APICAPath, []byte("ca"))
			}
			env, err := ReadEnv(root)
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if tc.want {
				want = filepath.Join(root, configimage.APICAPath)
			}
			if env.ServiceCACert != want {
				t.Errorf("ServiceCACert = %q, want %q", env.ServiceCACert, want)
			}
		})
	}
}
