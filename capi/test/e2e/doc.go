// Package e2e is the providers' end-to-end tier (T2), tests only: a
// management cluster (capi/internal/testenv: a real kube-apiserver and
// etcd, CAPI core in-process) running the bootstrap and control-plane
// providers and the test infrastructure provider (capi/test/infra), a real
// hub `nodezero service` (capi/internal/servicetest), `nodezero run` host
// processes booted from their Machines' config images, and a second
// kube-apiserver playing the installed (workload) cluster, where the
// simulated hosts register their Nodes with their Machines' providerIDs.
// The test plays cluster-machine-approver there (day-2 CSRs).
//
// It may import everything of the capi module and the main module's
// packages that do not drag in more modules (sandbox does not qualify).
package e2e
