package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/units"
)

// TestInstallCommand runs `install` twice on a temp root: the first run
// writes the binary, units, rule and links and says so; the second writes
// nothing.
func TestInstallCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "nodezero")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := runInstall(t.Context(), []string{"--root", root, "--binary", bin}, &out, &errOut); err != nil {
		t.Fatalf("install: %v\n%s", err, errOut.String())
	}
	for _, want := range []string{
		"wrote usr/local/bin/nodezero\n",
		"wrote etc/systemd/system/" + units.DaemonUnit + "\n",
		"wrote etc/udev/rules.d/" + units.ConfigImageRule + "\n",
		"wrote etc/systemd/system/multi-user.target.wants/" + units.DaemonUnit + "\n",
		root + ": 11 files and links, 11 changed, 0 removed\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("install output lacks %q:\n%s", want, out.String())
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "usr/local/bin/nodezero")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("binary in root: %v, %v", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(root, "etc/systemd/system/multi-user.target.wants", units.DaemonUnit)); err != nil || target != "/etc/systemd/system/"+units.DaemonUnit {
		t.Errorf("enablement link -> %q, %v", target, err)
	}

	out.Reset()
	if err := runInstall(t.Context(), []string{"--root", root, "--binary", bin}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if want := "nodezero install: " + root + ": 11 files and links, 0 changed, 0 removed\n"; out.String() != want {
		t.Errorf("second install printed %q, want %q", out.String(), want)
	}
}

func TestInstallCommandErrors(t *testing.T) {
	root := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no root", nil},
		{"now off this machine", []string{"--root", root, "--now"}},
		{"missing binary", []string{"--root", root, "--binary", filepath.Join(root, "absent")}},
		{"missing root", []string{"--root", filepath.Join(root, "absent")}},
		{"stray argument", []string{"--root", root, "extra"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := runInstall(t.Context(), c.args, &out, &errOut); err == nil {
				t.Errorf("install %q = nil error, want one; output %s", c.args, out.String())
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Errorf("install %q wrote into the root: %v", c.args, entries)
			}
		})
	}
}

// recordingManager stands in for PID 1 (units.Systemd is tested against a
// stand-in manager on a private D-Bus in package units).
type recordingManager struct {
	calls    []string
	startErr error
}

func (m *recordingManager) Reload(context.Context) error {
	m.calls = append(m.calls, "reload")
	return nil
}

func (m *recordingManager) Start(_ context.Context, unit string) error {
	m.calls = append(m.calls, "start "+unit)
	return m.startErr
}

func TestStartNow(t *testing.T) {
	m := &recordingManager{}
	var out bytes.Buffer
	if err := startNow(t.Context(), m, &out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"reload", "start " + units.DaemonUnit}, m.calls); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	failed := &units.JobError{Unit: units.DaemonUnit, Result: "failed"}
	m = &recordingManager{startErr: failed}
	if err := startNow(t.Context(), m, &out); !errors.Is(err, failed) {
		t.Errorf("startNow with a failed job = %v, want it to wrap %v", err, failed)
	}
}
