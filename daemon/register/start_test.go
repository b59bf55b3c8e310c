package register

import (
	"testing"

	"github.com/nodezero/nodezero/configimage/manifests"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

func host(name string, status v2.HostStatus, failing ...string) *v2.Host {
	h := &v2.Host{ID: "id-" + name, RequestedHostname: name, Status: status}
	if len(failing) > 0 {
		info := `{"hardware":[`
		for i, id := range failing {
			if i > 0 {
				info += ","
			}
			info += `{"id":"` + id + `","status":"failure","message":"x"}`
		}
		h.ValidationsInfo = info + `,{"id":"has-inventory","status":"success","message":"ok"}]}`
	}
	return h
}

func known(names ...string) []*v2.Host {
	var out []*v2.Host
	for _, n := range names {
		out = append(out, host(n, v2.HostStatusKnown))
	}
	return out
}

func TestStartDecision(t *testing.T) {
	ready := &v2.Cluster{Status: v2.ClusterStatusReady}
	insufficient := &v2.Cluster{Status: v2.ClusterStatusInsufficient, StatusInfo: "Cluster is not ready for install"}
	tests := []struct {
		name             string
		cluster          *v2.Cluster
		hosts            []*v2.Host
		masters, workers int
		start            bool
		status           string
	}{
		{"no cluster", nil, nil, 3, 2, false, "Waiting for the cluster to be registered"},
		{"all known, cluster ready", ready, known("m0", "m1", "m2", "w0", "w1"), 3, 2, true,
			"All 5 hosts are known and the cluster is ready: starting the installation"},
		{"one not known, one not registered", insufficient,
			append(known("m0", "m1", "m2"), host("worker-1", v2.HostStatusInsufficient, "has-min-memory")), 3, 2, false,
			"Waiting for 2 of 5 hosts to be known: worker-1 insufficient (has-min-memory), 1 host not registered yet"},
		{"several failing validations, sorted", insufficient,
			[]*v2.Host{host("m0", v2.HostStatusInsufficient, "ntp-synced", "has-cpu-cores-for-role", "belongs-to-majority-group"), host("m1", v2.HostStatusDiscovering)}, 3, 0, false,
			// ntp-synced is advisory: not a reason the host waits.
			"Waiting for 3 of 3 hosts to be known: m0 insufficient (belongs-to-majority-group, has-cpu-cores-for-role), m1 discovering, 1 host not registered yet"},
		{"nothing registered", insufficient, nil, 1, 0, false, "Waiting for 1 of 1 hosts to be known: 1 host not registered yet"},
		{"extra host registered", insufficient,
			append(known("m0", "m1", "m2"), host("stray", v2.HostStatusPendingForInput)), 3, 0, false,
			"4 hosts registered but 3 are expected: remove the extra 1 host; not known: stray pending-for-input"},
		{"too many known", ready, known("m0", "m1", "m2", "m3"), 3, 0, false,
			"4 hosts are known but 3 are expected: remove the extra 1 host"},
		{"all known, cluster not ready", insufficient, known("m0"), 1, 0, false,
			"The host is known; the cluster is insufficient: Cluster is not ready for install"},
		{"installing", &v2.Cluster{Status: v2.ClusterStatusInstalling}, known("m0"), 1, 0, false, "Cluster installation in progress"},
		{"preparing", &v2.Cluster{Status: v2.ClusterStatusPreparingForInstallation}, known("m0"), 1, 0, false, "Cluster installation in progress"},
		{"installed", &v2.Cluster{Status: v2.ClusterStatusInstalled}, known("m0"), 1, 0, false, "Cluster is installed"},
		{"error", &v2.Cluster{Status: v2.ClusterStatusError}, known("m0"), 1, 0, false, "Installation cannot proceed: Cluster status: error"},
		{"host named by its inventory", insufficient,
			[]*v2.Host{{ID: "0f1e2d3c-aaaa", Status: v2.HostStatusDisconnected, Inventory: `{"hostname":"master-7"}`}, {ID: "99887766-bbbb", Status: v2.HostStatusDiscovering}}, 2, 0, false,
			"Waiting for 2 of 2 hosts to be known: host 99887766 discovering, master-7 disconnected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, status := StartDecision(tt.cluster, tt.hosts, tt.masters, tt.workers)
			if start != tt.start || status != tt.status {
				t.Errorf("StartDecision = %v, %q\nwant %v, %q", start, status, tt.start, tt.status)
			}
		})
	}
}

func TestExpectedHosts(t *testing.T) {
	set := &manifests.Set{AgentClusterInstall: &manifests.AgentClusterInstall{}}
	set.AgentClusterInstall.Spec.ProvisionRequirements = manifests.ProvisionRequirements{ControlPlaneAgents: 2, ArbiterAgents: 1, WorkerAgents: 4}
	if m, w := ExpectedHosts(set); m != 3 || w != 4 {
		t.Errorf("ExpectedHosts = %d, %d; want 3 (2 control plane + 1 arbiter), 4", m, w)
	}
	if m, w := ExpectedHosts(nil); m != 0 || w != 0 {
		t.Errorf("ExpectedHosts(nil) = %d, %d; want 0, 0", m, w)
	}
}
