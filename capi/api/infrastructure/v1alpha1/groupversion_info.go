// Package v1alpha1 is the infrastructure provider for tests (group
// infrastructure.cluster.x-k8s.io, Cluster API contract v1beta2): a
// NodezeroHostMachine is a `nodezero run` host process on this machine's
// loopback, booted with its Machine's bootstrap data as --config-image;
// a NodezeroHostCluster gives the Cluster its control-plane endpoint. It
// plays Metal3's part (boot an image with user data) with processes.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these objects.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1"}
	// SchemeBuilder adds the types to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
