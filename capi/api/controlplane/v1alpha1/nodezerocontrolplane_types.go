package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
)

// Finalizer keeps a NodezeroControlPlane until its Machines, its v2
// cluster and infra-envs are gone (a Machine whose Cluster is gone can
// never be deleted, so the control plane deletes them first).
const Finalizer = "controlplane.cluster.x-k8s.io/nodezero"

// Condition types and reasons of a NodezeroControlPlane.
const (
	// AvailableCondition is mirrored to the Cluster's ControlPlaneAvailable:
	// true once the cluster is finalizing, installed or adding hosts and
	// its API answers.
	AvailableCondition = clusterv1.AvailableCondition
	// InstalledCondition follows the v2 cluster's install.
	InstalledCondition = "Installed"
	// MachinesReadyCondition counts the control-plane Machines ready.
	MachinesReadyCondition = clusterv1.MachinesReadyCondition

	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure
	// is not provisioned, or has no control-plane endpoint yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// ServiceUnreachableReason: the nodezero service did not answer.
	ServiceUnreachableReason = "ServiceUnreachable"
	// InvalidSpecReason: the service refused the cluster's inputs.
	InvalidSpecReason = "InvalidSpec"
	// WaitingForHostsReason: not every expected host is known yet.
	WaitingForHostsReason = "WaitingForHosts"
	// InstallingReason: the install runs; the message has the v2 status.
	InstallingReason = "ControlPlaneInstalling"
	// InstalledReason: the v2 cluster is installed.
	InstalledReason = "Installed"
	// InstallFailedReason: the v2 cluster is in error or cancelled.
	InstallFailedReason = "InstallFailed"
	// AvailableReason / NotAvailableReason for AvailableCondition.
	AvailableReason    = "Available"
	NotAvailableReason = "NotAvailable"
)

// NodezeroControlPlaneSpec is one OpenShift cluster's control plane.
//
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.distributionVersion) || self.distributionVersion == oldSelf.distributionVersion",message="distributionVersion is immutable: nodezero installs, it does not upgrade"
// +kubebuilder:validation:XValidation:rule="!has(self.replicas) || self.replicas != 1 || !has(self.cluster.apiVIPs) || size(self.cluster.apiVIPs) == 0",message="a single-node control plane (replicas 1) has no VIPs"
type NodezeroControlPlaneSpec struct {
	// replicas is the number of control-plane Machines: 1 (single node),
	// or 3 to 5.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:XValidation:rule="self == 1 || (self >= 3 && self <= 5)",message="control-plane replicas must be 1, 3, 4 or 5"
	Replicas *int32 `json:"replicas,omitempty"`

	// version is the Kubernetes version of the cluster, as the contract
	// wants it (a semver, e.g. v1.33.4); distributionVersion is what is
	// installed.
	// +required
	// +kubebuilder:validation:Pattern=`^v?\d+\.\d+\.\d+([-+].*)?$`
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version"`

	// distributionVersion is the OpenShift version the service installs
	// (openshift_version), e.g. 4.20.0.
	// +required
	// +kubebuilder:validation:Pattern=`^\d+\.\d+(\.\d+)?([-+].*)?$`
	// +kubebuilder:validation:MaxLength=64
	DistributionVersion string `json:"distributionVersion"`

	// machineTemplate is what the control-plane Machines are made from.
	// +required
	MachineTemplate NodezeroControlPlaneMachineTemplate `json:"machineTemplate"`

	// nodezeroConfigSpec is copied into each control-plane Machine's
	// NodezeroConfig.
	// +optional
	NodezeroConfigSpec bootstrapv1.NodezeroConfigSpec `json:"nodezeroConfigSpec,omitempty"`

	// cluster is the cluster's install inputs (install-config.yaml's, as
	// nodezero validates them).
	// +required
	Cluster ClusterInputs `json:"cluster"`

	// serviceRef is the nodezero service that installs the cluster.
	// +required
	ServiceRef ServiceRef `json:"serviceRef"`
}

// NodezeroControlPlaneMachineTemplate is the contract's machineTemplate.
type NodezeroControlPlaneMachineTemplate struct {
	// metadata is given to the Machines and their infrastructure objects.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	Spec NodezeroControlPlaneMachineTemplateSpec `json:"spec"`
}

// NodezeroControlPlaneMachineTemplateSpec is the Machines' spec.
type NodezeroControlPlaneMachineTemplateSpec struct {
	// infrastructureRef is the infrastructure machine template each
	// control-plane Machine's infrastructure object is cloned from.
	// +required
	InfrastructureRef clusterv1.ContractVersionedObjectReference `json:"infrastructureRef"`
	// readinessGates are added to each Machine.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []clusterv1.MachineReadinessGate `json:"readinessGates,omitempty"`
	// deletion holds the Machines' deletion timeouts.
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
}

// MachineDeletionSpec is the contract's machineTemplate.spec.deletion.
type MachineDeletionSpec struct {
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// ClusterInputs are the install inputs. They cannot change once set: the
// service accepts changes only before the install, and the provider does
// not replay them.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cluster inputs are immutable"
// +kubebuilder:validation:XValidation:rule="(has(self.apiVIPs) ? size(self.apiVIPs) : 0) == (has(self.ingressVIPs) ? size(self.ingressVIPs) : 0)",message="apiVIPs and ingressVIPs must have as many addresses"
type ClusterInputs struct {
	// baseDomain is the cluster's base DNS domain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	BaseDomain string `json:"baseDomain"`

	// clusterName is the OpenShift cluster's name; the Cluster's name when
	// empty.
	// +optional
	// +kubebuilder:validation:MaxLength=54
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	ClusterName string `json:"clusterName,omitempty"`

	// pullSecretRef names a secret of type kubernetes.io/dockerconfigjson
	// in the object's namespace (key .dockerconfigjson).
	// +required
	PullSecretRef SecretRef `json:"pullSecretRef"`

	// sshAuthorizedKey is the core user's key on every host.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// apiVIPs are the API's virtual addresses (none for a single node).
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="must be an IP address"
	APIVIPs []string `json:"apiVIPs,omitempty"`

	// ingressVIPs are the ingress's virtual addresses.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="must be an IP address"
	IngressVIPs []string `json:"ingressVIPs,omitempty"`

	// machineNetworks are the hosts' networks (CIDRs); derived from the
	// hosts when empty.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="must be a CIDR"
	MachineNetworks []string `json:"machineNetworks,omitempty"`

	// mastersSchedulable lets workloads run on the control plane.
	// +optional
	MastersSchedulable *bool `json:"mastersSchedulable,omitempty"`
}

// SecretRef names a secret in the object's namespace.
type SecretRef struct {
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ServiceRef is a nodezero service.
type ServiceRef struct {
	// url is the service's base URL, e.g. http://nodezero.nodezero-system:8090.
	// Hosts reach it too: it goes into their config images.
	// +required
	// +kubebuilder:validation:XValidation:rule="isURL(self) && (self.startsWith('http://') || self.startsWith('https://'))",message="must be an http or https URL"
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`

	// tokenSecretRef names a secret with the service's tokens: keys
	// user.token and agent.token (the files `nodezero service` writes to
	// its auth folder).
	// +required
	TokenSecretRef SecretRef `json:"tokenSecretRef"`

	// caSecretRef names a secret whose ca.crt is the service's CA, for an
	// https URL.
	// +optional
	CASecretRef *SecretRef `json:"caSecretRef,omitempty"`
}

// Initialization is the contract's initialization status.
type Initialization struct {
	// controlPlaneInitialized is true once the cluster's API answers
	// through the <cluster>-kubeconfig secret.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// NodezeroControlPlaneStatus is what the provider observed.
// +kubebuilder:validation:MinProperties=1
type NodezeroControlPlaneStatus struct {
	// +optional
	Initialization Initialization `json:"initialization,omitempty,omitzero"`

	// selector is the control-plane Machines' label selector, for the
	// scale subresource.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// version is the Kubernetes version the control plane runs (spec's,
	// once installed).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Version string `json:"version,omitempty"`

	// conditions: Available, Installed, MachinesReady.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// clusterID is the v2 cluster installing day 1. Each Machine's host
	// registers with an infra-env of its own (its NodezeroConfig's).
	// +optional
	ClusterID string `json:"clusterID,omitempty"`
	// day2ClusterID is the imported cluster (kind AddHostsCluster)
	// through which Machines added after the install join.
	// +optional
	Day2ClusterID string `json:"day2ClusterID,omitempty"`
	// installState is the v2 cluster's status (installing, installed...).
	// +optional
	InstallState string `json:"installState,omitempty"`
}

// NodezeroControlPlane is an OpenShift cluster's control plane, installed
// by a nodezero service.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:path=nodezerocontrolplanes,shortName=nzcp,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Initialized",type="boolean",JSONPath=".status.initialization.controlPlaneInitialized"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.installState"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.distributionVersion"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NodezeroControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec NodezeroControlPlaneSpec `json:"spec"`
	// +optional
	Status NodezeroControlPlaneStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the object's conditions.
func (c *NodezeroControlPlane) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the object's conditions.
func (c *NodezeroControlPlane) SetConditions(cs []metav1.Condition) { c.Status.Conditions = cs }

// NodezeroControlPlaneList is a list of NodezeroControlPlanes.
//
// +kubebuilder:object:root=true
type NodezeroControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodezeroControlPlane `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodezeroControlPlane{}, &NodezeroControlPlaneList{})
}
