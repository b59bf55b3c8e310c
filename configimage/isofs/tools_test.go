package isofs_test

import (
	"bytes"
	"github.com/nodezero/nodezero/testbed"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/isofs"
)

// needTool is testbed.NeedTool: fail under CI=true, skip elsewhere.
var needTool = testbed.NeedTool

// run runs a command and returns its stdout; a failure ends the test with
// both outputs.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestXorrisoReadsOurImage(t *testing.T) {
	xorriso := needTool(t, "xorriso")
	dir := t.TempDir()
	iso := filepath.Join(dir, "x.iso")
	files := sampleFiles()
	if err := os.WriteFile(iso, buildImage(t, files), 0o644); err != nil {
		t.Fatal(err)
	}

	root := run(t, dir, xorriso, "-indev", iso, "-lsl", "/")
	for _, want := range []string{"-r--r--r--", "'config.gz'", "'Mixed.Case.Name.txt'", "'etc'"} {
		if !strings.Contains(root, want) {
			t.Errorf("xorriso -lsl / = %q, want it to contain %q", root, want)
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(run(t, dir, xorriso, "-indev", iso, "-find", "/", "-type", "f")), "\n") {
		got = append(got, strings.Trim(line, "'"))
	}
	var want []string
	for _, f := range files {
		want = append(want, "/"+f.path)
	}
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("xorriso -find / -type f (-want +got):\n%s", diff)
	}

	args := []string{"-osirrox", "on", "-indev", iso}
	for i, f := range files {
		args = append(args, "-extract", "/"+f.path, filepath.Join(dir, "out", strings.Repeat("x", i+1)))
	}
	cmd := exec.Command(xorriso, append(args, "-report_about", "WARNING")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xorriso extract: %v\n%s", err, out)
	}
	for _, word := range []string{"WARNING", "SORRY", "FAILURE", "MISHAP"} {
		if bytes.Contains(out, []byte(word)) {
			t.Errorf("xorriso complained while extracting:\n%s", out)
		}
	}
	for i, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, "out", strings.Repeat("x", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, f.data) {
			t.Errorf("extracted /%s: %d bytes differ from the %d written", f.path, len(data), len(f.data))
		}
	}
}

func TestBlkidLabel(t *testing.T) {
	blkid := needTool(t, "blkid")
	iso := filepath.Join(t.TempDir(), "x.iso")
	if err := os.WriteFile(iso, buildImage(t, sampleFiles()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, "", blkid, "-o", "export", iso)
	for _, want := range []string{"LABEL=agent_configimage\n", "TYPE=iso9660\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("blkid -o export = %q, want it to contain %q", out, want)
		}
	}
}

// TestReadXorrisoImages reads images made by xorriso's mkisofs emulation
// with and without Rock Ridge and Joliet.
func TestReadXorrisoImages(t *testing.T) {
	xorriso := needTool(t, "xorriso")
	src := t.TempDir()
	files := map[string]string{
		"config.gz":                   "gzip bytes",
		"etc/assisted/rendezvous.env": "NODE_ZERO_IP=192.0.2.10\n",
		"Mixed.Case.Long-Name.json":   `{"a":1}`,
	}
	for name, data := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name      string
		args      []string
		rockRidge bool
		want      map[string]string // path -> contents
	}{
		{"rock ridge", []string{"-R"}, true, files},
		{"rock ridge and joliet", []string{"-R", "-J"}, true, files},
		{"default options", nil, true, files},
		{"plain", []string{"--norock"}, false, map[string]string{
			"config.gz":                 files["config.gz"],
			"etc/assisted/rendezvo.env": files["etc/assisted/rendezvous.env"],
			"mixed_ca.jso":              files["Mixed.Case.Long-Name.json"],
		}},
		{"joliet only", []string{"--norock", "-J"}, false, map[string]string{"config.gz": files["config.gz"]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iso := filepath.Join(t.TempDir(), "x.iso")
			args := append([]string{"-as", "mkisofs"}, tc.args...)
			run(t, "", xorriso, append(args, "-V", "agent_configimage", "-o", iso, src)...)
			data, err := os.ReadFile(iso)
			if err != nil {
				t.Fatal(err)
			}
			im, err := isofs.Open(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if im.Label() != "agent_configimage" || im.RockRidge() != tc.rockRidge {
				t.Errorf("Label, RockRidge = %q, %v, want %q, %v", im.Label(), im.RockRidge(), "agent_configimage", tc.rockRidge)
			}
			for name, want := range tc.want {
				got, err := im.ReadFile(name)
				if err != nil {
					t.Errorf("ReadFile(%q): %v", name, err)
					continue
				}
				if string(got) != want {
					t.Errorf("ReadFile(%q) = %q, want %q", name, got, want)
				}
			}
			if tc.rockRidge {
				fi, err := im.Stat("config.gz")
				if err != nil || fi.Mode() != 0o640 {
					t.Errorf("Stat(config.gz) mode = %v (%v), want -rw-r-----", fi.Mode(), err)
				}
			}
			if label, err := isofs.Label(bytes.NewReader(data)); err != nil || label != "agent_configimage" {
				t.Errorf("Label() = %q, %v, want agent_configimage", label, err)
			}
		})
	}
}
