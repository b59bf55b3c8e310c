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

func TestParseConnectivityCaches(t *testing.T) {
	a := connText(t, "peer-1")
	r1, err := parseConnectivity("cache-host-1", a)
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.RemoteHosts) != 1 || r1.RemoteHosts[0].HostID != "peer-1" {
		t.Fatalf("parseConnectivity = %+v, want peer-1", r1)
	}
	// The same text again, even another copy of it: the same report.
	if r2, _ := parseConnectivity("cache-host-1", strings.Clone(a)); r2 != r1 {
		t.Error("the same text was parsed again")
	}
	// A new report of the host replaces the old.
	r3, err := parseConnectivity("cache-host-1", connText(t, "peer-2"))
	if err != nil || r3 == r1 || r3.RemoteHosts[0].HostID != "peer-2" {
		t.Errorf("a changed report gave %+v, %v; want peer-2 parsed anew", r3, err)
	}
	// Another host with the first text has its own entry.
	if r4, _ := parseConnectivity("cache-host-2", a); r4 == r1 || r4 == r3 {
		t.Error("two hosts share an entry")
	}
	if _, err := parseConnectivity("cache-host-3", "{not json"); err == nil {
		t.Error("parseConnectivity of bad JSON succeeded")
	}
	if _, err := parseConnectivity("cache-host-3", "{not json"); err == nil {
		t.Error("bad JSON succeeded the second time: was an error cached?")
	}
}

func TestParseConnectivityStaysWithinBudget(t *testing.T) {
	peers := make([]string, 2000)
	for i := range peers {
		peers[i] = fmt.Sprintf("peer-%05d-%s", i, strings.Repeat("x", 200))
	}
	text := connText(t, peers...) // about 450 KiB
	for i := range 2 * connCacheBytes / len(text) {
		if _, err := parseConnectivity(fmt.Sprintf("budget-host-%d", i), text); err != nil {
			t.Fatal(err)
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
