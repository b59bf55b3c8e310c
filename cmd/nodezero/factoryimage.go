package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/nodezero/nodezero/factoryimage"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
)

// runCreateFactoryImage is `nodezero create factory-image --dir D`.
func runCreateFactoryImage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "create factory-image",
		"the factory disk image every host boots, as factory.raw and factory.qcow2 (zstd): Debian 12, nodezero as nodezero install lays it, and the payload, whose OS image (the installed OS) applies the host's Ignition config with Ignition on its first boot\n\n"+
			"The first build needs root, mmdebstrap and the Debian mirror (about 5 min); every layer is cached by its inputs, so the next build takes seconds. It prints what it made, each layer's time and whether it came from the cache; the tools' output goes to stderr.\n\n"+
			factoryimage.BaseNeeds,
		"[--dir DIR] [--cache DIR] [--release-image REF] [flags]",
		"nodezero create factory-image --dir ./images",
		"nodezero create factory-image --dir ./images --release-image registry.example:5000/ocp/release:4.18.0-x86_64")
	dir := fs.String("dir", ".", "where factory.raw and factory.qcow2 go")
	cache := fs.String("cache", "", "the layer cache (default: $"+factoryimage.EnvCache+", else ~/.cache/nodezero-images)")
	release := releaseFlags(fs)
	images := map[string]*string{}
	for _, c := range []struct{ flag, name, what string }{
		{"installer-image", "agent-installer-orchestrator", "the assisted-installer image"},
		{"controller-image", "agent-installer-csr-approver", "the assisted-installer controller image"},
		{"mco-image", "machine-config-operator", "the machine-config-operator image"},
		{"must-gather-image", "must-gather", "the must-gather image"},
	} {
		images[c.flag] = fs.String(c.flag, "", fmt.Sprintf("%s the install step names (default: REGISTRY/ocp/%s:VERSION, REGISTRY being the release image's)", c.what, c.name))
	}
	agentImage := fs.String("agent-image", "", "the agent image (optional)")
	binary := fs.String("binary", "", "the static nodezero executable both images carry (default: this one)")
	ignition := fs.String("ignition", "", "the ignition executable the installed OS runs (default: $"+factoryimage.EnvIgnition+", else the one tools/ignition/build.sh put in the tools cache)")
	mirror := fs.String("mirror", "", "the Debian archive (default "+factoryimage.DefaultMirror+")")
	security := fs.String("security-mirror", "", "the Debian security archive (default "+factoryimage.DefaultSecurityMirror+")")
	var env []string
	fs.Func("service-env", "KEY=VALUE added to nodezero.service's environment on every host of the image (repeatable), e.g. HW_VALIDATOR_REQUIREMENTS or DISABLED_STEPS for node zero's service", func(v string) error {
		env = append(env, v)
		return nil
	})
	base := fs.String("base", "", "a production base disk image (RHCOS or FCOS, raw): checked, then refused (see above)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	rel := release()
	at := func(flag, name string) string {
		if v := *images[flag]; v != "" {
			return v
		}
		return besideRelease(rel.Image, name, rel.Version)
	}
	res, err := factoryimage.Build(ctx, factoryimage.Options{
		Dir: *dir, Cache: *cache, Binary: *binary, Ignition: *ignition,
		Mirror: *mirror, SecurityMirror: *security, Base: *base, ServiceEnv: env, Log: stderr,
		Payload: diskwrite.Payload{
			ReleaseImage: rel.Image, OpenshiftVersion: rel.Version,
			Images: diskwrite.ReleaseImages{
				Installer:  at("installer-image", "agent-installer-orchestrator"),
				Controller: at("controller-image", "agent-installer-csr-approver"),
				MCO:        at("mco-image", "machine-config-operator"),
				MustGather: at("must-gather-image", "must-gather"),
				Agent:      *agentImage,
			},
		},
	})
	if err != nil {
		return fmt.Errorf("create factory-image: %w", err)
	}
	fmt.Fprint(stdout, "nodezero create factory-image: "+res.Summary())
	return nil
}

// besideRelease names a release's component image in the release image's
// registry, as the sandbox's registry serves them: REGISTRY/ocp/NAME:VERSION.
func besideRelease(release, name, version string) string {
	registry, _, ok := strings.Cut(release, "/")
	if !ok {
		registry = "localhost"
	}
	return registry + "/ocp/" + name + ":" + version
}
