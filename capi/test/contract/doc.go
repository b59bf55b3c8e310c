// Package contract holds the contract tier (T1) of nodezero's Cluster API
// providers: tests against a real kube-apiserver and etcd (package
// internal/testenv) with CAPI core's Cluster, Machine, MachineSet and
// MachineDeployment reconcilers and nodezero's bootstrap and control-plane
// reconcilers in one manager, a real `nodezero service` per scenario
// (internal/servicetest), and CAPI's Generic* objects for infrastructure,
// patched by the tests as an infrastructure provider would.
//
// What it pins: the CRDs as the contracts (v1beta2) want them; the schema
// and CEL rules rejecting bad specs with their field paths; every MUST of
// the bootstrap-config and control-plane contracts, as CAPI core reads
// them; the day-2 gate. Hosts, where a scenario needs them, are simulated
// agents (sim/simagent) speaking the agent protocol to the service over
// HTTP; there are no host processes in this tier (capi/test/e2e has them).
//
// The package has only tests; it imports the capi module's API packages,
// controllers and test helpers, and the main module's wire and simagent.
package contract
