package configimage_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/isofs"
	"github.com/nodezero/nodezero/onhost"
)

var imageTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// imageMembers is a small config image: a directory, manifests, a key and
// the rendezvous env file last.
func imageMembers() []configimage.Member {
	return []configimage.Member{
		{Path: "/etc/assisted/manifests", Mode: fs.ModeDir | 0o750},
		{Path: "/etc/assisted/manifests/cluster-image-set.yaml", Mode: 0o644, Data: []byte("kind: ClusterImageSet\n")},
		{Path: "/etc/assisted/manifests/pull-secret.yaml", Mode: 0o600, Data: []byte("kind: Secret\n")},
		{Path: "/opt/agent/tls/kube-apiserver-lb-signer.key", Mode: 0o600, Data: []byte("-----BEGIN EC PRIVATE KEY-----\n")},
		{Path: "/etc/issue", Mode: 0o644, Data: nil},
		{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("NODE_ZERO_IP=192.0.2.10\n")},
	}
}

// realisticMembers is about what the installer puts in a config image: 40
// members, 200 KiB of base64-like text.
func realisticMembers() []configimage.Member {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var ms []configimage.Member
	for i := range 39 {
		data := make([]byte, 5*1024+rng.IntN(256))
		for j := range data {
			data[j] = alphabet[rng.IntN(len(alphabet))]
			if j%65 == 64 {
				data[j] = '\n'
			}
		}
		ms = append(ms, configimage.Member{Path: fmt.Sprintf("/etc/assisted/manifests/file-%02d.yaml", i), Mode: 0o644, Data: data})
	}
	return append(ms, configimage.Member{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("NODE_ZERO_IP=192.0.2.10\n")})
}

func buildConfigImage(t testing.TB, ms []configimage.Member) []byte {
	t.Helper()
	img, err := configimage.Build(ms, imageTime)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestBuildRead(t *testing.T) {
	img := buildConfigImage(t, imageMembers())
	got, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(imageMembers(), got); diff != "" {
		t.Errorf("Read (-want +got):\n%s", diff)
	}
	label, err := isofs.Label(bytes.NewReader(img))
	if err != nil || label != configimage.VolumeLabel {
		t.Errorf("isofs.Label = %q, %v, want %q", label, err, configimage.VolumeLabel)
	}
}

func TestBuildReproducible(t *testing.T) {
	a, b := buildConfigImage(t, realisticMembers()), buildConfigImage(t, realisticMembers())
	if !bytes.Equal(a, b) {
		t.Errorf("two builds of the same members differ")
	}
	c, err := configimage.Build(realisticMembers(), imageTime.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Errorf("builds one second apart are identical, want the time recorded")
	}
}

func TestBuildRefuses(t *testing.T) {
	rv := configimage.Member{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("x")}
	file := func(p string) configimage.Member { return configimage.Member{Path: p, Mode: 0o644} }
	tests := []struct {
		name    string
		members []configimage.Member
		want    error
	}{
		{"no members", nil, configimage.ErrRendezvousNotLast},
		{"rendezvous not last", []configimage.Member{rv, file("/etc/issue")}, configimage.ErrRendezvousNotLast},
		{"rendezvous missing", []configimage.Member{file("/etc/issue")}, configimage.ErrRendezvousNotLast},
		{"relative path", []configimage.Member{file("etc/issue"), rv}, configimage.ErrMemberPath},
		{"dot dot", []configimage.Member{file("/etc/../issue"), rv}, configimage.ErrMemberPath},
		{"not clean", []configimage.Member{file("/etc//issue"), rv}, configimage.ErrMemberPath},
		{"trailing slash", []configimage.Member{file("/etc/issue/"), rv}, configimage.ErrMemberPath},
		{"root", []configimage.Member{file("/"), rv}, configimage.ErrMemberPath},
		{"duplicate", []configimage.Member{file("/etc/issue"), file("/etc/issue"), rv}, configimage.ErrDuplicateMember},
		{"file as parent", []configimage.Member{file("/etc"), rv}, configimage.ErrMemberPath},
		{"symlink", []configimage.Member{{Path: "/etc/l", Mode: fs.ModeSymlink | 0o777}, rv}, configimage.ErrMemberType},
		{"directory with data", []configimage.Member{{Path: "/etc/d", Mode: fs.ModeDir | 0o755, Data: []byte("x")}, rv}, configimage.ErrMemberType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := configimage.Build(tc.members, imageTime)
			if !errors.Is(err, tc.want) || img != nil {
				t.Errorf("Build = %d bytes, %v, want no image and %v", len(img), err, tc.want)
			}
		})
	}
}

// needImageTool returns the path of command name. When it is missing the test
// fails under CI=true, where every tool must be installed, and is skipped
// elsewhere with the reason.
func needImageTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range []string{"/usr/sbin", "/sbin"} { // blkid, for users without sbin in PATH
			if _, serr := os.Stat(filepath.Join(dir, name)); serr == nil {
				return filepath.Join(dir, name)
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true: %v", name, err)
		}
		t.Skipf("%s not installed (%v); CI=true makes this a failure", name, err)
	}
	return p
}

func runTool(t *testing.T, dir string, stdin []byte, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// TestToolsReadBuiltImage does by hand what load-config-iso.sh does with
// the image: blkid finds it by label, xorriso copies config.gz out, gzip
// and GNU cpio unpack it.
func TestToolsReadBuiltImage(t *testing.T) {
	blkid, xorriso, gnuCpio := needImageTool(t, "blkid"), needImageTool(t, "xorriso"), needImageTool(t, "cpio")
	dir := t.TempDir()
	iso := filepath.Join(dir, "agentconfig.noarch.iso")
	if err := os.WriteFile(iso, buildConfigImage(t, imageMembers()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runTool(t, dir, nil, blkid, "-o", "export", iso)
	if !strings.Contains(out, "LABEL=agent_configimage\n") || !strings.Contains(out, "TYPE=iso9660\n") {
		t.Errorf("blkid -o export = %q, want LABEL=agent_configimage and TYPE=iso9660", out)
	}
	runTool(t, dir, nil, xorriso, "-osirrox", "on", "-indev", iso, "-extract", "/config.gz", filepath.Join(dir, "config.gz"))
	gz, err := os.ReadFile(filepath.Join(dir, "config.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.Equal(imageTime) {
		t.Errorf("gzip header name %q mtime %v, want no name and %v", zr.Name, zr.ModTime, imageTime)
	}
	archive := runTool(t, dir, gz, "gzip", "-dc")
	var want []string
	for _, m := range imageMembers() {
		want = append(want, m.Path)
	}
	list := strings.Split(strings.TrimSpace(runTool(t, dir, []byte(archive), gnuCpio, "-t", "--quiet")), "\n")
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("cpio -t (-want +got):\n%s", diff)
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	runTool(t, root, []byte(archive), gnuCpio, "-idm", "--quiet", "--no-absolute-filenames")
	for _, m := range imageMembers() {
		if m.Mode.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, m.Path))
		if err != nil || !bytes.Equal(data, m.Data) {
			t.Errorf("cpio extracted %s = %q (%v), want %q", m.Path, data, err, m.Data)
		}
	}
}

func TestExtract(t *testing.T) {
	root := t.TempDir()
	// An older file in place is replaced.
	if err := os.MkdirAll(filepath.Join(root, "etc/assisted"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, onhost.RendezvousEnvPath), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := configimage.Extract(imageMembers(), root); err != nil {
		t.Fatal(err)
	}
	for _, m := range imageMembers() {
		p := filepath.Join(root, m.Path)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", m.Path, err)
			continue
		}
		if fi.Mode() != m.Mode {
			t.Errorf("%s: mode %v, want %v", m.Path, fi.Mode(), m.Mode)
		}
		if m.Mode.IsDir() {
			continue
		}
		if data, err := os.ReadFile(p); err != nil || !bytes.Equal(data, m.Data) {
			t.Errorf("%s = %q (%v), want %q", m.Path, data, err, m.Data)
		}
	}
	for _, d := range []string{"opt", "opt/agent", "opt/agent/tls"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || fi.Mode() != fs.ModeDir|0o755 {
			t.Errorf("created directory /%s: %v (%v), want drwxr-xr-x", d, fi.Mode(), err)
		}
	}
	var leftovers []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, ".tmp") {
			leftovers = append(leftovers, p)
		}
		return err
	})
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// listTree returns every path under root, root excluded.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p != root {
			out = append(out, strings.TrimPrefix(p, root))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExtractWritesNothingWhenRefusing(t *testing.T) {
	good := imageMembers()
	tests := []struct {
		name    string
		members []configimage.Member
		prepare func(t *testing.T, root string) // what is under root already
		want    error
	}{
		{"dot dot last", append(good, configimage.Member{Path: "/etc/../../escape", Mode: 0o644}), nil, configimage.ErrMemberPath},
		{"relative last", append(good, configimage.Member{Path: "escape", Mode: 0o644}), nil, configimage.ErrMemberPath},
		{"duplicate", append(good, good[1]), nil, configimage.ErrDuplicateMember},
		{"symlink member", append(good, configimage.Member{Path: "/etc/l", Mode: fs.ModeSymlink}), nil, configimage.ErrMemberType},
		{"directory in the way", good, func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, "etc/issue"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, configimage.ErrMemberType},
		{"file in the way of a parent", good, func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, "opt"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, configimage.ErrMemberType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.prepare != nil {
				tc.prepare(t, root)
			}
			before := listTree(t, root)
			if err := configimage.Extract(tc.members, root); !errors.Is(err, tc.want) {
				t.Fatalf("Extract = %v, want %v", err, tc.want)
			}
			if diff := cmp.Diff(before, listTree(t, root)); diff != "" {
				t.Errorf("Extract wrote something (-before +after):\n%s", diff)
			}
		})
	}
}

// TestExtractStaysInRoot: a symlink under root pointing outside it is not
// followed.
func TestExtractStaysInRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	if err := configimage.Extract(imageMembers(), root); err == nil {
		t.Errorf("Extract through a symlink to %s = nil error, want an error", outside)
	}
	if got := listTree(t, outside); len(got) > 0 {
		t.Errorf("Extract wrote outside the root: %v", got)
	}
}

func BenchmarkBuild(b *testing.B) {
	ms := realisticMembers()
	var total int64
	for _, m := range ms {
		total += int64(len(m.Data))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := configimage.Build(ms, imageTime); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead is the parsing part of BenchmarkReadExtract, whose time
// is mostly the fsyncs.
func BenchmarkRead(b *testing.B) {
	img := buildConfigImage(b, realisticMembers())
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadExtract(b *testing.B) {
	img := buildConfigImage(b, realisticMembers())
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	root := b.TempDir()
	for b.Loop() {
		ms, err := configimage.Read(bytes.NewReader(img), int64(len(img)), configimage.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		if err := configimage.Extract(ms, root); err != nil {
			b.Fatal(err)
		}
	}
}
