package wire

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// The install-config overrides and custom manifests of a cluster (userAuth):
// what agent-installer-client sends after registering the cluster.

// UpdateClusterInstallConfig sets the cluster's install-config overrides
// (v2UpdateClusterInstallConfig, 201). overrides is a JSON object as text;
// it travels as a JSON string, as the swagger's body schema says.
func (c *Client) UpdateClusterInstallConfig(ctx context.Context, clusterID, overrides string) error {
	err := c.do(ctx, call{method: http.MethodPatch, path: p("/clusters/%s/install-config", clusterID), body: overrides})
	if err != nil {
		return fmt.Errorf("update cluster install config: %w", err)
	}
	return nil
}

// CreateClusterManifest adds a custom manifest (V2CreateClusterManifest,
// 201). params.Content is the file, base64 encoded.
func (c *Client) CreateClusterManifest(ctx context.Context, clusterID string, params CreateManifestParams) (*Manifest, error) {
	var out Manifest
	err := c.do(ctx, call{method: http.MethodPost, path: p("/clusters/%s/manifests", clusterID), body: params, out: &out})
	if err != nil {
		return nil, fmt.Errorf("create cluster manifest %s: %w", params.FileName, err)
	}
	return &out, nil
}

// ListClusterManifests lists the user's manifests of a cluster
// (V2ListClusterManifests).
func (c *Client) ListClusterManifests(ctx context.Context, clusterID string) (ListManifests, error) {
	var out ListManifests
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/manifests", clusterID), out: &out}); err != nil {
		return nil, fmt.Errorf("list cluster manifests: %w", err)
	}
	return out, nil
}

// UpdateClusterManifest changes a manifest's content, folder or name
// (V2UpdateClusterManifest, 200).
func (c *Client) UpdateClusterManifest(ctx context.Context, clusterID string, params UpdateManifestParams) (*Manifest, error) {
	var out Manifest
	err := c.do(ctx, call{method: http.MethodPatch, path: p("/clusters/%s/manifests", clusterID), body: params, out: &out})
	if err != nil {
		return nil, fmt.Errorf("update cluster manifest %s: %w", params.FileName, err)
	}
	return &out, nil
}

// DeleteClusterManifest deletes a manifest (V2DeleteClusterManifest, 200).
// folder "" is the service's default, "manifests".
func (c *Client) DeleteClusterManifest(ctx context.Context, clusterID string, folder ManifestFolder, fileName string) error {
	err := c.do(ctx, call{method: http.MethodDelete, path: p("/clusters/%s/manifests", clusterID), query: manifestQuery(folder, fileName)})
	if err != nil {
		return fmt.Errorf("delete cluster manifest %s: %w", fileName, err)
	}
	return nil
}

// DownloadClusterManifest returns a manifest's file as stored, decoded
// (v2DownloadClusterManifest, 200, application/octet-stream). folder "" is
// the service's default, "manifests".
func (c *Client) DownloadClusterManifest(ctx context.Context, clusterID string, folder ManifestFolder, fileName string) ([]byte, error) {
	var out []byte
	err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/manifests/files", clusterID),
		query: manifestQuery(folder, fileName), outRaw: &out})
	if err != nil {
		return nil, fmt.Errorf("download cluster manifest %s: %w", fileName, err)
	}
	return out, nil
}

func manifestQuery(folder ManifestFolder, fileName string) url.Values {
	q := url.Values{"file_name": {fileName}}
	if folder != "" {
		q.Set("folder", string(folder))
	}
	return q
}
