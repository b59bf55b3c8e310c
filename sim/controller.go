package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// Request kinds a Controller reports to its Observer: rows of a load
// test's latency table.
const (
	KindProgress   = "progress"                   // PUT .../progress
	KindListHosts  = "list-hosts (stage refused)" // after a 409: is the host still in the install?
	KindGetCluster = "get-cluster (node zero)"    // node zero waiting for finalizing
	KindComplete   = "complete-installation"      // node zero's last call
)

const (
	// completePoll is how often node zero reads the cluster while it
	// waits for finalizing.
	completePoll = 500 * time.Millisecond
	// A report is retried from firstRetry, doubling up to maxRetry: node
	// zero may be rebooting.
	firstRetry = 200 * time.Millisecond
	maxRetry   = 5 * time.Second
)

// ErrHeld is wrapped by Run's error when the host stays where it is
// instead of finishing: its disk is not as written (it reported Failed),
// node zero refused its progress, or a fault keeps it from joining.
var ErrHeld = errors.New("the installed host is held")

// errRefusedStage: node zero refused a stage because the host is out of
// the install (error, cancelled, resetting).
var errRefusedStage = errors.New("node zero refused the stage")

// outOfInstall are the host statuses in which node zero takes no more
// progress from the host.
var outOfInstall = []wire.HostStatus{wire.HostStatusError, wire.HostStatusCancelled, wire.HostStatusResetting, wire.HostStatusResettingPendingUserAction}

// Observer receives the latency and outcome of each request a Controller
// makes (sim/simagent's Observer). It must be safe for concurrent
// use.
type Observer interface {
	Observe(kind string, d time.Duration, err error)
}

// Controller is the simulated in-cluster controller of one host booted
// from its installed disk: OpenShift's assisted-installer-controller as
// node zero sees it. No OpenShift runs.
type Controller struct {
	// Agent is the host's client with the agent token: its progress and
	// the completion go through it.
	Agent *wire.Client
	// Cluster reads the cluster while node zero waits for finalizing (the
	// user's client on a sandbox's node zero; a load test's host reads
	// with its agent client). nil: the host completes nothing (not node
	// zero).
	Cluster *wire.Client
	// Kube, when set, is the installed cluster's Kubernetes API: the
	// operators' and the ClusterVersion's status go there as the hosts
	// join, and the installation completes only once the ClusterVersion
	// is Available.
	Kube *StatusWriter
	// Node, when set, registers the host's own Node once it reported
	// Done: a Cluster API Machine's host (NodeRegistration), whose Node
	// carries the Machine's providerID and which no node zero writes.
	Node func(context.Context) error
	// NeverJoin is a fault for tests: the host verifies its disk and
	// reports Configuring, but never Joined.
	NeverJoin bool
	// Settle is how long the host stays in Configuring and in Joined,
	// and node zero in finalizing; a real node spends minutes there, the
	// sandbox none unless asked.
	Settle   time.Duration
	Status   func(string) // the host's status line; nil: none
	Observer Observer     // nil: none
	Log      *slog.Logger // nil: none
}

func (c *Controller) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

func (c *Controller) status(s string) {
	if c.Status != nil {
		c.Status(s)
	}
}

// observe records a request that started at start, unless it failed
// because ctx ended (the host stopping is no error of the service's).
func (c *Controller) observe(ctx context.Context, kind string, start time.Time, err error) {
	if c.Observer != nil && (err == nil || ctx.Err() == nil) {
		c.Observer.Observe(kind, time.Since(start), err)
	}
}

// Run is the booted host d: it checks its disk with verify, reports the
// stages a host of its role reports once booted, and on node zero
// (Cluster set) completes the installation once the cluster is
// finalizing. It returns nil once that is done, ctx's error when stopped,
// an error wrapping ErrHeld when the host stays where it is, or the error
// of a report node zero refused for good.
func (c *Controller) Run(ctx context.Context, d *onhost.BootDisk, verify func() error) error {
	log := c.log()
	if err := verify(); err != nil {
		log.Error("the installed disk does not boot as written", "err", err)
		_ = c.report(ctx, d, wire.HostStageFailed, err.Error())
		return fmt.Errorf("%w: %w", ErrHeld, err)
	}
	log.Info("installed disk verified: image digest and Ignition (role, hostname, host id) match", "disk", d.Disk)

	for _, st := range installer.BootedSteps(wire.HostRole(d.Role), d.ControlPlaneCount) {
		if st.Stage == wire.HostStageJoined && c.NeverJoin {
			log.Warn("fault injected: this host never joins the control plane")
			return fmt.Errorf("%w: it never joins (fault injected)", ErrHeld)
		}
		err := c.report(ctx, d, st.Stage, st.Info)
		if errors.Is(err, errRefusedStage) {
			// Node zero no longer counts this host in: it keeps its
			// disk, and says why instead of claiming it is installed.
			log.Error("this host booted its installed disk, but node zero refused its progress: it is not part of the cluster", "err", err)
			c.status("Installed disk booted, but node zero refused this host: " + err.Error())
			return fmt.Errorf("%w: %w", ErrHeld, err)
		}
		if err != nil {
			return err
		}
		if st.Settle && !backoff.Sleep(ctx, c.Settle) {
			return ctx.Err()
		}
	}
	if c.Node != nil {
		if err := c.Node(ctx); err != nil {
			return err
		}
	}
	log.Info("host installed")
	c.status("Host installed (simulated OpenShift)")
	if c.Cluster == nil {
		return nil
	}
	return c.completeWhenFinalizing(ctx, d.ClusterID)
}

// permanent is an error retrying cannot fix.
type permanent struct{ error }

// report sends one stage until node zero takes it or refuses it for good,
// backing off to maxRetry.
func (c *Controller) report(ctx context.Context, d *onhost.BootDisk, stage wire.HostStage, info string) error {
	delay := firstRetry
	for {
		err := c.reportOnce(ctx, d, stage, info)
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return fmt.Errorf("report %s: %w", stage, p.error)
		}
		c.log().Debug("report "+string(stage)+": retrying", "err", err)
		if !backoff.Sleep(ctx, delay) {
			return ctx.Err()
		}
		delay = min(2*delay, maxRetry)
	}
}

func (c *Controller) reportOnce(ctx context.Context, d *onhost.BootDisk, stage wire.HostStage, info string) error {
	start := time.Now()
	err := c.Agent.UpdateHostInstallProgress(ctx, d.InfraEnvID, d.HostID, wire.HostProgress{CurrentStage: stage, ProgressInfo: info})
	c.observe(ctx, KindProgress, start, err)
	code := wire.StatusCode(err)
	switch {
	case code == http.StatusConflict:
		// Already there (a restart of this host), unless node zero no
		// longer counts this host in: then it must not say it is
		// installed. (Getting one host is the user's; the agent lists
		// its infra-env.)
		start = time.Now()
		hs, lerr := c.Agent.ListHosts(ctx, d.InfraEnvID)
		c.observe(ctx, KindListHosts, start, lerr)
		if lerr != nil {
			return lerr
		}
		for _, h := range hs {
			if h.ID == d.HostID && slices.Contains(outOfInstall, h.Status) {
				return permanent{fmt.Errorf("%w: node zero has the host %s (%s)", errRefusedStage, h.Status, h.StatusInfo)}
			}
		}
		return nil
	case code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests:
		return permanent{err}
	}
	return err
}

// completeWhenFinalizing is the controller's last act on node zero: once
// the cluster is finalizing, it reports the installation complete. With a
// kube API it writes the operators' status there as the hosts join, and
// completes only once the ClusterVersion is Available.
func (c *Controller) completeWhenFinalizing(ctx context.Context, clusterID string) error {
	log := c.log()
	settled := c.Settle <= 0
	for {
		start := time.Now()
		var cl *wire.Cluster
		var err error
		if c.Kube != nil {
			cl, err = c.Cluster.GetCluster(ctx, clusterID) // the hosts' stages too
		} else {
			cl, err = c.Cluster.GetClusterExcludingHosts(ctx, clusterID) // the status only
		}
		c.observe(ctx, KindGetCluster, start, err)
		cvReady := true
		if err == nil && c.Kube != nil {
			var serr error
			if cvReady, serr = c.Kube.Sync(ctx, cl); serr != nil {
				c.Kube.failed(serr)
			}
		}
		if err == nil {
			switch cl.Status {
			case wire.ClusterStatusFinalizing:
				if !cvReady {
					break // the cluster version is not Available yet
				}
				if !settled {
					// The controller spends a while finalizing (the
					// operators' last steps), as in Configuring and
					// Joined: Settle, once.
					settled = true
					if !backoff.Sleep(ctx, c.Settle) {
						return ctx.Err()
					}
				}
				ok := true
				start = time.Now()
				_, err := c.Agent.CompleteInstallation(ctx, clusterID, wire.CompletionParams{IsSuccess: &ok})
				c.observe(ctx, KindComplete, start, err)
				if err != nil {
					log.Warn("complete installation", "err", err)
					break
				}
				log.Info("installation complete (reported by the simulated controller)", "cluster", clusterID)
				return nil
			case wire.ClusterStatusInstalled:
				if cvReady {
					return nil
				}
			case wire.ClusterStatusError, wire.ClusterStatusCancelled:
				return nil
			}
		}
		if !backoff.Sleep(ctx, completePoll) {
			return ctx.Err()
		}
	}
}
