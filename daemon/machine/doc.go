// Package machine holds the host and cluster state machines of the embedded
// assisted service as data plus pure functions.
//
// A machine is an ordered slice of rules (HostRules, ClusterRules). Each rule
// names a trigger, the statuses it applies from, a destination (or "stay"),
// a composable Condition over explicit facts and a function that renders the
// status_info text. NextHost and NextCluster walk the slice in order and the
// first rule whose trigger and source match and whose condition holds wins,
// exactly as github.com/filanov/stateswitch does for assisted-service
// (docs/reference/assisted-service.md §1). Order is therefore part of the data and
// is tested; no match is an error wrapping ErrNoTransition.
//
// Facts are plain values the caller gathers before asking: validation
// outcomes keyed by validation ID (an ID absent from the map counts as
// passing: that validation is not computed in this build), the failing
// validation messages for status_info, the cluster status, the host's role,
// stage and timestamps, the preparation check results, and the time "now".
// Nothing here reads a clock, a database or the environment, so one writer
// can compute a transition and persist it in the same transaction as the
// facts that caused it (docs/architecture.md).
//
// Rules, condition groups and status_info wording follow assisted-service
// (internal/host/statemachine.go, internal/cluster/statemachine.go,
// internal/host/common.go, internal/cluster/common.go; see
// docs/state-machines/README.md for what is left out and why). The package
// also holds the install-progress data that goes with the machines: per-role
// stage lists, the forward-only stage check, host and cluster percentages,
// HasEnoughMastersAndWorkers, and the timeouts.
//
// Dot and Markdown render the rules; `go generate` writes them to
// docs/state-machines and a test keeps the committed files in step.
package machine

//go:generate go run ./gendot -out ../../docs/state-machines
