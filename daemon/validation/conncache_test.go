package validation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

func connText(t *testing.T, peers ...string) string {
	t.Helper()
	var r v2.ConnectivityReport
	for _, p := range peers {
		r.RemoteHosts = append(r.RemoteHosts, &v2.ConnectivityRemoteHost{HostID: p})
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func peerIDs(r *ConnReport) []string {
	var out []string
	for _, p := range r.peers {
		out = append(out, names.str(p.id))
	}
	return out
}

func TestParseConnectivityCaches(t *testing.T) {
	a := connText(t, "peer-1")
	r1 := parseConnectivity("cache-host-1", a)
	if got := peerIDs(r1); r1.Broken() || len(got) != 1 || got[0] != "peer-1" {
		t.Fatalf("parseConnectivity = %v (broken %v), want peer-1", got, r1.Broken())
	}
	// The same text again, even another copy of it: the same report.
	if r2 := parseConnectivity("cache-host-1", strings.Clone(a)); r2 != r1 {
		t.Error("the same text was parsed again")
	}
	// A new report of the host replaces the old.
	r3 := parseConnectivity("cache-host-1", connText(t, "peer-2"))
	if got := peerIDs(r3); r3 == r1 || len(got) != 1 || got[0] != "peer-2" {
		t.Errorf("a changed report gave %v; want peer-2 parsed anew", got)
	}
	// Another host with the first text has its own entry.
	if r4 := parseConnectivity("cache-host-2", a); r4 == r1 || r4 == r3 {
		t.Error("two hosts share an entry")
	}
	if r := parseConnectivity("cache-host-3", "{not json"); !r.Broken() {
		t.Error("parseConnectivity of bad JSON is not broken")
	}
}

func TestParseConnectivityStaysWithinBudget(t *testing.T) {
	defer func(b int) { connCacheBytes = b }(connCacheBytes)
	connCacheBytes = 4 << 20
	peers := make([]string, 2000)
	for i := range peers {
		peers[i] = fmt.Sprintf("peer-%05d-%s", i, strings.Repeat("x", 200))
	}
	text := connText(t, peers...) // about 450 KiB
	for i := range 2 * connCacheBytes / len(text) {
		if r := parseConnectivity(fmt.Sprintf("budget-host-%d", i), text); r.Broken() {
			t.Fatal("the report does not parse")
		}
	}
	connCache.Lock()
	defer connCache.Unlock()
	sum := 0
	for _, e := range connCache.hosts {
		sum += len(e.text)
	}
	if sum != connCache.bytes || sum > connCacheBytes {
		t.Errorf("cache holds %d bytes of text (counted %d), want at most %d", sum, connCache.bytes, connCacheBytes)
	}
}

func TestParseMajorityGroupsCaches(t *testing.T) {
	a := `{"majority_groups":{"IPv4":["h1","h2","h3"]},"l3_connected_addresses":{"h1":["10.0.0.1"]}}`
	g1, err := parseMajorityGroups(a)
	if err != nil || len(g1.MajorityGroups["IPv4"]) != 3 || g1.L3ConnectedAddresses["h1"][0] != "10.0.0.1" {
		t.Fatalf("parseMajorityGroups = %+v, %v", g1, err)
	}
	if g2, _ := parseMajorityGroups(strings.Clone(a)); g2 != g1 {
		t.Error("the same groups were parsed again")
	}
	g3, err := parseMajorityGroups(`{"majority_groups":{"IPv4":["h1"]}}`)
	if err != nil || g3 == g1 || len(g3.MajorityGroups["IPv4"]) != 1 {
		t.Errorf("changed groups gave %+v, %v; want them parsed anew", g3, err)
	}
	if _, err := parseMajorityGroups("{"); err == nil {
		t.Error("parseMajorityGroups of bad JSON succeeded")
	}
}

func TestAggregateMemo(t *testing.T) {
	var m aggregateMemo[*int]
	calls := 0
	compute := func() *int { calls++; n := calls; return &n }
	inv := &v2.Inventory{Hostname: "a"}
	hosts := []HostEntry{{Host: &v2.Host{ID: "h1", Connectivity: "r1"}, Inventory: inv}, {Host: &v2.Host{ID: "h2"}}}
	first := m.get(hosts, 3, compute)
	// Equal inputs, in new values: the last result.
	same := []HostEntry{{Host: &v2.Host{ID: "h1", Connectivity: strings.Clone("r1"), Role: v2.HostRoleWorker}, Inventory: inv}, {Host: &v2.Host{ID: "h2"}}}
	if got := m.get(same, 3, compute); got != first || calls != 1 {
		t.Fatalf("equal inputs computed again (%d calls)", calls)
	}
	changes := []struct {
		name  string
		hosts []HostEntry
		extra int64
	}{
		{"a new report", []HostEntry{{Host: &v2.Host{ID: "h1", Connectivity: "r2"}, Inventory: inv}, {Host: &v2.Host{ID: "h2"}}}, 3},
		{"a new inventory", []HostEntry{{Host: &v2.Host{ID: "h1", Connectivity: "r2"}, Inventory: &v2.Inventory{Hostname: "a"}}, {Host: &v2.Host{ID: "h2"}}}, 3},
		{"a host less", []HostEntry{{Host: &v2.Host{ID: "h2"}}}, 3},
		{"another setting", []HostEntry{{Host: &v2.Host{ID: "h2"}}}, 1},
	}
	for i, c := range changes {
		if m.get(c.hosts, c.extra, compute); calls != i+2 {
			t.Errorf("%s: %d computations, want %d", c.name, calls, i+2)
		}
	}
}
