package watch

// Once the bootstrap is complete, node zero writes its own disk and
// reboots: its REST API goes away. openshift-install's wait-for
// install-complete then follows the installed cluster through its
// Kubernetes API with auth/kubeconfig (docs/reference/abi-on-host.md §11):
// ClusterVersion `version` Available, not Failing, not Progressing. So does
// WaitFor, when it has a kubeconfig, through a ClusterFollower; node zero's
// REST API is still read while it answers, for its statuses and events,
// but it no longer decides.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/kube"
)

// clusterAPI is what a ClusterFollower asks the installed cluster
// (kube.Client; tests give a fake).
type clusterAPI interface {
	Server() string
	GetClusterVersion(ctx context.Context, name string) (*kube.ClusterVersion, error)
	ListClusterOperators(ctx context.Context) ([]kube.ClusterOperator, error)
}

// errKubeRefused: the cluster's API refused the kubeconfig's credentials.
// Waiting will not change that.
var errKubeRefused = errors.New("the cluster's Kubernetes API refused the kubeconfig's credentials")

// ClusterFollower follows the installed cluster's ClusterVersion and
// operators, logging what changed as openshift-install does.
type ClusterFollower struct {
	api        clusterAPI
	kubeconfig string // the file, for the closing lines
	log        *slog.Logger

	answered    bool   // the API has answered once
	progressing string // the last "Still waiting" message
	failing     string // the last Failing message logged
	waitingOn   string // the operators last said not available
	last        *kube.ClusterVersion
	operators   []kube.ClusterOperator
	lastErr     error
}

// NewClusterFollower reads the kubeconfig at path; a kubeconfig that
// cannot be used is an error before anything is waited for. log gets the
// lines.
func NewClusterFollower(path string, log *slog.Logger) (*ClusterFollower, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	k := &ClusterFollower{kubeconfig: path, log: log}
	return k, k.load()
}

// load (re)reads the kubeconfig: at the start, to fail early, and again
// once the bootstrap is complete, since the file may have been edited
// while node zero installed (the sandbox points it at the API VIP).
func (k *ClusterFollower) load() error {
	cfg, err := kube.LoadKubeconfig(k.kubeconfig)
	if err != nil {
		return fmt.Errorf("wait-for --kubeconfig: %w", err)
	}
	c, err := kube.NewClient(cfg, kube.WithTimeout(RequestTimeout))
	if err != nil {
		return fmt.Errorf("wait-for --kubeconfig %s: %w", k.kubeconfig, err)
	}
	if old, ok := k.api.(*kube.Client); ok {
		old.Close()
	}
	k.api = c
	return nil
}

// refresh reads the kubeconfig again when the client came from one (tests
// give a client of their own).
func (k *ClusterFollower) refresh() error {
	if _, fromFile := k.api.(*kube.Client); !fromFile {
		return nil
	}
	return k.load()
}

// Server is the cluster's API address.
func (k *ClusterFollower) Server() string { return k.api.Server() }

// Poll reads the ClusterVersion once: whether the cluster is initialized.
// An error is returned only for credentials the API refuses; an API that
// does not answer yet is logged and waited for.
func (k *ClusterFollower) Poll(ctx context.Context) (bool, error) {
	cv, err := k.api.GetClusterVersion(ctx, kube.ClusterVersionName)
	switch {
	case errors.Is(err, kube.ErrUnauthorized), errors.Is(err, kube.ErrForbidden):
		return false, fmt.Errorf("%w at %s (%v); give the kubeconfig of this install (auth/kubeconfig of 'nodezero create config-image --dir')", errKubeRefused, k.api.Server(), err)
	case err != nil:
		k.lastErr = err
		k.log.Debug("Still waiting for the cluster's Kubernetes API", "error", err.Error())
		return false, nil
	}
	if !k.answered {
		k.answered = true
		k.log.Info("The cluster's Kubernetes API answers at " + k.api.Server())
	}
	k.last, k.lastErr = cv, nil
	if cv.Installed() {
		k.log.Debug("Cluster is initialized")
		return true, nil
	}
	cs := cv.Status.Conditions
	if f := kube.FindCondition(cs, kube.Failing); f != nil && f.Status == kube.True && f.Message != k.failing {
		k.failing = f.Message
		k.log.Warn("Cluster version is failing: " + f.Message)
	}
	msg := cv.Summary()
	if p := kube.FindCondition(cs, kube.Progressing); p != nil && p.Message != "" {
		msg = p.Message
	}
	if msg != k.progressing {
		k.progressing = msg
		k.log.Debug("Still waiting for the cluster to initialize: " + msg)
	}
	k.reportOperators(ctx)
	return false, nil
}

// reportOperators logs the operators not yet available when that set
// changes.
func (k *ClusterFollower) reportOperators(ctx context.Context) {
	cos, err := k.api.ListClusterOperators(ctx)
	if err != nil {
		k.log.Debug("Cannot list the cluster operators", "error", err.Error())
		return
	}
	k.operators = cos
	var waiting []string
	for _, co := range cos {
		if !kube.IsTrue(co.Status.Conditions, kube.Available) {
			waiting = append(waiting, co.Metadata.Name)
		}
	}
	slices.Sort(waiting)
	now := strings.Join(waiting, ", ")
	if now == k.waitingOn {
		return
	}
	k.waitingOn = now
	if len(waiting) == 0 {
		k.log.Info(fmt.Sprintf("All %d cluster operators are available", len(cos)))
		return
	}
	k.log.Info(fmt.Sprintf("Cluster operators %s are not available (%d of %d available)", now, len(cos)-len(waiting), len(cos)))
}

// Failure is what a timed-out follow says: the ClusterVersion's last word
// and, at error level, each operator's conditions that are not as they
// should be (openshift-install's logClusterOperatorConditions).
func (k *ClusterFollower) Failure() error {
	for _, co := range k.operators {
		for _, want := range []struct {
			t  kube.ConditionType
			ok kube.ConditionStatus
		}{{kube.Available, kube.True}, {kube.Degraded, kube.False}, {kube.Progressing, kube.False}} {
			c := kube.FindCondition(co.Status.Conditions, want.t)
			if c == nil || c.Status == want.ok {
				continue
			}
			k.log.Error(fmt.Sprintf("Cluster operator %s %s is %s with %s: %s", co.Metadata.Name, c.Type, c.Status, c.Reason, c.Message))
		}
	}
	switch {
	case k.last != nil:
		return fmt.Errorf("failed to initialize the cluster: %s", k.last.Summary())
	case k.lastErr != nil:
		return fmt.Errorf("failed to initialize the cluster: its Kubernetes API at %s never answered: %w", k.api.Server(), k.lastErr)
	}
	return fmt.Errorf("failed to initialize the cluster: its Kubernetes API at %s never answered", k.api.Server())
}
