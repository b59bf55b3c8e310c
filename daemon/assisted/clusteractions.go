package assisted

import (
	"context"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// The user actions on a cluster's installation: install, cancel, reset.

// InstallCluster starts the installation of a ready cluster (v2InstallCluster).
// The install files are generated in the background (prepare.go).
func (s *Service) InstallCluster(ctx context.Context, id string) (*wire.Cluster, error) {
	attempt := s.prepSeq.Add(1)
	out, err := s.clusterAction(ctx, id, func(t *txn, c *clusterRec) error {
		if c.c.Status != wire.ClusterStatusReady {
			return conflict("cluster %s is %s, not ready: %s", id, c.c.Status, c.c.StatusInfo)
		}
		if err := t.fire(c, machine.TriggerPrepareForInstallation); err != nil {
			return err
		}
		t.chooseBootstrap(c)
		c.prepAttempt = attempt
		c.c.LastInstallationPreparation = &wire.LastInstallationPreparation{Status: wire.LastInstallationPreparationStatusNotStarted}
		t.putCluster(c)
		t.clusterEvent(c, evClusterPrepare, sevInfo, "Cluster starting to prepare for installation")
		for _, h := range c.hosts {
			t.touchHost(h)
		}
		return nil
	})
	if err == nil {
		s.startPreparation(id, attempt)
	}
	return out, err
}

// resumePreparations restarts the preparation of clusters a restart left
// preparing without a result.
func (s *Service) resumePreparations() {
	var ids []string
	var attempts []int64
	s.mu.Lock()
	for id, c := range s.clusters {
		p := c.c.LastInstallationPreparation
		if c.c.Status == wire.ClusterStatusPreparingForInstallation && (p == nil || p.Status == wire.LastInstallationPreparationStatusNotStarted) {
			c.prepAttempt = s.prepSeq.Add(1)
			ids, attempts = append(ids, id), append(attempts, c.prepAttempt)
		}
	}
	s.mu.Unlock()
	for i, id := range ids {
		s.startPreparation(id, attempts[i])
	}
}

// CancelInstallation cancels an installation (V2CancelInstallation).
func (s *Service) CancelInstallation(ctx context.Context, id string) (*wire.Cluster, error) {
	return s.clusterAction(ctx, id, func(t *txn, c *clusterRec) error {
		if err := t.fire(c, machine.TriggerClusterCancelInstallation); err != nil {
			return err
		}
		for _, h := range c.hosts {
			t.fireHost(h, machine.TriggerHostCancelInstallation) // hosts with no cancel rule keep their status
		}
		t.clusterEvent(c, evClusterCanceled, sevInfo, "Canceled cluster installation")
		return nil
	})
}

// ResetCluster resets a cancelled or failed installation (v2ResetCluster).
func (s *Service) ResetCluster(ctx context.Context, id string) (*wire.Cluster, error) {
	return s.clusterAction(ctx, id, func(t *txn, c *clusterRec) error {
		if err := t.fire(c, machine.TriggerResetCluster); err != nil {
			return err
		}
		for _, h := range c.hosts {
			t.fireHost(h, machine.TriggerResettingPendingUserAction)
			// The next installation measures and pulls afresh: a failed
			// disk speed test must not outlive the reset.
			h.clearPreparation()
			t.putHost(h)
		}
		// The next installation prepares its files afresh.
		c.c.LastInstallationPreparation, c.kubeconfig = nil, false
		t.putCluster(c)
		t.manifestOp(func(tx *store.Tx) error { return tx.DeleteClusterFiles(c.c.ID) })
		t.clusterEvent(c, evClusterReset, sevInfo, "Reset cluster installation")
		return nil
	})
}

// clusterAction runs a user action on one cluster and returns the cluster
// as the action left it.
func (s *Service) clusterAction(ctx context.Context, id string, fn func(t *txn, c *clusterRec) error) (*wire.Cluster, error) {
	err := s.update(ctx, func(t *txn) error {
		c, err := s.clusterByID(id)
		if err != nil {
			return err
		}
		return fn(t, c)
	})
	if err != nil {
		return nil, err
	}
	return s.GetCluster(id)
}
