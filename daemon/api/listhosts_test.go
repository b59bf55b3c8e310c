package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/wire"
)

// TestListClusterHostsQueryParams: the route reads assisted's query
// parameters (role, status, with-inventory, with-connectivity) and refuses
// values they cannot take.
func TestListClusterHostsQueryParams(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	path := f.path(api.Base + "/clusters/{cluster_id}/hosts")
	count := func(query string) int {
		t.Helper()
		r := h.user(t, "GET", path+query, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET hosts%s: %d %s", query, r.status, r.body)
		}
		var hs []*wire.Host
		if err := json.Unmarshal(r.body, &hs); err != nil {
			t.Fatalf("GET hosts%s: %v", query, err)
		}
		return len(hs)
	}
	// The fixture's host registered only: discovering, auto-assign.
	for _, c := range []struct {
		query string
		want  int
	}{
		{"", 1},
		{"?role=auto-assign&status=discovering", 1},
		{"?role=master", 0},
		{"?status=known", 0},
		{"?with-inventory=true&with-connectivity=false", 1},
	} {
		if got := count(c.query); got != c.want {
			t.Errorf("GET hosts%s: %d hosts, want %d", c.query, got, c.want)
		}
	}
	for _, q := range []string{"?role=bootstrap", "?with-inventory=maybe", "?with-connectivity=2"} {
		if r := h.user(t, "GET", path+q, ""); r.status != http.StatusBadRequest {
			t.Errorf("GET hosts%s: %d, want 400", q, r.status)
		}
	}
	// The client sends the same parameters.
	hs, err := h.client.ListClusterHostsQuery(t.Context(), f.clusterID, wire.HostsQuery{Role: wire.HostRoleMaster})
	if err != nil || len(hs) != 0 {
		t.Errorf("ListClusterHostsQuery(role master) = %d hosts, %v; want none", len(hs), err)
	}
	hs, err = h.client.ListClusterHostsQuery(t.Context(), f.clusterID, wire.HostsQuery{Status: wire.HostStatusDiscovering, WithInventory: true, WithConnectivity: true})
	if err != nil || len(hs) != 1 {
		t.Errorf("ListClusterHostsQuery(discovering) = %d hosts, %v; want 1", len(hs), err)
	}
}

// TestGetClusterExcludeHosts: v2GetCluster?exclude-hosts=true answers the
// cluster without its hosts (their counts stay), the client asks for it
// so, and a value that is no boolean is refused.
func TestGetClusterExcludeHosts(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	path := f.path(api.Base + "/clusters/{cluster_id}")
	hosts := func(query string) int {
		t.Helper()
		r := h.user(t, "GET", path+query, "")
		if r.status != http.StatusOK {
			t.Fatalf("GET cluster%s: %d %s", query, r.status, r.body)
		}
		var c wire.Cluster
		if err := json.Unmarshal(r.body, &c); err != nil {
			t.Fatalf("GET cluster%s: %v", query, err)
		}
		return len(c.Hosts)
	}
	if n := hosts(""); n != 1 {
		t.Errorf("GET cluster: %d hosts, want 1", n)
	}
	if n := hosts("?exclude-hosts=false"); n != 1 {
		t.Errorf("GET cluster?exclude-hosts=false: %d hosts, want 1", n)
	}
	if n := hosts("?exclude-hosts=true"); n != 0 {
		t.Errorf("GET cluster?exclude-hosts=true: %d hosts, want none", n)
	}
	if r := h.user(t, "GET", path+"?exclude-hosts=yes please", ""); r.status != http.StatusBadRequest {
		t.Errorf("GET cluster?exclude-hosts=yes please: %d, want 400", r.status)
	}
	c, err := h.client.GetClusterExcludingHosts(t.Context(), f.clusterID)
	if err != nil || len(c.Hosts) != 0 || c.TotalHostCount != 1 {
		t.Errorf("GetClusterExcludingHosts = %d hosts, total_host_count %d, %v; want none, 1", len(c.Hosts), c.TotalHostCount, err)
	}
}
