// Package kube is nodezero's client for the installed cluster's Kubernetes
// API, as far as the installer needs one: it reads the admin kubeconfig
// `create config-image` writes (server, CA data, client certificate and
// key), and speaks HTTPS with those credentials to get, list, create and
// update the status of OpenShift's config.openshift.io/v1 ClusterVersion and
// ClusterOperator objects, whose status conditions (Available, Progressing,
// Degraded, Failing) it shapes as OpenShift's API does. For adding nodes
// to an installed cluster it also reads and writes core/v1 Namespaces,
// Secrets and Nodes, certificates.k8s.io/v1 CertificateSigningRequests
// (approve, sign) and config.openshift.io/v1 Infrastructure, and
// ReadClusterInfo makes the node-joiner's reads.
//
// It is plain net/http and encoding/json: the main module never imports
// k8s.io/* or sigs.k8s.io/* (docs/architecture.md). It never uses a proxy from the
// environment and never asks for more than the kubeconfig names.
//
// kube imports only onhost of the project (ClusterInfo carries its
// WorkerIgnitionEndpoint; gopkg.in/yaml.v3 reads the kubeconfig).
// kube/localapi runs a real kube-apiserver and etcd on loopback
// as the sandbox's installed cluster.
package kube
