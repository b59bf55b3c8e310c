package cpio_test

import (
	"bytes"
	"errors"
	"github.com/nodezero/nodezero/testbed"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/cpio"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// run runs a command in dir with stdin and returns its stdout; a failure
// ends the test with both outputs.
func run(t *testing.T, dir string, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes()
}

func TestGNUListsOurArchive(t *testing.T) {
	gnu := needTool(t, "cpio")
	out := run(t, t.TempDir(), writeArchive(t, sampleMembers()), gnu, "-t", "--quiet")
	var want []string
	for _, m := range sampleMembers() {
		want = append(want, m.Header.Name)
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(string(out)), "\n")); diff != "" {
		t.Errorf("cpio -t (-want +got):\n%s", diff)
	}
}

func TestGNUExtractsOurArchive(t *testing.T) {
	gnu := needTool(t, "cpio")
	dir := t.TempDir()
	run(t, dir, writeArchive(t, sampleMembers()), gnu, "-idm", "--quiet", "--no-absolute-filenames")
	for _, m := range sampleMembers() {
		p := filepath.Join(dir, filepath.FromSlash(m.Header.Name))
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", m.Header.Name, err)
			continue
		}
		if fi.Mode() != m.Header.Mode {
			t.Errorf("%s: mode %v, want %v", m.Header.Name, fi.Mode(), m.Header.Mode)
		}
		if fi.IsDir() {
			continue // GNU cpio sets its mtime before extracting what is inside
		}
		if !fi.ModTime().Equal(m.Header.ModTime) {
			t.Errorf("%s: mtime %v, want %v", m.Header.Name, fi.ModTime(), m.Header.ModTime)
		}
		data, err := os.ReadFile(p)
		if err != nil || string(data) != m.Data {
			t.Errorf("%s = %q (%v), want %q", m.Header.Name, data, err, m.Data)
		}
	}
}

// gnuArchive makes a newc archive of dir with GNU cpio from find's "./x"
// names, which GNU cpio stores as "x".
func gnuArchive(t *testing.T, gnu, dir string) []byte {
	t.Helper()
	names := run(t, dir, nil, "find", ".", "-mindepth", "1")
	lines := strings.Split(strings.TrimSpace(string(names)), "\n")
	slices.Sort(lines)
	return run(t, dir, []byte(strings.Join(lines, "\n")+"\n"), gnu, "-o", "-H", "newc", "--quiet")
}

func TestReadGNUArchive(t *testing.T) {
	gnu := needTool(t, "cpio")
	dir := t.TempDir()
	files := map[string]string{"a.txt": "alpha\n", "sub/b.bin": "\x00\x01\x02", "sub/deeper/empty": ""}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	mtime := time.Unix(1600000000, 0)
	if err := os.Chtimes(filepath.Join(dir, "a.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	got, err := readArchive(gnuArchive(t, gnu, dir), cpio.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range got {
		name := m.Header.Name
		seen[name] = true
		if m.Header.Mode.IsDir() {
			continue
		}
		if m.Data != files[name] || m.Header.Mode != 0o640 {
			t.Errorf("%s: %q mode %v, want %q -rw-r-----", m.Header.Name, m.Data, m.Header.Mode, files[name])
		}
		if name == "a.txt" && !m.Header.ModTime.Equal(mtime) {
			t.Errorf("a.txt mtime %v, want %v", m.Header.ModTime, mtime)
		}
	}
	for _, want := range []string{"a.txt", "sub", "sub/b.bin", "sub/deeper", "sub/deeper/empty"} {
		if !seen[want] {
			t.Errorf("member %s missing from %v", want, seen)
		}
	}
}

// TestRefuseGNUSpecialFiles reads GNU archives holding a symlink, a hard
// link and a fifo.
func TestRefuseGNUSpecialFiles(t *testing.T) {
	gnu := needTool(t, "cpio")
	tests := []struct {
		name   string
		make   func(dir string) error
		want   error
		member string
	}{
		{"symlink", func(dir string) error { return os.Symlink("/etc/shadow", filepath.Join(dir, "link")) }, cpio.ErrSymlink, "link"},
		{"hard link", func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
				return err
			}
			return os.Link(filepath.Join(dir, "f"), filepath.Join(dir, "g"))
		}, cpio.ErrHardLink, "f"},
		{"fifo", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644) }, cpio.ErrFIFO, "fifo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(dir); err != nil {
				t.Fatal(err)
			}
			_, err := readArchive(gnuArchive(t, gnu, dir), cpio.Limits{})
			var me *cpio.MemberError
			if !errors.Is(err, tc.want) || !errors.As(err, &me) || me.Name != tc.member {
				t.Errorf("read = %v, want %v naming %q", err, tc.want, tc.member)
			}
		})
	}
}
