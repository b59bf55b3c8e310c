package assisted

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/daemon/machine"
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

func hostEntries(c *clusterRec) []validation.HostEntry {
	hs := c.sorted()
	out := make([]validation.HostEntry, len(hs))
	for i, h := range hs {
		out[i] = validation.HostEntry{Host: &h.h, Inventory: h.inv, Conn: h.conn, Checks: &h.checks}
	}
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

// refreshHost runs the host's validations and its RefreshHost rules.
func (t *txn) refreshHost(h *hostRec) {
	if t.s.hosts[h.key()] != h {
		return // deregistered in this request
	}
	c := t.s.clusters[h.clusterID()]
	now := t.s.cfg.Now()
	view := h.h // a shallow copy: validations read it, never write it
	// After a restart agents get a disconnection timeout's grace: check-ins
	// are not written to disk, and the daemon being down is not the host's
	// fault.
	if view.CheckedInAt.Time().Before(t.s.start) {
		view.CheckedInAt = wire.DateTime(t.s.start)
	}
	in := validation.HostInput{Host: &view, Inventory: h.inv, Conn: h.conn, Checks: &h.checks, Now: now}
	if c != nil {
		if c.facts == nil {
			c.facts = t.s.val.Facts(&c.c, hostEntries(c), &c.memo)
		}
		in.Cluster, in.Groups, in.Facts = &c.c, c.groups, c.facts
	}
	rep := t.s.val.ValidateHost(in)
	f := t.hostFacts(h, c)
	f.Validations = rep.Conditions
	f.FailingMessages = failingMessages(rep.Results)
	f.DiskSpeed, f.ImageAvailability = checkResult(rep.Preparation.DiskSpeed), checkResult(rep.Preparation.Images)
	tr, err := machine.NextHost(h.h.Status, machine.TriggerRefreshHost, f)
	if err != nil && !errors.Is(err, machine.ErrNoTransition) {
		t.s.log.Error("host state machine", "host", h.h.ID, "err", err)
	}
	changed := false
	// Unchanged results skip the marshalling: the monitor re-validates every host.
	if info, ok := t.newInfo(rep.Results, h.results, h.docs.validations); ok {
		// Events only for hosts whose hardware is known: before the first
		// inventory every validation pends and nothing is news.
		if h.inv != nil && h.results != nil {
			d := validation.Diff(h.results, rep.Results)
			for _, ch := range d.Failed {
				t.hostEvent(h, evHostValFailed, sevWarning, fmt.Sprintf("Host %s: validation '%s' %s", h.name(), ch.ID, ch.FailureWording())+ownMessage(ch))
			}
			for _, ch := range d.Fixed {
				t.hostEvent(h, evHostValFixed, sevInfo, fmt.Sprintf("Host %s: validation '%s' is now fixed", h.name(), ch.ID))
			}
		}
		h.docs.validations, h.results = info, rep.Results
		changed = true
	}
	if err == nil && t.applyHost(h, tr) {
		changed = true
	}
	if err == nil && t.applyLogsTimeout(h, tr) {
		changed = true
	}
	if changed {
		t.putHost(h)
		if c != nil {
			t.dirtyC[c.c.ID] = c
		}
	}
}

// applyHost writes a transition's status and status_info to h and records
// the event; it reports whether anything changed.
func (t *txn) applyHost(h *hostRec, tr machine.Transition[wire.HostStatus]) bool {
	changed := false
	if tr.To != "" && tr.To != h.h.Status {
		from := h.h.Status
		h.h.Status = tr.To
		h.h.StatusUpdatedAt = wire.DateTime(t.s.cfg.Now().UTC())
		// Entering a status, even one it had before the last check-in
		// (known → preparing → known → preparing), makes all of its
		// steps due.
		h.agent.issuedFor = ""
		info := tr.StatusInfo
		if info == "" {
			info = h.h.StatusInfo
		}
		msg := fmt.Sprintf("Host %s: updated status from %s to %s (%s)", h.name(), from, tr.To, info)
		if from == "" {
			msg = fmt.Sprintf("Host %s: updated status to %s (%s)", h.name(), tr.To, info)
		}
		t.hostEvent(h, evHostStatus, hostStatusSeverity(tr.To), msg)
		if tr.To == wire.HostStatusPreparingForInstallation {
			forgetFailedImages(h)
		}
		t.wakeHost(h) // a new status has new steps
		changed = true
	}
	if tr.StatusInfo != "" && tr.StatusInfo != h.h.StatusInfo {
		h.h.StatusInfo = tr.StatusInfo
		changed = true
	}
	return changed
}

// hostFacts fills what the host machine reads, except validations.
func (t *txn) hostFacts(h *hostRec, c *clusterRec) machine.HostFacts {
	f := machine.HostFacts{
		Now: t.s.cfg.Now(), Timeouts: t.s.timeouts,
		Role: h.h.Role, Bootstrap: h.h.Bootstrap, Kind: h.h.Kind,
		StatusUpdatedAt: h.h.StatusUpdatedAt.Time(), StatusInfo: h.h.StatusInfo,
		Logs: logsFacts(&h.h),
	}
	if h.h.Progress != nil {
		f.Stage, f.StageUpdatedAt = h.h.Progress.CurrentStage, h.h.Progress.StageUpdatedAt.Time()
	}
	if d := findDisk(h.inv, h.h.InstallationDiskID); d != nil {
		f.InstallationDisk = machine.Disk{Name: d.Name, ID: d.ID, Model: d.Model, Serial: d.Serial}
	}
	if c != nil {
		f.ClusterStatus = c.c.Status
		f.SNO = c.c.ControlPlaneCount == 1
		// Only the pending-user-action timeout reads it; walking every
		// host for every host would make a monitor tick quadratic.
		if h.h.Status == wire.HostStatusInstallingPendingUserAction {
			var installed []machine.HostState
			for _, o := range c.hosts {
				if o != h && o.h.Status == wire.HostStatusInstalled {
					installed = append(installed, hostState(o))
				}
			}
			f.ClusterWouldSucceedWithoutHost = machine.HasEnoughMastersAndWorkers(topology(c), installed, wire.HostStatusInstalled)
		}
	}
	return f
}

func checkResult(o validation.Outcome) machine.CheckResult {
	switch o {
	case validation.Passed:
		return machine.CheckSucceeded
	case validation.Failed:
		return machine.CheckFailed
	}
	return machine.CheckUnknown
}

func hostState(h *hostRec) machine.HostState {
	s := machine.HostState{Role: h.h.Role, SuggestedRole: h.h.SuggestedRole, Status: h.h.Status, Bootstrap: h.h.Bootstrap}
	if h.h.Progress != nil {
		s.Stage = h.h.Progress.CurrentStage
	}
	return s
}

func topology(c *clusterRec) machine.Topology {
	return machine.Topology{ControlPlaneCount: int(c.c.ControlPlaneCount)}
}

// failingMessages are the messages of failed validations, sorted, as
// assisted lists them in status_info.
//
// With none failing, a host can still be held back by checks not measured
// yet: their messages are given instead, so that status_info names what
// blocks rather than ending in an empty list.
func failingMessages(rs wire.ValidationsInfo) []string {
	var out, pending []string
	for _, r := range rs {
		if machine.Advisory(wire.HostValidationID(r.ID)) {
			continue
		}
		switch r.Status {
		case wire.ValidationFailure:
			out = append(out, r.Message)
		case wire.ValidationPending:
			pending = append(pending, r.Message)
		}
	}
	if len(out) == 0 {
		out = pending
	}
	sort.Strings(out)
	return out
}

// refreshCluster runs the cluster's validations and its RefreshStatus rules.
func (t *txn) refreshCluster(c *clusterRec) {
	if t.s.clusters[c.c.ID] != c {
		return
	}
	rep := t.s.val.ValidateCluster(validation.ClusterInput{Cluster: &c.c, Hosts: hostEntries(c), Now: t.s.cfg.Now()})
	changed := false
	if len(rep.Results) > 0 {
		if info, ok := t.newInfo(rep.Results, c.results, c.docs.validations); ok {
			if c.results != nil {
				d := validation.Diff(c.results, rep.Results)
				for _, ch := range d.Failed {
					t.clusterEvent(c, evClusterValFailed, sevWarning, fmt.Sprintf("Cluster validation '%s' %s", ch.ID, ch.FailureWording())+ownMessage(ch))
				}
				for _, ch := range d.Fixed {
					t.clusterEvent(c, evClusterValFixed, sevInfo, fmt.Sprintf("Cluster validation '%s' is now fixed", ch.ID))
				}
			}
			c.docs.validations, c.results = info, rep.Results
			changed = true
		}
	}
	f := t.clusterFacts(c)
	f.Validations = rep.Conditions
	tr, err := machine.NextCluster(c.c.Status, machine.TriggerRefreshStatus, f)
	if err != nil && !errors.Is(err, machine.ErrNoTransition) {
		t.s.log.Error("cluster state machine", "cluster", c.c.ID, "err", err)
	}
	if err == nil && t.applyCluster(c, tr) {
		changed = true
	}
	if t.updateProgress(c) {
		changed = true
	}
	if changed {
		t.putCluster(c)
	}
}

func (t *txn) applyCluster(c *clusterRec, tr machine.Transition[wire.ClusterStatus]) bool {
	changed := false
	if tr.To != "" && tr.To != c.c.Status {
		from := c.c.Status
		c.c.Status = tr.To
		c.c.StatusUpdatedAt = wire.DateTime(t.s.cfg.Now().UTC())
		if tr.To == wire.ClusterStatusInstalling && c.c.InstallStartedAt.IsZero() {
			c.c.InstallStartedAt = c.c.StatusUpdatedAt
		}
		if tr.To == wire.ClusterStatusInstalled {
			c.c.InstallCompletedAt = c.c.StatusUpdatedAt
		}
		t.clusterEvent(c, evClusterStatus, clusterStatusSeverity(tr.To), fmt.Sprintf("Updated status of the cluster to %s", tr.To))
		// Host rules read the cluster's status only in and around the
		// installation; insufficient ↔ ready flips (one per arriving host)
		// must not re-validate every host.
		if hostsReadStatus(from) || hostsReadStatus(tr.To) {
			for _, h := range c.hosts {
				t.dirtyH[h.key()] = h
			}
		}
		// The aggregates depend on the status too: the machine network is
		// derived only while insufficient or pending-for-input.
		t.staleC[c.c.ID] = c
		changed = true
	}
	if tr.StatusInfo != "" && tr.StatusInfo != c.c.StatusInfo {
		c.c.StatusInfo = tr.StatusInfo
		changed = true
	}
	return changed
}

func (t *txn) clusterFacts(c *clusterRec) machine.ClusterFacts {
	f := machine.ClusterFacts{
		Now: t.s.cfg.Now(), Timeouts: t.s.timeouts, Topology: topology(c),
		VIPDHCPAllocation: c.c.VIPDHCPAllocation != nil && *c.c.VIPDHCPAllocation,
		StatusUpdatedAt:   c.c.StatusUpdatedAt.Time(), InstallStartedAt: c.c.InstallStartedAt.Time(),
	}
	if c.c.LastInstallationPreparation != nil {
		f.Preparation = c.c.LastInstallationPreparation.Status
	}
	for _, h := range c.sorted() {
		f.Hosts = append(f.Hosts, hostState(h))
	}
	f.Operators = f2ops(c.c.MonitoredOperators)
	f.KubeconfigPresent = c.kubeconfig
	if c.c.Progress != nil {
		f.FinalizingStage = c.c.Progress.FinalizingStage
		f.FinalizingStageStartedAt = c.c.Progress.FinalizingStageStartedAt.Time()
		f.FinalizingStageTimedOut = c.c.Progress.FinalizingStageTimedOut
	}
	return f
}

// updateProgress recomputes the cluster's progress as assisted-service does
// (docs/reference/assisted-service.md §12); it never goes down.
func (t *txn) updateProgress(c *clusterRec) bool {
	if c.c.Progress == nil {
		c.c.Progress = &wire.ClusterProgressInfo{}
	}
	p := *c.c.Progress
	switch c.c.Status {
	case wire.ClusterStatusInstalling, wire.ClusterStatusInstallingPendingUserAction, wire.ClusterStatusFinalizing, wire.ClusterStatusInstalled:
		p.PreparingForInstallationStagePercentage = 100
		var hs []machine.HostState
		for _, h := range c.hosts {
			hs = append(hs, hostState(h))
		}
		p.InstallingStagePercentage = max(p.InstallingStagePercentage, machine.InstallingPercentage(hs, c.c.ControlPlaneCount == 1))
		p.FinalizingStagePercentage = max(p.FinalizingStagePercentage, machine.FinalizingPercentage(f2ops(c.c.MonitoredOperators)))
	}
	p.TotalPercentage = max(p.TotalPercentage, machine.TotalPercentage(c.c.Status, p.PreparingForInstallationStagePercentage, p.InstallingStagePercentage, p.FinalizingStagePercentage))
	if p == *c.c.Progress {
		return false
	}
	*c.c.Progress = p
	return true
}

// f2ops dereferences the monitored operators for the machine package.
func f2ops(ops []*wire.MonitoredOperator) []wire.MonitoredOperator {
	out := make([]wire.MonitoredOperator, 0, len(ops))
	for _, o := range ops {
		if o != nil {
			out = append(out, *o)
		}
	}
	return out
}

// fire applies a user-triggered cluster transition; no rule for the
// cluster's status is the client's conflict.
func (t *txn) fire(c *clusterRec, trig machine.ClusterTrigger) error {
	f := t.clusterFacts(c)
	switch trig {
	case machine.TriggerClusterCancelInstallation:
		f.Reason = "Installation was cancelled by user"
	case machine.TriggerResetCluster:
		f.Reason = "cluster was reset by user"
	}
	tr, err := machine.NextCluster(c.c.Status, trig, f)
	if errors.Is(err, machine.ErrNoTransition) {
		return conflict("cluster %s is %s: %s is not possible in this status", c.c.ID, c.c.Status, trig)
	}
	if err != nil {
		return internal(err, "cluster state machine")
	}
	t.applyCluster(c, tr)
	t.putCluster(c)
	t.dirtyC[c.c.ID] = c
	return nil
}

// fireHost applies a host transition caused by a user or an agent. No rule
// for the host's status leaves it as it is and says so.
func (t *txn) fireHost(h *hostRec, trig machine.HostTrigger) error {
	return t.fireHostReason(h, trig, "")
}

// fireHostReason fires trig with the caller's reason for status_info.
func (t *txn) fireHostReason(h *hostRec, trig machine.HostTrigger, reason string) error {
	f := t.hostFacts(h, t.s.clusters[h.clusterID()])
	f.Validations = conditions(h.results)
	f.FailingMessages = failingMessages(h.results)
	f.Reason = reason
	switch trig {
	case machine.TriggerHostCancelInstallation:
		f.Reason = "Installation was cancelled by user"
	}
	tr, err := machine.NextHost(h.h.Status, trig, f)
	if errors.Is(err, machine.ErrNoTransition) {
		return conflict("host %s is %s: %s is not possible in this status", h.name(), h.h.Status, trig)
	}
	if err != nil {
		return internal(err, "host state machine")
	}
	t.applyHost(h, tr)
	t.putHost(h)
	t.dirtyH[h.key()] = h
	if c := t.s.clusters[h.clusterID()]; c != nil {
		t.dirtyC[c.c.ID] = c
	}
	return nil
}

func conditions(rs wire.ValidationsInfo) machine.Validations {
	v := machine.Validations{}
	for _, r := range rs {
		v[r.ID] = r.Status == wire.ValidationSuccess || r.Status == wire.ValidationDisabled
	}
	return v
}

// setInventory stores an agent's inventory the way assisted-service does:
// re-marshalled through the typed model (unknown fields dropped), virtual
// interfaces dropped, disk eligibility recomputed, the install disk chosen.
func (t *txn) setInventory(h *hostRec, inv *wire.Inventory) error {
	c := t.s.clusters[h.clusterID()]
	var cl *wire.Cluster
	if c != nil {
		cl = &c.c
	}
	disk := t.s.val.ProcessInventory(cl, &h.h, inv)
	b, err := json.Marshal(inv)
	if err != nil {
		return internal(err, "marshal inventory")
	}
	if string(b) == h.docs.inventory {
		return nil
	}
	addrsChanged := h.inv == nil || !sameAddresses(h.inv, inv)
	h.docs.inventory, h.inv = string(b), inv
	if disk != nil {
		h.h.InstallationDiskID, h.h.InstallationDiskPath = validation.DiskID(disk), validation.DiskPath(disk)
	} else {
		h.h.InstallationDiskID, h.h.InstallationDiskPath = "", ""
	}
	t.putHost(h)
	t.touchHost(h)
	if addrsChanged {
		t.recheckPeers(h)
	}
	return nil
}

// peerRecheckAfter: a host's peers check their connectivity again when its
// addresses appear or change, at once or this long after their last round,
// whichever is later (a registration burst then costs a round every few
// seconds, not one per host).
const peerRecheckAfter = 10 * time.Second

// recheckPeers makes connectivity-check due again for the other hosts of
// h's cluster, so that a new host joins their reports in seconds rather
// than at their next minute's round, and wakes their long polls.
func (t *txn) recheckPeers(h *hostRec) {
	c := t.s.clusters[h.clusterID()]
	if c == nil {
		return
	}
	now := t.s.cfg.Now()
	for _, o := range c.hosts {
		if o == h || o.agent.issued == nil {
			continue
		}
		last, ok := o.agent.issued[wire.StepTypeConnectivityCheck]
		if !ok {
			continue
		}
		// Due peerRecheckAfter after the last round, or now if that has
		// passed: backdate the last round so the step's interval ends then.
		due := last.Add(peerRecheckAfter)
		if due.Before(now) {
			due = now
		}
		if back := due.Add(-t.s.cfg.StepInterval); back.Before(last) {
			o.agent.issued[wire.StepTypeConnectivityCheck] = back
			t.wakeHost(o)
		}
	}
}

// sameAddresses reports whether two inventories list the same interface
// addresses (and MACs), in order.
func sameAddresses(a, b *wire.Inventory) bool {
	if len(a.Interfaces) != len(b.Interfaces) {
		return false
	}
	for i := range a.Interfaces {
		x, y := a.Interfaces[i], b.Interfaces[i]
		if (x == nil) != (y == nil) {
			return false
		}
		if x == nil {
			continue
		}
		if x.MACAddress != y.MACAddress || !slices.Equal(x.IPv4Addresses, y.IPv4Addresses) || !slices.Equal(x.IPv6Addresses, y.IPv6Addresses) {
			return false
		}
	}
	return true
}

// chooseBootstrap gives auto-assign hosts their suggested role and, when no
// host is bootstrap yet, makes the last master (by id) bootstrap, as
// assisted's setBootstrapHost does.
func (t *txn) chooseBootstrap(c *clusterRec) {
	var masters []*hostRec
	have := false
	for _, h := range c.sorted() {
		if h.h.Role == wire.HostRoleAutoAssign && h.h.SuggestedRole != "" && h.h.SuggestedRole != wire.HostRoleAutoAssign {
			h.h.Role = h.h.SuggestedRole
			t.putHost(h)
		}
		if h.h.Role == wire.HostRoleMaster {
			masters = append(masters, h)
		}
		have = have || h.h.Bootstrap
	}
	if have {
		return
	}
	// ABI: node zero, the host holding BOOTSTRAP_HOST_MAC, is the
	// bootstrap host, and so a master.
	if mac := strings.ToLower(t.s.cfg.BootstrapMAC); mac != "" {
		for _, h := range c.sorted() {
			if h.inv != nil && slices.ContainsFunc(h.inv.Interfaces, func(i *wire.Interface) bool { return strings.ToLower(i.MACAddress) == mac }) {
				h.h.Role, h.h.Bootstrap = wire.HostRoleMaster, true
				t.putHost(h)
				t.hostEvent(h, evHostBootstrap, sevInfo, fmt.Sprintf("Host %s: set as bootstrap", h.name()))
				return
			}
		}
	}
	if len(masters) == 0 {
		return
	}
	slices.SortFunc(masters, func(a, b *hostRec) int { return strings.Compare(a.h.ID, b.h.ID) })
	b := masters[len(masters)-1]
	b.h.Bootstrap = true
	t.putHost(b)
	t.hostEvent(b, evHostBootstrap, sevInfo, fmt.Sprintf("Host %s: set as bootstrap", b.name()))
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
