package validation

import (
	"fmt"
	"sort"

	"github.com/nodezero/nodezero/wire"
)

// Host roles, cluster host counts and the auto-assign rule (assisted
// internal/host/host.go selectRole, internal/host/monitor.go SortHosts,
// internal/cluster/validator.go SufficientMastersCount; docs/reference/assisted-service.md
// §2.7).

// IsValidCandidate reports whether a host could take role: its role is
// auto-assign (or already role; a bootstrap host counts as master) and it
// has the CPU cores and memory the role needs. Operator requirements are not
// part of this package.
func (v *Validator) IsValidCandidate(c *wire.Cluster, h HostEntry, role wire.HostRole) bool {
	if h.Host.Role != wire.HostRoleAutoAssign && h.Host.Role != role &&
		!(role == wire.HostRoleMaster && h.Host.Role == wire.HostRoleBootstrap) {
		return false
	}
	inv := h.Inventory
	if inv == nil || inv.CPU == nil || inv.Memory == nil {
		return false
	}
	version := ""
	if c != nil {
		version = c.OpenshiftVersion
	}
	req := v.requirements().ForVersion(version).ForRole(role, c != nil && isSNO(c))
	return inv.CPU.Count >= req.CPUCores && inv.Memory.PhysicalBytes >= (req.RAMMiB-memoryToleranceMiB)*mib
}

// Host weight for role assignment: (cores−4) + 0.1·(RAM GiB−16) +
// 0.004·(eligible disk GiB−100).
const (
	weightMinCPUCores = 4
	weightMinMemGiB   = 16
	weightMinDiskGiB  = 100
	weightMem         = 0.1
	weightDisk        = 0.004
)

func hostWeight(inv *wire.Inventory) float64 {
	var cores, memGiB, diskGiB int64
	if inv.CPU != nil {
		cores = inv.CPU.Count
	}
	if inv.Memory != nil {
		memGiB = inv.Memory.UsableBytes >> 30
	}
	for _, d := range inv.Disks {
		if d.InstallationEligibility != nil && d.InstallationEligibility.Eligible {
			diskGiB += d.SizeBytes >> 30
		}
	}
	return float64(cores-weightMinCPUCores) + weightMem*float64(memGiB-weightMinMemGiB) + weightDisk*float64(diskGiB-weightMinDiskGiB)
}

// SortHostsForRoles orders hosts as assisted's monitor does before
// assigning roles: hosts without GPUs first, each group by ascending weight
// (stable), hosts without inventory last in their group.
func SortHostsForRoles(hosts []HostEntry) []HostEntry {
	var plain, gpu []HostEntry
	for _, h := range hosts {
		if h.Inventory != nil && len(h.Inventory.GPUs) > 0 {
			gpu = append(gpu, h)
		} else {
			plain = append(plain, h)
		}
	}
	byWeight := func(list []HostEntry) {
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i].Inventory, list[j].Inventory
			if a == nil {
				return false
			}
			if b == nil {
				return true
			}
			return hostWeight(a) < hostWeight(b)
		})
	}
	byWeight(plain)
	byWeight(gpu)
	return append(plain, gpu...)
}

// SuggestRoles computes the suggested role of every auto-assign host of a
// cluster. As assisted, nothing is suggested until every host has an
// inventory (ok is false then). Hosts are taken in SortHostsForRoles order;
// a valid master candidate becomes master while the masters (hosts whose
// role is master, plus those suggested so far) are fewer than
// control_plane_count; with a two-node control plane the first valid
// arbiter candidate becomes arbiter when there is none; everything else,
// and every day-2 host, is a worker. The result maps host id to role.
func (v *Validator) SuggestRoles(c *wire.Cluster, hosts []HostEntry) (roles map[string]wire.HostRole, ok bool) {
	for _, h := range hosts {
		if h.Inventory == nil {
			return nil, false
		}
	}
	cpc := int(controlPlaneCount(c))
	masters, arbiters := 0, 0
	for _, h := range hosts {
		switch h.Host.Role {
		case wire.HostRoleMaster, wire.HostRoleBootstrap:
			masters++
		case wire.HostRoleArbiter:
			arbiters++
		}
	}
	roles = map[string]wire.HostRole{}
	for _, h := range SortHostsForRoles(hosts) {
		if h.Host.Role != wire.HostRoleAutoAssign {
			continue
		}
		switch {
		case h.Host.Kind == wire.HostKindAddToExistingClusterHost:
			roles[h.Host.ID] = wire.HostRoleWorker
		case masters < cpc && v.IsValidCandidate(c, h, wire.HostRoleMaster):
			roles[h.Host.ID] = wire.HostRoleMaster
			masters++
		case cpc == 2 && arbiters == 0 && v.IsValidCandidate(c, h, wire.HostRoleArbiter):
			roles[h.Host.ID] = wire.HostRoleArbiter
			arbiters++
		default:
			roles[h.Host.ID] = wire.HostRoleWorker
		}
	}
	return roles, true
}

// readyToInstallStatuses are the host statuses all-hosts-are-ready-to-install
// accepts.
var readyToInstallStatuses = map[wire.HostStatus]bool{
	wire.HostStatusKnown: true, wire.HostStatusPreparingForInstallation: true, wire.HostStatusPreparingSuccessful: true,
}

func clusterAllHostsReady(c *clusterContext) (wire.ValidationStatus, string) {
	for _, h := range c.hosts {
		if !readyToInstallStatuses[h.Host.Status] {
			return wire.ValidationFailure, "The cluster has hosts that are not ready to install."
		}
	}
	return wire.ValidationSuccess, "All hosts in the cluster are ready to install."
}

// twoNodesWithFencing: a two-node control plane without arbiter whose two
// masters carry fencing credentials.
func (c *clusterContext) twoNodesWithFencing() bool {
	if c.cpc != 2 {
		return false
	}
	var masters []*wire.Host
	for _, h := range c.hosts {
		switch EffectiveRole(h.Host) {
		case wire.HostRoleArbiter:
			return false
		case wire.HostRoleMaster:
			masters = append(masters, h.Host)
		}
	}
	if len(masters) != 2 {
		return false
	}
	for _, m := range masters {
		if m.FencingCredentials == "" {
			return false
		}
	}
	return true
}

func clusterSufficientMasters(c *clusterContext) (wire.ValidationStatus, string) {
	var masters, arbiters, workers int
	var auto []HostEntry
	for _, h := range c.hosts {
		switch EffectiveRole(h.Host) {
		case wire.HostRoleMaster, wire.HostRoleBootstrap:
			masters++
		case wire.HostRoleArbiter:
			arbiters++
		case wire.HostRoleWorker:
			workers++
		case wire.HostRoleAutoAssign:
			auto = append(auto, h)
		}
	}
	cpc := int(c.cpc)
	for _, h := range auto {
		if masters < cpc && c.v.IsValidCandidate(c.c, h, wire.HostRoleMaster) {
			masters++
			continue
		}
		if cpc == 2 && arbiters == 0 && c.v.IsValidCandidate(c.c, h, wire.HostRoleArbiter) {
			arbiters++
			continue
		}
		workers++
	}
	ok := masters == cpc
	suffix := ""
	if cpc == 2 && arbiters == 0 && !c.twoNodesWithFencing() {
		ok = false
		suffix = " and at least 1 arbiter node or the control plane nodes must have fencing credentials"
	}
	if cpc == 1 && workers != 0 {
		ok = false
	}
	switch {
	case ok:
		return wire.ValidationSuccess, "The cluster has the exact amount of dedicated control plane nodes."
	case cpc == 1:
		return wire.ValidationFailure, "Single-node clusters must have a single control plane node and no workers."
	}
	return wire.ValidationFailure, fmt.Sprintf("The cluster must have exactly %d dedicated control plane nodes%s. Add or remove hosts, or change their roles configurations to meet the requirement.", cpc, suffix)
}

func clusterPullSecretSet(c *clusterContext) (wire.ValidationStatus, string) {
	if c.c.PullSecretSet {
		return wire.ValidationSuccess, "The pull secret is set."
	}
	return wire.ValidationFailure, "The pull secret is not set."
}

// maxClockSkewMinutes is assisted's HW_VALIDATOR_MAX_TIME_DIFF_MINUTES.
const maxClockSkewMinutes = 4

// clusterNTPServerConfigured compares the clocks hosts reported (the
// timestamp of their last instructions request), leaving out hosts that are
// disconnected, discovering or resetting.
func clusterNTPServerConfigured(c *clusterContext) (wire.ValidationStatus, string) {
	var lo, hi int64
	for _, h := range c.hosts {
		switch h.Host.Status {
		case wire.HostStatusDisconnected, wire.HostStatusResettingPendingUserAction, wire.HostStatusDiscovering:
			continue
		}
		ts := h.Host.Timestamp
		if ts == 0 {
			continue
		}
		if lo == 0 || ts < lo {
			lo = ts
		}
		if ts > hi {
			hi = ts
		}
	}
	if (hi-lo)/60 <= maxClockSkewMinutes {
		return wire.ValidationSuccess, "No ntp problems found"
	}
	return wire.ValidationFailure, fmt.Sprintf("Hosts' clocks are not synchronized (there's more than a %d minutes gap between clocks), please configure an NTP server via DHCP or set clocks manually.", maxClockSkewMinutes)
}
