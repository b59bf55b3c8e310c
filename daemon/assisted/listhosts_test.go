package assisted

import (
	"strings"
	"testing"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// TestListClusterHostsQuery: the cluster's host list follows assisted's
// query parameters. Without with-inventory and with-connectivity those
// documents are left out (and free_addresses always); with them, they are
// the host's own, as GetHost shows them; role and status filter.
func TestListClusterHostsQuery(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	full := map[string]*wire.Host{}
	for _, id := range hosts {
		h := e.host(ie, id)
		if h.Connectivity == "" || h.Inventory == "" {
			t.Fatalf("host %s has no connectivity report or inventory to list", id)
		}
		full[id] = h
	}
	list := func(q HostQuery) []*wire.Host {
		t.Helper()
		hs, err := e.s.ListClusterHosts(clusterID, q)
		if err != nil {
			t.Fatalf("ListClusterHosts(%+v): %v", q, err)
		}
		return hs
	}
	for _, h := range list(HostQuery{}) {
		if h.Connectivity != "" || h.Inventory != "" || h.FreeAddresses != "" {
			t.Errorf("default list: host %s with connectivity %d, inventory %d, free addresses %d bytes; want none",
				h.ID, len(h.Connectivity), len(h.Inventory), len(h.FreeAddresses))
		}
	}
	for _, h := range list(HostQuery{WithInventory: true}) {
		if h.Connectivity != "" || h.Inventory != full[h.ID].Inventory {
			t.Errorf("with-inventory: host %s with connectivity %d bytes, inventory equal %v; want none and the host's",
				h.ID, len(h.Connectivity), h.Inventory == full[h.ID].Inventory)
		}
	}
	for _, h := range list(HostQuery{WithConnectivity: true}) {
		if h.Connectivity != full[h.ID].Connectivity || h.Inventory != "" {
			t.Errorf("with-connectivity: host %s with its report %v, inventory %d bytes; want the report and none",
				h.ID, h.Connectivity == full[h.ID].Connectivity, len(h.Inventory))
		}
	}
	role := full[hosts[0]].Role
	for _, c := range []struct {
		q    HostQuery
		want int
	}{
		{HostQuery{Status: wire.HostStatusKnown}, len(hosts)},
		{HostQuery{Status: wire.HostStatusInsufficient}, 0},
		{HostQuery{Role: role}, len(hosts)},
		{HostQuery{Role: wire.HostRoleArbiter}, 0},
	} {
		if got := list(c.q); len(got) != c.want {
			t.Errorf("ListClusterHosts(%+v): %d hosts, want %d", c.q, len(got), c.want)
		}
	}
}

// TestConnectivityReportsInTheirRows: the service keeps a report's text in
// the store only (its own row, not the host's doc) and reads it back for
// GetHost, also after a restart.
func TestConnectivityReportsInTheirRows(t *testing.T) {
	e := newEnv(t)
	_, ie, hosts := e.readyCluster()
	want := e.host(ie, hosts[0]).Connectivity
	err := e.st.View(e.ctx, func(tx *store.Tx) error {
		row, err := tx.Host(ie, hosts[0])
		if err != nil {
			return err
		}
		if strings.Contains(string(row.Doc), `"connectivity"`) {
			t.Errorf("host doc carries a report: %s", row.Doc)
		}
		got, err := tx.HostConnectivityReport(ie, hosts[0])
		if got != want {
			t.Errorf("stored report %q, want GetHost's %q", got, want)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.s.mu.RLock()
	conn := e.s.hosts[hostKey{ie, hosts[0]}].conn
	e.s.mu.RUnlock()
	if conn == nil || conn.Peers() != len(hosts)-1 {
		t.Errorf("compacted report lists %d peers, want %d", conn.Peers(), len(hosts)-1)
	}
	e.reopen()
	if got := e.host(ie, hosts[0]).Connectivity; got != want {
		t.Errorf("report after a restart %q, want %q", got, want)
	}
}
