// Package validation holds the host and cluster validations of the embedded
// assisted service as pure functions: assisted-service's validation IDs,
// categories, statuses and message texts as wire.Validation entries (wire
// owns the validations_info text), the hardware requirements table with its
// version lookup, service-side disk eligibility and installation-disk
// choice, the machine network the cluster monitor derives, and the
// auto-assign role rule.
//
// Facts come from the fact sheets in shared/reference (docs/reference/assisted-service.md
// §2.7, §3.2, §5, §6; docs/reference/agent-and-installer.md §3) and from the public
// assisted-service source they cite (internal/host/validator.go,
// internal/cluster/validator.go, internal/hardware/validator.go,
// internal/network/machine_network_cidr.go). Where this package differs from
// assisted-service on purpose, the comment at the rule says so.
//
// # Inputs
//
// A Validator carries configuration (requirements, disconnection timeout,
// disabled IDs). Host validations take a HostInput: the host, its
// inventory, its compacted connectivity report (ConnReport), its check
// results (HostChecks), its cluster with the cluster's majority groups,
// and a ClusterFacts computed once per cluster by Validator.Facts, so that
// validating one host of a 1,000-host cluster never walks the other hosts.
// Cluster validations take the cluster and every host. Inputs are Go
// values, never JSON text: a caller that holds stored documents decodes
// them once (ReadHostChecks, ReadMajorityGroups, ParseConnectivity).
// Nothing here reads a clock, a file or the network; "now" is an input.
//
// The package holds no state between calls. What lasts across
// evaluations belongs to the caller: the Interner that compacts a
// cluster's reports onto shared tables of host IDs and addresses, and a
// ClusterMemo per cluster that keeps the last connectivity aggregates.
//
// # Adding a validation
//
// Write one function func(*hostContext) (wire.ValidationStatus, string) (or
// func(*clusterContext) (wire.ValidationStatus, string)) and add one row
// {ID, Category, Fn} to the table in host.go (or cluster.go). The row
// order of the host table is the order assisted-service emits; cluster
// results are emitted sorted by ID inside each category, as
// assisted-service does. A validation that reads a new check result gets
// it as a field of HostChecks, decoded once by the caller.
package validation
