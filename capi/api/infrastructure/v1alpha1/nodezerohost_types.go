package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// MachineFinalizer keeps a NodezeroHostMachine until its host process is
// stopped and its folder removed.
const MachineFinalizer = "infrastructure.cluster.x-k8s.io/nodezero-host"

// ProviderIDPrefix starts every providerID this provider sets:
// nodezero://<namespace>/<machine>.
const ProviderIDPrefix = "nodezero://"

// NodezeroHostClusterSpec is the Cluster's infrastructure.
type NodezeroHostClusterSpec struct {
	// controlPlaneEndpoint is the cluster's API (its API VIP and 6443).
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`
}

// ClusterInitialization is the contract's initialization status.
type ClusterInitialization struct {
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// NodezeroHostClusterStatus is what the provider observed.
type NodezeroHostClusterStatus struct {
	// +optional
	Initialization ClusterInitialization `json:"initialization,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodezeroHostCluster is a Cluster's infrastructure on this machine.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=nodezerohostclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type NodezeroHostCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NodezeroHostClusterSpec `json:"spec,omitempty"`
	// +optional
	Status NodezeroHostClusterStatus `json:"status,omitempty,omitzero"`
}

// NodezeroHostClusterList is a list of NodezeroHostClusters.
//
// +kubebuilder:object:root=true
type NodezeroHostClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodezeroHostCluster `json:"items"`
}

// NodezeroHostMachineSpec is one host process.
type NodezeroHostMachineSpec struct {
	// providerID is nodezero://<namespace>/<machine>, set by the provider.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`

	// hardware is the host's simulated hardware: master or worker class
	// (the trees nodezero's sandbox boots).
	// +optional
	// +kubebuilder:default=master
	// +kubebuilder:validation:Enum=master;worker;no-disk
	Hardware string `json:"hardware,omitempty"`
}

// MachineInitialization is the contract's initialization status.
type MachineInitialization struct {
	// provisioned is true once the host process runs.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// NodezeroHostMachineStatus is what the provider observed.
type NodezeroHostMachineStatus struct {
	// +optional
	Initialization MachineInitialization `json:"initialization,omitempty,omitzero"`
	// addresses is the host's loopback address and hostname.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NodezeroHostMachine is a Machine's host: a `nodezero run` process.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=nodezerohostmachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned"
type NodezeroHostMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NodezeroHostMachineSpec `json:"spec,omitempty"`
	// +optional
	Status NodezeroHostMachineStatus `json:"status,omitempty,omitzero"`
}

// NodezeroHostMachineList is a list of NodezeroHostMachines.
//
// +kubebuilder:object:root=true
type NodezeroHostMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodezeroHostMachine `json:"items"`
}

// NodezeroHostMachineTemplateResource is the template's object.
type NodezeroHostMachineTemplateResource struct {
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +optional
	Spec NodezeroHostMachineSpec `json:"spec,omitempty"`
}

// NodezeroHostMachineTemplateSpec holds the template.
type NodezeroHostMachineTemplateSpec struct {
	// +required
	Template NodezeroHostMachineTemplateResource `json:"template"`
}

// NodezeroHostMachineTemplate is what Machines' hosts are cloned from.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodezerohostmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha1"
type NodezeroHostMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NodezeroHostMachineTemplateSpec `json:"spec,omitempty"`
}

// NodezeroHostMachineTemplateList is a list of templates.
//
// +kubebuilder:object:root=true
type NodezeroHostMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodezeroHostMachineTemplate `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodezeroHostCluster{}, &NodezeroHostClusterList{},
		&NodezeroHostMachine{}, &NodezeroHostMachineList{},
		&NodezeroHostMachineTemplate{}, &NodezeroHostMachineTemplateList{})
}
