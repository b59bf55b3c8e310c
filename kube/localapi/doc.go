// Package localapi runs an installed cluster's Kubernetes API on loopback:
// Debian's etcd and a kube-apiserver built from the pinned k8s.io/kubernetes
// module (tools/kube), as child processes owned by a context, every
// listener on the one 127.x address it is given. The API serves a
// certificate signed by the config image's kube-apiserver-lb-signer for the
// cluster's API name and that address, trusts the admin-kubeconfig-signer
// for clients (so auth/kubeconfig's system:admin, in system:masters, is
// the cluster's admin), authorizes with RBAC, and carries OpenShift's
// ClusterVersion, ClusterOperator and Infrastructure CRDs with `version`
// and a cluster's operators created in the Progressing state. It seeds
// what adding nodes reads (the node-joiner's reads): the openshift-config
// and openshift-machine-api namespaces, Infrastructure `cluster`, the pull
// secret and the worker pool's pointer Ignition (worker-user-data-managed). The sandbox runs it as the
// installed cluster (docs/architecture.md); its simulated controller writes the
// objects' status through package kube.
//
// FindTools finds the binaries: an environment override for each, then the
// tools cache tools/kube/build.sh fills (make deps).
//
// localapi imports only package kube of the project.
package localapi
