// Package controlplane is the NodezeroControlPlane reconciler, the
// Cluster API control-plane provider (contract v1beta2): for each object
// it keeps one assisted v2 cluster on the nodezero service its serviceRef
// names, makes and removes its control-plane Machines one per reconcile
// (each with a NodezeroConfig of the same name and an infrastructure
// machine cloned from the template), starts the install once every
// expected host is bound and known (daemon/register.StartDecision), writes
// the <cluster>-kubeconfig secret, reports controlPlaneInitialized only
// once the workload API answers /readyz through it, imports the installed
// cluster as the day-2 cluster later Machines join through, and on
// deletion removes its Machines first, then the v2 clusters, then its
// finalizer.
//
// It speaks to the service only through the v2 REST API (package wire,
// opened by capi/internal/service) and to the workload cluster only
// through the main module's kube package (no client-go there: the
// kubeconfig comes from the service). It imports the capi APIs,
// controller-runtime and CAPI's v1beta2 types; never another reconciler.
package controlplane
