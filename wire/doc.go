// Package wire owns the assisted-service v2 contract that node zero's
// service, the host agent, the console and wait-for share: the JSON shapes
// of the REST API, a small HTTP client for it, and typed helpers for the
// fields that carry JSON inside a string (validations_info, step args and
// replies, the connectivity report, the image, disk, NTP and DNS results).
//
// The shapes follow assisted-service's swagger.yaml (openshift/assisted-service) exactly —
// field names, JSON tags, omitempty and nullability — so that a real agent
// or a real service can talk to ours; TestSwaggerConformance in daemon/api
// checks every answer against that file. They were written once from the
// swagger definitions and are kept by hand (no generator): cluster.go,
// host.go, infraenv.go, inventory.go, event.go, manifest.go, step_args.go.
// Hand-written helpers live beside them.
//
// wire imports no other package of this module; daemon, hostagent, tui and
// the Cluster API providers import it.
package wire
