package register

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nodezero/nodezero/configimage/manifests"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// After registering the cluster, agent-installer-client applies the
// AgentClusterInstall's install-config overrides (PATCH
// /v2/clusters/{id}/install-config) and uploads the extra manifests (POST
// /v2/clusters/{id}/manifests, folder "openshift"). The embedded service
// serves neither endpoint yet, and this package does not pretend it does:
// PendingUploads computes those request bodies and SavePending keeps them
// on disk, so that the install flow, or a later version of this package
// once the endpoints exist, can apply them.

// ExtraManifestsFolder is the cluster manifests folder extra manifests go
// to (RegisterExtraManifests).
const ExtraManifestsFolder = "openshift"

// Pending is what remains to be sent for a cluster.
type Pending struct {
	ClusterID string `json:"cluster_id"`
	// InstallConfigOverrides is the body of V2UpdateClusterInstallConfig:
	// the annotation's JSON document, sent as a JSON string. "" = nothing
	// to apply (none, or the cluster has it already).
	InstallConfigOverrides string `json:"install_config_overrides,omitempty"`
	// Manifests are the bodies of V2CreateClusterManifest
	// (create-manifest-params).
	Manifests []ManifestParams `json:"manifests,omitempty"`
}

// ManifestParams is the swagger's create-manifest-params.
type ManifestParams struct {
	FileName string `json:"file_name"`
	Folder   string `json:"folder"`
	Content  string `json:"content"` // base64 of the file
}

// Empty reports whether nothing is pending.
func (p *Pending) Empty() bool {
	return p == nil || p.InstallConfigOverrides == "" && len(p.Manifests) == 0
}

// PendingUploads returns what agent-installer-client would send for cluster
// after registering it. Overrides the cluster already carries (compared as
// normalized JSON, as ApplyInstallConfigOverrides compares them) are not
// pending; overrides that are not JSON are an error.
func PendingUploads(cluster *v2.Cluster, set *manifests.Set) (*Pending, error) {
	if cluster == nil {
		return nil, errors.New("pending uploads: no cluster")
	}
	if err := complete(set); err != nil {
		return nil, err
	}
	p := &Pending{ClusterID: cluster.ID}
	if o, ok := set.AgentClusterInstall.Metadata.Annotations[manifests.InstallConfigOverridesAnnotation]; ok && o != "" {
		want, err := normalizeJSON(o)
		if err != nil {
			return nil, fmt.Errorf("%w: failed to normalize new installConfig overrides: %v", ErrManifests, err)
		}
		if have, err := normalizeJSON(cluster.InstallConfigOverrides); err != nil || have != want {
			p.InstallConfigOverrides = o
		}
	}
	for _, m := range set.ExtraManifests {
		p.Manifests = append(p.Manifests, ManifestParams{
			FileName: m.Name, Folder: ExtraManifestsFolder, Content: base64.StdEncoding.EncodeToString(m.Data),
		})
	}
	return p, nil
}

func normalizeJSON(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// SavePending writes p to path as JSON, replacing the file atomically; an
// empty p removes the file.
func SavePending(path string, p *Pending) error {
	if p.Empty() {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("save pending uploads: %w", err)
		}
		return nil
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("save pending uploads: %w", err)
	}
	if err := writeAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save pending uploads: %w", err)
	}
	return nil
}

// LoadPending reads a file SavePending wrote; a missing file is nothing
// pending.
func LoadPending(path string) (*Pending, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Pending{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load pending uploads: %w", err)
	}
	var p Pending
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("load pending uploads: %s: %w", path, err)
	}
	return &p, nil
}

// writeAtomic replaces name with data: temp file in the same directory,
// fsync, rename. The directory is created when missing.
func writeAtomic(name string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op once renamed
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, name)
}
