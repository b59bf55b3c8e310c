package hwtree

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const committed = "../../testdata/hw"

// snapshot maps each path under dir to its contents, or "-> target" for a
// symlink.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "-> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCommittedTreesAreCurrent fails when testdata/hw was not regenerated
// after a change here (or was edited by hand).
func TestCommittedTreesAreCurrent(t *testing.T) {
	out := t.TempDir()
	if err := generate(out, hosts()); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, out)
	got := snapshot(t, committed)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("testdata/hw differs from what hwtree writes; run go generate ./hostagent/inventory (-generated +committed):\n%s", diff)
	}
}

// TestGenerateIsRepeatable regenerates over an existing output and expects
// the same bytes: old trees are replaced, not merged.
func TestGenerateIsRepeatable(t *testing.T) {
	out := t.TempDir()
	if err := generate(out, hosts()); err != nil {
		t.Fatal(err)
	}
	first := snapshot(t, out)
	if err := os.WriteFile(filepath.Join(out, "master-0", "stale"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := generate(out, hosts()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, snapshot(t, out)); diff != "" {
		t.Errorf("second generate differs (-first +second):\n%s", diff)
	}
}

func TestHostsAreDistinct(t *testing.T) {
	seen := map[string]string{}
	unique := func(host, kind, v string) {
		if v == "" {
			return
		}
		if other, ok := seen[kind+v]; ok {
			t.Errorf("%s %s %q is also used by %s", host, kind, v, other)
		}
		seen[kind+v] = host
	}
	for _, h := range hosts() {
		unique(h.name, "name", h.name)
		unique(h.name, "product_uuid", h.dmi.productUUID)
		for _, n := range h.nics {
			unique(h.name, "MAC", n.mac)
		}
		for _, d := range h.disks {
			unique(h.name, "disk serial", d.serial)
			unique(h.name, "WWN", d.wwn)
		}
		if h.dmi.boardSerial != "To be filled by O.E.M." {
			unique(h.name, "board serial", h.dmi.boardSerial)
		}
	}
}

// TestWrite writes the named trees only, the same bytes Generate writes,
// and names the known hosts for an unknown one.
func TestWrite(t *testing.T) {
	all, some := t.TempDir(), t.TempDir()
	if err := Generate(all); err != nil {
		t.Fatal(err)
	}
	if err := Write(some, "master-0", "worker-1"); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(some)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff([]string{"master-0", "worker-1"}, got); diff != "" {
		t.Errorf("Write wrote (-want +got):\n%s", diff)
	}
	for _, n := range got {
		if diff := cmp.Diff(snapshot(t, filepath.Join(all, n)), snapshot(t, filepath.Join(some, n))); diff != "" {
			t.Errorf("%s differs from Generate's (-generate +write):\n%s", n, diff)
		}
	}
	err = Write(t.TempDir(), "master-9")
	if err == nil || !strings.Contains(err.Error(), `"master-9"`) || !strings.Contains(err.Error(), "master-0") {
		t.Errorf("Write(master-9) = %v, want an error naming it and the known hosts", err)
	}
}
