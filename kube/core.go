package kube

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// The core/v1 objects adding nodes reads and writes (Namespaces, Secrets,
// Nodes), shaped as Kubernetes' API writes them; fields the installer has
// no use for are left out (a status written back drops them: only the
// simulation writes Node status).

// CoreAPIVersion is the core group's apiVersion.
const CoreAPIVersion = "v1"

// Namespace is a core/v1 Namespace.
type Namespace struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
}

const namespaces = "/api/v1/namespaces"

func namespaced(ns, resource string) string {
	return objectPath(namespaces, ns) + "/" + resource
}

// CreateNamespace creates the namespace; one that exists already is not an
// error.
func (c *Client) CreateNamespace(ctx context.Context, name string) error {
	ns := Namespace{APIVersion: CoreAPIVersion, Kind: "Namespace", Metadata: ObjectMeta{Name: name}}
	err := c.Do(ctx, http.MethodPost, namespaces, &ns, nil)
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}

// The Secret types the installer writes.
const (
	SecretTypeOpaque           = "Opaque"
	SecretTypeDockerConfigJSON = "kubernetes.io/dockerconfigjson"
)

// DockerConfigJSONKey is a kubernetes.io/dockerconfigjson Secret's key.
const DockerConfigJSONKey = ".dockerconfigjson"

// Secret is a core/v1 Secret; Data's values are the plain bytes (JSON
// carries them base64, as the API does).
type Secret struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   ObjectMeta        `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
}

// GetSecret reads Secret ns/name.
func (c *Client) GetSecret(ctx context.Context, ns, name string) (*Secret, error) {
	return call[Secret](ctx, c, http.MethodGet, objectPath(namespaced(ns, "secrets"), name), nil)
}

// CreateSecret creates s in s.Metadata.Namespace.
func (c *Client) CreateSecret(ctx context.Context, s *Secret) (*Secret, error) {
	if s.Metadata.Namespace == "" {
		return nil, errors.New("create secret " + s.Metadata.Name + ": no namespace")
	}
	s.APIVersion, s.Kind = CoreAPIVersion, "Secret"
	return call[Secret](ctx, c, http.MethodPost, namespaced(s.Metadata.Namespace, "secrets"), s)
}

// The labels that give a Node's role.
const (
	LabelMasterRole       = "node-role.kubernetes.io/master"
	LabelControlPlaneRole = "node-role.kubernetes.io/control-plane"
	LabelWorkerRole       = "node-role.kubernetes.io/worker"
	LabelHostname         = "kubernetes.io/hostname"
	LabelArch             = "kubernetes.io/arch"
	LabelOS               = "kubernetes.io/os"
)

// NodeReadyCondition is the kubelet's Ready condition type.
const NodeReadyCondition = "Ready"

// NodeCondition is one of a Node's status conditions (Ready,
// MemoryPressure...).
type NodeCondition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastHeartbeatTime  Time            `json:"lastHeartbeatTime"`
	LastTransitionTime Time            `json:"lastTransitionTime"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// The node address types.
const (
	NodeInternalIP = "InternalIP"
	NodeHostName   = "Hostname"
)

// NodeAddress is one of a Node's addresses.
type NodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// NodeSystemInfo is what the kubelet says of its machine.
type NodeSystemInfo struct {
	MachineID               string `json:"machineID"`
	SystemUUID              string `json:"systemUUID"`
	BootID                  string `json:"bootID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
}

// NodeSpec is a Node's spec.
type NodeSpec struct {
	ProviderID    string `json:"providerID,omitempty"`
	Unschedulable bool   `json:"unschedulable,omitempty"`
}

// NodeStatus is what the kubelet reports. Capacity and Allocatable are
// resource quantities as the API writes them ("4", "16318508Ki").
type NodeStatus struct {
	Capacity    map[string]string `json:"capacity,omitempty"`
	Allocatable map[string]string `json:"allocatable,omitempty"`
	Conditions  []NodeCondition   `json:"conditions,omitempty"`
	Addresses   []NodeAddress     `json:"addresses,omitempty"`
	NodeInfo    NodeSystemInfo    `json:"nodeInfo"`
}

// Node is a core/v1 Node; its labels (role, hostname, arch) are in
// Metadata.
type Node struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       NodeSpec   `json:"spec"`
	Status     NodeStatus `json:"status"`
}

// NodeReady reports whether n's Ready condition is True.
func NodeReady(n *Node) bool {
	c := n.Condition(NodeReadyCondition)
	return c != nil && c.Status == True
}

// Condition returns n's condition of type t, or nil.
func (n *Node) Condition(t string) *NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == t {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// SetCondition sets c in n's status: the transition time moves (to c's,
// else now) only when the status changes; the heartbeat is c's, else now.
func (n *Node) SetCondition(c NodeCondition) {
	now := Now()
	if c.LastHeartbeatTime.IsZero() {
		c.LastHeartbeatTime = now
	}
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = now
	}
	old := n.Condition(c.Type)
	if old == nil {
		n.Status.Conditions = append(n.Status.Conditions, c)
		return
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
}

const nodes = "/api/v1/nodes"

// GetNode reads Node name.
func (c *Client) GetNode(ctx context.Context, name string) (*Node, error) {
	return call[Node](ctx, c, http.MethodGet, objectPath(nodes, name), nil)
}

// ListNodes lists every Node; labelSelector ("" for all) is the API's
// (e.g. node-role.kubernetes.io/master).
func (c *Client) ListNodes(ctx context.Context, labelSelector string) ([]Node, error) {
	path := nodes
	if labelSelector != "" {
		path += "?labelSelector=" + url.QueryEscape(labelSelector)
	}
	return list[Node](ctx, c, path)
}

// CreateNode creates n, as a kubelet registers its Node (the API keeps the
// status it is given on create).
func (c *Client) CreateNode(ctx context.Context, n *Node) (*Node, error) {
	n.APIVersion, n.Kind = CoreAPIVersion, "Node"
	return call[Node](ctx, c, http.MethodPost, nodes, n)
}

// UpdateNodeStatus writes n's status through the /status subresource
// (compare-and-swap on n's resourceVersion when it has one).
func (c *Client) UpdateNodeStatus(ctx context.Context, n *Node) (*Node, error) {
	n.APIVersion, n.Kind = CoreAPIVersion, "Node"
	return call[Node](ctx, c, http.MethodPut, objectPath(nodes, n.Metadata.Name)+"/status", n)
}
