package configimage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/configimage/isofs"
	"github.com/nodezero/nodezero/onhost"
)

// ClusterImageSetPath is the manifest a host compares with the config
// image's before it takes the image (load-config-iso.sh): a config image
// made for another release must not configure this factory image.
const ClusterImageSetPath = "/etc/assisted/manifests/cluster-image-set.yaml"

// ErrReleaseMismatch: the config image is for another release than the host.
var ErrReleaseMismatch = errors.New("the config image's cluster-image-set.yaml differs from this host's")

// Load reads the config image in r and extracts it under root. When root
// already holds a cluster-image-set.yaml (the factory image's), the image's
// must be byte-for-byte the same, as load-config-iso.sh checks; when it
// holds none but a factory image's payload, the image's release image must
// be the payload's (a factory image installs only its own release);
// nothing is written otherwise. It returns the members written.
func Load(r io.ReaderAt, size int64, root string, lim Limits) ([]Member, error) {
	members, err := Read(r, size, lim)
	if err != nil {
		return nil, err
	}
	host, err := os.ReadFile(filepath.Join(root, ClusterImageSetPath))
	switch {
	case unpinnedHubImage(members):
		// A hub service's agent (configimage/machineimage) whose image names
		// no release: the hub's cluster chooses it, and the install step
		// names its images; there is nothing here to compare.
	case err == nil:
		var img []byte
		for _, m := range members {
			if m.Path == ClusterImageSetPath {
				img = m.Data
			}
		}
		if img == nil {
			return nil, fmt.Errorf("configimage: load: the image has no %s to compare with the host's: %w", ClusterImageSetPath, ErrReleaseMismatch)
		}
		if !bytes.Equal(img, host) {
			return nil, fmt.Errorf("configimage: load: %s: image has release %q, host has %q: %w",
				ClusterImageSetPath, releaseImage(img), releaseImage(host), ErrReleaseMismatch)
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("configimage: load: %w", err)
	default:
		if err := checkPayloadRelease(members, root); err != nil {
			return nil, err
		}
	}
	if err := Extract(members, root); err != nil {
		return nil, err
	}
	return members, nil
}

// unpinnedHubImage reports whether members are a hub agent's image
// (rendezvous-host.env with INFRA_ENV_ID) without a cluster-image-set.yaml.
func unpinnedHubImage(members []Member) bool {
	hub := false
	for _, m := range members {
		switch m.Path {
		case ClusterImageSetPath:
			return false
		case onhost.RendezvousEnvPath:
			rv, err := onhost.ParseRendezvous(m.Path, m.Data)
			hub = err == nil && rv.Hub()
		}
	}
	return hub
}

// releaseImage picks spec.releaseImage out of a ClusterImageSet for a
// message, without a YAML parser: it is only shown, never trusted.
func releaseImage(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == "releaseImage" {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return "unknown"
}

// FindByLabel returns the block devices under root (root/sys/class/block,
// opened as root/dev/<name>) whose ISO 9660 volume label is label, sorted.
// A device that cannot be opened or holds no ISO is skipped: most block
// devices are not config images.
func FindByLabel(root, label string) ([]string, error) {
	names, err := os.ReadDir(filepath.Join(root, "sys", "class", "block"))
	if err != nil {
		return nil, fmt.Errorf("configimage: list block devices: %w", err)
	}
	var out []string
	for _, n := range names {
		dev := filepath.Join(root, "dev", n.Name())
		f, err := os.Open(dev)
		if err != nil {
			continue
		}
		got, err := isofs.Label(f)
		f.Close()
		if err == nil && got == label {
			out = append(out, dev)
		}
	}
	sort.Strings(out)
	return out, nil
}

// checkPayloadRelease compares the image's ClusterImageSet's release image
// with the release of the factory image's payload under root (payload.json's
// release_image), when there is a payload.
func checkPayloadRelease(members []Member, root string) error {
	path := filepath.Join(root, onhost.PayloadDir, onhost.PayloadFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("configimage: load: %w", err)
	}
	var p struct {
		ReleaseImage string `json:"release_image"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.ReleaseImage == "" {
		return fmt.Errorf("configimage: load: %s: no release_image to compare the image's with (%v)", path, err)
	}
	img := "none"
	for _, m := range members {
		if m.Path == ClusterImageSetPath {
			img = releaseImage(m.Data)
		}
	}
	if img != p.ReleaseImage {
		return fmt.Errorf("configimage: load: %s: image has release %q, this factory image installs %q (%s): %w",
			ClusterImageSetPath, img, p.ReleaseImage, path, ErrReleaseMismatch)
	}
	return nil
}
