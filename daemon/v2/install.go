package v2

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// The installation's downloads and its completion: the install files the
// preparation made, a host's Ignition, the admin credentials, and the
// in-cluster controller's final report.

// CompletionParams is the controller's final report (completion-params).
type CompletionParams struct {
	IsSuccess *bool          `json:"is_success"`
	ErrorInfo string         `json:"error_info,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
}

// Credentials are the cluster admin's (credentials).
type Credentials struct {
	Username   string `json:"username,omitempty"`
	Password   string `json:"password,omitempty"`
	ConsoleURL string `json:"console_url,omitempty"`
}

// Cluster files (v2DownloadClusterFiles file_name enum) and credential files
// (V2DownloadClusterCredentials file_name enum).
const (
	FileBootstrapIgnition = "bootstrap.ign"
	FileMasterIgnition    = "master.ign"
	FileWorkerIgnition    = "worker.ign"
	FileArbiterIgnition   = "arbiter.ign"
	FileMetadata          = "metadata.json"
	FileInstallConfig     = "install-config.yaml"

	FileKubeadminPassword   = "kubeadmin-password"
	FileKubeconfig          = "kubeconfig"
	FileKubeconfigNoIngress = "kubeconfig-noingress"
)

// DownloadClusterFile reads one of the cluster's install files
// (v2DownloadClusterFiles).
func (c *Client) DownloadClusterFile(ctx context.Context, clusterID, fileName string) ([]byte, error) {
	var out []byte
	err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/downloads/files", clusterID),
		query: url.Values{"file_name": {fileName}}, outRaw: &out})
	if err != nil {
		return nil, fmt.Errorf("download cluster file %s: %w", fileName, err)
	}
	return out, nil
}

// DownloadClusterCredentials reads a credentials file
// (V2DownloadClusterCredentials): kubeconfig, kubeconfig-noingress or
// kubeadmin-password.
func (c *Client) DownloadClusterCredentials(ctx context.Context, clusterID, fileName string) ([]byte, error) {
	var out []byte
	err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/downloads/credentials", clusterID),
		query: url.Values{"file_name": {fileName}}, outRaw: &out})
	if err != nil {
		return nil, fmt.Errorf("download cluster credentials %s: %w", fileName, err)
	}
	return out, nil
}

// GetCredentials reads the cluster admin's credentials (V2GetCredentials).
func (c *Client) GetCredentials(ctx context.Context, clusterID string) (*Credentials, error) {
	var out Credentials
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/credentials", clusterID), out: &out}); err != nil {
		return nil, fmt.Errorf("get credentials: %w", err)
	}
	return &out, nil
}

// DownloadHostIgnition reads a host's Ignition (v2DownloadHostIgnition).
func (c *Client) DownloadHostIgnition(ctx context.Context, infraEnvID, hostID string) ([]byte, error) {
	var out []byte
	err := c.do(ctx, call{method: http.MethodGet, path: p("/infra-env/%s/hosts/%s/downloads/ignition", infraEnvID, hostID), outRaw: &out})
	if err != nil {
		return nil, fmt.Errorf("download host ignition: %w", err)
	}
	return out, nil
}

// ListClusterHosts lists a cluster's hosts (ListClusterHosts).
func (c *Client) ListClusterHosts(ctx context.Context, clusterID string) (HostList, error) {
	var out HostList
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/hosts", clusterID), out: &out}); err != nil {
		return nil, fmt.Errorf("list cluster hosts: %w", err)
	}
	return out, nil
}

// CompleteInstallation is the controller's final report
// (V2CompleteInstallation, 202).
func (c *Client) CompleteInstallation(ctx context.Context, clusterID string, params CompletionParams) (*Cluster, error) {
	var out Cluster
	err := c.do(ctx, call{method: http.MethodPost, path: p("/clusters/%s/actions/complete-installation", clusterID), body: params, out: &out})
	if err != nil {
		return nil, fmt.Errorf("complete installation: %w", err)
	}
	return &out, nil
}
