package main

// `nodezero wait-for bootstrap-complete|install-complete` follows an install
// from a workstation through node zero's REST API, as `openshift-install
// agent wait-for` does (reference/abi-on-host.md §11): the same status
// lines, validation and event lines, in logrus' text form, and the same exit
// codes (5: bootstrap failed, 6: install failed).
//
// ABI watches two sources: the REST API of the assisted-service pod and,
// once it is up, the bootstrap Kube API (configmap kube-system/bootstrap,
// then ClusterVersion). nodezero has no bootstrap Kube API: the bootstrap
// is complete when the bootstrap host reaches the stage Rebooting.
// install-complete then follows the installed cluster's Kubernetes API
// when it has a kubeconfig (waitfor_kube.go), else node zero's REST status
// to installed. The flags are read in waitfor_cmd.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// Exit codes of openshift-install's wait-for.
const (
	exitBootstrapFailed = 5
	exitInstallFailed   = 6
)

// exitError is a failure that ends the process with its own exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the code main exits with.
func (e *exitError) ExitCode() int   { return e.code }
func (e *exitError) ExitStatus() int { return e.code }

// waitTarget is what wait-for waits for.
type waitTarget string

const (
	waitBootstrap waitTarget = "bootstrap-complete"
	waitInstall   waitTarget = "install-complete"
)

// The defaults are openshift-install's.
const (
	defaultBootstrapTimeout = 60 * time.Minute
	defaultInstallTimeout   = 90 * time.Minute
	defaultWaitInterval     = 2 * time.Second
	nodeZeroPort            = "8090"
	waitRequestTimeout      = 10 * time.Second
)

// waitConfig is one wait-for run. Tests shorten the durations.
type waitConfig struct {
	target     waitTarget
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

	// kubeconfigPath is the installed cluster's admin kubeconfig: with
	// it, the install phase follows the cluster's Kubernetes API, as
	// openshift-install does once node zero has rebooted. passwordFile
	// holds the kubeadmin password the last lines name.
	kubeconfigPath, passwordFile string
	kube                         *kubeFollower // nil: no kubeconfig, node zero's REST status decides
}

func defaultWaitConfig() waitConfig {
	return waitConfig{
		interval: defaultWaitInterval, bootstrapTimeout: defaultBootstrapTimeout, installTimeout: defaultInstallTimeout,
		initPause: 30 * time.Second, unreachableAfter: 2 * time.Minute,
		readyLimit: time.Minute, errorGrace: 5 * time.Minute, repeatEvery: 2 * time.Minute,
		now: time.Now,
	}
}

// errRefused marks node zero refusing the watcher token: no point waiting.
var errRefused = errors.New("node zero refused the token")

// errUntrusted marks an HTTPS node zero whose certificate this host does
// not trust: no point waiting either.
var errUntrusted = errors.New("node zero's certificate is not trusted")

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
		case errors.Is(err, errRefused), errors.Is(err, errUntrusted):
			return fmt.Errorf("wait-for %s: %w", cfg.target, err)
		case err != nil:
			return w.fail(ctx, err)
		}
		if w.phase == waitBootstrap && !res.bootstrapDone && res.unanswered && w.kube != nil {
			// Started late: node zero has rebooted into a cluster whose
			// API answers.
			if err := w.kube.refresh(); err != nil {
				return w.fail(ctx, err)
			}
			if _, kerr := w.kube.api.GetClusterVersion(ctx, clusterVersionName); kerr == nil {
				w.log.Info("The cluster's Kubernetes API answers at " + w.kube.api.Server() + ": node zero has rebooted into the cluster")
				res.bootstrapDone = true
			}
		}
		if w.phase == waitBootstrap && res.bootstrapDone {
			w.log.Info("Bootstrap is complete")
			if cfg.target == waitBootstrap {
				return nil
			}
			w.phase = waitInstall
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
		if w.phase == waitInstall && w.kube != nil {
			done, kerr := w.kube.poll(ctx)
			switch {
			case kerr != nil:
				return w.fail(ctx, kerr)
			case done:
				w.kube.complete(w)
				return nil
			}
		} else if w.phase == waitInstall && res.installed {
			w.complete()
			return nil
		}
		left := deadline.Sub(cfg.now())
		if left <= 0 {
			if w.phase == waitInstall && w.kube != nil {
				return w.fail(ctx, w.kube.failure())
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

// waiter holds what one run has seen of node zero.
type waiter struct {
	cfg   waitConfig
	c     *wire.Client
	log   *slog.Logger
	phase waitTarget // bootstrap-complete, then install-complete
	kube  *kubeFollower

	clusterID, infraEnvID string
	answered              bool      // node zero's service has answered once
	start                 time.Time // the first poll

	last        *wire.Cluster      // as last read
	status      wire.ClusterStatus // the last status reported
	statusSince time.Time          // when it was first seen
	validations map[string]validationSeen
	eventOffset int    // infra-env events read so far
	lastEvent   string // the message of the last event printed

	problem   string    // the lasting problem last logged
	problemAt time.Time // and when
}

type validationSeen struct {
	status  wire.ValidationStatus
	message string
}

// pollResult is what one poll learnt.
type pollResult struct {
	bootstrapDone, installed bool
	unanswered               bool          // node zero's service did not answer
	pause                    time.Duration // until the next poll; 0: the interval
}

func newWaiter(cfg waitConfig) *waiter {
	return &waiter{cfg: cfg, c: cfg.client, log: cfg.log, phase: waitBootstrap, kube: cfg.kube,
		validations: map[string]validationSeen{}, start: cfg.now()}
}

// errClusters: node zero holds more than the one cluster wait-for follows.
var errClusters = errors.New("node zero lists more than one cluster")

// poll asks node zero once and logs what changed. An error ends the run:
// errRefused for a refused token, else the install failed.
func (w *waiter) poll(ctx context.Context) (pollResult, error) {
	c, err := w.cluster(ctx)
	switch code := wire.StatusCode(err); {
	case ctx.Err() != nil:
		return pollResult{}, ctx.Err()
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		hint := "give the watcher token of this install (auth/watcher.token)"
		if !w.cfg.tokenGiven {
			hint = "give the watcher token with --token or --token-file"
		}
		return pollResult{}, fmt.Errorf("%w at %s (%v); %s", errRefused, w.c.BaseURL(), err, hint)
	case errors.Is(err, errClusters):
		return pollResult{}, err
	case errors.As(err, new(*tls.CertificateVerificationError)):
		return pollResult{}, fmt.Errorf("%w at %s (%v); give the CA of its certificate with --cacert (the install directory's tls/ca.crt)", errUntrusted, w.c.BaseURL(), err)
	case err != nil:
		return w.unreachable(err), nil
	case c == nil:
		return pollResult{}, nil
	}
	w.last = c
	w.reportStatus(c)
	w.reportValidations(c)
	w.reportEvents(ctx)
	return w.judge(c)
}

// cluster reads node zero's cluster, or nil while it has none.
func (w *waiter) cluster(ctx context.Context) (*wire.Cluster, error) {
	if w.clusterID == "" {
		list, err := w.c.ListClusters(ctx)
		if err != nil {
			return nil, err
		}
		w.reachable()
		switch len(list) {
		case 0:
			w.log.Debug("Node zero has registered no cluster yet")
			return nil, nil
		case 1:
			w.clusterID = list[0].ID
		default:
			return nil, fmt.Errorf("%w: %d; wait-for follows exactly one", errClusters, len(list))
		}
	}
	c, err := w.c.GetCluster(ctx, w.clusterID)
	if wire.IsStatus(err, http.StatusNotFound) {
		// A fresh database on node zero: look for its cluster again.
		w.log.Warn(fmt.Sprintf("Cluster %s is gone from node zero; looking for its cluster again", w.clusterID))
		w.clusterID, w.infraEnvID, w.eventOffset, w.lastEvent = "", "", 0, ""
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	w.reachable()
	return c, nil
}

// reachable notes that node zero's service answered.
func (w *waiter) reachable() {
	switch w.problem {
	case "":
	case "starting":
		w.log.Debug("Node zero's service answers")
	default:
		w.log.Info("Node zero's service answers again")
	}
	w.problem = ""
	w.answered = true
}

// unreachable handles a poll node zero did not answer as it should.
func (w *waiter) unreachable(err error) pollResult {
	if !w.answered {
		w.log.Debug("Node zero's service has not answered yet", "error", err.Error())
		// ABI tries SSH to node zero after two minutes; a refused
		// connection says as much, that the host is up and its
		// service not yet.
		refused := errors.Is(err, syscall.ECONNREFUSED)
		switch {
		case w.cfg.now().Sub(w.start) > w.cfg.unreachableAfter && !refused:
			w.log.Info("Cannot access Rendezvous Host. There may be a network configuration problem, check console for additional info")
		case refused:
			// The host is up and its service is starting: ABI sleeps
			// 30 s here and misses the first half minute of the
			// install; a refused connection costs nothing to retry.
			if w.problem != "starting" {
				w.problem = "starting"
				w.log.Info("Waiting for cluster install to initialize: node zero's service at " + w.c.BaseURL() + " is not listening yet")
			}
			return pollResult{unanswered: true}
		default:
			w.log.Info("Waiting for cluster install to initialize. Sleeping for " + waitSeconds(w.cfg.initPause))
		}
		return pollResult{pause: w.cfg.initPause, unanswered: true}
	}
	if w.phase == waitInstall && w.kube != nil {
		// Expected: node zero has rebooted into the cluster.
		if w.problem != "rebooted" {
			w.problem = "rebooted"
			w.log.Info("Node zero's service no longer answers: node zero has rebooted into the cluster, followed through its Kubernetes API")
		}
		w.log.Debug("Node zero's service does not answer", "error", err.Error())
		return pollResult{unanswered: true}
	}
	msg := fmt.Sprintf("Node zero's service at %s does not answer (%v); still waiting", w.c.BaseURL(), err)
	if w.phase == waitBootstrap {
		msg = fmt.Sprintf("cluster bootstrap did not complete: node zero's service at %s does not answer (%v)", w.c.BaseURL(), err)
	}
	w.lasting("unreachable", msg)
	return pollResult{unanswered: true}
}

// lasting logs a problem as a warning when it starts and every
// repeatEvery while it lasts, at debug level in between.
func (w *waiter) lasting(kind, msg string) {
	now := w.cfg.now()
	if w.problem == kind && now.Sub(w.problemAt) < w.cfg.repeatEvery {
		w.log.Debug(msg)
		return
	}
	w.problem, w.problemAt = kind, now
	w.log.Warn(msg)
}

// clusterStatusText is what openshift-install prints for each status.
var clusterStatusText = map[wire.ClusterStatus]string{
	wire.ClusterStatusAddingHosts:                 "Cluster is adding hosts",
	wire.ClusterStatusCancelled:                   "Cluster installation cancelled",
	wire.ClusterStatusError:                       "Cluster has hosts in error",
	wire.ClusterStatusFinalizing:                  "Finalizing cluster installation",
	wire.ClusterStatusInstalled:                   "Cluster is installed",
	wire.ClusterStatusInstalling:                  "Cluster installation in progress",
	wire.ClusterStatusInstallingPendingUserAction: "Cluster has hosts requiring user input",
	wire.ClusterStatusInsufficient:                "Cluster is not ready for install. Check validations",
	wire.ClusterStatusPendingForInput:             "User input is required to continue cluster installation",
	wire.ClusterStatusPreparingForInstallation:    "Preparing cluster for installation",
	wire.ClusterStatusReady:                       "Cluster is ready for install",
}

// reportStatus logs a change of the cluster's status.
func (w *waiter) reportStatus(c *wire.Cluster) {
	if c.Status == w.status {
		return
	}
	prev := w.status
	w.status, w.statusSince = c.Status, w.cfg.now()
	text, ok := clusterStatusText[c.Status]
	if !ok {
		text = fmt.Sprintf("Cluster status is %s: %s", c.Status, c.StatusInfo)
	}
	w.log.Info(text)
	switch c.Status {
	case wire.ClusterStatusReady:
		if prev == wire.ClusterStatusPreparingForInstallation {
			w.log.Warn("failed to prepare cluster installation, retrying")
		}
	case wire.ClusterStatusInstallingPendingUserAction:
		for _, h := range c.Hosts {
			if h.Status == wire.HostStatusInstallingPendingUserAction {
				w.log.Warn(fmt.Sprintf("Host %s %s", waitHostName(h), h.StatusInfo))
			}
		}
		w.log.Warn("cluster has stopped installing... working to recover installation")
	case wire.ClusterStatusError:
		w.log.Warn("cluster has stopped installing... working to recover installation")
	}
}

// judge decides whether the run is over.
func (w *waiter) judge(c *wire.Cluster) (pollResult, error) {
	res := pollResult{bootstrapDone: bootstrapDone(c), installed: c.Status == wire.ClusterStatusInstalled}
	if res.installed || (w.phase == waitBootstrap && res.bootstrapDone) {
		return res, nil
	}
	in := w.cfg.now().Sub(w.statusSince)
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

// reportValidations logs validation results: failures as warnings at
// first sight, then only changes (failing: warning, recovered: info).
func (w *waiter) reportValidations(c *wire.Cluster) {
	w.validate("cluster", "Cluster validation", c.ValidationsInfo)
	for _, h := range c.Hosts {
		w.validate("host "+h.ID, "Host "+waitHostName(h)+" validation", h.ValidationsInfo)
	}
}

func (w *waiter) validate(key, prefix, info string) {
	vi, err := wire.ParseValidationsInfo(info)
	if err != nil {
		w.log.Debug(prefix+": unreadable validations_info", "error", err.Error())
		return
	}
	for _, r := range vi {
		k := key + " " + r.ID
		old, seen := w.validations[k]
		now := validationSeen{r.Status, r.Message}
		w.validations[k] = now
		line := prefix + ": " + r.Message
		switch {
		case seen && old == now:
		case now.status.Failing():
			w.log.Warn(line)
		case seen && old.status.Failing():
			w.log.Info(line)
		default:
			w.log.Debug(line)
		}
	}
}

// reportEvents logs the infra-env's latest event when its message is new.
func (w *waiter) reportEvents(ctx context.Context) {
	if w.infraEnvID == "" {
		ies, err := w.c.ListInfraEnvs(ctx, w.clusterID)
		if err != nil || len(ies) == 0 {
			w.log.Debug("No infra-env to read events from yet", "error", fmt.Sprint(err))
			return
		}
		w.infraEnvID = ies[0].ID
	}
	// Events come oldest first; only the new ones are read.
	evs, err := w.c.ListEvents(ctx, wire.EventsQuery{InfraEnvID: w.infraEnvID, Offset: w.eventOffset})
	if err != nil {
		w.log.Debug("Cannot read events", "error", err.Error())
		return
	}
	w.eventOffset += len(evs)
	if len(evs) == 0 {
		return
	}
	ev := evs[len(evs)-1]
	if ev.Message == w.lastEvent {
		return
	}
	w.lastEvent = ev.Message
	if ev.Severity == wire.EventSeverityInfo {
		w.log.Info(ev.Message)
	} else {
		w.log.Warn(ev.Message)
	}
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
	code, what := exitBootstrapFailed, "Bootstrap"
	if w.phase == waitInstall {
		code, what = exitInstallFailed, "Install"
	}
	if w.clusterID != "" {
		w.dumpEvents(ctx)
		w.log.Info(fmt.Sprintf("The hosts' logs can be downloaded with the user token from %s%s/clusters/%s/logs?logs_type=all",
			w.c.BaseURL(), wire.APIBasePath, w.clusterID))
	}
	w.log.Error(fmt.Sprintf("%s failed to complete: %v", what, err))
	return &exitError{code: code, err: fmt.Errorf("%s failed to complete: %w", strings.ToLower(what), err)}
}

// maxDumpedEvents bounds the cluster events a failure shows at debug level.
const maxDumpedEvents = 100

// dumpEvents logs the cluster's last events at debug level.
func (w *waiter) dumpEvents(ctx context.Context) {
	if !w.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	evs, err := w.c.ListEvents(ctx, wire.EventsQuery{ClusterID: w.clusterID})
	if err != nil {
		w.log.Debug("Cannot read the cluster's events", "error", err.Error())
		return
	}
	for _, ev := range evs[max(0, len(evs)-maxDumpedEvents):] {
		w.log.Debug(ev.Message, "time", ev.EventTime.Time().Format(time.RFC3339), "severity", string(ev.Severity))
	}
}

// complete logs the end of a successful install and where its credentials
// are: wait-for has no asset directory, so the files of `nodezero create
// config-image --dir DIR` are named by their place in it.
func (w *waiter) complete() {
	cluster := fmt.Sprintf("%s%s/clusters/%s", w.c.BaseURL(), wire.APIBasePath, w.clusterID)
	w.log.Info("Install complete!")
	w.log.Info("To access the cluster as the system:admin user when using 'oc', run")
	w.log.Info("    export KUBECONFIG=DIR/auth/kubeconfig")
	w.log.Info("(DIR as given to 'nodezero create config-image --dir'; node zero also serves it to the user token, header Authorization: " +
		cluster + "/downloads/credentials?file_name=kubeconfig)")
	if c := w.last; c != nil && c.Name != "" && c.BaseDNSDomain != "" {
		w.log.Info(fmt.Sprintf("Access the OpenShift web-console here: https://console-openshift-console.apps.%s.%s", c.Name, c.BaseDNSDomain))
	}
	w.log.Info(`Login to the console with user: "kubeadmin", and the password in DIR/auth/kubeadmin-password (or from ` +
		cluster + "/credentials with the user token)")
}

// waitHostName is how a host is named in messages.
func waitHostName(h *wire.Host) string {
	if h.RequestedHostname != "" {
		return h.RequestedHostname
	}
	return h.ID
}

// waitSeconds spells a pause as openshift-install does ("30 seconds").
func waitSeconds(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}

// waitRound rounds d for a message.
func waitRound(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}
