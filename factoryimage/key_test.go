package factoryimage

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
)

// TestIgnitionPins: the ignition the installed OS runs is the version the
// main module parses configs with (go.mod), the one tools/ignition builds,
// and the one FindIgnition looks for, with tools/ignition/go.sum's hash.
func TestIgnitionPins(t *testing.T) {
	pin := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/coreos/ignition/v2 (v\S+)`)
	for _, f := range []string{"../go.mod", "../tools/ignition/go.mod"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := pin.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s does not require github.com/coreos/ignition/v2", f)
			continue
		}
		if string(m[1]) != IgnitionVersion {
			t.Errorf("%s pins github.com/coreos/ignition/v2 %s, IgnitionVersion is %s: keep them equal (and run tools/ignition/build.sh)", f, m[1], IgnitionVersion)
		}
	}
	sum, err := os.ReadFile("../tools/ignition/go.sum")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(sum)
	if got := hex.EncodeToString(h[:])[:12]; got != IgnitionSum {
		t.Errorf("tools/ignition/go.sum hashes to %s, IgnitionSum is %s: update it (and run tools/ignition/build.sh)", got, IgnitionSum)
	}
	script, err := os.ReadFile("../tools/ignition/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := `dir="$cache/ignition-$version-$sum-` + ignitionFlavour + `"`; !strings.Contains(string(script), want) {
		t.Errorf("tools/ignition/build.sh does not put ignition where FindIgnition looks (%s)", want)
	}
}

// TestKeys: each layer's key changes with each of its inputs and with
// nothing else; a layer's key is part of the next layer's.
func TestKeys(t *testing.T) {
	base := func() *resolved {
		o := &resolved{Options: Options{Mirror: DefaultMirror, SecurityMirror: DefaultSecurityMirror, SourceDateEpoch: DefaultEpoch, Payload: testPayload()}}
		return o
	}
	d := inputDigests{binary: "b1", ignition: "i1"}
	type keys struct{ rootfs, os, factory string }
	keysOf := func(o *resolved, d inputDigests) keys {
		r := rootfsKey(o)
		k := osImageKey(o, r, d)
		f, err := factoryKey(o, r, k, d)
		if err != nil {
			t.Fatal(err)
		}
		return keys{r, k, f}
	}
	ref := keysOf(base(), d)
	if again := keysOf(base(), d); again != ref {
		t.Fatalf("the same inputs give different keys: %+v, %+v", ref, again)
	}
	tests := []struct {
		name                   string
		change                 func(*resolved, *inputDigests)
		rootfs, osImg, factory bool // which keys must change
	}{
		{"mirror", func(o *resolved, _ *inputDigests) { o.Mirror = "http://mirror.example/debian" }, true, true, true},
		{"security mirror", func(o *resolved, _ *inputDigests) { o.SecurityMirror = "http://mirror.example/security" }, true, true, true},
		{"epoch", func(o *resolved, _ *inputDigests) { o.SourceDateEpoch++ }, true, true, true},
		{"nodezero binary", func(_ *resolved, d *inputDigests) { d.binary = "b2" }, false, true, true},
		{"ignition binary", func(_ *resolved, d *inputDigests) { d.ignition = "i2" }, false, true, true},
		{"release image", func(o *resolved, _ *inputDigests) { o.Payload.ReleaseImage += "-other" }, false, false, true},
		{"openshift version", func(o *resolved, _ *inputDigests) { o.Payload.OpenshiftVersion = "4.19.0" }, false, false, true},
		{"an image of the release", func(o *resolved, _ *inputDigests) { o.Payload.Images.MCO += "-other" }, false, false, true},
		{"output folder", func(o *resolved, _ *inputDigests) { o.Dir = "/elsewhere" }, false, false, false},
		{"payload OS image (Build's own)", func(o *resolved, _ *inputDigests) { o.Payload.OS = diskwrite.Image{File: "x"} }, false, false, false},
	}
	for _, layer := range []string{LayerRootfs, LayerOSImage, LayerFactory} {
		old := recipes[layer]
		recipes[layer] += "+changed"
		got := keysOf(base(), d)
		recipes[layer] = old
		changed := [3]bool{got.rootfs != ref.rootfs, got.os != ref.os, got.factory != ref.factory}
		want := map[string][3]bool{LayerRootfs: {true, true, true}, LayerOSImage: {false, true, true}, LayerFactory: {false, false, true}}[layer]
		if changed != want {
			t.Errorf("%s's recipe changed: changed (rootfs, os-image, factory) = %v, want %v", layer, changed, want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, dd := base(), d
			tc.change(o, &dd)
			got := keysOf(o, dd)
			changed := [3]bool{got.rootfs != ref.rootfs, got.os != ref.os, got.factory != ref.factory}
			if want := [3]bool{tc.rootfs, tc.osImg, tc.factory}; changed != want {
				t.Errorf("changed (rootfs, os-image, factory) = %v, want %v", changed, want)
			}
		})
	}
}

// TestGUIDs: derived GUIDs are stable, shaped as version-4 GUIDs, and
// differ by name and by key.
func TestGUIDs(t *testing.T) {
	a, b := guid("k1", "root-partition"), guid("k1", "root-partition")
	if a != b {
		t.Fatalf("guid is not stable: %s, %s", a, b)
	}
	if !regexp.MustCompile(`^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$`).MatchString(a) {
		t.Errorf("guid %s is not a version-4 GUID", a)
	}
	seen := map[string]string{}
	for _, k := range []string{"k1", "k2"} {
		for _, n := range []string{"disk", "root-partition", "esp-partition"} {
			g := guid(k, n)
			if prev, ok := seen[g]; ok {
				t.Errorf("guid(%s, %s) = guid(%s) = %s", k, n, prev, g)
			}
			seen[g] = k + ", " + n
		}
	}
}

// TestUsedInodes reads dumpe2fs's group lines: the inodes in use are the
// root folder and every inode from the first non-reserved one that no free
// range covers.
func TestUsedInodes(t *testing.T) {
	dump := `Inode count:              16
Free inodes:              6
Group descriptor size:    64
Inodes per group:         8
First inode:              11


Group 0: (Blocks 1-8191) csum 0x635c [ITABLE_ZEROED]
  Free blocks: 100-8191
  Free inodes: 
Group 1: (Blocks 8192-16383) csum 0x1234 [INODE_UNINIT]
  Free inodes: 10, 12-16
`
	got, err := usedInodes([]byte(dump))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int64{2, 11}, got); d != "" {
		t.Errorf("usedInodes (-want +got):\n%s", d)
	}
	if _, err := usedInodes([]byte("Inodes per group: 8\nFirst inode: 11\nGroup 0:\n  Free inodes: 3-99\n")); err == nil {
		t.Error("a free range outside its group was accepted")
	}
}
