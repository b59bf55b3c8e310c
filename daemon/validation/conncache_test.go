package validation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

func connText(t *testing.T, peers ...string) string {
	t.Helper()
	var r wire.ConnectivityReport
	for _, p := range peers {
		r.RemoteHosts = append(r.RemoteHosts, &wire.ConnectivityRemoteHost{HostID: p})
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

// TestReportFromText: a host given with its report as text (no Conn) has
// it compacted; bad text gives a broken report.
func TestReportFromText(t *testing.T) {
	r := HostEntry{Host: &wire.Host{ID: "h1", Connectivity: connText(t, "peer-1")}}.report()
	if got := peerIDs(r); r.Broken() || len(got) != 1 || got[0] != "peer-1" {
		t.Fatalf("report = %v (broken %v), want peer-1", got, r.Broken())
	}
	if r := (HostEntry{Host: &wire.Host{ID: "h1", Connectivity: "{not json"}}).report(); !r.Broken() {
		t.Error("the report of bad JSON is not broken")
	}
	if r := (HostEntry{Host: &wire.Host{ID: "h1"}}).report(); r != nil {
		t.Error("a host without a report has one")
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
	if g, err := parseMajorityGroups("null"); err != nil || g == nil || len(g.MajorityGroups) != 0 {
		t.Errorf("parseMajorityGroups(null) = %+v, %v; want groups that list none", g, err)
	}
}

func TestAggregateMemo(t *testing.T) {
	var m aggregateMemo[*int]
	calls := 0
	compute := func() *int { calls++; n := calls; return &n }
	inv := &wire.Inventory{Hostname: "a"}
	r1, r2 := parseConnReport(connText(t, "p1"), keepAll), parseConnReport(connText(t, "p2"), keepAll)
	hosts := []HostEntry{{Host: &wire.Host{ID: "h1"}, Conn: r1, Inventory: inv}, {Host: &wire.Host{ID: "h2"}}}
	first := m.get(hosts, 3, compute)
	// Equal inputs, in new values: the last result.
	same := []HostEntry{{Host: &wire.Host{ID: "h1", Role: wire.HostRoleWorker}, Conn: r1, Inventory: inv}, {Host: &wire.Host{ID: "h2"}}}
	if got := m.get(same, 3, compute); got != first || calls != 1 {
		t.Fatalf("equal inputs computed again (%d calls)", calls)
	}
	changes := []struct {
		name  string
		hosts []HostEntry
		extra int64
	}{
		{"a new report", []HostEntry{{Host: &wire.Host{ID: "h1"}, Conn: r2, Inventory: inv}, {Host: &wire.Host{ID: "h2"}}}, 3},
		{"a new inventory", []HostEntry{{Host: &wire.Host{ID: "h1"}, Conn: r2, Inventory: &wire.Inventory{Hostname: "a"}}, {Host: &wire.Host{ID: "h2"}}}, 3},
		{"a host less", []HostEntry{{Host: &wire.Host{ID: "h2"}}}, 3},
		{"another setting", []HostEntry{{Host: &wire.Host{ID: "h2"}}}, 1},
	}
	for i, c := range changes {
		if m.get(c.hosts, c.extra, compute); calls != i+2 {
			t.Errorf("%s: %d computations, want %d", c.name, calls, i+2)
		}
	}
}
