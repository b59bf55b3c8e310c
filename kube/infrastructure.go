package kube

import (
	"context"
	"net/http"
)

// InfrastructureName is the one Infrastructure a cluster has.
const InfrastructureName = "cluster"

// The platform types adding nodes meets.
const (
	PlatformNone      = "None"
	PlatformBareMetal = "BareMetal"
	PlatformVSphere   = "VSphere"
	PlatformExternal  = "External"
)

// PlatformSpec names the platform the cluster is told it runs on.
type PlatformSpec struct {
	Type string `json:"type"`
}

// PlatformStatus names the platform the cluster runs on.
type PlatformStatus struct {
	Type string `json:"type"`
}

// InfrastructureSpec is config.openshift.io/v1 Infrastructure's spec.
type InfrastructureSpec struct {
	PlatformSpec PlatformSpec `json:"platformSpec"`
}

// InfrastructureStatus is config.openshift.io/v1 Infrastructure's status.
type InfrastructureStatus struct {
	// InfrastructureName is the cluster's unique name (<cluster>-<5
	// chars>), the prefix of its resources.
	InfrastructureName string `json:"infrastructureName,omitempty"`
	// Platform is the deprecated copy of PlatformStatus.Type.
	Platform       string          `json:"platform,omitempty"`
	PlatformStatus *PlatformStatus `json:"platformStatus,omitempty"`
	// APIServerURL is https://api.<cluster>.<domain>:6443,
	// APIServerInternalURL the api-int one.
	APIServerURL           string `json:"apiServerURL,omitempty"`
	APIServerInternalURL   string `json:"apiServerInternalURI,omitempty"`
	EtcdDiscoveryDomain    string `json:"etcdDiscoveryDomain,omitempty"`
	ControlPlaneTopology   string `json:"controlPlaneTopology,omitempty"`
	InfrastructureTopology string `json:"infrastructureTopology,omitempty"`
}

// Infrastructure is config.openshift.io/v1 Infrastructure (cluster-scoped,
// named "cluster").
type Infrastructure struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Metadata   ObjectMeta           `json:"metadata"`
	Spec       InfrastructureSpec   `json:"spec"`
	Status     InfrastructureStatus `json:"status"`
}

const infrastructures = "/apis/" + APIVersion + "/infrastructures"

// GetInfrastructure reads Infrastructure "cluster".
func (c *Client) GetInfrastructure(ctx context.Context) (*Infrastructure, error) {
	return call[Infrastructure](ctx, c, http.MethodGet, objectPath(infrastructures, InfrastructureName), nil)
}

// CreateInfrastructure creates inf (its status is dropped by the API: set
// it with UpdateInfrastructureStatus).
func (c *Client) CreateInfrastructure(ctx context.Context, inf *Infrastructure) (*Infrastructure, error) {
	inf.APIVersion, inf.Kind = APIVersion, "Infrastructure"
	return call[Infrastructure](ctx, c, http.MethodPost, infrastructures, inf)
}

// UpdateInfrastructureStatus writes inf's status (compare-and-swap on its
// resourceVersion).
func (c *Client) UpdateInfrastructureStatus(ctx context.Context, inf *Infrastructure) (*Infrastructure, error) {
	inf.APIVersion, inf.Kind = APIVersion, "Infrastructure"
	return call[Infrastructure](ctx, c, http.MethodPut, objectPath(infrastructures, inf.Metadata.Name)+"/status", inf)
}
