package tui

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
)

// dashboardCases are the snapshots every dashboard golden is drawn for,
// with the host whose detail page is dumped.
var dashboardCases = []struct {
	name string
	snap func() Snapshot
	host string
}{
	{"healthy", healthySnapshot, idMaster0},
	{"failing", failingSnapshot, idMaster1},
	{"installing", installingSnapshot, idMaster2},
	{"reconnecting", reconnectingSnapshot, idMaster1},
	{"failed", failedSnapshot, idMaster0},
	{"installed", installedSnapshot, idMaster1},
}

func TestDashboardGolden(t *testing.T) {
	for _, tc := range dashboardCases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", tc.name, sz.w, sz.h), func(t *testing.T) {
				a := New(Config{Source: SourceFunc(nil)})
				p := a.dashboard
				p.apply(tc.snap())
				golden(t, fmt.Sprintf("dashboard-%s-%dx%d", tc.name, sz.w, sz.h), drawText(t, p.root, sz.w, sz.h))
				p.showHost(tc.host)
				golden(t, fmt.Sprintf("host-%s-%dx%d", tc.name, sz.w, sz.h), drawText(t, p.hostRoot, sz.w, sz.h))
			})
		}
	}
}

// TestEventsGolden: the event list in full after the failure.
func TestEventsGolden(t *testing.T) {
	for _, sz := range sizes {
		a := New(Config{Source: SourceFunc(nil)})
		a.dashboard.apply(failedSnapshot())
		golden(t, fmt.Sprintf("events-failed-%dx%d", sz.w, sz.h), drawText(t, a.dashboard.evRoot, sz.w, sz.h))
	}
}

// TestDashboardMonoGolden: on a serial line the bars are ASCII and the
// states still read from their symbols.
func TestDashboardMonoGolden(t *testing.T) {
	a := New(Config{Source: SourceFunc(nil), Mono: true})
	a.dashboard.apply(installingSnapshot())
	golden(t, "dashboard-installing-mono-80x24", drawText(t, a.dashboard.root, 80, 24))
}

// TestDashboardBeforeData: before the first snapshot the page says it is
// connecting, and a service without a cluster says what it waits for.
func TestDashboardBeforeData(t *testing.T) {
	a := New(Config{Source: SourceFunc(nil)})
	p := a.dashboard
	if got := drawText(t, p.root, 80, 24); !strings.Contains(got, "Connecting to node zero…") || strings.Contains(got, "»") {
		t.Errorf("dashboard before any snapshot:\n%s", got)
	}
	p.apply(Snapshot{At: fixtureTime})
	got := drawText(t, p.root, 80, 24)
	for _, want := range []string{"No cluster registered yet", "» Waiting for node zero's service to register the cluster", "Hosts: 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("dashboard without a cluster lacks %q:\n%s", want, got)
		}
	}
}

// TestDashboardNeverConnected: while node zero was never reached the page
// says why and never "No cluster registered yet", which nobody knows.
func TestDashboardNeverConnected(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"nothing to connect with", &SetupError{Reason: "no user token for http://192.168.111.80:8090: give --token-file or set USER_AUTH_TOKEN"},
			"» Cannot ask node zero yet: no user token for http://192.168.111.80:8090: give"},
		{"refused", &FetchError{URL: "http://192.168.111.80:8090", Err: syscall.ECONNREFUSED},
			"» Reconnecting to node zero at http://192.168.111.80:8090 (connection refused)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Config{Source: SourceFunc(nil)})
			a.dashboard.apply(Snapshot{Err: tc.err})
			got := drawText(t, a.dashboard.root, 80, 24)
			if !strings.Contains(got, "Not connected to node zero") || !strings.Contains(got, tc.want) || strings.Contains(got, "No cluster") {
				t.Errorf("dashboard never connected shows:\n%s\nwant \"Not connected to node zero\" and %q, no \"No cluster\"", got, tc.want)
			}
		})
	}
}
