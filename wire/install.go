package wire

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

// ListClusterHosts lists a cluster's hosts with their inventories, without
// their connectivity reports (ListClusterHosts?with-inventory=true): what
// a console shows. ListClusterHostsQuery asks for less, or for more.
func (c *Client) ListClusterHosts(ctx context.Context, clusterID string) (HostList, error) {
	return c.ListClusterHostsQuery(ctx, clusterID, HostsQuery{WithInventory: true})
}

// HostsQuery are ListClusterHosts' query parameters. The service leaves
// out inventories and connectivity reports unless asked: a thousand hosts'
// reports are 300 MB.
type HostsQuery struct {
	Role             HostRole   // only hosts of this role ("": any)
	Status           HostStatus // only hosts in this status ("": any)
	WithInventory    bool
	WithConnectivity bool
}

func (q HostsQuery) values() url.Values {
	v := url.Values{}
	if q.Role != "" {
		v.Set("role", string(q.Role))
	}
	if q.Status != "" {
		v.Set("status", string(q.Status))
	}
	if q.WithInventory {
		v.Set("with-inventory", "true")
	}
	if q.WithConnectivity {
		v.Set("with-connectivity", "true")
	}
	return v
}

// ListClusterHostsQuery lists the cluster's hosts that q selects, with the
// documents it asks for (ListClusterHosts).
func (c *Client) ListClusterHostsQuery(ctx context.Context, clusterID string, q HostsQuery) (HostList, error) {
	var out HostList
	if err := c.do(ctx, call{method: http.MethodGet, path: p("/clusters/%s/hosts", clusterID), query: q.values(), out: &out}); err != nil {
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
