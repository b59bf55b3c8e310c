// Package issue writes the console status a person at the host reads
// before logging in: one file per concern under /etc/issue.d (agetty shows
// them in lexical order under /etc/issue) and the same lines, without
// colour escapes, under /etc/motd.d. It keeps ABI's protocol
// (docs/reference/abi-on-host.md §5): the text is wrapped in a leading and a
// trailing newline, a file is replaced atomically and only when its
// content changes, clearing deletes it, and agetty is asked to reload
// after every change when it is installed.
//
// The keys are ABI's (50_release-image, 60-rendezvous-host,
// 60-check-config-image, 65_token, 70_agent-services, 80_host-config,
// 90_start-install, 90_add-node, 95_load_config_image); the console (#7) reads the same
// status model through the daemon, never these files.
//
// It imports only daemon/atomicfile of this module.
package issue
