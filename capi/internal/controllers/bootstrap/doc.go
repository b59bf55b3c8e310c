// Package bootstrap is the NodezeroConfig reconciler, Cluster API's
// bootstrap provider for nodezero (contract v1beta2): for each Machine it
// makes one v2 infra-env in the control plane's nodezero service (bound
// to the day-1 cluster, or to the day-2 cluster once the install is
// over; a worker that arrives while the install runs waits), writes the
// Machine's bootstrap data secret (a config image built by the main
// module's configimage/machineimage, or the same files as Ignition),
// binds the one host that registers into the infra-env (role, hostname,
// the installation disk its root device hints choose; a second host is
// refused), starts a day-2 host's install, and on
// deletion removes the host and the infra-env from the service.
//
// It imports the capi API packages, capi/internal/service, and the main
// module's wire, onhost, configimage (machineimage, inputs, manifests)
// and daemon/validation (the hints' disk matching, pure) packages;
// nothing of the control-plane reconciler.
package bootstrap
