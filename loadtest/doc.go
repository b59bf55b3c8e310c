// Package loadtest is `nodezero loadtest`: it measures the embedded
// service the way issues #2 and #8 state their goals. Each run starts a
// child `nodezero service` process (so its RSS and CPU are its own;
// service.go), registers a cluster and an infra-env, then runs either real
// `nodezero agent` processes on the test hardware trees (agents.go) or
// simulated agents (sim/simagent) speaking real HTTP, until every
// host is known and the cluster ready, and an idle window (run.go).
// Simulated agents then go on through a whole install (install.go): roles,
// the install action, the real installer on simulated disks, the reboots
// and the completion, until the cluster is installed. The cluster is
// followed through a watch.Watcher on the cluster list (waits.go); the
// figures (report.go) come from /proc (package procstat) and the agents'
// recorded requests. Everything stays on 127.0.0.1.
//
// loadtest is a composition package: it may import wire, watch,
// sim/simagent, its procstat and internal/ leaves, never cmd;
// nothing of the project imports it but cmd and the console's benchmark.
package loadtest
