// Package v1alpha1 is the bootstrap provider's API (group
// bootstrap.cluster.x-k8s.io, Cluster API contract v1beta2):
// NodezeroConfig, whose data secret is one Machine's nodezero config image,
// and NodezeroConfigTemplate, which MachineDeployments clone.
//
// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these objects.
	GroupVersion = schema.GroupVersion{Group: "bootstrap.cluster.x-k8s.io", Version: "v1alpha1"}
	// SchemeBuilder adds the types to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
