// Package capi is nodezero's Cluster API providers, a module of its own so
// that the nodezero binary and its module never link Kubernetes' client
// libraries (internal/archtest in the main module forbids k8s.io and
// sigs.k8s.io there).
//
//   - api/bootstrap/v1alpha1: NodezeroConfig and NodezeroConfigTemplate, the
//     bootstrap provider (contract v1beta2): each Machine's bootstrap data
//     is its config image.
//   - api/controlplane/v1alpha1: NodezeroControlPlane, the control-plane
//     provider (contract v1beta2): one assisted v2 cluster per object on a
//     nodezero service, its control-plane Machines, the install and the
//     <cluster>-kubeconfig secret.
//   - api/infrastructure/v1alpha1: NodezeroHostCluster, NodezeroHostMachine
//     and its template, the infrastructure provider for tests whose
//     machines are `nodezero run` host processes.
//   - internal/controllers: the reconcilers. They speak to the service only
//     through its v2 REST API (package wire of the main module) and build
//     config images with package configimage.
//   - cmd/nodezero-capi: the manager binary.
//
// The providers never touch the service's store; the service is the
// `nodezero service` of the main module, one replica with its SQLite file
// on a volume.
package capi
