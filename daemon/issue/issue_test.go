package issue

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetWritesIssueAndMotdOnlyWhenChanged(t *testing.T) {
	root := t.TempDir()
	b := NewBoard(root)
	reloads := 0
	b.Reload = func(context.Context) error { reloads++; return nil }
	ctx := context.Background()

	changed, err := b.Set(ctx, KeyRendezvousHost, LightRed, "Not configured - no Rendezvous IP set")
	if err != nil || !changed {
		t.Fatalf("first Set = %v, %v; want changed", changed, err)
	}
	issue, _ := os.ReadFile(filepath.Join(root, "etc/issue.d/60-rendezvous-host.issue"))
	if want := "\n\\e{lightred}Not configured - no Rendezvous IP set\\e{reset}\n\n"; string(issue) != want {
		t.Errorf("issue file = %q, want %q", issue, want)
	}
	motd, _ := os.ReadFile(filepath.Join(root, "etc/motd.d/60-rendezvous-host"))
	if want := "Not configured - no Rendezvous IP set\n"; string(motd) != want {
		t.Errorf("motd file = %q, want %q", motd, want)
	}
	fi, err := os.Stat(filepath.Join(root, "etc/issue.d/60-rendezvous-host.issue"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("issue file mode %v (%v), want 0644", fi.Mode(), err)
	}
	before := fi.ModTime()

	changed, err = b.Set(ctx, KeyRendezvousHost, LightRed, "Not configured - no Rendezvous IP set")
	if err != nil || changed {
		t.Fatalf("same Set again = %v, %v; want unchanged", changed, err)
	}
	if fi, _ := os.Stat(filepath.Join(root, "etc/issue.d/60-rendezvous-host.issue")); !fi.ModTime().Equal(before) {
		t.Error("an unchanged status rewrote the file")
	}
	if reloads != 1 {
		t.Errorf("reloads = %d after one change, want 1", reloads)
	}

	if _, err := b.Set(ctx, KeyStartInstall, None, "Waiting for all hosts to be ready:", "5 hosts expected"); err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Key: KeyRendezvousHost, Color: LightRed, Lines: []string{"Not configured - no Rendezvous IP set"}},
		{Key: KeyStartInstall, Lines: []string{"Waiting for all hosts to be ready:", "5 hosts expected"}},
	}
	if diff := cmp.Diff(want, b.Entries()); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}

	if err := b.Clear(ctx, KeyRendezvousHost); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"etc/issue.d/60-rendezvous-host.issue", "etc/motd.d/60-rendezvous-host"} {
		if _, err := os.Stat(filepath.Join(root, p)); !os.IsNotExist(err) {
			t.Errorf("%s after Clear: %v, want gone", p, err)
		}
	}
	if err := b.Clear(ctx, KeyRendezvousHost); err != nil {
		t.Fatal(err)
	}
	if reloads != 3 {
		t.Errorf("reloads = %d, want 3 (set, set, one clear that removed files)", reloads)
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, "etc/issue.d/.*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestBadKeys(t *testing.T) {
	b := NewBoard(t.TempDir())
	for _, k := range []Key{"", "rendezvous", "../60-x", "60-a/b", "6-x"} {
		if _, err := b.Set(context.Background(), k, None, "x"); err == nil {
			t.Errorf("Set(%q) = nil error, want a refusal", k)
		}
	}
}

func TestOnlyTheLiveRootReloadsAgetty(t *testing.T) {
	if b := NewBoard(t.TempDir()); b.Reload != nil {
		t.Error("a board on a test root would reload the machine's agetty")
	}
}
