package assisted

import (
	"fmt"
	"slices"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// settle re-evaluates what the request touched until nothing changes:
// first the aggregates of stale clusters (machine network, suggested roles,
// hostname counts), then dirty hosts (validations, state machine), then
// dirty clusters (validations, state machine). A cluster's status change
// makes its hosts dirty again, a host's status change its cluster.
//
// A request from an agent (t.coalesce) settles its own hosts at once and
// hands cluster-wide work to the evaluator, which does it once for every
// request that arrived within Config.EvaluationDelay: a thousand hosts
// registering at once then cost one pass over the cluster per window, not
// one per host, and the model lock is held for microseconds per request.
func (t *txn) settle() {
	for round := 0; round < 100; round++ {
		if t.coalesce && len(t.dirtyH) == 0 && (len(t.staleC) > 0 || len(t.dirtyC) > 0) {
			t.s.deferClusters(t.staleC, t.dirtyC)
			t.staleC, t.dirtyC = map[string]*clusterRec{}, map[string]*clusterRec{}
			return
		}
		switch {
		case t.coalesce && len(t.dirtyH) > 0:
			hs := t.dirtyH
			t.dirtyH = map[hostKey]*hostRec{}
			recount := map[*clusterRec]bool{}
			for _, h := range sortedHosts(hs) {
				t.refreshHost(h)
				if c := t.s.clusters[h.clusterID()]; c != nil {
					recount[c] = true
				}
			}
			// The hosts a connectivity check probes are counted as they
			// change, not at the deferred evaluation: the checks wait for
			// that count to settle (connectivityWait).
			for c := range recount {
				t.countProbeTargets(c)
			}
		case len(t.staleC) > 0:
			for id, c := range t.staleC {
				delete(t.staleC, id)
				t.derive(c)
			}
		case len(t.dirtyH) > 0:
			hs := t.dirtyH
			t.dirtyH = map[hostKey]*hostRec{}
			for _, h := range sortedHosts(hs) {
				t.refreshHost(h)
			}
		case len(t.dirtyC) > 0:
			cs := t.dirtyC
			t.dirtyC = map[string]*clusterRec{}
			for _, c := range cs {
				t.refreshCluster(c)
			}
		default:
			return
		}
	}
	t.s.log.Error("evaluation did not settle after 100 rounds; the model is consistent but may lag until the next change")
}

// hostEntries lists c's hosts as the validations read them, in the
// cluster's buffer (clusterRec.entries): the list is valid until the next
// call for c, and nothing the validations return keeps it. Callers hold
// the model's write lock.
func hostEntries(c *clusterRec) []validation.HostEntry {
	out := c.entries[:0]
	for _, h := range c.sorted() {
		out = append(out, validation.HostEntry{Host: &h.h, Inventory: h.inv, Conn: h.conn, Checks: &h.checks})
	}
	c.entries = out
	return out
}

// derive recomputes a cluster's aggregates and marks the hosts whose
// validations they change.
func (t *txn) derive(c *clusterRec) {
	if t.s.clusters[c.c.ID] != c {
		return // deleted in this request
	}
	entries := hostEntries(c)
	if nets, changed, err := t.s.val.AutoAssignMachineNetworks(&c.c, entries); err != nil {
		t.s.log.Debug("machine network not derived", "cluster", c.c.ID, "err", err)
	} else if changed {
		c.c.MachineNetworks = nil
		for _, n := range nets {
			c.c.MachineNetworks = append(c.c.MachineNetworks, &wire.MachineNetwork{ClusterID: c.c.ID, CIDR: wire.Subnet(n)})
		}
		t.putCluster(c)
		t.dirtyC[c.c.ID] = c
		for _, h := range c.hosts {
			t.dirtyH[h.key()] = h
		}
	}
	if roles, ok := t.s.val.SuggestRoles(&c.c, entries); ok {
		for _, h := range c.hosts {
			if r, ok := roles[h.h.ID]; ok && r != h.h.SuggestedRole {
				h.h.SuggestedRole = r
				t.putHost(h)
				t.dirtyH[h.key()] = h
				t.dirtyC[c.c.ID] = c
				if h.h.Role == wire.HostRoleAutoAssign {
					t.hostEvent(h, evHostRole, sevInfo, fmt.Sprintf("Host %s: calculated role is %s", h.name(), r))
				}
			}
		}
	}
	t.majorityGroups(c, entries)
	t.countProbeTargets(c)
	c.facts = t.s.val.Facts(&c.c, entries, &c.memo)
	// A host's hostname-unique result flips when the count of its name
	// crosses one; network and version changes touch every host.
	counts := make(map[string]int, len(c.hosts))
	for _, h := range c.hosts {
		if h.inv != nil {
			counts[validation.RealHostname(&h.h, h.inv)]++
		}
	}
	key := fmt.Sprint(c.c.OpenshiftVersion, c.c.MachineNetworks, c.c.ControlPlaneCount, c.docs.groups)
	for _, h := range c.hosts {
		n := validation.RealHostname(&h.h, h.inv)
		if key != c.factsKey || (counts[n] > 1) != (c.nameCounts[n] > 1) {
			t.dirtyH[h.key()] = h
		}
	}
	c.nameCounts, c.factsKey = counts, key
}

// timeSensitive: hosts whose status can change with time alone.
func timeSensitive(h *hostRec) bool {
	switch h.h.Status {
	case wire.HostStatusInstalled, wire.HostStatusAddedToExistingCluster:
		return false
	}
	return true
}

// newInfo returns the validations_info text of results when it differs
// from the stored one; equal results are not marshalled at all.
func (t *txn) newInfo(results, prev wire.ValidationsInfo, stored string) (string, bool) {
	if stored != "" && slices.Equal(results, prev) {
		return "", false
	}
	info, err := results.Marshal()
	if err != nil {
		t.s.log.Error("marshal validations_info", "err", err)
		return "", false
	}
	return info, info != stored
}

// hostsReadStatus: the cluster statuses host rules test (daemon/machine's
// host facts: preparing, installing, error, pending user action, post
// installation).
func hostsReadStatus(st wire.ClusterStatus) bool {
	switch st {
	case wire.ClusterStatusInsufficient, wire.ClusterStatusReady, wire.ClusterStatusPendingForInput:
		return false
	}
	return true
}

// ownMessage is what a failure event of one of nodezero's own validations
// adds: its message, which names what to fix (the host config, its hints,
// the eligible disks). assisted's own validations keep assisted's event
// text.
func ownMessage(ch validation.Change) string {
	switch ch.ID {
	case string(wire.HostValidationIDInstallationDiskMatchesHints), string(wire.ClusterValidationIDConfiguredHostsRegistered):
		return ": " + ch.Message
	}
	return ""
}

// majorityGroups recomputes which hosts can reach a majority of the others
// from their connectivity reports, while the cluster is being formed
// (pending-for-input, insufficient, ready), as assisted-service's cluster
// monitor does; belongs-to-majority-group reads the result.
func (t *txn) majorityGroups(c *clusterRec, entries []validation.HostEntry) {
	switch c.c.Status {
	case wire.ClusterStatusPendingForInput, wire.ClusterStatusInsufficient, wire.ClusterStatusReady:
	default:
		return
	}
	groups, err := validation.ConnectivityGroups(&c.c, entries, &c.memo)
	if groups == nil {
		t.s.log.Warn("connectivity groups", "cluster", c.c.ID, "err", err)
		return
	}
	if err != nil {
		// A host's unusable report is left out and named; the others count.
		t.s.log.Debug("connectivity groups", "cluster", c.c.ID, "err", err)
	}
	doc, merr := groups.Marshal()
	if merr != nil || doc == c.docs.groups {
		return
	}
	c.groups, c.docs.groups = validation.Got(groups), doc
	t.putCluster(c)
}
