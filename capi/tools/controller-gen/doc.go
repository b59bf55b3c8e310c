// Package controllergen pins controller-gen, which generates the capi
// module's CRDs, RBAC and deep copies (make -C capi generate). It is a
// module of its own because controller-tools v0.23.0 requires k8s.io v0.37
// while the providers build on cluster-api v1.14.2's v0.36.
package controllergen
