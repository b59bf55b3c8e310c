package onhost

import (
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// envLineErr is the shape of a ParseEnv error about one line.
var envLineErr = regexp.MustCompile(`^x\.env:([0-9]+): `)

// FuzzParseEnv reads any bytes as an env file (rendezvous-host.env,
// assisted-service.env, start-cluster.env). An error names the file, and
// the line when one line is at fault; what is accepted has clean keys and
// reads back the same once written out as KEY=VALUE lines.
func FuzzParseEnv(f *testing.F) {
	f.Add(RendezvousEnv(netip.MustParseAddr("fd2e:6f44:5dd8::50"), "AGENT", "USER", WorkflowInstall))
	f.Add(AssistedServiceEnv(ServiceEnv{InfraEnvID: "0b5d4f3e-2c1a-4e8b-9f7d-6a5b4c3d2e1f", PublicKeyPEM: []byte("-----BEGIN PUBLIC KEY-----\n"),
		ReleaseImages: `[{"openshift_version":"4.18","url":"quay.io/x:1"}]`}))
	f.Add(StartClusterEnv(3, 2))
	f.Add([]byte("# comment\n\n  KEY = spaced value  \r\nA==b\n"))
	f.Add([]byte("NOEQUALS\n"))
	f.Add([]byte("A=1\nA=2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := ParseEnv("x.env", data)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "x.env:") {
				t.Fatalf("ParseEnv error %q does not name the file", msg)
			}
			if m := envLineErr.FindStringSubmatch(msg); m != nil {
				n, _ := strconv.Atoi(m[1])
				if lines := strings.Count(string(data), "\n") + 1; n < 1 || n > lines {
					t.Fatalf("ParseEnv error %q names line %d of %d", msg, n, lines)
				}
			}
			return
		}
		var out strings.Builder
		for _, k := range slices.Sorted(maps.Keys(env)) {
			v := env[k]
			if k == "" || k != strings.TrimSpace(k) || strings.HasPrefix(k, "#") || strings.ContainsAny(k, "=\n") || strings.Contains(v, "\n") {
				t.Fatalf("ParseEnv(%q) accepted key %q with value %q", data, k, v)
			}
			fmt.Fprintf(&out, "%s=%s\n", k, v)
		}
		again, err := ParseEnv("x.env", []byte(out.String()))
		if err != nil {
			t.Fatalf("ParseEnv of its own result written out (%q): %v", out.String(), err)
		}
		if !maps.Equal(env, again) {
			t.Fatalf("ParseEnv(%q) = %q, written out and read again %q", data, env, again)
		}
	})
}
