package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/units"
)

// liveRoot is the root of the machine this runs on; tests point it at a
// directory of their own.
var liveRoot = "/"

// factoryHost reports whether root is a host booted from the factory image:
// `nodezero install` laid its daemon unit there (it does into every factory
// image). Nothing else on a workstation has that file.
func factoryHost(root string) bool {
	fi, err := os.Stat(filepath.Join(root, units.UnitDir, units.DaemonUnit))
	return err == nil && fi.Mode().IsRegular()
}

// runLoadConfigImage is `nodezero load-config-image`: what a host does
// with an inserted config image, by hand.
func runLoadConfigImage(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "load-config-image", "extract a config image into a host's root, as a host does when one is inserted", "--root DIR (--file ISO | --device DEV|auto)",
		"nodezero load-config-image --root /var/tmp/host0 --file agentconfig.noarch.iso")
	root := fs.String("root", "", "root of the host's filesystem to extract into (default: / on a host booted from the factory image, that is one with "+units.DaemonUnit+" installed; required anywhere else)")
	device := fs.String("device", "", "block device holding the config image; \"auto\" finds it by its agent_configimage label")
	file := fs.String("file", "", "config image file (agentconfig.noarch.iso)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *root == "" {
		// / by default only where a config image belongs: on a workstation
		// it would write /etc/chrony.conf, /root/.docker/config.json and
		// NetworkManager keyfiles into the machine itself.
		if !factoryHost(liveRoot) {
			return fmt.Errorf("load-config-image: --root is required: this machine was not booted from the factory image (no %s), so give the directory to extract into, e.g. --root /var/tmp/host0", filepath.Join(liveRoot, units.UnitDir, units.DaemonUnit))
		}
		*root = liveRoot
	}
	src := *file
	switch {
	case (*device == "") == (*file == ""):
		return errors.New("load-config-image: give exactly one of --device and --file")
	case *device == "auto":
		devs, err := configimage.FindByLabel(*root, configimage.VolumeLabel)
		if err != nil {
			return err
		}
		if len(devs) == 0 {
			return fmt.Errorf("load-config-image: no block device under %s is labelled %s: insert or attach the config image", *root, configimage.VolumeLabel)
		}
		src = devs[0]
	case *device != "":
		src = *device
	}
	if err := os.MkdirAll(*root, 0o755); err != nil {
		return fmt.Errorf("load-config-image: %w", err)
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("load-config-image: %w", err)
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd) // works for block devices, unlike Stat
	if err != nil {
		return fmt.Errorf("load-config-image: size of %s: %w", src, err)
	}
	members, err := configimage.Load(f, size, *root, configimage.Limits{})
	if err != nil {
		return fmt.Errorf("load-config-image %s: %w", src, err)
	}
	fmt.Fprintf(stdout, "nodezero load-config-image: %d files from %s written under %s, %s last\n", len(members), src, *root, onhost.RendezvousEnvPath)
	return nil
}
