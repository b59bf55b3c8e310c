package factoryimage

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCacheEntries: the first opener of a key builds it; a second, waiting
// meanwhile, finds it complete and builds nothing; pruning leaves an entry
// a build holds and removes it once released; a damaged info file makes
// the entry be rebuilt.
func TestCacheEntries(t *testing.T) {
	cache := t.TempDir()
	k := strings.Repeat("ab", 32)
	first, info, err := openEntry(cache, "layer", k)
	if err != nil {
		t.Fatal(err)
	}
	if info != nil {
		t.Fatal("a new entry says it is complete")
	}
	type opened struct {
		e    *entry
		info *layerInfo
		err  error
	}
	second := make(chan opened, 1)
	go func() {
		e, info, err := openEntry(cache, "layer", k)
		second <- opened{e, info, err}
	}()
	if err := first.begin(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(first.path("out"), []byte("built"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := first.commit(&layerInfo{}); err != nil {
		t.Fatal(err)
	}
	got := <-second
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.info == nil || got.info.Key != k {
		t.Fatalf("the second opener got info %+v, want the complete entry (key %s)", got.info, k)
	}
	first.close()

	prune(cache, "layer", 0, io.Discard)
	if _, err := os.Stat(got.e.path("out")); err != nil {
		t.Fatalf("pruned an entry a build holds: %v", err)
	}
	got.e.close()
	prune(cache, "layer", 0, io.Discard)
	if _, err := os.Stat(got.e.dir); !os.IsNotExist(err) {
		t.Fatalf("an unused entry beyond keep=0 was not pruned: %v", err)
	}

	// A damaged entry is rebuilt.
	e, _, err := openEntry(cache, "layer", k)
	if err != nil {
		t.Fatal(err)
	}
	e.begin()
	e.commit(&layerInfo{})
	e.close()
	if err := os.WriteFile(filepath.Join(e.dir, infoFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, info, err = openEntry(cache, "layer", k)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	if info != nil {
		t.Error("an entry with a damaged info file counts as complete")
	}
}

// TestUnescapeMount: mountinfo escapes a space in a mount point as \040.
func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/var/cache/a\040b/tree/proc`: "/var/cache/a b/tree/proc",
		`/plain`:                      "/plain",
		`/back\134slash`:              `/back\slash`,
		`/short\04`:                   `/short\04`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
	if m := mountsUnder(t.TempDir()); len(m) != 0 {
		t.Errorf("mountsUnder(a new folder) = %v", m)
	}
}
