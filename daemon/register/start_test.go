package register

import (
	"testing"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

func host(name string, status wire.HostStatus, failing ...string) *wire.Host {
	h := &wire.Host{ID: "id-" + name, RequestedHostname: name, Status: status}
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

func known(names ...string) []*wire.Host {
	var out []*wire.Host
	for _, n := range names {
		out = append(out, host(n, wire.HostStatusKnown))
	}
	return out
}

func TestStartDecision(t *testing.T) {
	ready := &wire.Cluster{Status: wire.ClusterStatusReady}
	insufficient := &wire.Cluster{Status: wire.ClusterStatusInsufficient, StatusInfo: "Cluster is not ready for install"}
	tests := []struct {
		name             string
		cluster          *wire.Cluster
		hosts            []*wire.Host
		masters, workers int
		start            bool
		status           string
	}{
		{"no cluster", nil, nil, 3, 2, false, "Waiting for the cluster to be registered"},
		{"all known, cluster ready", ready, known("m0", "m1", "m2", "w0", "w1"), 3, 2, true,
			"All 5 hosts are known and the cluster is ready: starting the installation"},
		{"one not known, one not registered", insufficient,
			append(known("m0", "m1", "m2"), host("worker-1", wire.HostStatusInsufficient, "has-min-memory")), 3, 2, false,
			"Waiting for 2 of 5 hosts to be known: worker-1 insufficient (has-min-memory), 1 host not registered yet"},
		{"several failing validations, sorted", insufficient,
			[]*wire.Host{host("m0", wire.HostStatusInsufficient, "ntp-synced", "has-cpu-cores-for-role", "belongs-to-majority-group"), host("m1", wire.HostStatusDiscovering)}, 3, 0, false,
			// ntp-synced is advisory: not a reason the host waits.
			"Waiting for 3 of 3 hosts to be known: m0 insufficient (belongs-to-majority-group, has-cpu-cores-for-role), m1 discovering, 1 host not registered yet"},
		{"nothing registered", insufficient, nil, 1, 0, false, "Waiting for 1 of 1 hosts to be known: 1 host not registered yet"},
		{"extra host registered", insufficient,
			append(known("m0", "m1", "m2"), host("stray", wire.HostStatusPendingForInput)), 3, 0, false,
			"4 hosts registered but 3 are expected: remove the extra 1 host; not known: stray pending-for-input"},
		{"too many known", ready, known("m0", "m1", "m2", "m3"), 3, 0, false,
			"4 hosts are known but 3 are expected: remove the extra 1 host"},
		{"all known, cluster not ready", insufficient, known("m0"), 1, 0, false,
			"The host is known; the cluster is insufficient: Cluster is not ready for install"},
		{"installing", &wire.Cluster{Status: wire.ClusterStatusInstalling}, known("m0"), 1, 0, false, "Cluster installation in progress"},
		{"preparing", &wire.Cluster{Status: wire.ClusterStatusPreparingForInstallation}, known("m0"), 1, 0, false, "Cluster installation in progress"},
		{"installed", &wire.Cluster{Status: wire.ClusterStatusInstalled}, known("m0"), 1, 0, false, "Cluster is installed"},
		{"error", &wire.Cluster{Status: wire.ClusterStatusError}, known("m0"), 1, 0, false, "Installation cannot proceed: Cluster status: error"},
		{"host named by its inventory", insufficient,
			[]*wire.Host{{ID: "0f1e2d3c-aaaa", Status: wire.HostStatusDisconnected, Inventory: `{"hostname":"master-7"}`}, {ID: "99887766-bbbb", Status: wire.HostStatusDiscovering}}, 2, 0, false,
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
