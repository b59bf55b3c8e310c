package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nodezero/nodezero/hostagent/simagent"
	"github.com/nodezero/nodezero/wire"
)

// The install of a load-test run (issue #8): the user gives every host its
// role as ABI's agent-config does (the master-class hosts masters, the
// rest workers), starts the install, and the simulated hosts run the real
// installer with simulated disks until the cluster is installed.

// ltRoleWorkers is how many role updates are in flight at once: a client
// script, not a thousand browsers.
const ltRoleWorkers = 4

// ltInstallReport is the install's figures. Times are from the install
// action, by the service's clock where it keeps one.
type ltInstallReport struct {
	RolesS float64 `json:"roles_s"` // giving every host its role, until the cluster is ready again
	// PreparedS is when the cluster went installing (install_started_at):
	// the install files generated and every host's preparation checks
	// passed.
	PreparedS  float64 `json:"prepared_s"`
	InstalledS float64 `json:"installed_s"` // install_completed_at
	CPUS       float64 `json:"cpu_s"`       // service CPU from the install action to installed
	Cores      float64 `json:"cores"`       // the same over that time
	SQLiteMiB  float64 `json:"sqlite_mib"`  // nodezero.db + -wal once installed
}

// ltInstall gives the hosts their roles, installs the cluster and follows
// it until it is installed.
func ltInstall(ctx context.Context, o loadtestOptions, uc *wire.Client, svc *ltService, clusterID, infraEnvID string,
	hosts []simagent.Host, rec *simagent.Recorder, alive func() error, progress io.Writer) (ltInstallReport, error) {
	var ir ltInstallReport
	rolesStart := time.Now()
	if err := ltSetRoles(ctx, uc, infraEnvID, hosts, rec); err != nil {
		return ir, err
	}
	if _, err := ltWaitClusterReady(ctx, uc, clusterID, time.Now().Add(ltReadyTimeout), alive); err != nil {
		return ir, fmt.Errorf("after the roles: %w", err)
	}
	ir.RolesS = time.Since(rolesStart).Seconds()
	fmt.Fprintf(progress, "loadtest: %d roles set in %.2f s; installing\n", len(hosts), ir.RolesS)

	cpu0, err := readProc(svc.pid())
	if err != nil {
		return ir, err
	}
	start := time.Now()
	_, err = uc.InstallCluster(ctx, clusterID)
	rec.Observe(ltKindInstall, time.Since(start), err)
	switch {
	case errors.Is(err, wire.ErrResponseTooLarge):
		// The answer is the cluster with every host, reports and all: past
		// a few hundred hosts it outgrows the client. Counted as an error;
		// whether the install started, the cluster's status tells.
		fmt.Fprintf(progress, "loadtest: the install action's answer is too large to read (%v); following the cluster\n", err)
	case err != nil:
		return ir, err
	}
	c, seen, err := ltWaitInstalled(ctx, o, uc, clusterID, rec, start, alive)
	if err != nil {
		return ir, err
	}
	cpu1, err := readProc(svc.pid())
	if err != nil {
		return ir, err
	}
	ir.PreparedS = ltSinceStart(start, c.InstallStartedAt.Time(), seen)
	ir.InstalledS = ltSinceStart(start, c.InstallCompletedAt.Time(), seen)
	ir.CPUS = (cpu1.cpu - cpu0.cpu).Seconds()
	ir.Cores = ir.CPUS / cpu1.at.Sub(start).Seconds()
	fmt.Fprintf(progress, "loadtest: cluster installed %.2f s after the install action (installing after %.2f s)\n",
		ir.InstalledS, ir.PreparedS)
	return ir, nil
}

// ltSetRoles makes the master-class hosts masters and the others workers,
// a few updates at a time.
func ltSetRoles(ctx context.Context, uc *wire.Client, infraEnvID string, hosts []simagent.Host, rec *simagent.Recorder) error {
	work := make(chan simagent.Host)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range ltRoleWorkers {
		wg.Go(func() {
			for h := range work {
				role := wire.HostUpdateParamsHostRoleWorker
				if h.Class == simagent.Master {
					role = wire.HostUpdateParamsHostRoleMaster
				}
				t := time.Now()
				_, err := uc.UpdateHost(ctx, infraEnvID, h.ID, wire.HostUpdateParams{HostRole: &role})
				rec.Observe(ltKindRole, time.Since(t), err)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("set the role of %s: %w", h.Hostname, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, h := range hosts {
		select {
		case work <- h:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return firstErr
}

// ltWaitInstalled polls the cluster list until the cluster is installed
// and returns it with when the poll saw it. An installation that failed,
// was cancelled or took longer than --install-timeout is an error naming
// the cluster's status and its hosts' progress.
func ltWaitInstalled(ctx context.Context, o loadtestOptions, uc *wire.Client, clusterID string, rec *simagent.Recorder,
	start time.Time, alive func() error) (*wire.Cluster, time.Time, error) {
	var last *wire.Cluster
	var err error
	for {
		if err := alive(); err != nil {
			return nil, time.Time{}, err
		}
		t := time.Now()
		var c *wire.Cluster
		c, err = ltGetClusterCounts(ctx, uc, clusterID)
		rec.Observe(ltKindPoll, time.Since(t), err)
		if err == nil {
			last = c
			switch c.Status {
			case wire.ClusterStatusInstalled:
				return c, time.Now(), nil
			case wire.ClusterStatusError, wire.ClusterStatusCancelled:
				return nil, time.Time{}, fmt.Errorf("install: cluster %s: %s%s", c.Status, c.StatusInfo, ltHostProgress(ctx, uc, clusterID))
			}
		}
		if time.Since(start) > o.installTimeout {
			state := "not listed"
			if last != nil {
				state = fmt.Sprintf("%s: %s", last.Status, last.StatusInfo)
			}
			return nil, time.Time{}, fmt.Errorf("install: cluster not installed after %s (%s; last poll error: %v)%s",
				o.installTimeout, state, err, ltHostProgress(ctx, uc, clusterID))
		}
		select {
		case <-ctx.Done():
			return nil, time.Time{}, ctx.Err()
		case <-time.After(o.poll):
		}
	}
}

// ltHostProgress is "; hosts: installed 97, installing-in-progress 3
// (Rebooting 3)" for an error message, or "" when the hosts cannot be
// listed.
func ltHostProgress(ctx context.Context, uc *wire.Client, clusterID string) string {
	hosts, err := uc.ListClusterHostsQuery(ctx, clusterID, wire.HostsQuery{})
	if err != nil {
		return ""
	}
	stages := map[wire.HostStage]int{}
	for _, h := range hosts {
		if h != nil && h.Progress != nil && h.Status != wire.HostStatusInstalled {
			stages[h.Progress.CurrentStage]++
		}
	}
	return fmt.Sprintf("; hosts: %s; stages of those not installed: %v", ltStatusHistogram(hosts), stages)
}
