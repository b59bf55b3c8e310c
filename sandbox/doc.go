// Package sandbox installs a whole cluster on this one machine (DESIGN §9),
// what `nodezero sandbox` and the end-to-end tests run: one `nodezero run`
// process per host, each with its own root directory, hardware tree
// (testdata/hw), sparse-file disk and loopback address; a config image made
// from the input set in testdata/ the way a user makes it (the command's
// own `create config-image`, given as Options.ConfigImage); a generated OS
// image with a known digest as the payload; DNS and a TLS registry of its
// own on loopback for the host checks (sandbox/loopback); and,
// after node zero's reboot, the installed cluster's Kubernetes API
// (kube/localapi). A host's reboot ends its process (sim.ExitReboot) and
// the sandbox starts it again, booting its disk: from there on OpenShift
// is simulated (package sim). Nothing leaves loopback. With NetNS
// (`--netns`, root) each host is a network namespace of a test bed
// (package testbed) instead, the responders run on the bed's gateway,
// and nothing leaves the bed (netns.go).
//
// It owns the run (Run: its steps in sandbox.go, its Options in
// options.go), the hosts on loopback or in namespaces, their supervisor
// (hosts.go), the installed cluster's API (kube.go), the payload and the
// inputs (payload.go), the progress it prints and the summary it leaves
// (watch.go), and the API certificates of --api-tls (apicerts.go).
//
// sandbox may import any project package but cmd (a composition package:
// sim, node/console, testbed, kube/localapi, hostagent/diskwrite,
// configimage, wire, tui, internal/); cmd imports it, and no package below
// it does.
package sandbox
