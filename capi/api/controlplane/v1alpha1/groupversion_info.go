// Package v1alpha1 is the control-plane provider's API (group
// controlplane.cluster.x-k8s.io, Cluster API contract v1beta2):
// NodezeroControlPlane, one OpenShift cluster installed by a nodezero
// service: its v2 cluster, its control-plane Machines, the install, the
// <cluster>-kubeconfig secret.
//
// +kubebuilder:object:generate=true
// +groupName=controlplane.cluster.x-k8s.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these objects.
	GroupVersion = schema.GroupVersion{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha1"}
	// SchemeBuilder adds the types to a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
