package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// A failed install is retried the way assisted's reset flow has a person
// do it: reset the cluster (POST …/clusters/{id}/actions/reset), which
// leaves every host in resetting-pending-user-action, and reboot the
// hosts into discovery; they register again and node zero starts the
// installation once they are known. In the sandbox the person's part is
// done for them: `--resume` of a failed sandbox resets its cluster, the
// dashboard's r key resets it while the run is on screen, and the watch
// reboots every host a reset left waiting (rebootResetHosts).

// retryable reports whether a cluster in status s can be retried by a reset.
func retryable(s wire.ClusterStatus) bool {
	return s == wire.ClusterStatusError || s == wire.ClusterStatusCancelled
}

// resetFailed is --resume of a sandbox whose install failed: once node
// zero answers again, it resets the cluster, saying so; the watch that
// follows reboots the hosts and sees the install run again.
func (r *run) resetFailed(ctx context.Context, c *wire.Client) error {
	id := r.state.ClusterID
	deadline := time.Now().Add(r.o.Timeout)
	for {
		cl, err := c.GetCluster(ctx, id)
		switch {
		case err == nil && !retryable(cl.Status):
			return nil // reset already (a resume interrupted after its reset)
		case err == nil:
			r.say("cluster %s is %s (%s): resetting it and installing again, as POST …/v2/clusters/%s/actions/reset and rebooting the hosts would", id, cl.Status, cl.StatusInfo, id)
			if _, err := c.ResetCluster(ctx, id); err != nil {
				return fmt.Errorf("sandbox: resetting cluster %s: %w", id, err)
			}
			return nil
		case wire.IsStatus(err, 404):
			return fmt.Errorf("sandbox: --resume: node zero has no cluster %s (its store in %s was changed?): give --fresh to install anew", id, r.zero.root)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox: --resume: node zero's API did not answer within %s: %v (node zero's log: %s)", r.o.Timeout, err, r.zero.log)
		}
		if !backoff.Sleep(ctx, 200*time.Millisecond) {
			return ctx.Err()
		}
	}
}
