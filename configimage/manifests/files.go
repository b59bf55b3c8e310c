package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nodezero/nodezero/internal/atomicfile"
)

// Directory and file names, as openshift-install agent create
// cluster-manifests writes them (pkg/asset/agent/manifests) and as
// agent-installer-client reads them (its *_FILE defaults).
const (
	ClusterManifestsDir     = "cluster-manifests"
	ExtraManifestsDir       = "openshift"
	ClusterDeploymentFile   = "cluster-deployment.yaml"
	AgentClusterInstallFile = "agent-cluster-install.yaml"
	ClusterImageSetFile     = "cluster-image-set.yaml"
	InfraEnvFile            = "infraenv.yaml"
	PullSecretFile          = "pull-secret.yaml"
	NMStateConfigFile       = "nmstateconfig.yaml"
)

// File is one file of a Set: Name is relative to the asset directory
// (cluster-manifests/… or openshift/…).
type File struct {
	Name string
	Data []byte
}

// Files renders the set: the ZTP manifests in the installer's layout, then
// the extra manifests as they are. nmstateconfig.yaml is left out when
// there is no NMStateConfig, as the installer leaves it out.
func (s *Set) Files() ([]File, error) {
	if s == nil {
		return nil, errors.New("render manifests: no set")
	}
	var out []File
	one := func(name string, v any) error {
		if isNil(v) {
			return fmt.Errorf("render manifests: %s: missing", name)
		}
		b, err := marshal(v)
		if err != nil {
			return fmt.Errorf("render manifests: %s: %w", name, err)
		}
		out = append(out, File{Name: path.Join(ClusterManifestsDir, name), Data: b})
		return nil
	}
	for _, f := range []struct {
		name string
		v    any
	}{
		{AgentClusterInstallFile, s.AgentClusterInstall},
		{ClusterDeploymentFile, s.ClusterDeployment},
		{ClusterImageSetFile, s.ClusterImageSet},
		{InfraEnvFile, s.InfraEnv},
		{PullSecretFile, s.PullSecret},
	} {
		if err := one(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if len(s.NMStateConfigs) > 0 {
		// One document after another, each followed by "---" (the
		// installer's nmstateconfig.go joins them so).
		var buf bytes.Buffer
		for i, c := range s.NMStateConfigs {
			if c == nil {
				return nil, fmt.Errorf("render manifests: %s: document %d: missing", NMStateConfigFile, i)
			}
			b, err := marshal(c)
			if err != nil {
				return nil, fmt.Errorf("render manifests: %s: document %d: %w", NMStateConfigFile, i, err)
			}
			buf.Write(b)
			buf.WriteString("---\n")
		}
		out = append(out, File{Name: path.Join(ClusterManifestsDir, NMStateConfigFile), Data: buf.Bytes()})
	}
	for _, m := range s.ExtraManifests {
		if !validExtraName(m.Name) {
			return nil, fmt.Errorf("render manifests: extra manifest %q: want a plain file name ending in .yaml or .yml", m.Name)
		}
		out = append(out, File{Name: path.Join(ExtraManifestsDir, m.Name), Data: m.Data})
	}
	return out, nil
}

func isNil(v any) bool {
	switch x := v.(type) {
	case *ClusterDeployment:
		return x == nil
	case *AgentClusterInstall:
		return x == nil
	case *ClusterImageSet:
		return x == nil
	case *InfraEnv:
		return x == nil
	case *Secret:
		return x == nil
	}
	return v == nil
}

// validExtraName accepts what agent-installer-client's glob "*.y*ml"
// picks up, without path separators.
func validExtraName(name string) bool {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return false
	}
	ok, _ := path.Match("*.y*ml", name)
	return ok
}

// Write writes the set under dir the way openshift-install lays out an
// asset directory: dir/cluster-manifests/*.yaml and dir/openshift/*.
func Write(dir string, s *Set) error {
	return WriteTo(filepath.Join(dir, ClusterManifestsDir), filepath.Join(dir, ExtraManifestsDir), s)
}

// WriteTo writes the ZTP manifests into manifestsDir and the extra
// manifests into extraDir (on a host: /etc/assisted/manifests and
// /etc/assisted/extra-manifests). Each file is replaced atomically; a stale
// nmstateconfig.yaml is removed when the set has no NMStateConfig.
func WriteTo(manifestsDir, extraDir string, s *Set) error {
	files, err := s.Files()
	if err != nil {
		return err
	}
	for _, d := range []string{manifestsDir, extraDir} {
		if d == extraDir && len(s.ExtraManifests) == 0 {
			continue
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
	}
	for _, f := range files {
		dir, name := path.Split(f.Name)
		target := filepath.Join(manifestsDir, name)
		if path.Clean(dir) == ExtraManifestsDir {
			target = filepath.Join(extraDir, name)
		}
		if err := atomicfile.Write(target, f.Data, 0o644); err != nil {
			return fmt.Errorf("write manifests: %w", err)
		}
	}
	if len(s.NMStateConfigs) == 0 {
		err := os.Remove(filepath.Join(manifestsDir, NMStateConfigFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write manifests: %w", err)
		}
	}
	return nil
}
