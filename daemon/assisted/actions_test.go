package assisted

import (
	"sort"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

func TestInstallClusterNotReady(t *testing.T) {
	e := newEnv(t)
	clusterID, ie := e.cluster(nil)
	e.addHost(ie, masterInv(t, "master-0", 10))
	_, err := e.s.InstallCluster(e.ctx, clusterID)
	wantKind(t, "InstallCluster on an insufficient cluster", err, KindConflict)
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster after a refused install: %s, want insufficient", c.Status)
	}
	_, err = e.s.InstallCluster(e.ctx, "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e02")
	wantKind(t, "InstallCluster of an unknown cluster", err, KindNotFound)
}

// TestInstallCluster: installing a ready cluster starts its preparation,
// fixes auto-assign roles and makes the last master by id the bootstrap
// (assisted setBootstrapHost); known hosts follow into preparation.
func TestInstallCluster(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	c, err := e.s.InstallCluster(e.ctx, clusterID)
	if err != nil {
		t.Fatalf("InstallCluster: %v", err)
	}
	if c.Status != wire.ClusterStatusPreparingForInstallation || c.StatusInfo != "Preparing cluster for installation" {
		t.Errorf("cluster: got %s (%s), want preparing-for-installation (Preparing cluster for installation)", c.Status, c.StatusInfo)
	}
	sorted := append([]string(nil), hosts...)
	sort.Strings(sorted)
	var bootstraps []string
	for _, h := range c.Hosts {
		if h.Status != wire.HostStatusPreparingForInstallation {
			t.Errorf("host %s: got %s, want preparing-for-installation", h.RequestedHostname, h.Status)
		}
		if h.Role != wire.HostRoleMaster {
			t.Errorf("host %s role %s, want master (its suggested role)", h.RequestedHostname, h.Role)
		}
		if h.Bootstrap {
			bootstraps = append(bootstraps, h.ID)
		}
		if n := len(h.ProgressStages); (h.Bootstrap && n != 11) || (!h.Bootstrap && n != 8) {
			t.Errorf("host %s (bootstrap %v) has %d progress stages", h.RequestedHostname, h.Bootstrap, n)
		}
	}
	if len(bootstraps) != 1 || bootstraps[0] != sorted[2] {
		t.Fatalf("bootstrap hosts %q, want exactly the last master by id %s", bootstraps, sorted[2])
	}
	b := e.host(ie, bootstraps[0])
	evs := e.events(EventsQuery{ClusterID: clusterID})
	for _, want := range [][2]string{
		{"cluster_prepare_installation_started", "Cluster starting to prepare for installation"},
		{"cluster_status_updated", "Updated status of the cluster to preparing-for-installation"},
		{"host_bootstrap_set", "Host " + b.RequestedHostname + ": set as bootstrap"},
	} {
		if !hasEvent(evs, want[0], want[1]) {
			t.Errorf("no %s event %q; got %q", want[0], want[1], eventLines(evs))
		}
	}
	_, err = e.s.InstallCluster(e.ctx, clusterID)
	wantKind(t, "InstallCluster twice", err, KindConflict)
	// Hosts cannot be changed any more.
	name := "other"
	_, err = e.s.UpdateHost(e.ctx, ie, hosts[0], &wire.HostUpdateParams{HostName: &name})
	wantKind(t, "UpdateHost while preparing", err, KindConflict)
}

func TestCancelInstallationWhilePreparing(t *testing.T) {
	e := newEnv(t)
	clusterID, _, _ := e.readyCluster()
	_, err := e.s.CancelInstallation(e.ctx, clusterID)
	wantKind(t, "CancelInstallation of a ready cluster", err, KindConflict)
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		t.Fatalf("InstallCluster: %v", err)
	}
	c, err := e.s.CancelInstallation(e.ctx, clusterID)
	if err != nil {
		t.Fatalf("CancelInstallation: %v", err)
	}
	if c.Status != wire.ClusterStatusReady {
		t.Errorf("cluster after cancel: got %s (%s), want ready", c.Status, c.StatusInfo)
	}
	for _, h := range c.Hosts {
		if h.Status != wire.HostStatusKnown {
			t.Errorf("host %s after cancel: got %s (%s), want known", h.RequestedHostname, h.Status, h.StatusInfo)
		}
	}
	if evs := e.events(EventsQuery{ClusterID: clusterID}); !hasEvent(evs, "cluster_installation_canceled", "Canceled cluster installation") {
		t.Errorf("no cluster_installation_canceled event; got %q", eventLines(evs))
	}
	// And it can be installed again.
	if c, err := e.s.InstallCluster(e.ctx, clusterID); err != nil || c.Status != wire.ClusterStatusPreparingForInstallation {
		t.Errorf("InstallCluster after cancel: %v, %v", c, err)
	}
}

// installing drives a ready cluster to installing: InstallCluster, then
// the statuses the install flow would reach, written to the store.
func (e *env) installing() (clusterID, infraEnvID string, hosts []string) {
	e.t.Helper()
	clusterID, infraEnvID, hosts = e.readyCluster()
	if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
		e.t.Fatalf("InstallCluster: %v", err)
	}
	e.rewrite(clusterID, func(c *wire.Cluster) {
		c.Status, c.StatusInfo = wire.ClusterStatusInstalling, "Installation in progress"
		c.InstallStartedAt = wire.DateTime(e.clock.Now())
	}, func(h *wire.Host) {
		h.Status, h.StatusInfo = wire.HostStatusInstalling, "Installation is in progress"
	})
	return clusterID, infraEnvID, hosts
}

func TestCancelAndResetInstallation(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.installing()
	c, err := e.s.CancelInstallation(e.ctx, clusterID)
	if err != nil {
		t.Fatalf("CancelInstallation: %v", err)
	}
	if c.Status != wire.ClusterStatusCancelled || c.StatusInfo != "Installation was cancelled by user" {
		t.Errorf("cluster: got %s (%s), want cancelled (Installation was cancelled by user)", c.Status, c.StatusInfo)
	}
	for _, h := range c.Hosts {
		if h.Status != wire.HostStatusCancelled || h.StatusInfo != "Installation was cancelled by user" {
			t.Errorf("host %s: got %s (%s), want cancelled", h.RequestedHostname, h.Status, h.StatusInfo)
		}
	}
	if s := e.checkIn(ie, hosts[0]); s.NextInstructionSeconds != 120 {
		t.Errorf("cancelled host's next_instruction_seconds = %d, want 120", s.NextInstructionSeconds)
	}
	e.resetAndCheck(clusterID, ie, hosts)
}

func TestResetFromError(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.installing()
	e.rewrite(clusterID, func(c *wire.Cluster) { c.Status = wire.ClusterStatusError }, func(h *wire.Host) { h.Status = wire.HostStatusError })
	e.resetAndCheck(clusterID, ie, hosts)
}

func (e *env) resetAndCheck(clusterID, ie string, hosts []string) {
	t := e.t
	t.Helper()
	c, err := e.s.ResetCluster(e.ctx, clusterID)
	if err != nil {
		t.Fatalf("ResetCluster: %v", err)
	}
	if c.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster after reset: got %s (%s), want insufficient", c.Status, c.StatusInfo)
	}
	for _, h := range c.Hosts {
		if h.Status != wire.HostStatusResettingPendingUserAction || h.StatusInfo != "Host requires booting into the discovery image to complete resetting the installation" {
			t.Errorf("host %s after reset: got %s (%s), want resetting-pending-user-action", h.RequestedHostname, h.Status, h.StatusInfo)
		}
	}
	if evs := e.events(EventsQuery{ClusterID: clusterID}); !hasEvent(evs, "cluster_installation_reset", "Reset cluster installation") {
		t.Errorf("no cluster_installation_reset event; got %q", eventLines(evs))
	}
	_, err = e.s.ResetCluster(e.ctx, clusterID)
	wantKind(t, "ResetCluster of an insufficient cluster", err, KindConflict)

	// The hosts reboot into discovery and register again: discovering,
	// without the old bootstrap flag, until their inventory comes.
	for i, id := range hosts {
		if _, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: id}, ""); err != nil {
			t.Fatalf("RegisterHost after reset: %v", err)
		}
		if h := e.host(ie, id); h.Status != wire.HostStatusDiscovering || h.Bootstrap {
			t.Errorf("host %d after re-registration: %s bootstrap %v, want discovering, not bootstrap", i, h.Status, h.Bootstrap)
		}
		e.checkIn(ie, id)
		e.postInventory(ie, id, masterInv(t, "master-"+string(rune('0'+i)), 10+i))
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Errorf("cluster after the hosts are rediscovered: got %s (%s), want ready", c.Status, c.StatusInfo)
	}
}

func TestHostProgress(t *testing.T) {
	e := newEnv(t)
	_, ie, known := e.readyCluster()
	err := e.s.UpdateHostProgress(e.ctx, ie, known[0], &wire.HostProgress{CurrentStage: wire.HostStageInstalling})
	wantKind(t, "progress of a known host", err, KindConflict)
	wantKind(t, "progress without a stage", e.s.UpdateHostProgress(e.ctx, ie, known[0], &wire.HostProgress{}), KindBadRequest)

	clusterID, ie, hosts := e.installing()
	var boot, m1, m2 string
	for _, id := range hosts {
		switch h := e.host(ie, id); {
		case h.Bootstrap:
			boot = id
		case m1 == "":
			m1 = id
		default:
			m2 = id
		}
	}
	progress := func(id string, stage wire.HostStage, info string) error {
		return e.s.UpdateHostProgress(e.ctx, ie, id, &wire.HostProgress{CurrentStage: stage, ProgressInfo: info})
	}
	check := func(id string, status wire.HostStatus, info string, pct int64) {
		t.Helper()
		h := e.host(ie, id)
		got := int64(-1)
		if h.Progress != nil {
			got = h.Progress.InstallationPercentage
		}
		if h.Status != status || h.StatusInfo != info || got != pct {
			t.Errorf("host %s: got %s (%s) %d%%, want %s (%s) %d%%", h.RequestedHostname, h.Status, h.StatusInfo, got, status, info, pct)
		}
	}

	// Percentages: (index+1)/len(stages)·100 over the role's stage list:
	// 11 stages for the bootstrap host, 8 for masters.
	for _, st := range []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling} {
		if err := progress(boot, st, ""); err != nil {
			t.Fatalf("progress %s: %v", st, err)
		}
	}
	check(boot, wire.HostStatusInstallingInProgress, "Installing", 18)
	if err := progress(m1, wire.HostStageWritingImageToDisk, "42%"); err != nil {
		t.Fatalf("progress: %v", err)
	}
	check(m1, wire.HostStatusInstallingInProgress, "Writing image to disk", 37)
	if h := e.host(ie, m1); h.Progress.ProgressInfo != "42%" {
		t.Errorf("progress_info = %q, want 42%%", h.Progress.ProgressInfo)
	}

	// Forward only.
	wantKind(t, "backwards", progress(boot, wire.HostStageStartingInstallation, ""), KindConflict)
	wantKind(t, "a stage not in the role's list", progress(m1, wire.HostStageWaitingForBootkube, ""), KindBadRequest)
	check(boot, wire.HostStatusInstallingInProgress, "Installing", 18)

	// Cluster progress (docs/reference/assisted-service.md §12): installing% = done
	// stages / all stages = (2+3+0)/(11+8+8) → 18; total = 0.7·18 +
	// 0.1·100 → 22.
	c := e.getCluster(clusterID)
	if p := c.Progress; p == nil || p.InstallingStagePercentage != 18 || p.PreparingForInstallationStagePercentage != 100 || p.TotalPercentage != 22 {
		t.Errorf("cluster progress %+v, want installing 18, preparing 100, total 22", p)
	}

	if err := progress(m1, wire.HostStageDone, ""); err != nil {
		t.Fatalf("progress Done: %v", err)
	}
	check(m1, wire.HostStatusInstalled, "Done", 100)
	wantKind(t, "progress of an installed host", progress(m1, wire.HostStageDone, ""), KindConflict)

	if err := progress(m2, wire.HostStageFailed, "writing the image failed"); err != nil {
		t.Fatalf("progress Failed: %v", err)
	}
	check(m2, wire.HostStatusError, "Failed - writing the image failed", 0)
	evs := e.events(EventsQuery{HostIDs: []string{m2}, Severities: []string{"error"}})
	name := e.host(ie, m2).RequestedHostname
	if !hasEvent(evs, "host_install_progress_updated", "Host: "+name+", reached installation stage Failed: writing the image failed") {
		t.Errorf("no error progress event; got %q", eventLines(evs))
	}
	if !hasEvent(evs, "host_status_updated", "Host "+name+": updated status from installing to error (Failed - writing the image failed)") {
		t.Errorf("no error status event; got %q", eventLines(evs))
	}
	if c := e.getCluster(clusterID); c.Progress.TotalPercentage < 22 {
		t.Errorf("cluster total progress went down to %d", c.Progress.TotalPercentage)
	}
}
