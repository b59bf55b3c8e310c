package watch

// The lines WaitFor prints: openshift-install's wording for each status,
// validation, event, outage and ending, in logrus' text form.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// Logger writes logrus' text form without a timestamp, as
// openshift-install prints: level=info msg="Cluster is ready for install",
// warnings as level=warning.
func Logger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.Attr{}
			case slog.LevelKey:
				l, _ := a.Value.Any().(slog.Level)
				if l == slog.LevelWarn {
					return slog.String(slog.LevelKey, "warning")
				}
				return slog.String(slog.LevelKey, strings.ToLower(l.String()))
			}
			return a
		}}))
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
				w.log.Info("Waiting for cluster install to initialize: node zero's service at " + w.baseURL() + " is not listening yet")
			}
			return pollResult{unanswered: true}
		default:
			w.log.Info("Waiting for cluster install to initialize. Sleeping for " + waitSeconds(w.cfg.initPause))
		}
		return pollResult{pause: w.cfg.initPause, unanswered: true}
	}
	if w.phase == InstallComplete && w.kube != nil {
		// Expected: node zero has rebooted into the cluster.
		if w.problem != "rebooted" {
			w.problem = "rebooted"
			w.log.Info("Node zero's service no longer answers: node zero has rebooted into the cluster, followed through its Kubernetes API")
		}
		w.log.Debug("Node zero's service does not answer", "error", err.Error())
		return pollResult{unanswered: true}
	}
	msg := fmt.Sprintf("Node zero's service at %s does not answer (%v); still waiting", w.baseURL(), err)
	if w.phase == BootstrapComplete {
		msg = fmt.Sprintf("cluster bootstrap did not complete: node zero's service at %s does not answer (%v)", w.baseURL(), err)
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
func (w *waiter) reportStatus(u Update) {
	if !u.StatusChanged {
		return
	}
	c, prev := u.Cluster, u.PrevStatus
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

// reportValidations logs validation results: failures as warnings at
// first sight, then only changes (failing: warning, recovered: info).
func (w *waiter) reportValidations(changes []ValidationChange) {
	for _, ch := range changes {
		prefix := "Cluster validation"
		if ch.Host != nil {
			prefix = "Host " + waitHostName(ch.Host) + " validation"
		}
		if ch.Err != nil {
			w.log.Debug(prefix+": unreadable validations_info", "error", ch.Err.Error())
			continue
		}
		line := prefix + ": " + ch.Validation.Message
		switch {
		case ch.Validation.Status.Failing():
			w.log.Warn(line)
		case ch.Seen && ch.WasStatus.Failing():
			w.log.Info(line)
		default:
			w.log.Debug(line)
		}
	}
}

// reportEvents logs the infra-env's latest event when its message is new.
func (w *waiter) reportEvents(u Update) {
	var none *NoInfraEnvError
	switch {
	case errors.As(u.EventsErr, &none):
		w.log.Debug("No infra-env to read events from yet", "error", fmt.Sprint(none.Err))
		return
	case u.EventsErr != nil:
		w.log.Debug("Cannot read events", "error", u.EventsErr.Error())
		return
	case len(u.Events) == 0:
		return
	}
	ev := u.Events[len(u.Events)-1]
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

// maxDumpedEvents bounds the cluster events a failure shows at debug level.
const maxDumpedEvents = 100

// dumpEvents logs the cluster's last events at debug level.
func (w *waiter) dumpEvents(ctx context.Context) {
	if !w.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	evs, err := w.watch.Client().ListEvents(ctx, wire.EventsQuery{ClusterID: w.watch.ClusterID()})
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
	cluster := fmt.Sprintf("%s%s/clusters/%s", w.baseURL(), wire.APIBasePath, w.watch.ClusterID())
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

// completeKube logs openshift-install's closing lines once the cluster
// is initialized: where the kubeconfig is, the console's address and
// where the kubeadmin password is.
func (w *waiter) completeKube() {
	k := w.kube
	if v := k.last.CompletedVersion(); v != "" {
		w.log.Info("Cluster version is " + v)
	}
	w.log.Info("Install complete!")
	w.log.Info("To access the cluster as the system:admin user when using 'oc', run")
	w.log.Info("    export KUBECONFIG=" + k.kubeconfig)
	if c := w.last; c != nil && c.Name != "" && c.BaseDNSDomain != "" {
		w.log.Info(fmt.Sprintf("Access the OpenShift web-console here: https://console-openshift-console.apps.%s.%s", c.Name, c.BaseDNSDomain))
	}
	// openshift-install prints the password itself; nodezero keeps
	// secrets out of what it prints (terminal scrollback and CI logs keep
	// them) and names the file instead.
	where := "auth/kubeadmin-password of the install directory"
	if w.cfg.passwordFile != "" {
		where = w.cfg.passwordFile
		if abs, err := filepath.Abs(where); err == nil {
			where = abs
		}
	}
	w.log.Info(`Login to the console with user: "kubeadmin", and the password in ` + where)
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
