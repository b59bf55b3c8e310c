package kube

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// adminKubeconfig is shaped as the one `create config-image` writes.
func adminKubeconfig(ca, cert, key []byte) string {
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	return `clusters:
- cluster:
    certificate-authority-data: ` + b64(ca) + `
    server: https://api.sandbox.nodezero.test:6443
  name: sandbox
contexts:
- context:
    cluster: sandbox
    user: admin
  name: admin
current-context: admin
preferences: {}
users:
- name: admin
  user:
    client-certificate-data: ` + b64(cert) + `
    client-key-data: ` + b64(key) + `
`
}

func TestParseKubeconfig(t *testing.T) {
	ca := newTestCA(t, "ca")
	cert, key := ca.issue(t, "system:admin", []string{"system:masters"}, nil, nil)
	good := adminKubeconfig(ca.PEM, cert, key)
	got, err := ParseKubeconfig([]byte(good), "auth/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Server: "https://api.sandbox.nodezero.test:6443", CAData: ca.PEM, CertData: cert, KeyData: key,
		Context: "admin", Cluster: "sandbox", User: "admin"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ParseKubeconfig (-want +got):\n%s", d)
	}

	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"no current context", "current-context: admin", "current-context: ''", "auth/kubeconfig:11:18: current-context: not set"},
		{"unknown context", "current-context: admin", "current-context: other", `auth/kubeconfig:11:18: current-context: "other" names no entry of contexts[]`},
		{"unknown cluster", "    cluster: sandbox", "    cluster: elsewhere", `auth/kubeconfig:8:14: contexts[0].context.cluster: "elsewhere" names no entry of clusters[]`},
		{"unknown user", "    user: admin", "    user: root", `auth/kubeconfig:9:11: contexts[0].context.user: "root" names no entry of users[]`},
		{"plain http", "https://api", "http://api", `auth/kubeconfig:4:13: clusters[0].cluster.server: "http://api.sandbox.nodezero.test:6443": want https://host:port`},
		{"bad CA data", "certificate-authority-data: ", "certificate-authority-data: ==", "auth/kubeconfig:3:33: clusters[0].cluster.certificate-authority-data: not base64"},
		{"no CA", "certificate-authority-data: ", "x-ca: ", "clusters[0].cluster: no certificate-authority-data or certificate-authority"},
		{"insecure", "    server:", "    insecure-skip-tls-verify: true\n    server:", "clusters[0].cluster.insecure-skip-tls-verify: not supported"},
		{"key without cert", "client-certificate-data:", "x-cert:", "users[0].user: a client key without client-certificate-data or client-certificate"},
		{"no credentials", "    client-", "    x-client-", "auth/kubeconfig:14:9: users[0].user: no credentials"},
		{"a list for a value", "current-context: admin", "current-context: [admin]", "auth/kubeconfig: line 11: want a single value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.ReplaceAll(good, tc.from, tc.to)
			if in == good {
				t.Fatalf("the case changes nothing: %q not in the kubeconfig", tc.from)
			}
			_, err := ParseKubeconfig([]byte(in), "auth/kubeconfig")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseKubeconfig = %v, want an error containing %q", err, tc.want)
			}
			if !errors.Is(err, ErrKubeconfig) {
				t.Errorf("error %v is not ErrKubeconfig", err)
			}
		})
	}

	t.Run("files relative to the kubeconfig", func(t *testing.T) {
		dir := t.TempDir()
		for name, b := range map[string][]byte{"ca.crt": ca.PEM, "admin.crt": cert, "admin.key": key} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		kc := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt, tls-server-name: api.example.test}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
users:
- name: u
  user: {client-certificate: admin.crt, client-key: ` + filepath.Join(dir, "admin.key") + `}
`
		p := filepath.Join(dir, "kubeconfig")
		if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := LoadKubeconfig(p)
		if err != nil {
			t.Fatal(err)
		}
		want := &Config{Server: "https://127.0.0.1:6443", TLSServerName: "api.example.test", CAData: ca.PEM, CertData: cert, KeyData: key,
			Context: "x", Cluster: "c", User: "u"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("LoadKubeconfig (-want +got):\n%s", d)
		}
	})
}

func TestSetServer(t *testing.T) {
	ca := newTestCA(t, "ca")
	cert, key := ca.issue(t, "system:admin", []string{"system:masters"}, nil, nil)
	in := []byte(adminKubeconfig(ca.PEM, cert, key))
	out, err := SetServer(in, "kubeconfig", "https://127.9.9.3:6443", "api.sandbox.nodezero.test")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseKubeconfig(out, "kubeconfig")
	if err != nil {
		t.Fatalf("the rewritten kubeconfig does not parse: %v\n%s", err, out)
	}
	want := &Config{Server: "https://127.9.9.3:6443", TLSServerName: "api.sandbox.nodezero.test", CAData: ca.PEM, CertData: cert, KeyData: key,
		Context: "admin", Cluster: "sandbox", User: "admin"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after SetServer (-want +got):\n%s", d)
	}
	// The credentials' text is the same, byte for byte.
	for _, line := range strings.Split(string(in), "\n") {
		if strings.Contains(line, "-data: ") && !strings.Contains(string(out), strings.TrimSpace(line)) {
			t.Errorf("line %q changed", line)
		}
	}
}

func TestSetCondition(t *testing.T) {
	t0 := Time{Now().Add(-time.Hour)}
	cs := []Condition{{Type: Available, Status: False, LastTransitionTime: t0, Reason: "Installing"}}

	if SetCondition(&cs, Condition{Type: Available, Status: False, Reason: "Installing"}) {
		t.Error("setting the same condition reports a change")
	}
	if !SetCondition(&cs, Condition{Type: Available, Status: False, Reason: "Installing", Message: "2 of 3"}) {
		t.Error("a new message reports no change")
	}
	if got := cs[0].LastTransitionTime; !got.Equal(t0.Time) {
		t.Errorf("same status: transition time %v, want it kept at %v", got, t0)
	}
	SetCondition(&cs, Condition{Type: Available, Status: True, Reason: "AsExpected"})
	if got := cs[0].LastTransitionTime; got.Equal(t0.Time) {
		t.Errorf("new status: transition time %v not moved", got)
	}
	SetCondition(&cs, Condition{Type: Progressing, Status: False})
	if !IsTrue(cs, Available) || !IsFalse(cs, Progressing) || IsTrue(cs, Degraded) || IsFalse(cs, Degraded) {
		t.Errorf("conditions %+v: want Available True, Progressing False, no Degraded", cs)
	}
}
