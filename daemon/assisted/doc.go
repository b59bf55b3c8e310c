// Package assisted is node zero's embedded assisted service: clusters,
// infra-envs and hosts with their state machines and validations, agent
// instructions and step replies, events, and the install orchestration.
//
// # How state moves
//
// The service holds every cluster, infra-env and host in memory and is the
// only writer of the store. A request takes the model lock, changes the
// facts, re-evaluates what those facts touch — the host's validations and
// state machine, then its cluster's, to a fixed point — and queues the
// changed rows and their events as one batch. A single writer goroutine
// commits queued batches to SQLite in one transaction (group commit), and the
// request is answered only after its batch is durable. A failed commit
// reloads the model from the store, so memory never holds what disk does not.
// Evaluation is event driven: the periodic monitor only handles time
// (disconnection, stage and preparation timeouts).
//
// # The model
//
// Clusters and hosts are held as Go values: a host's inventory, its check
// results (validation.HostChecks), its validations (wire.ValidationsInfo)
// and its compacted connectivity report, a cluster's validations and
// majority groups. The v2 shapes, whose fields carry these as JSON text,
// are rendered in one place each (hostRec.view, clusterRec.rendered), from
// texts made once when a value changes; the API and the store start from
// them, so stored documents keep the v2 shape. The steps agents are
// handed are one table (steps.go): per step type, the host statuses it
// goes out in, its args, the decoding of its reply and what is kept.
//
// Agents that add ?wait= to their instructions request are held until a step
// is due for them, so node zero drives its peers without a polling lag.
//
// # Day 2
//
// An installed cluster is imported (import.go: kind AddHostsCluster, status
// adding-hosts, no installation of its own); the hosts that register into
// it are day-2 workers, each installed on its own once known (day2.go:
// v2InstallHost), with a pointer Ignition to the cluster's machine config
// server instead of generated install files.
//
// assisted imports store, wire, daemon/machine, daemon/validation,
// daemon/installfiles (the install files and a day-2 host's pointer
// Ignition), configimage/manifests, gopkg.in/yaml.v3 (to check custom
// manifests) and the standard library.
package assisted
