package assisted

import "testing"

// TestListClusterHostsLeavesOutConnectivity: the cluster's host list, which
// every waiting installer reads, has the hosts without their connectivity
// reports (assisted's default without with-connectivity); the host itself
// still has its report, and the list keeps the inventories the console
// shows.
func TestListClusterHostsLeavesOutConnectivity(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	for _, id := range hosts {
		if e.host(ie, id).Connectivity == "" {
			t.Fatalf("host %s has no connectivity report to leave out", id)
		}
	}
	list, err := e.s.ListClusterHosts(clusterID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(hosts) {
		t.Fatalf("ListClusterHosts gave %d hosts, want %d", len(list), len(hosts))
	}
	for _, h := range list {
		if h.Connectivity != "" || h.Inventory == "" {
			t.Errorf("listed host %s: connectivity %d bytes, inventory %d bytes; want none and some", h.ID, len(h.Connectivity), len(h.Inventory))
		}
	}
	if e.host(ie, hosts[0]).Connectivity == "" {
		t.Error("listing the hosts emptied a host's own report")
	}
}
