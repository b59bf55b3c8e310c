package machineimage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// IgnitionVersion is the Ignition spec the Ignition format is written in:
// 3.2.0, which every CoreOS live image since OpenShift 4.8 reads.
const IgnitionVersion = "3.2.0"

// The few Ignition v3 shapes this package writes (the spec's config,
// storage.files with inline data URLs): written here rather than taken
// from coreos/ignition, which the configimage packages do not import; the
// test parses the result with coreos/ignition's own parser.
type ignConfig struct {
	Ignition ignMeta    `json:"ignition"`
	Storage  ignStorage `json:"storage"`
}

type ignMeta struct {
	Version string `json:"version"`
}

type ignStorage struct {
	Files []ignNode `json:"files,omitempty"`
}

type ignNode struct {
	Path      string       `json:"path"`
	Mode      int          `json:"mode"`
	Overwrite bool         `json:"overwrite"`
	Contents  *ignContents `json:"contents,omitempty"`
}

type ignContents struct {
	Source string `json:"source"`
}

// Ignition is the Ignition v3 config that writes Members(s) onto a CoreOS
// live host (its files with their modes, rendezvous-host.env last; Ignition
// makes the parent directories), for infrastructure providers that pass user data instead of
// a disk. The same spec gives the same bytes.
func Ignition(s Spec) ([]byte, error) {
	ms, err := Members(s)
	if err != nil {
		return nil, err
	}
	cfg := ignConfig{Ignition: ignMeta{Version: IgnitionVersion}}
	for _, m := range ms {
		if m.Mode.IsDir() {
			// Ignition makes a file's missing parents (0755, root's), and
			// leaves the existing ones (/etc, /root) as they are.
			continue
		}
		n := ignNode{Path: m.Path, Mode: int(m.Mode.Perm()), Overwrite: true}
		n.Contents = &ignContents{Source: "data:;base64," + base64.StdEncoding.EncodeToString(m.Data)}
		cfg.Storage.Files = append(cfg.Storage.Files, n)
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("machine image %s/%s: ignition: %w", s.Machine.Namespace, s.Machine.Name, err)
	}
	return b, nil
}
