package assisted

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// A cluster's evaluation: its validations and state machine
// (refreshCluster), the transitions users cause (fire), its progress, and
// the facts the cluster machine reads (daemon/machine).

func topology(c *clusterRec) machine.Topology {
	return machine.Topology{ControlPlaneCount: int(c.c.ControlPlaneCount)}
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
