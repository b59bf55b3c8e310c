package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// The simulated in-cluster controller's Kubernetes side (sandbox): what the
// cluster version operator and the cluster operators would write into the
// installed cluster's API as the hosts join, written by node zero's
// installed process into the sandbox's kube API (the sandbox starts it). Like
// assisted-installer-controller, which waits for the cluster version
// before it reports the install complete, node zero completes the install
// only once the ClusterVersion is Available.

// operatorGate says when a cluster operator becomes Available, from the
// hosts' install stages: the control plane's own operators once every
// control-plane host has joined, the ones that run on it once every
// control-plane host is done, and the rest (ingress, console, monitoring:
// workloads on workers) once every host is done.
type operatorGate int

const (
	controlPlaneJoined operatorGate = iota
	controlPlaneDone
	allHostsDone
)

var operatorGates = map[string]operatorGate{
	"etcd": controlPlaneJoined, "kube-apiserver": controlPlaneJoined,
	"kube-controller-manager": controlPlaneJoined, "kube-scheduler": controlPlaneJoined,
	"network": controlPlaneDone, "dns": controlPlaneDone, "openshift-apiserver": controlPlaneDone,
	"authentication": controlPlaneDone, "machine-config": controlPlaneDone,
}

// operatorAvailable reports whether the operator name is Available with
// the hosts as they are.
func operatorAvailable(name string, hosts []*wire.Host) bool {
	gate, ok := operatorGates[name]
	if !ok {
		gate = allHostsDone
	}
	if len(hosts) == 0 {
		return false
	}
	for _, h := range hosts {
		cp := h.Role != wire.HostRoleWorker
		var stage wire.HostStage
		if h.Progress != nil {
			stage = h.Progress.CurrentStage
		}
		done := h.Status == wire.HostStatusInstalled || stage == wire.HostStageDone
		joined := done || stage == wire.HostStageJoined
		switch {
		case gate == controlPlaneJoined && cp && !joined:
			return false
		case gate == controlPlaneDone && cp && !done:
			return false
		case gate == allHostsDone && !done:
			return false
		}
	}
	return true
}

// KubeconfigPath is where, under a host's root, the sandbox leaves the
// installed cluster's admin kubeconfig for node zero's simulated
// controller: its stand-in for the in-cluster service account.
const KubeconfigPath = "/var/lib/nodezero/simulated-cluster/kubeconfig"

// StatusWriter writes the simulated cluster's ClusterOperator and
// ClusterVersion status.
type StatusWriter struct {
	c         *kube.Client
	log       *slog.Logger
	waiting   bool // the API has not answered yet (logged once)
	lastAvail int
	// nodesReady are the day-1 hosts whose Node is Ready (nodes.go).
	nodesReady map[string]bool
	// hostsOwnNodes: each host registers its own Node (Cluster API
	// Machines' hosts, machine.go); the writer leaves the Nodes alone.
	hostsOwnNodes bool
}

// NewStatusWriter writes through c, logging to log.
func NewStatusWriter(c *kube.Client, log *slog.Logger) *StatusWriter {
	return &StatusWriter{c: c, log: log, lastAvail: -1}
}

// hostKubeconfig reads the installed cluster's kubeconfig the sandbox or a
// test left under a host's root (KubeconfigPath); nil when there is none
// (no kube API to write to).
func hostKubeconfig(root string) (*kube.Config, error) {
	p := filepath.Join(root, KubeconfigPath)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return kube.LoadKubeconfig(p)
}

// LoadStatusWriter reads the kubeconfig the sandbox left under the host's
// root (KubeconfigPath); it returns nil when there is none (no kube API).
func LoadStatusWriter(root string, log *slog.Logger) (*StatusWriter, error) {
	cfg, err := hostKubeconfig(root)
	if cfg == nil || err != nil {
		return nil, err
	}
	c, err := kube.NewClient(cfg, kube.WithTimeout(10*time.Second))
	if err != nil {
		return nil, err
	}
	return NewStatusWriter(c, log), nil
}

// Sync brings the operators' and the ClusterVersion's status in line with
// the cluster: operators become Available as their hosts join (never
// back), and once every one is and the cluster is finalizing (or
// installed), the ClusterVersion is Available and no longer Progressing
// ("Cluster version is <version>"). It reports whether the ClusterVersion
// says the cluster is installed.
func (w *StatusWriter) Sync(ctx context.Context, cl *wire.Cluster) (bool, error) {
	cv, err := w.c.GetClusterVersion(ctx, kube.ClusterVersionName)
	if err != nil {
		return false, err
	}
	if w.waiting {
		w.waiting = false
		w.log.Info("SIMULATED: the installed cluster's kube API answers; writing its operators' status", "server", w.c.Server())
	}
	// Cluster API Machines' hosts register their own (machine.go).
	if !w.hostsOwnNodes {
		if err := w.syncNodes(ctx, cl.Hosts); err != nil {
			// The Nodes are for adding nodes later; the install goes on.
			w.log.Warn("SIMULATED: the hosts' Nodes could not be written", "err", err)
		}
	}
	version := cv.Status.Desired.Version
	if version == "" {
		return false, errors.New("the cluster version names no desired release yet")
	}
	cos, err := w.c.ListClusterOperators(ctx)
	if err != nil {
		return false, err
	}
	now := kube.Now()
	avail := 0
	for i := range cos {
		co := &cos[i]
		if kube.IsTrue(co.Status.Conditions, kube.Available) {
			avail++
			continue
		}
		if !operatorAvailable(co.Metadata.Name, cl.Hosts) {
			continue
		}
		for _, c := range []kube.Condition{
			{Type: kube.Available, Status: kube.True, Reason: "AsExpected", Message: "All is well"},
			{Type: kube.Progressing, Status: kube.False, Reason: "AsExpected"},
			{Type: kube.Degraded, Status: kube.False, Reason: "AsExpected"},
		} {
			c.LastTransitionTime = now
			kube.SetCondition(&co.Status.Conditions, c)
		}
		co.Status.Versions = []kube.OperandVersion{{Name: "operator", Version: version}}
		if _, err := w.c.UpdateClusterOperatorStatus(ctx, co); err != nil {
			return false, fmt.Errorf("operator %s: %w", co.Metadata.Name, err)
		}
		avail++
	}
	if avail != w.lastAvail {
		w.lastAvail = avail
		w.log.Info("SIMULATED: cluster operators available", "available", avail, "of", len(cos))
	}

	if cv.Installed() {
		return true, nil
	}
	finished := avail == len(cos) && slices.Contains([]wire.ClusterStatus{wire.ClusterStatusFinalizing, wire.ClusterStatusInstalled}, cl.Status)
	var conds []kube.Condition
	if finished {
		conds = []kube.Condition{
			{Type: kube.Available, Status: kube.True, Message: "Done applying " + version},
			{Type: kube.Failing, Status: kube.False},
			{Type: kube.Progressing, Status: kube.False, Message: "Cluster version is " + version},
		}
		if len(cv.Status.History) > 0 && cv.Status.History[0].State == kube.UpdatePartial {
			cv.Status.History[0].State = kube.UpdateCompleted
			cv.Status.History[0].CompletionTime = &now
		}
	} else {
		pct := 0
		if len(cos) > 0 {
			pct = 100 * avail / len(cos)
		}
		conds = []kube.Condition{{Type: kube.Progressing, Status: kube.True,
			Message: fmt.Sprintf("Working towards %s: %d of %d done (%d%% complete)", version, avail, len(cos), pct)}}
	}
	changed := finished
	for _, c := range conds {
		c.LastTransitionTime = now
		changed = kube.SetCondition(&cv.Status.Conditions, c) || changed
	}
	if !changed {
		return false, nil
	}
	if _, err := w.c.UpdateClusterVersionStatus(ctx, cv); err != nil {
		return false, fmt.Errorf("cluster version: %w", err)
	}
	if finished {
		w.log.Info("SIMULATED: the cluster version is available", "version", version)
	}
	return finished, nil
}

// failed notes a sync that did not go through (the API may still be
// starting): said once, then at debug level.
func (w *StatusWriter) failed(err error) {
	if errors.Is(err, kube.ErrConflict) { // a writer in between: read again
		w.log.Debug("installed cluster's kube API", "err", err)
		return
	}
	if !w.waiting {
		w.waiting = true
		w.log.Info("SIMULATED: waiting for the installed cluster's kube API", "server", w.c.Server(), "err", err)
		return
	}
	w.log.Debug("installed cluster's kube API", "err", err)
}
