package units

import (
	"bytes"
	"flag"
	"github.com/nodezero/nodezero/testbed"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// TestFilesGolden pins the exact bytes of every rendered file
// (testdata/<name>; -update rewrites them).
func TestFilesGolden(t *testing.T) {
	files, err := Files(Params{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		name := path.Base(f.Path)
		names = append(names, name)
		golden := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(golden, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if d := cmp.Diff(string(want), string(f.Data)); d != "" {
			t.Errorf("%s differs from %s (-want +got):\n%s", f.Path, golden, d)
		}
		if f.Mode != 0o644 {
			t.Errorf("%s: mode %v, want 0644", f.Path, f.Mode)
		}
	}
	wantNames := []string{NetworkUnit, DaemonUnit, ConfigImageUnit, ConsoleUnit, SerialConsoleUnit, ConfigImageRule}
	if d := cmp.Diff(wantNames, names); d != "" {
		t.Errorf("Files names (-want +got):\n%s", d)
	}
}

// TestRoundTrip parses every rendered unit back and gets the options it
// was built from, in order.
func TestRoundTrip(t *testing.T) {
	bin := "/opt/nodezero/bin/nodezero"
	files, err := Files(Params{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	built := map[string][]*unit.UnitOption{
		NetworkUnit:       networkUnit(bin),
		DaemonUnit:        daemonUnit(bin),
		ConfigImageUnit:   configImageUnit(bin),
		ConsoleUnit:       consoleUnit(bin),
		SerialConsoleUnit: serialConsoleUnit(bin),
	}
	seen := 0
	for _, f := range files {
		want, ok := built[path.Base(f.Path)]
		if !ok {
			continue
		}
		seen++
		got, err := unit.DeserializeOptions(bytes.NewReader(f.Data))
		if err != nil {
			t.Fatalf("DeserializeOptions(%s): %v", f.Path, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("DeserializeOptions(%s) (-built +parsed):\n%s", f.Path, d)
		}
		for _, o := range got {
			if o.Name == "ExecStart" && !strings.HasPrefix(o.Value, bin+" ") {
				t.Errorf("%s: ExecStart=%s, want it to run %s", f.Path, o.Value, bin)
			}
		}
	}
	if seen != len(built) {
		t.Errorf("Files rendered %d of the %d units", seen, len(built))
	}
}

func TestBadBinary(t *testing.T) {
	for _, b := range []string{"nodezero", "/", "/usr/local/bin/", "/usr/../bin/nodezero", "/opt/my nodezero", "/opt/%n", `/opt/"x"`, "/opt/x;y"} {
		if _, err := Files(Params{Binary: b}); err == nil {
			t.Errorf("Files(Binary %q) = nil error, want one", b)
		}
		if _, err := Install(t.TempDir(), Params{Binary: b}, strings.NewReader("x")); err == nil {
			t.Errorf("Install(Binary %q) = nil error, want one", b)
		}
	}
}

// verifyUnits are what systemd-analyze verify checks: the plain units and
// instances of the templates, one with a "-" in its kernel name.
var verifyUnits = []string{
	NetworkUnit, DaemonUnit, ConsoleUnit,
	"nodezero-config-image@sr1.service", "nodezero-config-image@dm-0.service",
	"nodezero-console-serial@ttyS0.service",
}

// TestSystemdAnalyzeVerify installs into a root that also holds this
// machine's own unit files, with /bin/true as the binary, and has
// systemd-analyze verify load every unit and its dependency graph from that
// root. Any output, warnings included, fails the test.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze := needTool(t, "systemd-analyze")
	root := hostLikeRoot(t)
	out, err := verify(analyze, root, verifyUnits...)
	if err != nil || len(out) != 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The unit files on their own, by path: the templates too.
	var paths []string
	for _, n := range []string{NetworkUnit, DaemonUnit, ConfigImageUnit, ConsoleUnit, SerialConsoleUnit} {
		paths = append(paths, filepath.Join(root, UnitDir, n))
	}
	if out, err := verify(analyze, root, paths...); err != nil || len(out) != 0 {
		t.Fatalf("systemd-analyze verify by path: %v\n%s", err, out)
	}

	// The check is live: without the binary verify complains, about
	// every unit.
	if err := os.Remove(filepath.Join(root, DefaultBinary)); err != nil {
		t.Fatal(err)
	}
	out, err = verify(analyze, root, verifyUnits...)
	if err == nil || !bytes.Contains(out, []byte("is not executable")) {
		t.Errorf("verify without the binary: err %v, output %q; want it to fail on ExecStart", err, out)
	}
}

func verify(analyze, root string, units ...string) ([]byte, error) {
	args := append([]string{"verify", "--root=" + root, "--man=no"}, units...)
	cmd := exec.Command(analyze, args...)
	// systemd-analyze would page or colour on a terminal; there is none.
	cmd.Env = append(os.Environ(), "SYSTEMD_PAGER=cat", "SYSTEMD_COLORS=0")
	return cmd.CombinedOutput()
}

// hostLikeRoot is a temp root holding a copy of this machine's
// /lib/systemd/system (so the graph resolves: multi-user.target,
// NetworkManager.service, getty@.service…) and our install, with /bin/true
// as the binary.
func hostLikeRoot(t *testing.T) string {
	t.Helper()
	trueBin := needTool(t, "true")
	src := "/lib/systemd/system"
	if _, err := os.Stat(filepath.Join(src, "multi-user.target")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("this machine's unit files are required in CI: %v", err)
		}
		t.Skipf("no unit files to verify against: %v", err)
	}
	root := t.TempDir()
	copyTree(t, src, filepath.Join(root, "usr/lib/systemd/system"))
	if err := os.Symlink("usr/lib", filepath.Join(root, "lib")); err != nil {
		t.Fatal(err)
	}
	bin, err := os.Open(trueBin)
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	if _, err := Install(root, Params{}, bin); err != nil {
		t.Fatal(err)
	}
	return root
}

// copyTree copies regular files and symlinks (as links) from src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}
