package loadtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nodezero/nodezero/loadtest/procstat"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/wire"
)

// The install of a load-test run (issue #8): the user gives every host its
// role as ABI's agent-config does (the master-class hosts masters, the
// rest workers), starts the install, and the simulated hosts run the real
// installer with simulated disks until the cluster is installed.

// roleWorkers is how many role updates are in flight at once: a client
// script, not a thousand browsers.
const roleWorkers = 4

// InstallReport is the install's figures. Times are from the install
// action, by the service's clock where it keeps one.
type InstallReport struct {
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

// install gives the hosts their roles, installs the cluster and follows
// it until it is installed.
func (r *runner) install(ctx context.Context, hosts []simagent.Host) (InstallReport, error) {
	var ir InstallReport
	uc, clusterID, progress := r.user, r.clusterID, r.progress
	rolesStart := time.Now()
	if err := setRoles(ctx, uc, r.infraEnvID, hosts, r.rec); err != nil {
		return ir, err
	}
	if _, err := WaitClusterReady(ctx, uc, clusterID, time.Now().Add(ReadyTimeout), r.alive); err != nil {
		return ir, fmt.Errorf("after the roles: %w", err)
	}
	ir.RolesS = time.Since(rolesStart).Seconds()
	fmt.Fprintf(progress, "loadtest: %d roles set in %.2f s; installing\n", len(hosts), ir.RolesS)

	cpu0, err := procstat.Read(r.svc.PID())
	if err != nil {
		return ir, err
	}
	start := time.Now()
	_, err = uc.InstallCluster(ctx, clusterID)
	r.rec.Observe(KindInstall, time.Since(start), err)
	switch {
	case errors.Is(err, wire.ErrResponseTooLarge):
		// The answer is the cluster with every host, reports and all: past
		// a few hundred hosts it outgrows the client. Counted as an error;
		// whether the install started, the cluster's status tells.
		fmt.Fprintf(progress, "loadtest: the install action's answer is too large to read (%v); following the cluster\n", err)
	case err != nil:
		return ir, err
	}
	c, seen, err := waitInstalled(ctx, r.o, r.watch, r.rec, start, r.alive)
	if err != nil {
		return ir, err
	}
	cpu1, err := procstat.Read(r.svc.PID())
	if err != nil {
		return ir, err
	}
	ir.PreparedS = sinceStart(start, c.InstallStartedAt.Time(), seen)
	ir.InstalledS = sinceStart(start, c.InstallCompletedAt.Time(), seen)
	ir.CPUS = (cpu1.CPU - cpu0.CPU).Seconds()
	ir.Cores = ir.CPUS / cpu1.At.Sub(start).Seconds()
	fmt.Fprintf(progress, "loadtest: cluster installed %.2f s after the install action (installing after %.2f s)\n",
		ir.InstalledS, ir.PreparedS)
	return ir, nil
}

// setRoles makes the master-class hosts masters and the others workers,
// a few updates at a time.
func setRoles(ctx context.Context, uc *wire.Client, infraEnvID string, hosts []simagent.Host, rec *simagent.Recorder) error {
	work := make(chan simagent.Host)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range roleWorkers {
		wg.Go(func() {
			for h := range work {
				role := wire.HostUpdateParamsHostRoleWorker
				if h.Class == simagent.Master {
					role = wire.HostUpdateParamsHostRoleMaster
				}
				t := time.Now()
				_, err := uc.UpdateHost(ctx, infraEnvID, h.ID, wire.HostUpdateParams{HostRole: &role})
				rec.Observe(KindRole, time.Since(t), err)
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
