package tui

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/google/go-cmp/cmp"
)

// healthyNet is a host with a bond of two NICs, a VLAN on the bond
// carrying the default routes, and a NIC on a storage network.
func healthyNet() NetState {
	p := netip.MustParsePrefix
	a := netip.MustParseAddr
	return NetState{
		Hostname: "master-0.ostest.test.metalkube.org",
		Interfaces: []NetInterface{
			{Name: "lo", Type: "loopback", MTU: 65536, State: "up", Addrs: []netip.Prefix{p("127.0.0.1/8"), p("::1/128")}},
			{Name: "eth1", Type: "ethernet", MAC: "52:54:00:aa:bb:01", MTU: 9000, State: "up", Addrs: []netip.Prefix{p("172.22.0.10/24")}},
			{Name: "bond0", Type: "bond", MAC: "52:54:00:aa:bb:02", MTU: 1500, State: "up"},
			{Name: "bond0.42", Type: "vlan", MAC: "52:54:00:aa:bb:02", MTU: 1500, State: "up",
				Addrs: []netip.Prefix{p("192.168.111.20/24"), p("fd2e:6f44:5dd8:c956::14/64"), p("fe80::5054:ff:feaa:bb02/64")}},
			{Name: "eth0", Type: "ethernet", MAC: "52:54:00:aa:bb:03", MTU: 1500, State: "down"},
		},
		Routes: []NetRoute{
			{Gateway: a("192.168.111.1"), Interface: "bond0.42", Metric: 300},
			{Destination: p("::/0"), Gateway: a("fd2e:6f44:5dd8:c956::1"), Interface: "bond0.42", Metric: 300},
			{Destination: p("192.168.111.0/24"), Interface: "bond0.42", Metric: 300},
			{Destination: p("172.22.0.0/24"), Interface: "eth1", Metric: 100},
		},
		DNS: NetDNS{Servers: []string{"192.168.111.1", "fd2e:6f44:5dd8:c956::1"}, Search: []string{"ostest.test.metalkube.org"}},
	}
}

func TestNetTree(t *testing.T) {
	leaf := func(text string) treeItem { return treeItem{Text: text} }
	node := func(text string, children ...treeItem) treeItem { return treeItem{Text: text, Children: children} }
	a := netip.MustParseAddr
	for _, tc := range []struct {
		name string
		st   NetState
		want treeItem
	}{
		{
			name: "empty",
			st:   NetState{},
			want: node("(hostname unknown)",
				node("Interfaces", leaf("none")),
				node("Routes", leaf("none")),
				node("DNS", leaf("no servers"))),
		},
		{
			name: "the machine's, on a sandbox host",
			st:   NetState{Hostname: "master-1", Shared: "a sandbox host runs on the machine's loopback"},
			want: node("master-1",
				node("Interfaces: the machine's, not a host's own", leaf("why: a sandbox host runs on the machine's loopback"), leaf("none")),
				node("Routes: the machine's", leaf("none")),
				node("DNS", leaf("no servers"))),
		},
		{
			name: "default route's interface first, by the route",
			st: NetState{
				Hostname: "h",
				Interfaces: []NetInterface{
					{Name: "eth0", Type: "ethernet", State: "up"},
					{Name: "eth1", Type: "ethernet", MAC: "52:54:00:00:00:01", MTU: 1500, State: "up",
						Addrs: []netip.Prefix{netip.MustParsePrefix("10.0.0.5/24"), netip.MustParsePrefix("2001:db8::5/64")}},
				},
				Routes: []NetRoute{
					{Destination: netip.MustParsePrefix("0.0.0.0/0"), Gateway: a("10.0.0.1"), Interface: "eth1", Metric: 100},
					{Destination: netip.MustParsePrefix("10.0.0.0/24"), Interface: "eth1"},
				},
				DNS: NetDNS{Search: []string{"example.com"}},
			},
			want: node("h",
				node("Interfaces",
					node("eth1 (ethernet), default route",
						leaf("MAC: 52:54:00:00:00:01"), leaf("MTU: 1500"), leaf("State: up"),
						node("IPv4 Addresses", leaf("10.0.0.5/24")),
						node("IPv6 Addresses", leaf("2001:db8::5/64"))),
					node("eth0 (ethernet)", leaf("State: up"), leaf("No addresses"))),
				node("Routes",
					node("default", leaf("Next hop address: 10.0.0.1"), leaf("Next hop interface: eth1"), leaf("Metric: 100")),
					node("10.0.0.0/24", leaf("Next hop address: on-link"), leaf("Next hop interface: eth1"))),
				node("DNS", node("Search domains", leaf("example.com")))),
		},
		{
			name: "default marked by the reader, IPv6 default route",
			st: NetState{
				Hostname:   "h",
				Interfaces: []NetInterface{{Name: "a"}, {Name: "b", Default: true}},
				Routes:     []NetRoute{{Gateway: a("2001:db8::1"), Interface: "b"}},
				DNS:        NetDNS{Servers: []string{"2001:db8::53"}},
			},
			want: node("h",
				node("Interfaces",
					node("b, default route", leaf("No addresses")),
					node("a", leaf("No addresses"))),
				node("Routes",
					node("default (IPv6)", leaf("Next hop address: 2001:db8::1"), leaf("Next hop interface: b"))),
				node("DNS", node("Servers", leaf("2001:db8::53")))),
		},
		{
			name: "loopback last",
			st: NetState{
				Hostname:   "h",
				Interfaces: []NetInterface{{Name: "lo", Type: "loopback"}, {Name: "b"}, {Name: "a", Default: true}, {Name: "c"}},
			},
			want: node("h",
				node("Interfaces",
					node("a, default route", leaf("No addresses")),
					node("b", leaf("No addresses")),
					node("c", leaf("No addresses")),
					node("lo (loopback)", leaf("No addresses"))),
				node("Routes", leaf("none")),
				node("DNS", leaf("no servers"))),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, netTree(tc.st)); diff != "" {
				t.Errorf("netTree (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNetStatusLine(t *testing.T) {
	for _, tc := range []struct {
		reading    bool
		err        error
		configured bool
		want       string
	}{
		{false, nil, true, ""},
		{true, nil, true, "… Reading the network state"},
		{false, errors.New("nmstatectl: exit status 1\nlong trace"), true, "✖ Could not read the network state: nmstatectl: exit status 1"},
		{false, nil, false, "✖ This console has no way to read the network state."},
	} {
		if got := netStatusLine(tc.reading, tc.err, tc.configured); got != tc.want {
			t.Errorf("netStatusLine(%v, %v, %v) = %q, want %q", tc.reading, tc.err, tc.configured, got, tc.want)
		}
	}
}

func TestNetworkGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   NetState
		err  error
		good bool // a good read came before
	}{
		{name: "healthy", st: healthyNet()},
		{name: "failing", err: errors.New("read links: netlink receive: operation not permitted")},
		{name: "stale", st: healthyNet(), err: errors.New("read routes: context deadline exceeded"), good: true},
		// A sandbox host: what it reads is the machine's network.
		{name: "shared", st: func() NetState {
			st := healthyNet()
			st.Shared = "a sandbox host runs on the machine's loopback"
			return st
		}()},
	} {
		for _, s := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", tc.name, s.w, s.h), func(t *testing.T) {
				a := newTestApp(t, Config{ConfigureNetwork: func() error { return nil },
					NetState: func(context.Context) (NetState, error) { return NetState{}, nil }})
				p := a.network
				p.requested = true
				if tc.good {
					p.setResult(tc.st, nil)
				}
				p.setResult(tc.st, tc.err)
				a.replacePage(pageNetwork)
				golden(t, fmt.Sprintf("network-%s-%dx%d", tc.name, s.w, s.h), drawText(t, a.pages, s.w, s.h))
			})
		}
	}
}

func TestNetworkKeys(t *testing.T) {
	reads := make(chan struct{}, 10)
	cfg := Config{NetState: func(context.Context) (NetState, error) {
		reads <- struct{}{}
		return healthyNet(), nil
	}}
	configured := 0
	cfg.ConfigureNetwork = func() error { configured++; return errors.New("nmtui: exit status 1") }
	// No checks, no dashboard, no rendezvous: the console opens on the
	// network page and reads the network when first drawn.
	r := runApp(t, cfg, 80, 24)
	defer r.quit(t)
	r.waitScreen(t, "master-0.ostest.test.metalkube.org", "bond0.42 (vlan), default route", "IPv6 Addresses")
	waitRead(t, reads)

	// Down to "Interfaces", Enter collapses it.
	r.key(tcell.KeyDown, 0)
	r.key(tcell.KeyEnter, 0)
	screen := r.waitScreen(t, "Interfaces (+)")
	if strings.Contains(screen, "bond0.42 (vlan)") {
		t.Errorf("Interfaces collapsed still shows its children:\n%s", screen)
	}
	r.key(tcell.KeyEnter, 0)
	r.waitScreen(t, "bond0.42 (vlan), default route")

	// c runs ConfigureNetwork; its error shows in a dialog; the network
	// is read again.
	r.key(tcell.KeyRune, 'c')
	r.waitScreen(t, "Configuring the network", "nmtui: exit", "<Ok>")
	r.key(tcell.KeyEnter, 0)
	r.waitScreen(t, "bond0.42 (vlan), default route")
	var n int
	r.app.QueueUpdate(func() { n = configured })
	if n != 1 {
		t.Errorf("ConfigureNetwork ran %d times, want 1", n)
	}
	waitRead(t, reads)

	// q quits.
	r.key(tcell.KeyRune, 'q')
	r.waitDone(t)
}

// waitRead waits for the next read of the network state.
func waitRead(t *testing.T, reads <-chan struct{}) {
	t.Helper()
	select {
	case <-reads:
	case <-time.After(10 * time.Second):
		t.Fatal("the network state was not read")
	}
}
