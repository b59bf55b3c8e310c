package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nodezero/nodezero/units"
)

// unitManager is what `install --now` needs from systemd (units.Systemd).
type unitManager interface {
	Reload(ctx context.Context) error
	Start(ctx context.Context, unit string) error
}

// runInstall is `nodezero install --root DIR`: it lays the binary, the
// units, the udev rule and the enablement links into a host root (a
// factory image tree, or / on a running host) and, with --now on /, has
// systemd reload and start the daemon.
func runInstall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "install", "lay the binary, the systemd units, the udev rule and their enablement links into a factory image tree (or this host with --root / --now)", "--root DIR [flags]",
		"nodezero install --root /mnt/factory-image",
		"nodezero install --root / --now")
	root := fs.String("root", "", "root of the host's filesystem to install into (required; / for this machine)")
	binary := fs.String("binary", "", "the nodezero executable to lay into the root (default: this one)")
	now := fs.Bool("now", false, "with --root /: reload systemd and start "+units.DaemonUnit)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *root == "" {
		return errors.New("install: --root is required (a factory image tree, or / for this machine)")
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	live := abs == "/"
	if *now && !live {
		return fmt.Errorf("install: --now starts units on this machine and needs --root /, not %s", *root)
	}
	src := *binary
	if src == "" {
		if src, err = os.Executable(); err != nil {
			return fmt.Errorf("install: find this executable: %w", err)
		}
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer f.Close()
	res, err := units.Install(abs, units.Params{}, f)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for _, p := range res.Changed {
		fmt.Fprintf(stdout, "nodezero install: wrote %s\n", p)
	}
	for _, p := range res.Removed {
		fmt.Fprintf(stdout, "nodezero install: removed stale link %s\n", p)
	}
	fmt.Fprintf(stdout, "nodezero install: %s: %d files and links, %d changed, %d removed\n",
		abs, len(res.Changed)+len(res.Unchanged), len(res.Changed), len(res.Removed))
	if !*now {
		return nil
	}
	sd, err := units.DialSystem(ctx)
	if err != nil {
		return fmt.Errorf("install --now: %w", err)
	}
	defer sd.Close()
	return startNow(ctx, sd, stdout)
}

// startNow is `systemctl daemon-reload && systemctl start nodezero.service`.
func startNow(ctx context.Context, m unitManager, stdout io.Writer) error {
	if err := m.Reload(ctx); err != nil {
		return fmt.Errorf("install --now: %w", err)
	}
	fmt.Fprintf(stdout, "nodezero install: systemd reloaded; starting %s\n", units.DaemonUnit)
	if err := m.Start(ctx, units.DaemonUnit); err != nil {
		return fmt.Errorf("install --now: %w", err)
	}
	fmt.Fprintf(stdout, "nodezero install: %s started\n", units.DaemonUnit)
	return nil
}
