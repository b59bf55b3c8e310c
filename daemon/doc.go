// Package daemon is what `nodezero run` does on a host: the boot sequence,
// the node-zero decision, the embedded assisted service on node zero, the
// host agent on every host, sd_notify and the /etc/issue.d status lines.
//
// The parts live in sub-packages by noun: assisted (the service: state,
// evaluation, instructions, install orchestration), api (the v2 REST
// handlers), auth (ES256 tokens), machine (host and cluster state machines as
// data), validation (host and cluster validations) and v2 (the wire types
// and client). daemon may import store, configimage, units and wire;
// see docs/architecture.md and the deps test.
package daemon
