package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Format is how a NodezeroConfig's bootstrap data is encoded.
// +kubebuilder:validation:Enum=ConfigImage;Ignition
type Format string

const (
	// FormatConfigImage is a nodezero config image (ISO 9660, label
	// agent_configimage): `nodezero run --config-image FILE` reads it.
	FormatConfigImage Format = "ConfigImage"
	// FormatIgnition is an Ignition v3 config writing the same files, for
	// infrastructure providers that pass user data to a CoreOS live host.
	FormatIgnition Format = "Ignition"
)

// Finalizer holds a NodezeroConfig until its host and infra-env are gone
// from the service.
const Finalizer = "bootstrap.cluster.x-k8s.io/nodezero"

// Condition types and reasons of a NodezeroConfig.
const (
	// ReadyCondition is mirrored to the Machine's BootstrapConfigReady.
	ReadyCondition = clusterv1.ReadyCondition
	// DataSecretAvailableCondition: the data secret exists.
	DataSecretAvailableCondition = "DataSecretAvailable"
	// HostBoundCondition: one host registered for this Machine.
	HostBoundCondition = "HostBound"

	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure
	// is not provisioned yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForControlPlaneReason: the control plane has not made its v2
	// cluster and infra-env yet.
	WaitingForControlPlaneReason = "WaitingForControlPlane"
	// WaitingForInstallCompleteReason: a worker added while the cluster
	// installs gets its data once the install is over, then joins as a
	// day-2 host.
	WaitingForInstallCompleteReason = "WaitingForInstallComplete"
	// DataSecretCreatedReason: the data secret is written.
	DataSecretCreatedReason = "DataSecretCreated"
	// WaitingForHostReason: no host registered for the Machine yet.
	WaitingForHostReason = "WaitingForHost"
	// HostBoundReason: one host registered for the Machine.
	HostBoundReason = "HostBound"
	// SecondHostReason: more than one host claims the Machine; the others
	// are neither given a role nor counted.
	SecondHostReason = "SecondHost"
	// ServiceUnreachableReason: the control plane's nodezero service did
	// not answer, or its token secret is missing.
	ServiceUnreachableReason = "ServiceUnreachable"
	// DataSecretFailedReason: the bootstrap data could not be made from
	// the spec (a bad networkConfig, a foreign secret of that name).
	DataSecretFailedReason = "DataSecretFailed"
)

// DataSecretFormatConfigImage is the data secret's `format` value for a
// config image.
const DataSecretFormatConfigImage = "nodezero-config-image"

// MachineBindingPath is where a config image built for a Machine names it
// (namespace/name, uid, providerID), on the host.
const MachineBindingPath = "/etc/nodezero/machine"

// NodezeroConfigSpec is what a Machine's host is given beside the
// cluster's inputs. It is immutable: a new spec means a new Machine.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type NodezeroConfigSpec struct {
	// format is how the data secret is encoded; ConfigImage by default.
	// +optional
	// +kubebuilder:default=ConfigImage
	Format Format `json:"format,omitempty"`

	// rootDeviceHints choose the disk the OS is written to, as
	// agent-config.yaml's rootDeviceHints.
	// +optional
	RootDeviceHints *RootDeviceHints `json:"rootDeviceHints,omitempty"`

	// interfaces name the host's NICs by MAC, for networkConfig.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Interfaces []Interface `json:"interfaces,omitempty"`

	// networkConfig is the host's NMState document (YAML), as
	// agent-config.yaml's networkConfig; none means DHCP.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	NetworkConfig string `json:"networkConfig,omitempty"`

	// additionalNTPSources are NTP servers the host's checks may use.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`
}

// RootDeviceHints are agent-config.yaml's rootDeviceHints.
type RootDeviceHints struct {
	// +optional
	DeviceName string `json:"deviceName,omitempty"`
	// +optional
	HCTL string `json:"hctl,omitempty"`
	// +optional
	Model string `json:"model,omitempty"`
	// +optional
	Vendor string `json:"vendor,omitempty"`
	// +optional
	SerialNumber string `json:"serialNumber,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinSizeGigabytes int32 `json:"minSizeGigabytes,omitempty"`
	// +optional
	WWN string `json:"wwn,omitempty"`
	// +optional
	Rotational *bool `json:"rotational,omitempty"`
}

// Interface is one NIC, by name and MAC.
type Interface struct {
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	Name string `json:"name"`
	// +required
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
	MACAddress string `json:"macAddress"`
}

// NodezeroConfigInitialization is the contract's initialization status.
type NodezeroConfigInitialization struct {
	// dataSecretCreated is true once status.dataSecretName's secret exists.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// NodezeroConfigStatus is what the bootstrap provider observed.
// +kubebuilder:validation:MinProperties=1
type NodezeroConfigStatus struct {
	// initialization is the contract's provisioning signal.
	// +optional
	Initialization NodezeroConfigInitialization `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the secret holding the bootstrap data (the
	// config's own name).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// conditions: Ready, DataSecretAvailable, HostBound.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the generation last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// infraEnvID is the v2 infra-env the Machine's host registers with.
	// +optional
	InfraEnvID string `json:"infraEnvID,omitempty"`

	// hostID is the v2 host bound to this Machine.
	// +optional
	HostID string `json:"hostID,omitempty"`
}

// NodezeroConfig is one Machine's bootstrap configuration.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=nodezeroconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Data secret",type="boolean",JSONPath=".status.initialization.dataSecretCreated"
// +kubebuilder:printcolumn:name="Host",type="string",JSONPath=".status.hostID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type NodezeroConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NodezeroConfigSpec `json:"spec,omitempty"`
	// +optional
	Status NodezeroConfigStatus `json:"status,omitempty,omitzero"`
}

// GetConditions returns the object's conditions.
func (c *NodezeroConfig) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the object's conditions.
func (c *NodezeroConfig) SetConditions(cs []metav1.Condition) { c.Status.Conditions = cs }

// NodezeroConfigList is a list of NodezeroConfigs.
//
// +kubebuilder:object:root=true
type NodezeroConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodezeroConfig `json:"items"`
}

// NodezeroConfigTemplateResource is the template's object.
type NodezeroConfigTemplateResource struct {
	// metadata is given to the configs made from the template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +optional
	Spec NodezeroConfigSpec `json:"spec,omitempty"`
}

// NodezeroConfigTemplateSpec holds the template.
type NodezeroConfigTemplateSpec struct {
	// +required
	Template NodezeroConfigTemplateResource `json:"template"`
}

// NodezeroConfigTemplate is what a MachineDeployment clones a
// NodezeroConfig from.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodezeroconfigtemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type NodezeroConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NodezeroConfigTemplateSpec `json:"spec,omitempty"`
}

// NodezeroConfigTemplateList is a list of NodezeroConfigTemplates.
//
// +kubebuilder:object:root=true
type NodezeroConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodezeroConfigTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodezeroConfig{}, &NodezeroConfigList{}, &NodezeroConfigTemplate{}, &NodezeroConfigTemplateList{})
}
