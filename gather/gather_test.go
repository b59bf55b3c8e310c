package gather

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readBundle opens a bundle with archive/tar and compress/gzip and returns
// its entries by name under the top directory dir.
func readBundle(t *testing.T, data []byte, dir string) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("gzip: %v", err)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("tar: %v", err)
		}
		name, ok := strings.CutPrefix(hdr.Name, dir+"/")
		if !ok {
			t.Errorf("entry %s is not under %s/", hdr.Name, dir)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	return out
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manifestLine returns the manifest line of an item, or "".
func manifestLine(manifest, name string) string {
	for _, l := range strings.Split(manifest, "\n") {
		if len(l) > 10 && (strings.TrimSpace(l[10:]) == name || strings.HasPrefix(l[10:], name+" (")) {
			return l
		}
	}
	return ""
}

func gatherTo(t *testing.T, o Options) (map[string]string, *Report) {
	t.Helper()
	var buf bytes.Buffer
	o.Dir = "bundle"
	o.TempDir = t.TempDir()
	rep, err := Write(context.Background(), o, &buf)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return readBundle(t, buf.Bytes(), "bundle"), rep
}

func noTools(name string) (string, error) { return "", &exec.Error{Name: name, Err: exec.ErrNotFound} }

// TestMissingToolsAndDirectories: an empty peer root on a machine without
// ip, nmcli or journalctl still gives a bundle, whose manifest says what
// was not there.
func TestMissingToolsAndDirectories(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "etc/hostname"), "worker-1\n")
	files, rep := gatherTo(t, Options{Root: root, Journal: true, LookPath: noTools})
	m := files[ManifestName]
	for name, want := range map[string]Status{
		"network/ip-addr.txt":             StatusNotFound,
		"network/nmcli-device.txt":        StatusNotFound,
		"logs/journal-nodezero.log":       StatusNotFound,
		"config/etc/assisted/":            StatusMissing,
		"config/root/.docker/config.json": StatusMissing,
		"network/etc/resolv.conf":         StatusMissing,
		"store/":                          StatusSkipped,
		"config/etc/hostname":             StatusOK,
	} {
		l := manifestLine(m, name)
		if !strings.HasPrefix(l, fmt.Sprintf("%-10s", want)) {
			t.Errorf("manifest line of %s = %q, want status %q\n%s", name, l, want, m)
		}
	}
	if l := manifestLine(m, "config/etc/hostname"); !strings.HasSuffix(l, "(9 bytes)") {
		t.Errorf("hostname line = %q, want its size", l)
	}
	if got := files["network/ip-addr.txt"]; !strings.Contains(got, "ip: not found") {
		t.Errorf("network/ip-addr.txt = %q, want it to say ip is not found", got)
	}
	if rep.Count(StatusNotFound) == 0 || rep.Count(StatusMissing) == 0 {
		t.Errorf("report %s: want not found and missing items", rep.Summary())
	}
	if !strings.Contains(m, rep.Summary()) {
		t.Errorf("manifest does not end with the summary %q", rep.Summary())
	}
}

// TestJournalAndCommands runs stand-in commands that print secrets: the
// journal window reaches journalctl, every output is redacted, and a
// failing command keeps its output with the failure in the manifest.
func TestJournalAndCommands(t *testing.T) {
	bin := t.TempDir()
	script := func(name, body string) {
		writeFile(t, filepath.Join(bin, name), "#!/bin/sh\n"+body+"\n")
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script("journalctl", `echo "args: $*"; echo "nodezero[1]: token=`+fakeJWT+` level=info"`)
	script("nmcli", `echo "Error: NetworkManager is not running." >&2; exit 8`)
	script("ip", `echo "1: lo: <LOOPBACK,UP> mtu 65536"`)
	script("systemctl", `echo "nodezero.service - inactive"; exit 3`)
	look := func(name string) (string, error) {
		p := filepath.Join(bin, name)
		if _, err := os.Stat(p); err != nil {
			return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
		}
		return p, nil
	}
	files, _ := gatherTo(t, Options{Root: t.TempDir(), Journal: true, Since: "2 hours ago", LookPath: look})
	j := files["logs/journal-nodezero.log"]
	if !strings.Contains(j, "--since 2 hours ago") || !strings.Contains(j, "-u nodezero*") {
		t.Errorf("journal = %q, want journalctl -u nodezero* --since 2 hours ago", j)
	}
	if strings.Contains(j, fakeJWT) || !strings.Contains(j, "token=<redacted>") {
		t.Errorf("journal = %q, want the token redacted", j)
	}
	m := files[ManifestName]
	if l := manifestLine(m, "network/nmcli-device.txt"); !strings.HasPrefix(l, "failed") || !strings.Contains(l, "NetworkManager is not running") {
		t.Errorf("nmcli line = %q, want failed with its message", l)
	}
	if !strings.Contains(files["network/nmcli-device.txt"], "NetworkManager is not running") {
		t.Errorf("nmcli output = %q", files["network/nmcli-device.txt"])
	}
	if l := manifestLine(m, "logs/systemctl-status.txt"); !strings.HasPrefix(l, "ok") {
		t.Errorf("systemctl line = %q, want ok: exit 3 is an inactive unit", l)
	}
	if l := manifestLine(m, "network/ip-addr.txt"); !strings.HasPrefix(l, "ok") {
		t.Errorf("ip line = %q", l)
	}
}

// TestSymlinksStayInRoot: a link to an absolute path is followed under the
// root, never to the machine's file; links inside a tree are listed only.
func TestSymlinksStayInRoot(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "run/systemd/resolve/stub-resolv.conf"), "nameserver 127.0.0.53\n")
	writeFile(t, filepath.Join(root, "etc/assisted/node0"), "BOOTSTRAP_HOST_MAC=52:54:00:00:00:01\n")
	if err := os.Symlink("/run/systemd/resolve/stub-resolv.conf", filepath.Join(root, "etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(root, "etc/assisted/escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(root, "var")); err != nil {
		t.Fatal(err)
	}
	files, _ := gatherTo(t, Options{Root: root, LookPath: noTools})
	if got := files["network/etc/resolv.conf"]; got != "nameserver 127.0.0.53\n" {
		t.Errorf("resolv.conf = %q, want the root's stub", got)
	}
	if _, ok := files["config/etc/assisted/escape"]; ok {
		t.Error("a link inside /etc/assisted was followed")
	}
	if l := manifestLine(files[ManifestName], "config/etc/assisted/escape"); !strings.Contains(l, "not followed") {
		t.Errorf("escape line = %q", l)
	}
	for name := range files {
		if strings.HasPrefix(name, "status/var/run") {
			t.Errorf("%s: /var -> / led to the machine's /run", name)
		}
	}
	if p, _ := resolve(root, "/var/../etc/resolv.conf"); p != filepath.Join(root, "run/systemd/resolve/stub-resolv.conf") {
		t.Errorf("resolve = %s", p)
	}
}
