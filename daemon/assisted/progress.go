package assisted

import (
	"context"
	"errors"
	"fmt"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/wire"
)

// UpdateHostProgress records an installer's stage report
// (v2UpdateHostInstallProgress): stages move forward only, Failed puts the
// host in error, Done makes it installed.
func (s *Service) UpdateHostProgress(ctx context.Context, infraEnvID, hostID string, p *wire.HostProgress) error {
	if p == nil || p.CurrentStage == "" {
		return badRequest("current_stage: required")
	}
	return s.update(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		switch h.h.Status {
		case wire.HostStatusInstalling, wire.HostStatusInstallingInProgress, wire.HostStatusInstallingPendingUserAction:
		default:
			return conflict("Can't set progress <%s> to host in status <%s>", p.CurrentStage, h.h.Status)
		}
		c := s.clusters[h.clusterID()]
		sno := c != nil && c.c.ControlPlaneCount == 1
		stages := machine.Stages(stageKey(h, sno))
		cur := wire.HostStage("")
		if h.h.Progress != nil {
			cur = h.h.Progress.CurrentStage
		}
		if err := machine.CheckStage(stages, cur, p.CurrentStage); err != nil {
			if errors.Is(err, machine.ErrStageBackwards) {
				return conflict("%v", err)
			}
			return badRequest("current_stage: %v (stages of this host: %v)", err, stages)
		}
		// A day-2 host that reboots is done as far as the service can
		// tell: nothing reports after its reboot. assisted (outside
		// kube-api mode) stores Done for its Rebooting.
		stage := p.CurrentStage
		if stage == wire.HostStageRebooting && h.h.Kind == wire.HostKindAddToExistingClusterHost {
			stage = wire.HostStageDone
		}
		f := t.hostFacts(h, c)
		f.Validations = conditions(h.results)
		f.Stage, f.ProgressInfo = stage, p.ProgressInfo
		tr, err := machine.NextHost(h.h.Status, machine.TriggerHostProgressChanged, f)
		if err != nil {
			return conflict("host %s is %s: progress %q is not possible: %v", h.name(), h.h.Status, p.CurrentStage, err)
		}
		now := wire.DateTime(s.cfg.Now().UTC())
		if h.h.Progress == nil {
			h.h.Progress = &wire.HostProgressInfo{}
		}
		if stage != cur {
			h.h.Progress.StageStartedAt, h.h.StageStartedAt = now, now
		}
		h.h.Progress.CurrentStage, h.h.Progress.ProgressInfo = stage, p.ProgressInfo
		h.h.Progress.StageUpdatedAt, h.h.StageUpdatedAt = now, now
		if pct := machine.InstallationPercentage(stages, p.CurrentStage); pct > 0 {
			h.h.Progress.InstallationPercentage = pct
		}
		t.applyHost(h, tr)
		msg := fmt.Sprintf("Host: %s, reached installation stage %s", h.name(), stage)
		if p.ProgressInfo != "" {
			msg += ": " + p.ProgressInfo
		}
		sev := sevInfo
		if p.CurrentStage == wire.HostStageFailed {
			sev = sevError
		}
		t.hostEvent(h, evHostProgress, sev, msg)
		t.putHost(h)
		t.dirtyH[h.key()] = h
		if c != nil {
			t.dirtyC[c.c.ID] = c
		}
		return nil
	})
}
