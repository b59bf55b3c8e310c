// Package node composes a nodezero host out of the project's parts, as
// tailscale's tsd does for tailscaled: the packages below it each do one
// thing; node wires them into what `nodezero run`, `nodezero agent` and
// `nodezero service` start.
//
// It owns:
//   - the node-zero runtime (Run): the boot sequence (daemon/boot) with,
//     on node zero, the embedded service and the registration beside it
//     (NodeZero), then the host agent on every host; the status lines,
//     sd_notify and the watchdog's health check; the network stage that
//     runs before NetworkManager (NetworkStage). A sandbox host read from
//     a hardware tree gets the fake firmware and, booted from its
//     installed disk, the simulated in-cluster controller of package sim;
//   - the agent's step set (Steps, NewAgent, RunAgent): which hostagent
//     steps a host runs and how far each may reach, for a live host and
//     for a test or sandbox host (DiskFiles: the files standing in for its
//     disks);
//   - the service's wiring (Serve): store, assisted service and the API
//     behind daemon/api's server limits and TLS.
//
// The console's runtime is its sub-package node/console.
//
// node may import any project package but cmd; cmd imports it, and no
// package below it (daemon, hostagent, tui, wire, sim, ...) ever does.
package node
