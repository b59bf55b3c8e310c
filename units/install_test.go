package units

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/google/go-cmp/cmp"
)

var fakeBinary = []byte("#!/bin/sh\n# stands in for nodezero\n")

func install(t *testing.T, root string, p Params, bin []byte) Result {
	t.Helper()
	res, err := Install(root, p, bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("Install(%s): %v", root, err)
	}
	return res
}

// readUnit parses a unit file back from the tree.
func readUnit(t *testing.T, root, name string) []*unit.UnitOption {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, UnitDir, name))
	if err != nil {
		t.Fatal(err)
	}
	opts, err := unit.DeserializeOptions(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("DeserializeOptions(%s): %v", name, err)
	}
	return opts
}

// values is every space-separated value of section.name in opts.
func values(opts []*unit.UnitOption, section, name string) []string {
	var out []string
	for _, o := range opts {
		if o.Section == section && o.Name == name {
			out = append(out, strings.Fields(o.Value)...)
		}
	}
	return out
}

func has(opts []*unit.UnitOption, section, name, value string) bool {
	return slices.Contains(values(opts, section, name), value)
}

// TestInstalledGraph checks, from the files Install wrote, the order
// docs/architecture.md needs and that every [Install] dependency is enabled.
func TestInstalledGraph(t *testing.T) {
	root := t.TempDir()
	install(t, root, Params{}, fakeBinary)

	network := readUnit(t, root, NetworkUnit)
	daemon := readUnit(t, root, DaemonUnit)
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"network stage: Before=NetworkManager.service", has(network, "Unit", "Before", "NetworkManager.service")},
		{"network stage: Before=network-pre.target", has(network, "Unit", "Before", "network-pre.target")},
		{"network stage: DefaultDependencies=no", has(network, "Unit", "DefaultDependencies", "no")},
		{"network stage: only with /etc/assisted/network", has(network, "Unit", "ConditionPathExists", "/etc/assisted/network")},
		{"daemon: After=" + NetworkUnit, has(daemon, "Unit", "After", NetworkUnit)},
		{"daemon: After=network-online.target", has(daemon, "Unit", "After", "network-online.target")},
		{"daemon: Wants=network-online.target", has(daemon, "Unit", "Wants", "network-online.target")},
		{"daemon: Type=notify", has(daemon, "Service", "Type", "notify")},
		{"daemon: WatchdogSec set", len(values(daemon, "Service", "WatchdogSec")) == 1},
		{"daemon: Restart=always", has(daemon, "Service", "Restart", "always")},
		{"daemon: StartLimitIntervalSec=0", has(daemon, "Unit", "StartLimitIntervalSec", "0")},
		{"console: before the tty1 login prompt", has(readUnit(t, root, ConsoleUnit), "Unit", "Before", "getty@tty1.service")},
		{"serial console: before its serial getty", has(readUnit(t, root, SerialConsoleUnit), "Unit", "Before", "serial-getty@%i.service")},
	} {
		if !c.ok {
			t.Errorf("%s: not so in the installed files", c.what)
		}
	}

	// Every ExecStart runs the binary laid in the tree.
	for _, name := range []string{NetworkUnit, DaemonUnit, ConfigImageUnit, ConsoleUnit, SerialConsoleUnit} {
		exec := values(readUnit(t, root, name), "Service", "ExecStart")
		if len(exec) == 0 || exec[0] != DefaultBinary {
			t.Errorf("%s: ExecStart %q, want %s first", name, exec, DefaultBinary)
		}
	}
	fi, err := os.Stat(filepath.Join(root, DefaultBinary))
	if err != nil || fi.Mode() != 0o755 {
		t.Fatalf("binary: %v, %v; want mode 0755", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, DefaultBinary)); !bytes.Equal(b, fakeBinary) {
		t.Errorf("binary content = %q, want %q", b, fakeBinary)
	}

	// The udev rule wants an instance of the config-image template, and
	// that template is in the tree.
	rule, err := os.ReadFile(filepath.Join(root, RuleDir, ConfigImageRule))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`ENV\{SYSTEMD_WANTS\}\+="([^"@]+)@%k(\.service)"`).FindSubmatch(rule)
	if m == nil {
		t.Fatalf("rule %q wants no instance named after the kernel device", rule)
	}
	if tmpl := string(m[1]) + "@" + string(m[2]); tmpl != ConfigImageUnit {
		t.Errorf("rule wants %s, want an instance of %s", tmpl, ConfigImageUnit)
	}
	for _, want := range []string{`ACTION=="add|change"`, `SUBSYSTEM=="block"`, `ENV{ID_FS_LABEL}=="agent_configimage"`, `TAG+="systemd"`} {
		if !bytes.Contains(rule, []byte(want)) {
			t.Errorf("rule %q lacks %s", rule, want)
		}
	}

	// Every WantedBy= has its link, every link points at a unit in the
	// tree, and there are no other links.
	wantLinks := map[string]string{}
	for _, name := range []string{NetworkUnit, DaemonUnit, ConfigImageUnit, ConsoleUnit, SerialConsoleUnit} {
		for _, by := range values(readUnit(t, root, name), "Install", "WantedBy") {
			wantLinks[path.Join(UnitDir, by+".wants", name)] = "/" + path.Join(UnitDir, name)
		}
	}
	if d := cmp.Diff(map[string]string{
		"etc/systemd/system/multi-user.target.wants/nodezero-network.service":             "/etc/systemd/system/nodezero-network.service",
		"etc/systemd/system/multi-user.target.wants/nodezero.service":                     "/etc/systemd/system/nodezero.service",
		"etc/systemd/system/getty@tty1.service.wants/nodezero-console.service":            "/etc/systemd/system/nodezero-console.service",
		"etc/systemd/system/serial-getty@.service.wants/nodezero-console-serial@.service": "/etc/systemd/system/nodezero-console-serial@.service",
	}, wantLinks); d != "" {
		t.Errorf("WantedBy in the files (-want +got):\n%s", d)
	}
	gotLinks := map[string]string{}
	for p, e := range snapshot(t, root) {
		if e.link != "" {
			gotLinks[p] = e.link
			if fi, err := os.Stat(filepath.Join(root, e.link)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("link %s -> %s: target not a file in the tree: %v", p, e.link, err)
			}
		}
	}
	if d := cmp.Diff(wantLinks, gotLinks); d != "" {
		t.Errorf("links in the tree (-from WantedBy +on disk):\n%s", d)
	}
}

// entry is one path of a tree as a re-install must leave it.
type entry struct {
	mode  fs.FileMode
	data  string
	link  string
	inode uint64
	mtime time.Time
}

func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entry{mode: fi.Mode(), inode: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.data = string(b)
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReinstall: a second run touches nothing (same inodes, times and
// bytes); a changed file, mode or link is put back and reported; a stale
// link to one of our units goes, a foreign one stays.
func TestReinstall(t *testing.T) {
	root := t.TempDir()
	first := install(t, root, Params{}, fakeBinary)
	if len(first.Changed) != 11 || len(first.Unchanged) != 0 {
		t.Errorf("first Install: %d changed, %d unchanged; want 11 (binary, 6 files, 4 links) and 0", len(first.Changed), len(first.Unchanged))
	}
	before := snapshot(t, root)
	again := install(t, root, Params{}, fakeBinary)
	if len(again.Changed) != 0 || len(again.Removed) != 0 || len(again.Unchanged) != len(first.Changed) {
		t.Errorf("second Install = %+v, want everything unchanged", again)
	}
	if d := cmp.Diff(before, snapshot(t, root), cmp.AllowUnexported(entry{})); d != "" {
		t.Fatalf("second Install changed the tree (-before +after):\n%s", d)
	}

	daemon := filepath.Join(root, UnitDir, DaemonUnit)
	if err := os.WriteFile(daemon, []byte("[Unit]\nDescription=edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, DefaultBinary), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, UnitDir, "multi-user.target.wants", NetworkUnit)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/elsewhere/"+NetworkUnit, link); err != nil {
		t.Fatal(err)
	}
	stale := path.Join(UnitDir, "multi-user.target.wants", "nodezero-config-image@sr1.service")
	foreign := path.Join(UnitDir, "multi-user.target.wants", "sshd.service")
	for _, l := range []string{stale, foreign} {
		if err := os.Symlink("/etc/systemd/system/x.service", filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	res := install(t, root, Params{}, fakeBinary)
	wantChanged := []string{
		strings.TrimPrefix(DefaultBinary, "/"),
		path.Join(UnitDir, DaemonUnit),
		path.Join(UnitDir, "multi-user.target.wants", NetworkUnit),
	}
	if d := cmp.Diff(wantChanged, res.Changed); d != "" {
		t.Errorf("Install after edits: Changed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{stale}, res.Removed); d != "" {
		t.Errorf("Install after edits: Removed (-want +got):\n%s", d)
	}
	after := snapshot(t, root)
	if _, ok := after[foreign]; !ok {
		t.Errorf("foreign link %s was removed", foreign)
	}
	delete(after, foreign)
	for p, e := range after {
		b := before[p]
		b.inode, b.mtime, e.inode, e.mtime = 0, time.Time{}, 0, time.Time{}
		if b != e {
			t.Errorf("%s: after repair %+v, want %+v", p, e, b)
		}
	}
	if len(after) != len(before) {
		t.Errorf("after repair %d paths, want %d", len(after), len(before))
	}

	// A new binary replaces the old one.
	res = install(t, root, Params{}, []byte("v2"))
	if d := cmp.Diff([]string{strings.TrimPrefix(DefaultBinary, "/")}, res.Changed); d != "" {
		t.Errorf("Install of a new binary: Changed (-want +got):\n%s", d)
	}
	// No temp files are left behind.
	for p := range snapshot(t, root) {
		if strings.Contains(path.Base(p), ".tmp-") {
			t.Errorf("temp file left: %s", p)
		}
	}
}

// TestInstallOtherBinaryPath lays the binary where Params says and the
// units run it from there.
func TestInstallOtherBinaryPath(t *testing.T) {
	root := t.TempDir()
	bin := "/opt/nodezero/bin/nodezero"
	install(t, root, Params{Binary: bin}, fakeBinary)
	if fi, err := os.Stat(filepath.Join(root, bin)); err != nil || fi.Mode() != 0o755 {
		t.Fatalf("binary at %s: %v, %v", bin, fi, err)
	}
	if got := values(readUnit(t, root, DaemonUnit), "Service", "ExecStart"); got[0] != bin {
		t.Errorf("ExecStart %q, want %s", got, bin)
	}
	if _, err := os.Stat(filepath.Join(root, DefaultBinary)); err == nil {
		t.Errorf("binary also laid at %s", DefaultBinary)
	}
}

// TestInstallStaysInRoot: an absolute symlink in the tree (here etc ->
// another directory) is refused, and nothing lands outside the root.
func TestInstallStaysInRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(root, Params{}, bytes.NewReader(fakeBinary)); err == nil {
		t.Error("Install through an absolute symlink = nil error, want one")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("Install wrote outside the root: %v", entries)
	}
	if _, err := Install(filepath.Join(root, "missing"), Params{}, bytes.NewReader(fakeBinary)); err == nil {
		t.Error("Install into a missing root = nil error, want one")
	}
}

func TestLinks(t *testing.T) {
	file := func(name, install string) File {
		return File{Path: path.Join(UnitDir, name), Data: []byte("[Unit]\nDescription=x\n\n[Install]\n" + install)}
	}
	for _, c := range []struct {
		name    string
		file    File
		want    []Link
		wantErr bool
	}{
		{"plain", file("a.service", "WantedBy=multi-user.target b.target\nRequiredBy=c.service\nAlias=d.service\n"), []Link{
			{"etc/systemd/system/multi-user.target.wants/a.service", "/etc/systemd/system/a.service"},
			{"etc/systemd/system/b.target.wants/a.service", "/etc/systemd/system/a.service"},
			{"etc/systemd/system/c.service.requires/a.service", "/etc/systemd/system/a.service"},
			{"etc/systemd/system/d.service", "/etc/systemd/system/a.service"},
		}, false},
		{"template from template", file("t@.service", "WantedBy=serial-getty@.service\n"), []Link{
			{"etc/systemd/system/serial-getty@.service.wants/t@.service", "/etc/systemd/system/t@.service"},
		}, false},
		{"template with default instance", file("t@.service", "WantedBy=multi-user.target\nDefaultInstance=sr0\n"), []Link{
			{"etc/systemd/system/multi-user.target.wants/t@sr0.service", "/etc/systemd/system/t@.service"},
		}, false},
		{"template from plain unit", file("t@.service", "WantedBy=multi-user.target\n"), nil, true},
		{"no install section", File{Path: path.Join(UnitDir, "n.service"), Data: []byte("[Unit]\nDescription=x\n")}, nil, false},
		{"not a unit", File{Path: path.Join(RuleDir, "x.rules"), Data: []byte("WantedBy=x\n")}, nil, false},
		{"unparsable", File{Path: path.Join(UnitDir, "bad.service"), Data: []byte("[Unit\n")}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Links([]File{c.file})
			if (err != nil) != c.wantErr {
				t.Fatalf("Links = %v, %v; want error %v", got, err, c.wantErr)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("Links (-want +got):\n%s", d)
			}
		})
	}
}

// TestReplaceFile changes a file larger than the compare buffer at its
// start, middle and end, shortens and lengthens it; each time the file
// ends up with exactly the new bytes, and equal bytes change nothing.
func TestReplaceFile(t *testing.T) {
	r, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	base := make([]byte, 200<<10)
	for i := range base {
		base[i] = byte(i * 7)
	}
	flip := func(i int) []byte {
		b := slices.Clone(base)
		b[i] ^= 0xff
		return b
	}
	steps := []struct {
		name        string
		data        []byte
		wantChanged bool
	}{
		{"create", base, true},
		{"same", base, false},
		{"first byte", flip(0), true},
		{"back", base, true},
		{"middle", flip(100 << 10), true},
		{"back again", base, true},
		{"last byte", flip(len(base) - 1), true},
		{"shorter by one", base[:len(base)-1], true},
		{"same shorter", base[:len(base)-1], false},
		{"longer", append(slices.Clone(base), 1, 2, 3), true},
		{"chunk boundary", base[:64<<10], true},
		{"empty", nil, true},
		{"empty again", nil, false},
	}
	for _, s := range steps {
		changed, err := replaceFile(r, "d/f", 0o644, bytes.NewReader(s.data))
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if changed != s.wantChanged {
			t.Errorf("%s: changed = %v, want %v", s.name, changed, s.wantChanged)
		}
		got, err := r.ReadFile("d/f")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, s.data) {
			t.Errorf("%s: file has %d bytes, not the %d written", s.name, len(got), len(s.data))
		}
	}
}
