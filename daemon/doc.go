// Package daemon holds what node zero runs on a host, in sub-packages by
// noun (this package itself is empty):
//
//   - boot: the boot sequence — wait for the config image, install the
//     network keyfiles, set the hostname, decide node zero;
//   - assisted: the embedded assisted service — a typed in-memory model,
//     evaluation, instructions, installation, SQLite through store;
//     assistedtest: fixtures for its tests and its users' tests;
//   - validation: host and cluster validations, pure functions of typed facts;
//   - machine: the host and cluster state machines as rule tables
//     (gendot draws them);
//   - api: the v2 REST handlers and the HTTP server (limits, TLS);
//   - agentjson: the strict fast readers of agents' step replies and
//     connectivity reports that api and validation use;
//   - auth: ES256 tokens and their schemes;
//   - register: node zero's registration of the cluster and infra-env,
//     host configs and the start rule;
//   - installfiles: install-config.yaml and the Ignition configs, through the
//     payload's openshift-install or the built-in generator;
//   - issue, notify, journal: /etc/issue.d status lines, sd_notify, the
//     journald slog handler.
//
// daemon may import wire, onhost, internal/, store, configimage, units and
// kube, never a composition package (node, sandbox, sim, watch); the
// import table of docs/architecture.md is enforced by internal/archtest.
package daemon
