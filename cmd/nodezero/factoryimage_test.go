package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/factoryimage"
	"github.com/nodezero/nodezero/testbed"
)

// create factory-image -h says what the image is, how long a build takes,
// what a production base needs, and the flags; a wrong flag is named.
func TestCreateFactoryImageHelp(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"create", "factory-image", "-h"}, &out, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("create factory-image -h: %v, want flag.ErrHelp (exit 0)", err)
	}
	for _, want := range []string{
		"nodezero create factory-image: the factory disk image every host boots, as factory.raw and factory.qcow2",
		"usage: nodezero create factory-image [--dir DIR]",
		"\n  nodezero create factory-image --dir ./images\n",
		"cached by its inputs",
		"A production base (an RHCOS or FCOS raw disk image) needs",
		"-release-image string", "-cache string", "-base string", "-mirror string",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("create factory-image -h lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"create", "-h"}, &out, &out); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "\n  factory-image ") {
		t.Errorf("create -h: %v, does not list factory-image:\n%s", err, out.String())
	}

	notStatic := "/etc/hostname" // not an executable, let alone a static one
	if os.Geteuid() != 0 {
		notStatic = "needs root" // said first
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--dir"}, "flag needs an argument: -dir"},
		{[]string{"images"}, `unexpected argument "images"`},
		{[]string{"--binary", "/etc/hostname", "--dir", t.TempDir()}, notStatic},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), append([]string{"create", "factory-image"}, tc.args...), &out, &out)
			if err == nil || !strings.Contains(err.Error()+out.String(), tc.want) {
				t.Errorf("%v: %v\n%s\nwant an error naming %q", tc.args, err, out.String(), tc.want)
			}
		})
	}
}

// --base reads the image's partition table and says what it found: not a
// GPT disk, no root partition, or (RHCOS's layout) refused as not done yet.
func TestCreateFactoryImageBase(t *testing.T) {
	sgdisk := testbed.NeedTool(t, "sgdisk")
	testbed.NeedTool(t, "sfdisk")
	dir := t.TempDir()
	disk := func(name string, parts ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 64<<20); err != nil {
			t.Fatal(err)
		}
		if len(parts) > 0 {
			if out, err := exec.Command(sgdisk, append(parts, p)...).CombinedOutput(); err != nil {
				t.Fatalf("sgdisk: %v\n%s", err, out)
			}
		}
		return p
	}
	rhcos := disk("rhcos.raw", "-n", "1:2048:+1M", "-t", "1:ef02", "-c", "1:BIOS-BOOT",
		"-n", "2:0:+16M", "-t", "2:ef00", "-c", "2:EFI-SYSTEM", "-n", "3:0:+8M", "-t", "3:8300", "-c", "3:boot",
		"-n", "4:0:0", "-t", "4:8300", "-c", "4:root")
	noRoot := disk("noroot.raw", "-n", "1:2048:+16M", "-t", "1:ef00", "-c", "1:EFI-SYSTEM")
	blank := disk("blank.raw")
	qcow := filepath.Join(dir, "base.qcow2")
	if err := os.WriteFile(qcow, []byte("QFI\xfb\x00\x00\x00\x03"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		base        string
		want        []string
		unsupported bool
	}{
		{rhcos, []string{rhcos + ": a GPT disk with root partition 4 and EFI system partition 2", `1 "BIOS-BOOT"`, `4 "root"`, "not supported yet", "Build without --base"}, true},
		{noRoot, []string{noRoot + `: no root partition (want one named "root"`}, false},
		{blank, []string{blank + ": no partition table"}, false},
		{qcow, []string{qcow + " is a qcow2 image; want a raw disk image (qemu-img convert -O raw"}, false},
		{filepath.Join(dir, "missing.raw"), []string{"missing.raw: no such file or directory"}, false},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.base), func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), []string{"create", "factory-image", "--dir", t.TempDir(), "--base", tc.base}, &out, &out)
			if err == nil {
				t.Fatal("--base was accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if got := errors.Is(err, factoryimage.ErrBaseUnsupported); got != tc.unsupported {
				t.Errorf("errors.Is(ErrBaseUnsupported) = %v, want %v", got, tc.unsupported)
			}
		})
	}
}

// Component images default to the release image's registry.
func TestBesideRelease(t *testing.T) {
	for release, want := range map[string]string{
		"registry.example:5000/ocp/release:4.18.0-x86_64":         "registry.example:5000/ocp/must-gather:4.18.0",
		"quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64": "quay.io/ocp/must-gather:4.18.0",
		"release": "localhost/ocp/must-gather:4.18.0",
	} {
		if got := besideRelease(release, "must-gather", "4.18.0"); got != want {
			t.Errorf("besideRelease(%q) = %q, want %q", release, got, want)
		}
	}
}

// The command as a person runs it (root, the Debian mirror for a first
// build): it writes both files and says, per layer, how long it took and
// whether it came from the cache; run again, every layer comes from the
// cache.
func TestCreateFactoryImageRuns(t *testing.T) {
	testbed.NeedRoot(t)
	for _, tool := range []string{"mmdebstrap", "mkfs.ext4", "debugfs", "mkfs.vfat", "mcopy", "sgdisk", "qemu-img", "zstd"} {
		testbed.NeedTool(t, tool)
	}
	if _, err := factoryimage.FindIgnition(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (required when CI=true)", err)
		}
		t.Skipf("%v; CI=true makes this a failure", err)
	}
	bin := nodezeroBinary(t)
	layer := regexp.MustCompile(`(?m)^  (rootfs|os-image|factory) +(built in [0-9hms.]+|from the cache \(built [^)]+\)), key [0-9a-f]{16}, `)
	for i, wantCached := range []bool{false, true} {
		dir := t.TempDir()
		cmd := exec.Command(bin, "create", "factory-image", "--dir", dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run %d: %v\n%s\n%s", i+1, err, stdout.String(), stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "nodezero create factory-image: wrote "+filepath.Join(dir, "factory.raw")+" (") ||
			!strings.Contains(out, " and "+filepath.Join(dir, "factory.qcow2")+" (") {
			t.Errorf("run %d: stdout does not say what it wrote:\n%s", i+1, out)
		}
		ls := layer.FindAllStringSubmatch(out, -1)
		if len(ls) != 3 {
			t.Fatalf("run %d: want a line for each of the 3 layers:\n%s", i+1, out)
		}
		for _, l := range ls {
			if cached := strings.HasPrefix(l[2], "from the cache"); wantCached && !cached {
				t.Errorf("run %d: layer %s %s, want it from the cache", i+1, l[1], l[2])
			}
		}
		for _, f := range []string{"factory.raw", "factory.qcow2"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("run %d: %s: %v", i+1, f, err)
			}
		}
		t.Logf("run %d:\n%s", i+1, out)
	}
}

// Not as root, the command says it needs root before it does anything.
func TestCreateFactoryImageNeedsRoot(t *testing.T) {
	testbed.NeedRoot(t)
	setpriv := testbed.NeedTool(t, "setpriv")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "nodezero")
	b, err := os.ReadFile(nodezeroBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"create", "factory-image", "--dir", filepath.Join(dir, "images")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "needs root (running as uid 65534)") {
		t.Errorf("as uid 65534: %v\n%s\nwant it refused: needs root", err, out)
	}
}
