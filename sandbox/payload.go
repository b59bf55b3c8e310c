package sandbox

import (
	"bytes"
	"crypto/rand"
	"embed"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
)

// What the sandbox's hosts install: its input set, the payload, and the
// addresses and NICs the hosts stand on.

//go:embed testdata/*.yaml
var inputs embed.FS

// The sandbox's cluster: its name and base domain, and the release image
// its registry serves.
const (
	ClusterName = "sandbox"
	BaseDomain  = "nodezero.test"
	releaseRepo = "ocp/release"
	releaseTag  = "4.18.0-x86_64"
)

// releaseLayer is the release image's one layer: what the image check
// pulls, not what anything runs.
func releaseLayer() []byte { return bytes.Repeat([]byte("nodezero sandbox release payload\n"), 4096) }

// MakePayload generates the OS image (zstd-compressed) of size bytes in
// dir and its payload.json, whose release images lie beside release on its
// registry (nothing pulls them: the sandbox's hosts install with the
// built-in writer); it returns the image's digest.
func MakePayload(dir string, size int64, release string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var raw bytes.Buffer
	img, err := diskwrite.BuildImage(&raw, diskwrite.ImageSpec{Size: size, Seed: 1, IgnitionPartition: "ignition", IgnitionSize: 1 << 20})
	if err != nil {
		return "", fmt.Errorf("sandbox: OS image: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "os.raw.zst"))
	if err != nil {
		return "", err
	}
	if err := diskwrite.CompressZstd(f, &raw); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	img.File = "os.raw.zst"
	p := ReleasePayload(release)
	p.OS = img
	return img.SHA256, diskwrite.WritePayload(dir, &p)
}

// ReleasePayload is what a payload says of the release besides its OS
// image: the release image, its version, and its images beside it on the
// same registry (nothing pulls them: the sandbox's hosts install with the
// built-in writer).
func ReleasePayload(release string) diskwrite.Payload {
	registry, _, ok := strings.Cut(release, "/")
	if !ok {
		registry = "localhost"
	}
	at := func(repo string) string { return registry + "/ocp/" + repo + ":4.18.0" }
	return diskwrite.Payload{ReleaseImage: release, OpenshiftVersion: "4.18.0", Images: diskwrite.ReleaseImages{
		Installer: at("agent-installer-orchestrator"), Controller: at("agent-installer-csr-approver"),
		MCO: at("machine-config-operator"), MustGather: at("must-gather"), Agent: at("agent-installer-node-agent"),
	}}
}

// writeInputs renders the input set in testdata/ into dir for the hosts
// on prefix (the first is node zero), trusting the registry's CA, with
// the NTP server at ntp ("ip:port", or "" for none) as their time source.
func writeInputs(dir string, o Options, prefix netip.Prefix, hosts []*Host, registry string, ca []byte, ntp string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bundle := ""
	if len(ca) > 0 {
		for _, l := range strings.Split(strings.TrimSpace(string(ca)), "\n") {
			bundle += "  " + l + "\n"
		}
		bundle = strings.TrimRight(bundle, "\n")
	}
	data := map[string]any{
		"Masters": o.Masters, "Workers": o.Workers, "Prefix": prefix.String(), "TrustBundle": bundle,
		"Registry": registry, "RendezvousIP": hosts[0].Addr.String(), "Hosts": hosts, "NTP": "",
	}
	if host, _, err := net.SplitHostPort(ntp); err == nil {
		// The hosts' time check asks the sandbox's own server (at the
		// port they are told: --ntp-port), as a config image's
		// additionalNTPSources points real hosts at one.
		data["NTP"] = host
	}
	for _, name := range []string{"install-config.yaml", "agent-config.yaml"} {
		t, err := template.ParseFS(inputs, "testdata/"+name)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return err
		}
		// 0600: install-config.yaml carries the pull secret.
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// randomLoopbackPrefix picks a /24 in 127.0.0.0/8 away from 127.0.0.x.
func randomLoopbackPrefix() netip.Prefix {
	n, _ := rand.Int(rand.Reader, big.NewInt(250*250))
	v := n.Int64()
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{127, byte(2 + v/250), byte(2 + v%250), 0}), 24)
}

// firstNIC is a hardware tree's first network interface (not lo), the one
// a loopback host's address is reported on.
func firstNIC(hw string) (name, mac string, err error) {
	ents, err := os.ReadDir(filepath.Join(hw, "sys/class/net"))
	if err != nil {
		return "", "", fmt.Errorf("sandbox: hardware tree %s: %w (--hw names a directory of trees, one per host: master-0, worker-0…)", hw, err)
	}
	for _, e := range ents {
		if e.Name() == "lo" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(hw, "sys/class/net", e.Name(), "address"))
		if err != nil {
			return "", "", err
		}
		return e.Name(), strings.TrimSpace(string(b)), nil
	}
	return "", "", fmt.Errorf("sandbox: hardware tree %s has no network interface", hw)
}
