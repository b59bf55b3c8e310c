package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/configimage/manifests"
)

// defaultRelease is the payload nodezero installs when no --release-image
// is given.
const defaultRelease = "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64"

// runCreate is `nodezero create <asset>`.
func runCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		createUsage(stderr)
		return errors.New("create: which asset? config-image, cluster-manifests, factory-image or node-config-image")
	}
	switch args[0] {
	case "cluster-manifests":
		return runCreateClusterManifests(ctx, args[1:], stdout, stderr)
	case "config-image":
		return runCreateConfigImage(ctx, args[1:], stdout, stderr)
	case "node-config-image":
		return runCreateNodeConfigImage(ctx, args[1:], stdout, stderr)
	case "factory-image":
		return runCreateFactoryImage(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		createUsage(stdout)
		return flag.ErrHelp
	}
	return fmt.Errorf("create: unknown asset %q: config-image, cluster-manifests, factory-image or node-config-image (nodezero create -h)", args[0])
}

// createUsage lists the assets create makes.
func createUsage(w io.Writer) {
	fmt.Fprint(w, `nodezero create: make an install's assets from install-config.yaml and agent-config.yaml, as openshift-install agent create does

usage: nodezero create <asset> [--dir DIR] [flags]

assets:
  config-image       agentconfig.noarch.iso (label agent_configimage) and auth/: what every host loads
  cluster-manifests  cluster-manifests/: the ZTP manifests, to read or to edit before config-image
  factory-image      factory.raw and factory.qcow2: the disk every host boots, nodezero and the payload on Debian 12
  node-config-image  node-config.noarch.iso: day 2, the hosts of nodes-config.yaml added to an installed cluster (--kubeconfig)

example:
  nodezero create config-image --dir ./mycluster

Run 'nodezero create <asset> -h' for an asset's flags.
`)
}

var versionRE = regexp.MustCompile(`:(\d+\.\d+\.\d+[^-@]*)`)

func releaseFlags(fs *flag.FlagSet) func() configimage.Release {
	image := fs.String("release-image", defaultRelease, "OpenShift release image the install is for")
	version := fs.String("version", "", "OpenShift version (default: from the release image's tag)")
	return func() configimage.Release {
		v := *version
		if m := versionRE.FindStringSubmatch(*image); v == "" && m != nil {
			v = m[1]
		}
		return configimage.Release{Image: *image, Version: v}
	}
}

// loadInstallDir reads and validates an install directory, printing the
// warnings and returning every error at once.
func loadInstallDir(dir string, rel configimage.Release, stderr io.Writer) (*manifests.Set, error) {
	set, _, err := loadInstall(dir, rel, stderr)
	return set, err
}

func loadInstall(dir string, rel configimage.Release, stderr io.Writer) (*manifests.Set, *inputs.AgentConfig, error) {
	ic, ac, rep := configimage.LoadInputs(dir)
	for _, w := range rep.Warnings() {
		fmt.Fprintln(stderr, w.String())
	}
	if err := rep.Err(); err != nil {
		return nil, nil, fmt.Errorf("the inputs in %s have errors:\n%s", dir, errorLines(rep.Errors()))
	}
	spec, err := configimage.SpecFrom(ic, ac, rel)
	if err != nil {
		return nil, nil, err
	}
	if spec.ExtraManifests, err = configimage.ExtraManifests(dir); err != nil {
		return nil, nil, err
	}
	set, err := manifests.Generate(spec)
	return set, ac, err
}

func errorLines[T fmt.Stringer](es []T) string {
	var s string
	for _, e := range es {
		s += e.String() + "\n"
	}
	return s
}

func runCreateClusterManifests(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "create cluster-manifests", "the ZTP manifests (cluster-manifests/) from install-config.yaml and agent-config.yaml, as openshift-install agent create cluster-manifests", "[--dir DIR] [flags]",
		"nodezero create cluster-manifests --dir ./mycluster")
	dir := fs.String("dir", ".", "install directory holding install-config.yaml and agent-config.yaml")
	release := releaseFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	set, err := loadInstallDir(*dir, release(), stderr)
	if err != nil {
		return err
	}
	if err := manifests.Write(*dir, set); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "nodezero create cluster-manifests: wrote %s/%s\n", *dir, manifests.ClusterManifestsDir)
	return nil
}
