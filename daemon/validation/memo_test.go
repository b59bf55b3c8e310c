package validation

import (
	"encoding/json"
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
		out = append(out, r.in.names.str(p.id))
	}
	return out
}

// TestParseConnectivity: a stored report's text is compacted with the
// interner given; bad text gives a broken report.
func TestParseConnectivity(t *testing.T) {
	v := &Validator{}
	in := NewInterner()
	r := v.ParseConnectivity(in, connText(t, "peer-1"))
	if got := peerIDs(r); r.Broken() || len(got) != 1 || got[0] != "peer-1" || r.in != in {
		t.Fatalf("report = %v (broken %v), want peer-1 on the interner given", got, r.Broken())
	}
	if r := v.ParseConnectivity(in, "{not json"); !r.Broken() {
		t.Error("the report of bad JSON is not broken")
	}
}

// TestReadMajorityGroups: a cluster's stored groups decode; an empty text
// is none yet, bad text unreadable, null groups that list none.
func TestReadMajorityGroups(t *testing.T) {
	a := `{"majority_groups":{"IPv4":["h1","h2","h3"]},"l3_connected_addresses":{"h1":["10.0.0.1"]}}`
	g := ReadMajorityGroups(a)
	if !g.Set || g.Unreadable || len(g.Value.MajorityGroups["IPv4"]) != 3 || g.Value.L3ConnectedAddresses["h1"][0] != "10.0.0.1" {
		t.Fatalf("ReadMajorityGroups = %+v", g)
	}
	if g := ReadMajorityGroups(""); g.Set {
		t.Errorf(`ReadMajorityGroups("") = %+v, want not set`, g)
	}
	if g := ReadMajorityGroups("{"); !g.Unreadable {
		t.Errorf("ReadMajorityGroups of bad JSON = %+v, want unreadable", g)
	}
	if g := ReadMajorityGroups("null"); !g.Set || g.Unreadable || g.Value == nil || len(g.Value.MajorityGroups) != 0 {
		t.Errorf("ReadMajorityGroups(null) = %+v; want groups that list none", g)
	}
}

func TestAggregateMemo(t *testing.T) {
	var m aggregateMemo[*int]
	calls := 0
	compute := func() *int { calls++; n := calls; return &n }
	inv := &wire.Inventory{Hostname: "a"}
	r1, r2 := parseConnReport(testInterner, connText(t, "p1"), keepAll), parseConnReport(testInterner, connText(t, "p2"), keepAll)
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
