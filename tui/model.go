package tui

import (
	"context"
	"net/netip"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// Snapshot is what the dashboard shows, fetched at one moment from node
// zero's service. A failed fetch keeps the last good data and sets Err: the
// dashboard then says "reconnecting" over the data it still has.
type Snapshot struct {
	At      time.Time
	Err     error         // the last fetch failed; the rest is the last good data
	Cluster *wire.Cluster // nil: no cluster registered yet
	Hosts   []*wire.Host  // the cluster's hosts, in the service's order
	Events  []*wire.Event // the newest events, oldest first
	// ThisHost is the id of the host the console runs on ("" unknown), so
	// that the table can mark it.
	ThisHost string
}

// Source gives the dashboard its snapshots. HTTPSource is the real one; a
// test hands in a function of its own.
type Source interface {
	Snapshot(ctx context.Context) Snapshot
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context) Snapshot

func (f SourceFunc) Snapshot(ctx context.Context) Snapshot { return f(ctx) }

// CheckID names one connectivity check.
type CheckID string

// The checks of agent-tui's engine (docs/reference/abi-on-host.md §12.2).
const (
	CheckReleaseImagePull CheckID = "release-image-pull" // the primary check
	CheckDNS              CheckID = "release-image-host-dns"
	CheckPing             CheckID = "release-image-host-ping"
	CheckHTTP             CheckID = "release-image-http"
)

// Check is one connectivity check the checks page runs every Interval.
// Run returns what the check's command printed and an error when it
// failed; the page shows the output of a failing check.
type Check struct {
	ID    CheckID
	Title string // the row's text, e.g. "nslookup quay.io"
	Run   func(ctx context.Context) (output string, err error)
}

// CheckState is a check's last outcome.
type CheckState int

const (
	CheckPending CheckState = iota // not run yet: "…"
	CheckPassed                    // "✓"
	CheckFailed                    // "✖"
)

// CheckResult is one run of a check.
type CheckResult struct {
	ID     CheckID
	Title  string
	State  CheckState
	Output string // what the command printed, for a failure
	Err    string // the failure, one line
	At     time.Time
}

// NetState is this host's network as the network page shows it.
type NetState struct {
	Hostname   string
	Interfaces []NetInterface
	Routes     []NetRoute
	DNS        NetDNS
	// Shared, when set, says why the interfaces and routes are the
	// machine's rather than this host's own (a sandbox host shares the
	// machine's loopback and NICs); the page labels them so.
	Shared string
}

// NetInterface is one link of the host.
type NetInterface struct {
	Name  string
	Type  string // "ethernet", "bond", "vlan", "bridge", "loopback", …
	MAC   string
	MTU   int
	State string // "up", "down", …
	Addrs []netip.Prefix
	// Default marks the interface of the default route; it is listed first.
	Default bool
}

// NetRoute is one route of the main table.
type NetRoute struct {
	Destination netip.Prefix // zero: the default route
	Gateway     netip.Addr   // zero: on-link
	Interface   string
	Metric      int
}

// NetDNS is the resolver configuration.
type NetDNS struct {
	Servers []string
	Search  []string
}
