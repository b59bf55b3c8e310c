package assisted

import (
	"errors"
	"fmt"
	"sort"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// A host's evaluation: its validations and state machine (refreshHost),
// the transitions users and agents cause (fireHost), and the facts the host
// machine reads (daemon/machine).

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
