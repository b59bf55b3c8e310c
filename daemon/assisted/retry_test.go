package assisted

import (
	"strings"
	"testing"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// The ways back from a failed preparation or installation (issue #18:
// "the disk-speed failure sticks").

const diskHint = "no disk for /dev/sda: the hardware is read from a tree; give the agent --disks DIR"

// failDiskSpeed answers the host's disk speed check as an agent that
// cannot measure does: exit code -1 and its reason on stderr.
func (e *env) failDiskSpeed(ie, id string) {
	e.t.Helper()
	st := e.preparationSteps(ie, id)[wire.StepTypeInstallationDiskSpeedCheck]
	if st == nil {
		e.t.Fatalf("host %s: no disk speed check handed out while preparing", id)
	}
	key := validation.InstallationDiskKey(e.host(ie, id))
	out := `{"path":"` + key + `"}`
	if err := e.s.PostStepReply(e.ctx, ie, id, &wire.StepReply{StepType: st.StepType, StepID: st.StepID, ExitCode: -1, Output: out, Error: diskHint + "\n"}); err != nil {
		e.t.Fatalf("PostStepReply: %v", err)
	}
}

func diskSpeedValidation(t *testing.T, h *wire.Host) wire.Validation {
	t.Helper()
	return resultsByID(t, h.ValidationsInfo)[string(wire.HostValidationIDSufficientInstallationDiskSpeed)]
}

// TestResetHostValidation: the failed measurement's message carries the
// agent's reason; resetting the validation (PATCH
// .../actions/reset-validation/sufficient-installation-disk-speed) lets
// the host be known again and the next installation measures again. A
// validation without a stored result cannot be reset.
func TestResetHostValidation(t *testing.T) {
	e, clusterID, ie, hosts := preparingCluster(t)
	id := hosts[2]
	e.failDiskSpeed(ie, id)
	h := e.host(ie, id)
	if r := diskSpeedValidation(t, h); h.Status != wire.HostStatusInsufficient || r.Status != wire.ValidationFailure || !strings.Contains(r.Message, "exit code -1: "+diskHint) {
		t.Fatalf("host %s, disk speed %s %q; want insufficient and a failure carrying the agent's reason", h.Status, r.Status, r.Message)
	}

	for _, bad := range []string{"has-min-cpu-cores", "no-such-validation"} {
		_, err := e.s.ResetHostValidation(e.ctx, ie, id, bad)
		wantKind(t, "reset "+bad, err, KindBadRequest)
	}
	h, err := e.s.ResetHostValidation(e.ctx, ie, id, string(wire.HostValidationIDSufficientInstallationDiskSpeed))
	if err != nil {
		t.Fatalf("ResetHostValidation: %v", err)
	}
	if r := diskSpeedValidation(t, h); h.Status != wire.HostStatusKnown || r.Status != wire.ValidationSuccess || !strings.Contains(r.Message, "not yet been measured") {
		t.Fatalf("after the reset: host %s (%s), disk speed %s %q; want known and not yet measured", h.Status, h.StatusInfo, r.Status, r.Message)
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Fatalf("cluster %s (%s) after the reset, want ready", c.Status, c.StatusInfo)
	}
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("install again: %v", err)
	}
	if e.preparationSteps(ie, id)[wire.StepTypeInstallationDiskSpeedCheck] == nil {
		t.Error("the second preparation does not measure the disk again")
	}
	_, err = e.s.ResetHostValidation(e.ctx, ie, "4b1c2f0e-0000-4000-8000-000000000000", string(wire.HostValidationIDSufficientInstallationDiskSpeed))
	wantKind(t, "reset on an unknown host", err, KindNotFound)
}

// TestResetClusterAndReRegister is assisted's reset flow: a failed
// installation is reset (the cluster insufficient, its hosts
// resetting-pending-user-action, given no steps); each host that boots
// the discovery image again registers, is discovering, sends its
// inventory and is known again without the earlier disk speed failure;
// the cluster is ready to install again.
func TestResetClusterAndReRegister(t *testing.T) {
	e, clusterID, ie, hosts := preparingCluster(t)
	e.failDiskSpeed(ie, hosts[2])
	// The installation failed later on (the state a failed install step
	// leaves): cluster and hosts in error, the failed measurement kept.
	e.rewrite(clusterID, func(c *wire.Cluster) {
		c.Status, c.StatusInfo = wire.ClusterStatusError, "cluster has hosts in error"
	}, func(h *wire.Host) {
		h.Status, h.StatusInfo = wire.HostStatusError, "Host failed to install"
	})
	c, err := e.s.ResetCluster(e.ctx, clusterID)
	if err != nil {
		t.Fatalf("ResetCluster: %v", err)
	}
	if c.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster after reset %s, want insufficient", c.Status)
	}
	for _, id := range hosts {
		h := e.host(ie, id)
		if h.Status != wire.HostStatusResettingPendingUserAction {
			t.Errorf("host %s after reset: %s, want resetting-pending-user-action", h.RequestedHostname, h.Status)
		}
		if steps := e.checkIn(ie, id); len(steps.Instructions) != 0 {
			t.Errorf("host %s waiting for a reboot was handed %v", h.RequestedHostname, stepTypes(steps))
		}
	}
	for i, id := range hosts {
		if _, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: id}, ""); err != nil {
			t.Fatalf("register %s again: %v", id, err)
		}
		if h := e.host(ie, id); h.Status != wire.HostStatusDiscovering {
			t.Errorf("host %d registered after the reset: %s, want discovering", i, h.Status)
		}
		e.checkIn(ie, id)
		e.postInventory(ie, id, masterInv(t, "master-"+string(rune('0'+i)), 10+i))
	}
	e.answerChecks(ie)
	for _, id := range hosts {
		h := e.host(ie, id)
		if r := diskSpeedValidation(t, h); h.Status != wire.HostStatusKnown || r.Status != wire.ValidationSuccess {
			t.Errorf("host %s after re-registering: %s (%s), disk speed %s %q; want known", h.RequestedHostname, h.Status, h.StatusInfo, r.Status, r.Message)
		}
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Errorf("cluster %s (%s), want ready to install again", c.Status, c.StatusInfo)
	}
}
