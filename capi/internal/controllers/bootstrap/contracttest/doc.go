// Package contracttest holds the bootstrap provider's tests against a real
// management cluster: the NodezeroConfig reconciler registered with
// SetupWithManager next to CAPI core's reconcilers (capi/internal/testenv)
// and a real `nodezero service` (capi/internal/servicetest), so that its
// watches and the bootstrap contract are judged by CAPI's own Machine
// controller. It is a package of its own so that the reconciler's unit
// tests do not link CAPI core.
package contracttest
