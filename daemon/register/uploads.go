package register

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// After registering the cluster, agent-installer-client applies the
// AgentClusterInstall's install-config overrides and uploads the extra
// manifests (cmd/agentbasedinstaller/register.go ApplyInstallConfigOverrides
// and RegisterExtraManifests). Both compare before they send, so that a
// restart, which finds the cluster registered, sends nothing twice.

// ExtraManifestsFolder is the cluster manifests folder extra manifests go
// to.
const ExtraManifestsFolder = wire.ManifestFolderOpenshift

// ErrManifestExists is wrapped by the error RegisterExtraManifests returns
// when the cluster has an extra manifest of the same name with other
// content: the config image changed after a first registration, and
// uploading over the file would change an install that may have been
// reviewed.
var ErrManifestExists = errors.New("already exists with different content")

// ApplyInstallConfigOverrides sets the cluster's install-config overrides
// to the AgentClusterInstall's annotation, unless the cluster carries them
// already: the two are compared as normalized JSON, so formatting makes no
// difference. An AgentClusterInstall without the annotation sends nothing.
// It reports whether it sent the overrides. Overrides that are not JSON
// wrap ErrManifests.
func ApplyInstallConfigOverrides(ctx context.Context, c *wire.Client, cluster *wire.Cluster, set *manifests.Set) (bool, error) {
	if cluster == nil {
		return false, errors.New("apply install config overrides: no cluster")
	}
	if err := complete(set); err != nil {
		return false, err
	}
	o, ok := set.AgentClusterInstall.Metadata.Annotations[manifests.InstallConfigOverridesAnnotation]
	if !ok {
		return false, nil
	}
	want, err := normalizeJSON(o)
	if err != nil {
		return false, fmt.Errorf("%w: failed to normalize new installConfig overrides: %v", ErrManifests, err)
	}
	// Overrides on the cluster that are not JSON are replaced, as the
	// client replaces them.
	if have, err := normalizeJSON(cluster.InstallConfigOverrides); err == nil && have == want {
		return false, nil
	}
	if err := c.UpdateClusterInstallConfig(ctx, cluster.ID, o); err != nil {
		return false, fmt.Errorf("apply install config overrides: %w", err)
	}
	return true, nil
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

// RegisterExtraManifests uploads the extra manifests to the cluster's
// folder "openshift". One the cluster has already with the same content is
// skipped; one it has with other content is an error that names the file
// and wraps ErrManifestExists, and nothing after it is uploaded. It returns
// the names it uploaded.
func RegisterExtraManifests(ctx context.Context, c *wire.Client, clusterID string, set *manifests.Set) ([]string, error) {
	if set == nil || len(set.ExtraManifests) == 0 {
		return nil, nil
	}
	list, err := c.ListClusterManifests(ctx, clusterID)
	if err != nil {
		return nil, fmt.Errorf("register extra manifests: %w", err)
	}
	have := map[string]bool{}
	for _, m := range list {
		if m != nil && m.Folder == ExtraManifestsFolder {
			have[m.FileName] = true
		}
	}
	var uploaded []string
	for _, m := range set.ExtraManifests {
		if have[m.Name] {
			cur, err := c.DownloadClusterManifest(ctx, clusterID, ExtraManifestsFolder, m.Name)
			if err != nil {
				return uploaded, fmt.Errorf("register extra manifests: %w", err)
			}
			if !bytes.Equal(cur, m.Data) {
				return uploaded, fmt.Errorf("register extra manifests: manifest %s %w", m.Name, ErrManifestExists)
			}
			continue
		}
		_, err := c.CreateClusterManifest(ctx, clusterID, wire.CreateManifestParams{
			Folder: ExtraManifestsFolder, FileName: m.Name, Content: base64.StdEncoding.EncodeToString(m.Data),
		})
		if err != nil {
			return uploaded, fmt.Errorf("register extra manifests: %w", err)
		}
		uploaded = append(uploaded, m.Name)
	}
	return uploaded, nil
}
