package installer

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v34 "github.com/coreos/ignition/v2/config/v3_4"
	"github.com/coreos/ignition/v2/config/v3_4/types"
	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/internal/atomicfile"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// parseIgnition parses and validates b with ignition's own parser (any
// spec from 3.0 to 3.4), failing the test on any error or warning.
func parseIgnition(t *testing.T, b []byte) types.Config {
	t.Helper()
	cfg, rpt, err := v34.ParseCompatibleVersion(b)
	if err != nil || len(rpt.Entries) > 0 {
		t.Fatalf("ignition does not parse: %v\n%s\n%s", err, rpt, b)
	}
	return cfg
}

func kargStrings(ks []types.KernelArgument) []string {
	var out []string
	for _, k := range ks {
		out = append(out, string(k))
	}
	return out
}

func writeKeyfile(t *testing.T, root, name, text string) string {
	t.Helper()
	dir := filepath.Join(root, "etc", "NetworkManager", "system-connections")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileData decodes a storage file's data URL.
func fileData(t *testing.T, f types.File) string {
	t.Helper()
	if f.Contents.Source == nil {
		t.Fatalf("file %s has no source", f.Path)
	}
	b64, ok := strings.CutPrefix(*f.Contents.Source, "data:;base64,")
	if !ok {
		t.Fatalf("file %s source %q is not a base64 data URL", f.Path, *f.Contents.Source)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyInstallerArgs(t *testing.T) {
	const base = `{
	  "ignition": {"version": "3.2.0", "config": {"merge": [{"source": "https://192.0.2.1:22623/config/master"}]}},
	  "passwd": {"users": [{"name": "core", "sshAuthorizedKeys": ["ssh-ed25519 AAAA test"]}]},
	  "storage": {"files": [{"path": "/etc/NetworkManager/system-connections/bond0.nmconnection", "mode": 384,
	    "contents": {"source": "data:;base64,ZnJvbS1zZXJ2aWNl"}}]}
	}`
	a, problems := parseInstallerArgs(`["--append-karg","ip=eth0:dhcp","--append-karg","rd.multipath=default","--delete-karg","quiet","--copy-network"]`)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	kfs := []keyfile{
		{name: "bond0.nmconnection", data: []byte("[connection]\nid=bond0-copy\n")},
		{name: "eth0.nmconnection", data: []byte("[connection]\nid=eth0\n")},
	}
	out, err := applyInstallerArgs([]byte(base), a, kfs)
	if err != nil {
		t.Fatalf("applyInstallerArgs = %v", err)
	}
	got := parseIgnition(t, out)
	if got.Ignition.Version != "3.4.0" { // translated from what we wrote
		t.Errorf("version = %q", got.Ignition.Version)
	}
	if diff := cmp.Diff([]string{"ip=eth0:dhcp", "rd.multipath=default"}, kargStrings(got.KernelArguments.ShouldExist)); diff != "" {
		t.Errorf("shouldExist (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"quiet"}, kargStrings(got.KernelArguments.ShouldNotExist)); diff != "" {
		t.Errorf("shouldNotExist (-want +got):\n%s", diff)
	}
	if len(got.Ignition.Config.Merge) != 1 || len(got.Passwd.Users) != 1 || len(got.Passwd.Users[0].SSHAuthorizedKeys) != 1 {
		t.Errorf("the service's config was not kept: %s", out)
	}
	files := map[string]types.File{}
	for _, f := range got.Storage.Files {
		files[f.Path] = f
	}
	if len(files) != 2 {
		t.Fatalf("files = %+v, want the service's bond0 and the copied eth0", got.Storage.Files)
	}
	if d := fileData(t, files["/etc/NetworkManager/system-connections/bond0.nmconnection"]); d != "from-service" {
		t.Errorf("bond0 = %q, want the service's own file kept", d)
	}
	eth0 := files["/etc/NetworkManager/system-connections/eth0.nmconnection"]
	if d := fileData(t, eth0); d != "[connection]\nid=eth0\n" {
		t.Errorf("eth0 = %q", d)
	}
	if eth0.Mode == nil || *eth0.Mode != 0o600 {
		t.Errorf("eth0 mode = %v, want 0600", eth0.Mode)
	}

	// The raw version: 3.2.0 raised to the first spec with kernel arguments.
	if !strings.Contains(string(out), `"version":"3.3.0"`) {
		t.Errorf("raw version not 3.3.0: %s", out)
	}
}

func TestApplyInstallerArgsKeepsNewerVersionsAndUnknownFields(t *testing.T) {
	in := `{"ignition":{"version":"3.5.0"},"kernelArguments":{"shouldExist":["a"]},"someFutureField":{"x":12345678901234567890}}`
	a := installerArgs{appendKargs: []string{"a", "b"}}
	out, err := applyInstallerArgs([]byte(in), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ignition":{"version":"3.5.0"},"kernelArguments":{"shouldExist":["a","b"]},"someFutureField":{"x":12345678901234567890}}`
	if string(out) != want {
		t.Errorf("applyInstallerArgs = %s, want %s", out, want)
	}
}

func TestApplyInstallerArgsNothingToDo(t *testing.T) {
	in := []byte(`{"ignition": {"version": "3.1.0"}}`)
	out, err := applyInstallerArgs(in, installerArgs{raw: []string{}}, nil)
	if err != nil || string(out) != string(in) {
		t.Errorf("applyInstallerArgs = %s, %v; want the input untouched", out, err)
	}
}

func TestApplyInstallerArgsErrors(t *testing.T) {
	kargs := installerArgs{appendKargs: []string{"a"}}
	tests := []struct {
		name string
		in   string
		kfs  []keyfile
	}{
		{"not json", `{"ignition":`, nil},
		{"null", `null`, nil},
		{"spec 2", `{"ignition":{"version":"2.2.0"}}`, nil},
		{"no version", `{"ignition":{}}`, nil},
		{"kernelArguments not an object", `{"ignition":{"version":"3.4.0"},"kernelArguments":[]}`, nil},
		{"shouldExist not a list", `{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":"a"}}`, nil},
		{"files not a list", `{"ignition":{"version":"3.4.0"},"storage":{"files":{}}}`, []keyfile{{name: "x.nmconnection"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := applyInstallerArgs([]byte(tt.in), kargs, tt.kfs); err == nil {
				t.Errorf("applyInstallerArgs(%s) = %s, want an error", tt.in, out)
			}
		})
	}
}

func TestReadKeyfiles(t *testing.T) {
	root := t.TempDir()
	writeKeyfile(t, root, "b.nmconnection", "b")
	writeKeyfile(t, root, "a.nmconnection", "a")
	writeKeyfile(t, root, "README", "not a keyfile")
	dir := filepath.Join(root, "etc", "NetworkManager", "system-connections")
	if err := os.Mkdir(filepath.Join(dir, "sub.nmconnection"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := readKeyfiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []keyfile{{name: "a.nmconnection", data: []byte("a")}, {name: "b.nmconnection", data: []byte("b")}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(keyfile{})); diff != "" {
		t.Errorf("readKeyfiles (-want +got):\n%s", diff)
	}
	if _, err := readKeyfiles(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("readKeyfiles(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestSaveFile(t *testing.T) {
	p := ignitionPath(t.TempDir(), "worker", testHostID)
	for _, content := range []string{"first", "second"} {
		if err := atomicfile.Write(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != content {
			t.Fatalf("read back %q, %v; want %q", b, err, content)
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only the file (no temporaries left)", len(entries))
	}
}
