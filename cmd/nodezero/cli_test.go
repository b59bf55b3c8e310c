package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/units"
)

// everyCommand is each command line whose help a person can ask for: the
// commands, create's assets, sandbox clean and add-nodes, wait-for
// add-nodes.
func everyCommand() [][]string {
	var out [][]string
	for _, c := range commands() {
		out = append(out, strings.Fields(c.name))
	}
	return append(out, []string{"create"}, []string{"sandbox", "clean"}, []string{"sandbox", "add-nodes"}, []string{"wait-for", "add-nodes"})
}

// Every command's -h and --help prints its purpose, usage and an example
// and is no error (main ends it with 0); a command given a positional
// argument it does not take refuses it, naming it.
func TestEveryCommandHelps(t *testing.T) {
	for _, cmd := range everyCommand() {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			for _, h := range []string{"-h", "--help"} {
				var out bytes.Buffer
				err := run(context.Background(), append(append([]string{}, cmd...), h), &out, &out)
				if err != nil && !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("%s %s: %v\n%s", name, h, err, out.String())
				}
				for _, want := range []string{"nodezero " + name + ": ", "usage: nodezero " + name, "example", "\n  nodezero " + name} {
					if !strings.Contains(out.String(), want) {
						t.Errorf("%s %s lacks %q:\n%s", name, h, want, out.String())
					}
				}
			}
			if name == "create" {
				return
			}
			var out bytes.Buffer
			args := append(append([]string{}, cmd...), "stray")
			if name == "wait-for" {
				args = []string{"wait-for", "install-complete", "stray"}
			}
			err := run(context.Background(), args, &out, &out)
			if err == nil || !strings.Contains(err.Error(), `"stray"`) {
				t.Errorf("%q: %v, want the stray argument refused by name", args, err)
			}
		})
	}
}

// The top-level help names every command, create's assets among them.
func TestTopLevelHelp(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"create config-image", "create cluster-manifests", "sandbox", "wait-for", "gather", "--version"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("top-level help lacks %q:\n%s", want, out.String())
		}
	}
}

// The binary's exit statuses: help asked for is 0, no command is 2, an
// unknown flag is an error (1), --version works.
func TestHelpExitStatus(t *testing.T) {
	bin := nodezeroBinary(t)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--help"}, 0},
		{[]string{"sandbox", "-h"}, 0},
		{[]string{"create", "--help"}, 0},
		{[]string{"create", "config-image", "-h"}, 0},
		{[]string{"--version"}, 0},
		{nil, 2},
		{[]string{"sandbox", "--no-such-flag"}, 1},
	} {
		err := exec.Command(bin, tc.args...).Run()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("nodezero %q: exit %d, want %d", tc.args, got, tc.want)
		}
	}
}

// Commands that could harm a workstation or mislead refuse with what to
// give instead.
func TestCommandTraps(t *testing.T) {
	dir := t.TempDir()
	// This machine as a workstation, whatever the test machine has.
	defer func(r string) { liveRoot = r }(liveRoot)
	liveRoot = t.TempDir()
	// An install directory with install-config.yaml only.
	ic, err := os.ReadFile(filepath.Join("..", "..", "configimage", "inputs", "testdata", "compact", "install-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "install-config.yaml"), ic, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// It would write /etc/chrony.conf and more into this machine.
		{[]string{"load-config-image", "--file", "x.iso"}, []string{"--root is required"}},
		{[]string{"gather", "--root", filepath.Join(dir, "no-such-root")}, []string{"no-such-root", "not a directory"}},
		// Not a field error in a file that is not there.
		{[]string{"create", "config-image", "--dir", dir}, []string{filepath.Join(dir, "agent-config.yaml") + " not found", "rendezvousIP"}},
		// The flag is in MiB; so is the error.
		{[]string{"sandbox", "--image-size", "0"}, []string{"--image-size 0", "at least 3 (MiB)"}},
		{[]string{"run", "--reboot-delay", "soon"}, []string{`--reboot-delay "soon"`}},
	} {
		var out bytes.Buffer
		err := run(context.Background(), tc.args, &out, &out)
		if err == nil {
			t.Errorf("%q succeeded", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: %v, want it to say %q", tc.args, err, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "agentconfig.noarch.iso")); err == nil {
		t.Error("create config-image without agent-config.yaml wrote an image")
	}
}

// load-config-image without --root extracts into / only on a host booted
// from the factory image, which `nodezero install` marks with its daemon
// unit; anywhere else it refuses and says to pass --root.
func TestLoadConfigImageDefaultRoot(t *testing.T) {
	img, err := configimage.Build([]configimage.Member{
		{Path: onhost.RendezvousEnvPath, Mode: 0o644, Data: []byte("NODE_ZERO_IP=192.168.111.80\n")},
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "agentconfig.noarch.iso")
	if err := os.WriteFile(iso, img, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(r string) { liveRoot = r }(liveRoot)
	liveRoot = t.TempDir()
	env := filepath.Join(liveRoot, onhost.RendezvousEnvPath)

	var out bytes.Buffer
	err = run(context.Background(), []string{"load-config-image", "--file", iso}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "--root is required") || !strings.Contains(err.Error(), "not booted from the factory image") {
		t.Fatalf("on a workstation: %v, want --root required, saying why", err)
	}
	if _, err := os.Stat(env); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("on a workstation it wrote %s (%v)", env, err)
	}

	if _, err := units.Install(liveRoot, units.Params{}, strings.NewReader("#!/bin/false\n")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"load-config-image", "--file", iso}, &out, &out); err != nil {
		t.Fatalf("on a factory host: %v\n%s", err, out.String())
	}
	if b, err := os.ReadFile(env); err != nil || string(b) != "NODE_ZERO_IP=192.168.111.80\n" {
		t.Errorf("on a factory host, %s = %q, %v; want the image's", env, b, err)
	}
}

// Flag texts read as written: a default is said once (never "(default
// -1ns)" after a text that states its own), and a flag with a short form is
// one entry, not two.
func TestFlagTexts(t *testing.T) {
	for _, cmd := range everyCommand() {
		if len(cmd) == 1 && cmd[0] == "create" {
			continue
		}
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), append(append([]string{}, cmd...), "-h"), &out, &out); err != nil && !errors.Is(err, flag.ErrHelp) {
				t.Fatal(err)
			}
			_, flags, ok := strings.Cut(out.String(), "\nflags:\n")
			if !ok && cmd[0] != "version" {
				t.Fatalf("no flags section:\n%s", out.String())
			}
			for _, entry := range strings.Split(flags, "\n  -")[1:] {
				if n := strings.Count(entry, "(default"); n > 1 {
					t.Errorf("-%s: %d defaults, want 1", entry, n)
				}
				if strings.Contains(entry, "(default -") {
					t.Errorf("-%s: a negative default means nothing to a reader", entry)
				}
			}
		})
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"gather", "-h"}, &out, &out); err != nil && !errors.Is(err, flag.ErrHelp) {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "output"); !strings.Contains(out.String(), "\n  -O, -output string\n") || got != 1 {
		t.Errorf("gather -h: -O and -output are not one entry (%d mentions of output):\n%s", got, out.String())
	}
}
