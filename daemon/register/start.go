package register

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/wire"
)

// ExpectedHosts returns the hosts the AgentClusterInstall asks for: control
// plane (arbiters counted with it) and workers. These are
// start-cluster.env's REQUIRED_MASTER_NODES and REQUIRED_WORKER_NODES.
func ExpectedHosts(set *manifests.Set) (masters, workers int) {
	if set == nil || set.AgentClusterInstall == nil {
		return 0, 0
	}
	r := set.AgentClusterInstall.Spec.ProvisionRequirements
	return r.ControlPlaneAgents + r.ArbiterAgents, r.WorkerAgents
}

// StartDecision says whether to start the installation now, as
// start-cluster-installation.sh decides (docs/reference/abi-on-host.md §7):
// only when exactly the expected number of hosts are known (extra hosts
// hold the start back) and the cluster is ready. status is one line for
// the console and the issue files explaining the decision, e.g.
// "Waiting for 2 of 5 hosts to be known: worker-1 insufficient
// (has-min-memory), 1 host not registered yet".
func StartDecision(cluster *wire.Cluster, hosts []*wire.Host, wantMasters, wantWorkers int) (start bool, status string) {
	if cluster == nil {
		return false, "Waiting for the cluster to be registered"
	}
	switch cluster.Status {
	case wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling,
		wire.ClusterStatusInstallingPendingUserAction, wire.ClusterStatusFinalizing:
		return false, "Cluster installation in progress"
	case wire.ClusterStatusInstalled:
		return false, "Cluster is installed"
	case wire.ClusterStatusError, wire.ClusterStatusCancelled:
		return false, "Installation cannot proceed: Cluster status: " + string(cluster.Status)
	}
	want := wantMasters + wantWorkers
	var known int
	var notKnown []string
	for _, h := range sortedHosts(hosts) {
		if h.Status == wire.HostStatusKnown {
			known++
			continue
		}
		notKnown = append(notKnown, describeHost(h))
	}
	registered := len(hosts)
	switch {
	case known > want:
		return false, fmt.Sprintf("%d hosts are known but %s expected: remove the extra %s",
			known, plural(want, "is", "are"), plural(known-want, "host", "hosts"))
	case registered > want:
		return false, fmt.Sprintf("%d hosts registered but %s expected: remove the extra %s; not known: %s",
			registered, plural(want, "is", "are"), plural(registered-want, "host", "hosts"), strings.Join(notKnown, ", "))
	case known < want:
		parts := notKnown
		if missing := want - registered; missing > 0 {
			parts = append(parts, plural(missing, "host", "hosts")+" not registered yet")
		}
		return false, fmt.Sprintf("Waiting for %d of %d hosts to be known: %s", want-known, want, strings.Join(parts, ", "))
	}
	all := fmt.Sprintf("All %d hosts are", want)
	if want == 1 {
		all = "The host is"
	}
	if cluster.Status != wire.ClusterStatusReady {
		s := fmt.Sprintf("%s known; the cluster is %s", all, cluster.Status)
		if cluster.StatusInfo != "" {
			s += ": " + cluster.StatusInfo
		}
		return false, s
	}
	return true, all + " known and the cluster is ready: starting the installation"
}

// plural is "1 host" / "2 hosts"; for want with "is"/"are" it reads
// "1 is" / "3 are".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sortedHosts orders hosts by name then id, so the status line is stable.
func sortedHosts(hosts []*wire.Host) []*wire.Host {
	out := make([]*wire.Host, 0, len(hosts))
	for _, h := range hosts {
		if h != nil {
			out = append(out, h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := displayName(out[i]), displayName(out[j])
		if a != b {
			return a < b
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// describeHost is "worker-1 insufficient (has-min-memory)": the host's
// name, status and failing validations.
func describeHost(h *wire.Host) string {
	s := displayName(h) + " " + string(h.Status)
	if ids := failingValidations(h.ValidationsInfo); len(ids) > 0 {
		s += " (" + strings.Join(ids, ", ") + ")"
	}
	return s
}

// displayName is the host's requested name, its inventory hostname, or
// the start of its id.
func displayName(h *wire.Host) string {
	if h.RequestedHostname != "" {
		return h.RequestedHostname
	}
	if h.Inventory != "" {
		var inv struct {
			Hostname string `json:"hostname"`
		}
		if json.Unmarshal([]byte(h.Inventory), &inv) == nil && inv.Hostname != "" {
			return inv.Hostname
		}
	}
	if len(h.ID) > 8 {
		return "host " + h.ID[:8]
	}
	return "host " + h.ID
}

// failingValidations returns the ids of the failing validations in
// validations_info ({"category": [{"id", "status", "message"}]}) that keep a
// host from known, sorted: an advisory one (ntp-synced) is not why.
func failingValidations(info string) []string {
	vi, _ := wire.ParseValidationsInfo(info) // unreadable text names nothing
	var ids []string
	for _, v := range vi.Failing() {
		if !machine.Advisory(wire.HostValidationID(v.ID)) {
			ids = append(ids, v.ID)
		}
	}
	sort.Strings(ids)
	return ids
}
