// Package tui is the console a person at the rack reads: a tview terminal
// UI on every host's graphical terminal and serial line.
//
// It shows, in this order of a host's life:
//
//   - the rendezvous IP page (interactive flow only: /etc/assisted/interactive-ui),
//     which writes /etc/assisted/rendezvous-host.env as agent-tui does;
//   - the connectivity checks page (release image pull, DNS, ping, HTTP to
//     the registry host), re-run every few seconds, with a 20 s countdown
//     that continues by itself once they pass;
//   - the network page (interfaces, routes and DNS as a tree; nmtui);
//   - the install dashboard: the cluster's status and progress, failing
//     validations, a host table with a detail view per host, the event log
//     tail (e: every event in full) and, in one sentence, what the install
//     waits for — after a failure, the host that failed and why, with the
//     retry path under it (r resets the cluster when Config.Reset is
//     given); at installed, what comes next.
//
// The console never touches state: the dashboard renders Snapshots fetched
// over HTTP from node zero's service (the assisted v2 API), and what the
// checks and network pages show comes from functions the caller injects
// (cmd/nodezero wires the host agent's checks). The one thing it asks of
// the service is the reset a person confirms, through Config.Reset. Render functions are pure —
// snapshot in, rows and text out — and table-tested; widgets change only
// on tview's event goroutine, inside QueueUpdateDraw. It works at 80×24 and
// on a serial terminal without colour (Config.Mono), keyboard only.
//
// Imports: the wire package, tview and tcell, the standard
// library. Nothing else of the project (docs/architecture.md).
package tui
