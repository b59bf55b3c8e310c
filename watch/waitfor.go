package watch

// WaitFor is `nodezero wait-for bootstrap-complete|install-complete`: it
// follows an install from a workstation through node zero's REST API, as
// `openshift-install agent wait-for` does (docs/reference/abi-on-host.md §11):
// the same status lines, validation and event lines, in logrus' text form
// (waitfor_lines.go), and the same exit codes (5: bootstrap failed, 6:
// install failed).
//
// ABI watches two sources: the REST API of the assisted-service pod and,
// once it is up, the bootstrap Kube API (configmap kube-system/bootstrap,
// then ClusterVersion). nodezero has no bootstrap Kube API: the bootstrap
// is complete when the bootstrap host reaches the stage Rebooting.
// install-complete then follows the installed cluster's Kubernetes API
// when it has a kubeconfig (a ClusterFollower, kube.go), else node zero's
// REST status to installed.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// Target is what WaitFor waits for.
type Target string

const (
	BootstrapComplete Target = "bootstrap-complete"
	InstallComplete   Target = "install-complete"
)

// Exit codes of openshift-install's wait-for.
const (
	ExitBootstrapFailed = 5
	ExitInstallFailed   = 6
)

// ExitError is a wait that did not reach its target: the process ends
// with Code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode and ExitStatus are the code the process exits with.
func (e *ExitError) ExitCode() int   { return e.Code }
func (e *ExitError) ExitStatus() int { return e.Code }

// The defaults are openshift-install's.
const (
	defaultBootstrapTimeout = 60 * time.Minute
	defaultInstallTimeout   = 90 * time.Minute
	// DefaultInterval is how often WaitFor asks node zero.
	DefaultInterval = 2 * time.Second
	// RequestTimeout bounds one request to node zero or to the cluster.
	RequestTimeout = 10 * time.Second
)

// ErrRefused marks node zero refusing the watcher token: no point waiting.
var ErrRefused = errors.New("node zero refused the token")

// ErrUntrusted marks an HTTPS node zero whose certificate this host does
// not trust: no point waiting either.
var ErrUntrusted = errors.New("node zero's certificate is not trusted")

// WaitOptions are one wait-for run.
type WaitOptions struct {
	Target Target
	// URL is node zero's service, e.g. http://192.168.111.80:8090.
	URL string
	// Token is the watcher token (header Watcher-Authorization); "" sends
	// none.
	Token string
	// CACert is the PEM file node zero's HTTPS certificate is checked
	// with; "" is the system's roots.
	CACert string
	// Kubeconfig is the installed cluster's admin kubeconfig: with it,
	// the install is followed through the cluster's Kubernetes API once
	// node zero has rebooted, as openshift-install does. "" follows node
	// zero's REST status to installed.
	Kubeconfig string
	// PasswordFile holds the kubeadmin password the closing lines name.
	PasswordFile string
	// Interval is how often node zero is asked (default DefaultInterval).
	Interval time.Duration
	// Timeout bounds the whole run; 0 is 60m until the bootstrap
	// completes, then 90m for the install, as openshift-install.
	Timeout time.Duration
	// Log gets the lines (see Logger); nil discards them.
	Log *slog.Logger
}

// WaitFor follows node zero until o.Target is reached (nil), the install
// fails or the time is up (an *ExitError), or node zero refuses the token
// or is not trusted (ErrRefused, ErrUntrusted).
func WaitFor(ctx context.Context, o WaitOptions) error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	cfg := defaultWaitConfig()
	cfg.target, cfg.log, cfg.tokenGiven, cfg.timeout, cfg.passwordFile = o.Target, o.Log, o.Token != "", o.Timeout, o.PasswordFile
	if o.Interval > 0 {
		cfg.interval = o.Interval
	}
	// No proxy: node zero is on the machine network, and the environment's
	// proxy is for the cluster's way out, not for reaching it.
	tlsConf, err := wire.TLSConfig(o.CACert, "", false)
	if err != nil {
		return fmt.Errorf("wait-for: --cacert: %w", err)
	}
	tr := &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: RequestTimeout}).DialContext, TLSClientConfig: tlsConf}
	client, err := wire.NewClient(o.URL, wire.WithWatcherToken(o.Token), wire.WithRequestTimeout(RequestTimeout),
		wire.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return fmt.Errorf("wait-for: %w", err)
	}
	defer client.CloseIdleConnections()
	cfg.client = client
	if o.Kubeconfig != "" {
		if cfg.kube, err = NewClusterFollower(o.Kubeconfig, cfg.log); err != nil {
			return err
		}
	}
	return waitForTarget(ctx, cfg)
}

// waitConfig is one wait-for run. Tests shorten the durations.
type waitConfig struct {
	target     Target
	client     *wire.Client
	tokenGiven bool // for the hint when node zero refuses
	log        *slog.Logger
	interval   time.Duration
	// timeout bounds the whole run; 0: bootstrapTimeout until bootstrap
	// completes, then installTimeout.
	timeout                          time.Duration
	bootstrapTimeout, installTimeout time.Duration
	// initPause is the pause while node zero's service has never
	// answered, unreachableAfter how long a host that does not even
	// refuse connections is given before "Cannot access Rendezvous Host".
	initPause, unreachableAfter time.Duration
	// readyLimit: a cluster ready this long has not started its install.
	readyLimit time.Duration
	// errorGrace: a cluster in error this long is given up on. Assisted
	// leaves error only through a reset, which the user may still do.
	errorGrace time.Duration
	// repeatEvery: a lasting problem is logged again this often.
	repeatEvery time.Duration
	now         func() time.Time

	passwordFile string           // the kubeadmin password's file, for the last lines
	kube         *ClusterFollower // nil: no kubeconfig, node zero's REST status decides
}

func defaultWaitConfig() waitConfig {
	return waitConfig{
		interval: DefaultInterval, bootstrapTimeout: defaultBootstrapTimeout, installTimeout: defaultInstallTimeout,
		initPause: 30 * time.Second, unreachableAfter: 2 * time.Minute,
		readyLimit: time.Minute, errorGrace: 5 * time.Minute, repeatEvery: 2 * time.Minute,
		now: time.Now,
	}
}

// waitForTarget polls node zero until cfg.target is reached, fails or times out.
func waitForTarget(ctx context.Context, cfg waitConfig) error {
	w := newWaiter(cfg)
	deadline := cfg.now().Add(cfg.bootstrapTimeout)
	if cfg.timeout > 0 {
		deadline = cfg.now().Add(cfg.timeout)
	}
	timer := time.NewTimer(0)
	timer.Stop()
	defer timer.Stop()
	for {
		res, err := w.poll(ctx)
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("wait-for %s: %w", cfg.target, ctx.Err())
		case errors.Is(err, ErrRefused), errors.Is(err, ErrUntrusted):
			return fmt.Errorf("wait-for %s: %w", cfg.target, err)
		case err != nil:
			return w.fail(ctx, err)
		}
		if w.phase == BootstrapComplete && !res.bootstrapDone && res.unanswered && w.kube != nil {
			// Started late: node zero has rebooted into a cluster whose
			// API answers.
			if err := w.kube.refresh(); err != nil {
				return w.fail(ctx, err)
			}
			if _, kerr := w.kube.api.GetClusterVersion(ctx, kube.ClusterVersionName); kerr == nil {
				w.log.Info("The cluster's Kubernetes API answers at " + w.kube.api.Server() + ": node zero has rebooted into the cluster")
				res.bootstrapDone = true
			}
		}
		if w.phase == BootstrapComplete && res.bootstrapDone {
			w.log.Info("Bootstrap is complete")
			if cfg.target == BootstrapComplete {
				return nil
			}
			w.phase = InstallComplete
			if cfg.timeout == 0 {
				deadline = cfg.now().Add(cfg.installTimeout)
			}
			if w.kube != nil {
				if err := w.kube.refresh(); err != nil {
					return w.fail(ctx, err)
				}
				w.log.Info(fmt.Sprintf("Waiting up to %s (until %s) for the cluster at %s to initialize...",
					deadline.Sub(cfg.now()).Round(time.Second), deadline.Format(time.Kitchen), w.kube.api.Server()))
			}
		}
		if w.phase == InstallComplete && w.kube != nil {
			done, kerr := w.kube.Poll(ctx)
			switch {
			case kerr != nil:
				return w.fail(ctx, kerr)
			case done:
				w.completeKube()
				return nil
			}
		} else if w.phase == InstallComplete && res.installed {
			w.complete()
			return nil
		}
		left := deadline.Sub(cfg.now())
		if left <= 0 {
			if w.phase == InstallComplete && w.kube != nil {
				return w.fail(ctx, w.kube.Failure())
			}
			return w.fail(ctx, w.timedOut())
		}
		pause := cfg.interval
		if res.pause > 0 {
			pause = res.pause
		}
		timer.Reset(min(pause, left))
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait-for %s: %w", cfg.target, ctx.Err())
		case <-timer.C:
		}
	}
}

// waiter holds what one run has seen of node zero beyond its Watcher.
type waiter struct {
	cfg   waitConfig
	watch *Watcher
	log   *slog.Logger
	phase Target // bootstrap-complete, then install-complete
	kube  *ClusterFollower

	answered bool          // node zero's service has answered once
	start    time.Time     // the first poll
	last     *wire.Cluster // as last read

	lastEvent string // the message of the last event printed

	problem   string    // the lasting problem last logged
	problemAt time.Time // and when
}

// pollResult is what one poll learnt.
type pollResult struct {
	bootstrapDone, installed bool
	unanswered               bool          // node zero's service did not answer
	pause                    time.Duration // until the next poll; 0: the interval
}

func newWaiter(cfg waitConfig) *waiter {
	return &waiter{cfg: cfg, log: cfg.log, phase: BootstrapComplete, kube: cfg.kube, start: cfg.now(),
		watch: New(cfg.client, Options{Events: InfraEnvEvents, Now: cfg.now})}
}

// poll asks node zero once and logs what changed. An error ends the run:
// ErrRefused for a refused token, else the install failed.
func (w *waiter) poll(ctx context.Context) (pollResult, error) {
	u, err := w.watch.Poll(ctx)
	if u.Answered {
		w.reachable()
	}
	switch code := wire.StatusCode(err); {
	case ctx.Err() != nil:
		return pollResult{}, ctx.Err()
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		hint := "give the watcher token of this install (auth/watcher.token)"
		if !w.cfg.tokenGiven {
			hint = "give the watcher token with --token or --token-file"
		}
		return pollResult{}, fmt.Errorf("%w at %s (%v); %s", ErrRefused, w.baseURL(), err, hint)
	case errors.Is(err, ErrClusters):
		return pollResult{}, fmt.Errorf("%w; wait-for follows exactly one", err)
	case errors.As(err, new(*tls.CertificateVerificationError)):
		return pollResult{}, fmt.Errorf("%w at %s (%v); give the CA of its certificate with --cacert (the install directory's tls/ca.crt)", ErrUntrusted, w.baseURL(), err)
	case err != nil:
		return w.unreachable(err), nil
	case u.Gone != "":
		// A fresh database on node zero: look for its cluster again.
		w.log.Warn(fmt.Sprintf("Cluster %s is gone from node zero; looking for its cluster again", u.Gone))
		w.lastEvent = ""
		return pollResult{}, nil
	case u.Cluster == nil:
		w.log.Debug("Node zero has registered no cluster yet")
		return pollResult{}, nil
	}
	w.last = u.Cluster
	w.reportStatus(u)
	w.reportValidations(u.Validations)
	w.reportEvents(u)
	return w.judge(u.Cluster, u.StatusSince)
}

// baseURL is node zero's service as the watcher reads it.
func (w *waiter) baseURL() string { return w.watch.Client().BaseURL() }

// judge decides whether the run is over; since is when the cluster's
// status was first seen.
func (w *waiter) judge(c *wire.Cluster, since time.Time) (pollResult, error) {
	res := pollResult{bootstrapDone: bootstrapDone(c), installed: c.Status == wire.ClusterStatusInstalled}
	if res.installed || (w.phase == BootstrapComplete && res.bootstrapDone) {
		return res, nil
	}
	in := w.cfg.now().Sub(since)
	switch c.Status {
	case wire.ClusterStatusCancelled:
		return res, fmt.Errorf("cluster installation was cancelled: %s", c.StatusInfo)
	case wire.ClusterStatusReady:
		if in > w.cfg.readyLimit {
			return res, errors.New("failed to progress after all hosts available")
		}
	case wire.ClusterStatusError:
		if in > w.cfg.errorGrace {
			return res, fmt.Errorf("cluster in error for %s: %s", waitRound(in), c.StatusInfo)
		}
	}
	return res, nil
}

// bootstrapDone reports whether the bootstrap host has reached the stage
// Rebooting or a later one: it has written its disk after the control
// plane came up (after "Waiting for controller"), the point ABI's
// bootstrap configmap says complete. Without a bootstrap Kube API to ask,
// node zero's REST status is what wait-for follows.
func bootstrapDone(c *wire.Cluster) bool {
	switch c.Status {
	case wire.ClusterStatusFinalizing, wire.ClusterStatusInstalled:
		return true
	}
	for _, h := range c.Hosts {
		if !h.Bootstrap {
			continue
		}
		if h.Status == wire.HostStatusInstalled {
			return true
		}
		if h.Progress == nil {
			return false
		}
		cur := slices.Index(h.ProgressStages, h.Progress.CurrentStage)
		reboot := slices.Index(h.ProgressStages, wire.HostStageRebooting)
		return cur >= 0 && reboot >= 0 && cur >= reboot
	}
	return false
}

// timedOut is the error of a run whose time is up.
func (w *waiter) timedOut() error {
	last := "none seen"
	if w.last != nil {
		last = fmt.Sprintf("%s (%s)", w.last.Status, w.last.StatusInfo)
	}
	return fmt.Errorf("timed out after %s; last cluster status: %s", waitRound(w.cfg.now().Sub(w.start)), last)
}

// fail ends a run that did not reach its target, with the exit code of the
// phase it was in.
func (w *waiter) fail(ctx context.Context, err error) error {
	code, what := ExitBootstrapFailed, "Bootstrap"
	if w.phase == InstallComplete {
		code, what = ExitInstallFailed, "Install"
	}
	if id := w.watch.ClusterID(); id != "" {
		w.dumpEvents(ctx)
		w.log.Info(fmt.Sprintf("The hosts' logs can be downloaded with the user token from %s%s/clusters/%s/logs?logs_type=all",
			w.baseURL(), wire.APIBasePath, id))
	}
	w.log.Error(fmt.Sprintf("%s failed to complete: %v", what, err))
	return &ExitError{Code: code, Err: fmt.Errorf("%s failed to complete: %w", strings.ToLower(what), err)}
}
