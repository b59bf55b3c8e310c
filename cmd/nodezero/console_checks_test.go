package main

import (
	"crypto/x509"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/node/console"
	"github.com/nodezero/nodezero/sandbox/loopback"
	"github.com/nodezero/nodezero/tui"
)

// TestConsoleChecks runs the console's four checks (console.Checks)
// against a registry and a DNS server of the test's own on loopback: all
// pass with the registry's CA, the pull and HTTP checks fail without it,
// and a name the DNS does not know fails every check that needs it, each
// failure with output. (The loopback registry and DNS are the sandbox's:
// sandbox/loopback.)
func TestConsoleChecks(t *testing.T) {
	needRoot(t) // ICMP echoes over a raw socket
	ctx := t.Context()
	const name = "registry.console.test"
	reg, err := loopback.StartRegistryTLS(ctx, "127.0.0.1:0", []loopback.Image{{Repo: "ocp/release", Tag: "4.18", Layers: [][]byte{[]byte("layer")}}}, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	dns, err := loopback.StartDNS(ctx, "127.0.0.1:0", []loopback.Record{{Name: name, Addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dns.Close()
	_, port, _ := strings.Cut(reg.Addr, ":")
	image := name + ":" + port + "/ocp/release:4.18"
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(reg.CA()) {
		t.Fatal("registry CA")
	}

	run := func(o console.CheckOptions) map[tui.CheckID]string {
		t.Helper()
		checks, err := console.Checks(o)
		if err != nil {
			t.Fatal(err)
		}
		out := map[tui.CheckID]string{}
		for _, c := range checks {
			text, err := c.Run(ctx)
			if err != nil {
				if text == "" {
					t.Errorf("%s failed with no output", c.ID)
				}
				out[c.ID] = "FAIL " + text
				continue
			}
			out[c.ID] = "ok " + text
		}
		return out
	}

	got := run(console.CheckOptions{Image: image, CAs: pool, DNSServer: dns.Addr})
	for id, res := range got {
		if !strings.HasPrefix(res, "ok") {
			t.Errorf("with the CA: %s = %q, want a pass", id, res)
		}
	}
	if !strings.Contains(got[tui.CheckDNS], "127.0.0.1") || !strings.Contains(got[tui.CheckPing], "3 received") {
		t.Errorf("outputs: dns %q, ping %q", got[tui.CheckDNS], got[tui.CheckPing])
	}

	got = run(console.CheckOptions{Image: image, DNSServer: dns.Addr})
	for _, id := range []tui.CheckID{tui.CheckReleaseImagePull, tui.CheckHTTP} {
		if !strings.HasPrefix(got[id], "FAIL") || !strings.Contains(got[id], "certificate") {
			t.Errorf("without the CA: %s = %q, want a certificate failure", id, got[id])
		}
	}
	if !strings.HasPrefix(got[tui.CheckDNS], "ok") {
		t.Errorf("without the CA: dns = %q, want a pass", got[tui.CheckDNS])
	}

	got = run(console.CheckOptions{Image: "unknown.console.test:" + port + "/ocp/release:4.18", CAs: pool, DNSServer: dns.Addr})
	for id, res := range got {
		if !strings.HasPrefix(res, "FAIL") {
			t.Errorf("unknown name: %s = %q, want a failure", id, res)
		}
	}
	if !strings.Contains(got[tui.CheckDNS], "no such host") {
		t.Errorf("unknown name: dns = %q, want no such host", got[tui.CheckDNS])
	}
	if dns.Queries() == 0 {
		t.Error("the test's DNS server was never asked")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// exists tells whether path exists (the sandbox tests wait on files).
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
