// Package infra is the Cluster API infrastructure provider of the
// providers' end-to-end tests: its machines are nodezero test hosts on
// this machine, as the sandbox runs them on loopback.
//
//   - ClusterReconciler: a NodezeroHostCluster is provisioned once the
//     test gives its spec.controlPlaneEndpoint (the workload API's VIP and
//     6443).
//   - MachineReconciler: a NodezeroHostMachine's host is a `nodezero run`
//     process (Hosts) on its own 127.x address, with its own hardware
//     tree, root and disk folder, booted with its Machine's bootstrap data
//     (the config image) as --config-image; started again when it
//     reboots into its installed disk (exit sim.ExitReboot) or is killed.
//     spec.providerID is nodezero://<namespace>/<machine>: the host's Node
//     in the workload cluster carries the same one (sim reads it from the
//     host's machine binding).
//
// Hosts belong to the test that made them: Hosts.Close stops every process,
// and each dies with the test process (Pdeathsig). It is test code, never
// deployed: no RBAC markers.
//
// It imports the capi API packages, CAPI's util, controller-runtime and the
// main module's sim (the reboot exit code, the kubeconfig path) and
// internal/hwtree (the hardware trees).
package infra
