package tui

// The dashboard's render functions: a Snapshot (or one host of it) in,
// rows and lines of text out. They touch no widget, so the tests call them
// with table cases; dashboard.go puts their output on the screen.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// progressBar is "[██████░░░░]  60%" with width cells between the
// brackets; mono uses "#" and "-", which every serial terminal shows.
func progressBar(pct int64, width int, mono bool) string {
	pct = max(0, min(pct, 100))
	full := int(pct) * width / 100
	on, off := "█", "░"
	if mono {
		on, off = "#", "-"
	}
	return "[" + strings.Repeat(on, full) + strings.Repeat(off, width-full) + fmt.Sprintf("] %3d%%", pct)
}

// parsedHost is a host with its inventory and validations read.
type parsedHost struct {
	Host        *wire.Host
	Name        string
	Inventory   *wire.Inventory // nil: none sent yet, or unreadable
	Validations []validation
}

// parseCache keeps the last parse of each host's inventory and
// validations_info, so a refresh parses only what changed (a 200-host
// snapshot holds megabytes of inventory JSON). A nil cache parses
// everything. It is used on one goroutine.
type parseCache struct {
	inv  map[string]cachedInventory
	vals map[string]cachedValidations
}

type cachedInventory struct {
	raw string
	inv *wire.Inventory
}

type cachedValidations struct {
	raw  string
	vals []validation
}

func newParseCache() *parseCache {
	return &parseCache{inv: map[string]cachedInventory{}, vals: map[string]cachedValidations{}}
}

// inventory parses raw, the inventory of host id.
func (c *parseCache) inventory(id, raw string) *wire.Inventory {
	if raw == "" {
		return nil
	}
	if c != nil {
		if e, ok := c.inv[id]; ok && e.raw == raw {
			return e.inv
		}
	}
	inv := new(wire.Inventory)
	if json.Unmarshal([]byte(raw), inv) != nil {
		inv = nil // shown as no inventory; the service validated it on arrival
	}
	if c != nil {
		c.inv[id] = cachedInventory{raw, inv}
	}
	return inv
}

// validations parses raw, the validations_info of host or cluster id.
func (c *parseCache) validations(id, raw string) []validation {
	if c != nil {
		if e, ok := c.vals[id]; ok && e.raw == raw {
			return e.vals
		}
	}
	vals, err := parseValidations(raw)
	if err != nil {
		vals = []validation{{Category: "console", ID: "validations-info", Status: valError, Message: err.Error()}}
	}
	if c != nil {
		c.vals[id] = cachedValidations{raw, vals}
	}
	return vals
}

// forget drops the entries of hosts that are gone.
func (c *parseCache) forget(keep map[string]bool) {
	if c == nil {
		return
	}
	for id := range c.inv {
		if !keep[id] {
			delete(c.inv, id)
		}
	}
	for id := range c.vals {
		if !keep[id] {
			delete(c.vals, id)
		}
	}
}

// parseHosts reads every host of s, sorted by name then id: the order of
// the table, of the event names and of the waiting sentence.
func parseHosts(s Snapshot, c *parseCache) []parsedHost {
	out := make([]parsedHost, 0, len(s.Hosts))
	keep := make(map[string]bool, len(s.Hosts)+1)
	for _, h := range s.Hosts {
		if h == nil {
			continue
		}
		keep[h.ID] = true
		inv := c.inventory(h.ID, h.Inventory)
		out = append(out, parsedHost{Host: h, Name: hostName(h, inv), Inventory: inv, Validations: c.validations(h.ID, h.ValidationsInfo)})
	}
	if s.Cluster != nil {
		keep[s.Cluster.ID] = true
	}
	c.forget(keep)
	slices.SortFunc(out, func(a, b parsedHost) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Host.ID, b.Host.ID))
	})
	return out
}

// hostName is the name a person knows the host by: the requested hostname,
// else the inventory's, else the start of its id.
func hostName(h *wire.Host, inv *wire.Inventory) string {
	switch {
	case h.RequestedHostname != "":
		return h.RequestedHostname
	case inv != nil && inv.Hostname != "":
		return inv.Hostname
	case len(h.ID) > 8:
		return h.ID[:8]
	}
	return h.ID
}

// hostRole is the role column: the bootstrap master shows as bootstrap, an
// auto-assigned host as the role the service suggests for it.
func hostRole(h *wire.Host) string {
	switch {
	case h.Bootstrap:
		return string(wire.HostRoleBootstrap)
	case h.Role == wire.HostRoleAutoAssign || h.Role == "":
		if h.SuggestedRole != "" && h.SuggestedRole != wire.HostRoleAutoAssign {
			return string(h.SuggestedRole)
		}
		return "auto"
	}
	return string(h.Role)
}

// hostStage is the host's install stage, "" before the installation.
func hostStage(h *wire.Host) string {
	if h.Progress == nil {
		return ""
	}
	return string(h.Progress.CurrentStage)
}

func hostPercent(h *wire.Host) int64 {
	if h.Progress == nil {
		return 0
	}
	return h.Progress.InstallationPercentage
}

// installDisk is the disk the host installs on: the one the service chose
// (installation_disk_id, else _path), else the biggest eligible disk.
func installDisk(h *wire.Host, inv *wire.Inventory) *wire.Disk {
	if inv == nil {
		return nil
	}
	var biggest *wire.Disk
	for _, d := range inv.Disks {
		if d == nil {
			continue
		}
		if h.InstallationDiskID != "" && d.ID == h.InstallationDiskID ||
			h.InstallationDiskID == "" && h.InstallationDiskPath != "" && d.Path == h.InstallationDiskPath {
			return d
		}
		if d.InstallationEligibility != nil && d.InstallationEligibility.Eligible && (biggest == nil || d.SizeBytes > biggest.SizeBytes) {
			biggest = d
		}
	}
	return biggest
}

// binaryBytes is a memory size: "512 MiB", "7.5 GiB", "32 GiB".
func binaryBytes(b int64) string {
	const mib, gib = 1 << 20, 1 << 30
	switch {
	case b <= 0:
		return ""
	case b < gib:
		return fmt.Sprintf("%d MiB", (b+mib/2)/mib)
	case b < 10*gib:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(b)/gib), ".0") + " GiB"
	}
	return fmt.Sprintf("%.0f GiB", float64(b)/gib)
}

// decimalBytes is a disk size as disks are sold and as the requirements
// read: "120 GB", "1.9 TB".
func decimalBytes(b int64) string {
	const gb, tb = 1e9, 1e12
	switch {
	case b <= 0:
		return ""
	case b < gb:
		return fmt.Sprintf("%d MB", (b+5e5)/1e6)
	case b < tb:
		return fmt.Sprintf("%.0f GB", float64(b)/gb)
	}
	return fmt.Sprintf("%.1f TB", float64(b)/tb)
}

// clusterHeader is the dashboard's first line: the status word exactly as
// the service gives it and the total progress.
func clusterHeader(c *wire.Cluster, mono bool) string {
	if c == nil {
		return "No cluster registered yet"
	}
	var pct int64
	if c.Progress != nil {
		pct = c.Progress.TotalPercentage
	}
	return fmt.Sprintf("Status: %-14s %s", c.Status, progressBar(pct, 20, mono))
}

// clusterValidationLines are the failing cluster validations, one line
// each: what the person must fix before the installation can start.
func clusterValidationLines(vals []validation) []string {
	var out []string
	for _, v := range failingValidations(vals) {
		out = append(out, validationLine(v, false))
	}
	return out
}

// The host table. Its columns depend on the width it has (decided here,
// tested in dashboard_render_test.go):
//
//   - wide (tableWideWidth and more): every column;
//   - narrow (80×24) before the installation: name, role, status and the
//     hardware (CPU, RAM, disk, failing validations), which is what keeps a
//     host from being ready;
//   - narrow during the installation: name, role, status, progress and the
//     install result, where a host busy installing (installing-in-progress)
//     shows its stage in the status column, since the status alone then
//     says nothing.
//
// Before the installation the last column counts the host's failing
// validations (CHECKS); from its start on it is the host's install result
// (INSTALL: ✓ done, ✖ failed, ✖ not joined…), which the validations do not
// tell: a host that never joined passed them all.
const tableWideWidth = 100

// Column ids of the host table.
type hostColumn int

const (
	colMark hostColumn = iota
	colName
	colRole
	colStatus
	colStage
	colProgress
	colCPU
	colRAM
	colDisk
	colFailing
	colInstall
)

// hostColumnHeader and the widest a column's text may be (0: no limit).
var hostColumnInfo = map[hostColumn]struct {
	header   string
	maxWidth int
}{
	colMark: {"", 1}, colName: {"HOST", 18}, colRole: {"ROLE", 0}, colStatus: {"STATUS", 0},
	colStage: {"STAGE", 25}, colProgress: {"PROGRESS", 0}, colCPU: {"CPU", 0}, colRAM: {"RAM", 0},
	colDisk: {"DISK", 0}, colFailing: {"CHECKS", 0}, colInstall: {"INSTALL", 0},
}

// installing reports whether the cluster is past the start of the
// installation: the table then shows progress rather than hardware.
func installing(c *wire.Cluster) bool {
	if c == nil {
		return false
	}
	switch c.Status {
	case wire.ClusterStatusInstalling, wire.ClusterStatusInstallingPendingUserAction,
		wire.ClusterStatusFinalizing, wire.ClusterStatusInstalled:
		return true
	case wire.ClusterStatusError, wire.ClusterStatusCancelled:
		return !c.InstallStartedAt.IsZero()
	}
	return false
}

// hostColumns picks the table's columns for its inner width.
func hostColumns(width int, installPhase bool) []hostColumn {
	switch {
	case width >= tableWideWidth && installPhase:
		return []hostColumn{colMark, colName, colRole, colStatus, colStage, colProgress, colCPU, colRAM, colDisk, colInstall}
	case width >= tableWideWidth:
		return []hostColumn{colMark, colName, colRole, colStatus, colStage, colProgress, colCPU, colRAM, colDisk, colFailing}
	case installPhase:
		return []hostColumn{colMark, colName, colRole, colStatus, colProgress, colInstall}
	}
	return []hostColumn{colMark, colName, colRole, colStatus, colCPU, colRAM, colDisk, colFailing}
}

// hostHeaders are the table's header cells for cols. Narrow during the
// installation, the status column shows the stage of the hosts busy
// installing, and its header says so.
func hostHeaders(cols []hostColumn) []string {
	out := make([]string, len(cols))
	stageInStatus := !slices.Contains(cols, colStage) && slices.Contains(cols, colProgress)
	for i, c := range cols {
		out[i] = hostColumnInfo[c].header
		if c == colStatus && stageInStatus {
			out[i] = "STATUS/STAGE"
		}
	}
	return out
}

// hostCell is one cell of the host table; Bad marks text to draw in the
// theme's bad style (the symbol already says it).
type hostCell struct {
	Text string
	Bad  bool
}

// hostRow is one host's cells for cols in cluster c. thisHost marks the
// console's own host with "*".
func hostRow(p parsedHost, c *wire.Cluster, cols []hostColumn, thisHost string, mono bool) []hostCell {
	h := p.Host
	wide := slices.Contains(cols, colStage)
	row := make([]hostCell, len(cols))
	for i, col := range cols {
		var cell hostCell
		switch col {
		case colMark:
			if thisHost != "" && h.ID == thisHost {
				cell.Text = "*"
			}
		case colName:
			cell.Text = p.Name
		case colRole:
			cell.Text = hostRole(h)
		case colStatus:
			cell.Text = string(h.Status)
			if !wide && h.Status == wire.HostStatusInstallingInProgress && hostStage(h) != "" {
				cell.Text = hostStage(h)
			}
			cell.Bad = badHostStatus(h.Status)
		case colStage:
			cell.Text = hostStage(h)
		case colProgress:
			if hostStage(h) != "" || hostPercent(h) > 0 {
				cell.Text = progressBar(hostPercent(h), 8, mono)
			}
		case colCPU:
			if p.Inventory != nil && p.Inventory.CPU != nil && p.Inventory.CPU.Count > 0 {
				cell.Text = fmt.Sprint(p.Inventory.CPU.Count)
			}
		case colRAM:
			if p.Inventory != nil && p.Inventory.Memory != nil {
				cell.Text = binaryBytes(p.Inventory.Memory.PhysicalBytes)
			}
		case colDisk:
			if d := installDisk(h, p.Inventory); d != nil {
				cell.Text = decimalBytes(d.SizeBytes)
			} else if p.Inventory != nil {
				cell.Text, cell.Bad = "✖ none", true
			}
		case colFailing:
			n := len(failingValidations(p.Validations))
			switch {
			case n > 0:
				cell.Text, cell.Bad = fmt.Sprintf("✖ %d", n), true
			case len(p.Validations) > 0:
				cell.Text = "✓"
			}
		case colInstall:
			cell = installCell(h, c)
		}
		row[i] = cell
	}
	return row
}

// badHostStatus: statuses that need the person's attention.
func badHostStatus(s wire.HostStatus) bool {
	switch s {
	case wire.HostStatusInsufficient, wire.HostStatusDisconnected, wire.HostStatusError,
		wire.HostStatusPreparingFailed, wire.HostStatusInstallingPendingUserAction,
		wire.HostStatusResettingPendingUserAction, wire.HostStatusCancelled:
		return true
	}
	return false
}
