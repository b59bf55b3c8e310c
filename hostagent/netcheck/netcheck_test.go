package netcheck

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

func hostByID(t *testing.T, r *wire.ConnectivityReport, id string) *wire.ConnectivityRemoteHost {
	t.Helper()
	for _, h := range r.RemoteHosts {
		if h.HostID == id {
			return h
		}
	}
	t.Fatalf("report has no host %s: %+v", id, r)
	return nil
}

// checkReachable asserts that rh is the report of a healthy host h.
func checkReachable(t *testing.T, rh *wire.ConnectivityRemoteHost, h *testbed.Host, nic string) {
	t.Helper()
	if len(rh.L3Connectivity) != 1 {
		t.Fatalf("host %s: L3 = %+v, want one entry", h.Name, rh.L3Connectivity)
	}
	l3 := rh.L3Connectivity[0]
	if !l3.Successful || l3.PacketLossPercentage != 0 || l3.AverageRTTMs <= 0 || l3.OutgoingNic != nic || l3.RemoteIPAddress != h.Addr.Addr().String() {
		t.Errorf("host %s: L3 = %+v, want successful, 0%% loss, RTT > 0 via %s", h.Name, l3, nic)
	}
	if len(rh.L2Connectivity) != 1 {
		t.Fatalf("host %s: L2 = %+v, want one entry", h.Name, rh.L2Connectivity)
	}
	l2 := rh.L2Connectivity[0]
	if !l2.Successful || l2.RemoteMAC != h.MAC.String() || l2.OutgoingNic != nic {
		t.Errorf("host %s: L2 = %+v, want successful from MAC %s via %s", h.Name, l2, h.MAC, nic)
	}
	if len(rh.MTUReport) != 0 {
		t.Errorf("host %s: MTU report %+v at MTU 1500, want none", h.Name, rh.MTUReport)
	}
}

func TestConnectivityCheck(t *testing.T) {
	bed := newBed(t, "a", "b", "c")
	a, b, c := bed.Hosts[0], bed.Hosts[1], bed.Hosts[2]

	var r wire.ConnectivityReport
	// The default allow-list: the veth counts as a host's cable.
	res := run(t, a, job{Kind: "connectivity", Arg: params(c, b), NilAllow: true}, &r)
	if res.Error != "" {
		t.Fatalf("connectivity from a: %s", res.Error)
	}
	if got := []string{r.RemoteHosts[0].HostID, r.RemoteHosts[1].HostID}; !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("hosts in order %v, want [b c]", got)
	}
	checkReachable(t, hostByID(t, &r, "b"), b, a.NIC)
	checkReachable(t, hostByID(t, &r, "c"), c, a.NIC)
	// 10 echoes and 10 ARP requests per remote address, all on a's NIC.
	if want := map[string]int{a.NIC: 40}; !cmp.Equal(res.Sent, want) || res.ICMP != 20 || res.ARP != 20 {
		t.Errorf("probes sent %v (icmp %d, arp %d), want %v (20 and 20)", res.Sent, res.ICMP, res.ARP, want)
	}

	if err := c.SetLink(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	r = wire.ConnectivityReport{}
	if res := run(t, a, job{Kind: "connectivity", Arg: params(b, c), Interfaces: []string{a.NIC}}, &r); res.Error != "" {
		t.Fatalf("connectivity from a, c cut: %s", res.Error)
	}
	checkReachable(t, hostByID(t, &r, "b"), b, a.NIC)
	rc := hostByID(t, &r, "c")
	want := &wire.ConnectivityRemoteHost{
		HostID: "c",
		L2Connectivity: []*wire.L2Connectivity{{
			OutgoingNic: a.NIC, OutgoingIPAddress: a.Addr.Addr().String(), RemoteIPAddress: c.Addr.Addr().String(),
		}},
		L3Connectivity: []*wire.L3Connectivity{{OutgoingNic: a.NIC, RemoteIPAddress: c.Addr.Addr().String(), PacketLossPercentage: 100}},
	}
	if diff := cmp.Diff(want, rc); diff != "" {
		t.Errorf("host c with its link cut (-want +got):\n%s", diff)
	}
	if err := c.SetLink(t.Context(), true); err != nil {
		t.Fatal(err)
	}
}

func TestConnectivityAddressConflict(t *testing.T) {
	bed := newBed(t, "a", "b", "x")
	a, b, x := bed.Hosts[0], bed.Hosts[1], bed.Hosts[2]
	// x claims b's address too.
	if err := bed.AddAddr(t.Context(), x.NS, x.NIC, netip.PrefixFrom(b.Addr.Addr(), 32)); err != nil {
		t.Fatal(err)
	}
	var r wire.ConnectivityReport
	if res := run(t, a, job{Kind: "connectivity", Arg: params(b), Interfaces: []string{a.NIC}}, &r); res.Error != "" {
		t.Fatalf("connectivity from a: %s", res.Error)
	}
	l2 := hostByID(t, &r, "b").L2Connectivity
	var got []string
	for _, e := range l2 {
		if e.RemoteIPAddress != b.Addr.Addr().String() {
			t.Errorf("L2 entry %+v for another address", e)
		}
		got = append(got, fmt.Sprintf("%s %v", e.RemoteMAC, e.Successful))
	}
	want := []string{b.MAC.String() + " true", x.MAC.String() + " false"}
	slices.Sort(want) // the report is sorted by MAC
	if !slices.Equal(got, want) {
		t.Errorf("L2 entries for %s = %v, want %v", b.Addr.Addr(), got, want)
	}
}

func TestConnectivityMTU(t *testing.T) {
	bed := newBed(t, "a", "b", "c")
	a, b, c := bed.Hosts[0], bed.Hosts[1], bed.Hosts[2]
	for _, h := range bed.Hosts {
		if out, err := bed.SwitchCommand(t.Context(), "ip", "link", "set", "dev", h.Port, "mtu", "9000").CombinedOutput(); err != nil {
			t.Fatalf("set switch port mtu: %v: %s", err, out)
		}
	}
	ip(t, a, "link", "set", "dev", a.NIC, "mtu", "9000")
	ip(t, b, "link", "set", "dev", b.NIC, "mtu", "9000") // c stays at 1500

	var r wire.ConnectivityReport
	if res := run(t, a, job{Kind: "connectivity", Arg: params(b, c), Interfaces: []string{a.NIC}}, &r); res.Error != "" {
		t.Fatalf("connectivity from a: %s", res.Error)
	}
	for _, tc := range []struct {
		h    *testbed.Host
		want bool
	}{{b, true}, {c, false}} {
		want := []*wire.MTUReport{{OutgoingNic: a.NIC, RemoteIPAddress: tc.h.Addr.Addr().String(), MTUSuccessful: tc.want}}
		if diff := cmp.Diff(want, hostByID(t, &r, tc.h.Name).MTUReport); diff != "" {
			t.Errorf("MTU report for %s (-want +got):\n%s", tc.h.Name, diff)
		}
		// Ordinary echoes still pass at 1500.
		if l3 := hostByID(t, &r, tc.h.Name).L3Connectivity; len(l3) != 1 || !l3[0].Successful {
			t.Errorf("L3 for %s = %+v, want successful", tc.h.Name, l3)
		}
	}
}

func TestFreeAddresses(t *testing.T) {
	bed := newBed(t, "a", "b", "c")
	a := bed.Hosts[0]
	var got wire.FreeNetworksAddresses
	res := run(t, a, job{Kind: "free", Arg: wire.MustEncodeEmbedded(wire.FreeAddressesRequest{bed.Prefix.String()}), Interfaces: []string{a.NIC}}, &got)
	if res.Error != "" {
		t.Fatalf("free addresses: %s", res.Error)
	}
	if len(got) != 1 || got[0].Network != bed.Prefix.String() {
		t.Fatalf("free addresses = %+v, want one entry for %s", got, bed.Prefix)
	}
	free := map[string]bool{}
	for _, s := range got[0].FreeAddresses {
		free[s] = true
	}
	used := []netip.Addr{bed.Gateway}
	for _, h := range bed.Hosts {
		used = append(used, h.Addr.Addr())
	}
	for _, u := range used {
		if free[u.String()] {
			t.Errorf("%s is in use but reported free", u)
		}
	}
	if n := len(got[0].FreeAddresses); n != 256-len(used) {
		t.Errorf("%d free addresses, want %d", n, 256-len(used))
	}
	for _, n := range []int{0, 5, 200, 255} {
		if a := addrIn(bed.Prefix, n); !free[a.String()] {
			t.Errorf("%s is unused but not reported free", a)
		}
	}
	if len(res.Sent) != 1 || res.Sent[a.NIC] == 0 {
		t.Errorf("probes sent per interface %v, want only %s", res.Sent, a.NIC)
	}
}

func TestFreeAddressesRefused(t *testing.T) {
	bed := newBed(t, "a")
	a := bed.Hosts[0]
	wide := netip.PrefixFrom(bed.Prefix.Addr(), 21).Masked()
	elsewhere := netip.MustParsePrefix("192.168.254.0/24")
	for _, tc := range []struct {
		name string
		req  wire.FreeAddressesRequest
	}{
		{"wider than /22", wire.FreeAddressesRequest{wide.String()}},
		{"no local interface", wire.FreeAddressesRequest{elsewhere.String()}},
		{"bed network on a disallowed interface", wire.FreeAddressesRequest{bed.Prefix.String()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allow := []string{a.NIC}
			if strings.HasPrefix(tc.name, "bed network") {
				allow = []string{"lo"}
			}
			res := run(t, a, job{Kind: "free", Arg: wire.MustEncodeEmbedded(tc.req), Interfaces: allow}, nil)
			if !res.Refused {
				t.Errorf("free addresses %v = %q, %s, want refused", tc.req, res.Output, res.Error)
			}
			if len(res.Sent) != 0 {
				t.Errorf("probes sent %v, want none", res.Sent)
			}
		})
	}
}

func TestVerifyVIPs(t *testing.T) {
	bed := newBed(t, "a", "b")
	a, b := bed.Hosts[0], bed.Hosts[1]
	unused := wire.IP(addrIn(bed.Prefix, 200).String())
	req := wire.VerifyVIPsRequest{
		{VIP: wire.IP(b.Addr.Addr().String()), VIPType: wire.VIPTypeAPI},
		{VIP: unused, VIPType: wire.VIPTypeIngress},
		{VIP: wire.IP(a.Addr.Addr().String()), VIPType: wire.VIPTypeAPI},
		{VIP: "192.168.254.7", VIPType: wire.VIPTypeIngress},
	}
	var got wire.VerifyVIPsResponse
	res := run(t, a, job{Kind: "vips", Arg: wire.MustEncodeEmbedded(req), NilAllow: true}, &got)
	if res.Error != "" {
		t.Fatalf("verify vips: %s", res.Error)
	}
	want := wire.VerifyVIPsResponse{
		{VIP: req[0].VIP, VIPType: wire.VIPTypeAPI, Verification: wire.VIPVerificationFailed},
		{VIP: unused, VIPType: wire.VIPTypeIngress, Verification: wire.VIPVerificationSucceeded},
		{VIP: req[2].VIP, VIPType: wire.VIPTypeAPI, Verification: wire.VIPVerificationFailed},
		{VIP: "192.168.254.7", VIPType: wire.VIPTypeIngress, Verification: wire.VIPVerificationUnverified},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verify vips (-want +got):\n%s", diff)
	}
	if len(res.Sent) != 1 || res.Sent[a.NIC] == 0 {
		t.Errorf("probes sent per interface %v, want only %s", res.Sent, a.NIC)
	}
}

// TestOnlyAllowedInterfaces gives a host a second interface, a bridge
// (made in the host's own namespace, with one veth port so it has carrier,
// and a more specific subnet of the bed), and checks that nothing is ever
// sent on it: not with the allow-list naming the first NIC only, nor by
// default (a bridge is not an outgoing kind).
func TestOnlyAllowedInterfaces(t *testing.T) {
	bed := newBed(t, "a", "b")
	a, b := bed.Hosts[0], bed.Hosts[1]
	const br = "nzbr0"
	ip(t, a, "link", "add", br, "type", "bridge")
	ip(t, a, "link", "add", "nz0", "type", "veth", "peer", "name", "nz1")
	for _, dev := range []string{br, "nz0", "nz1"} {
		ip(t, a, "link", "set", "dev", dev, "addrgenmode", "none") // no IPv6 chatter
	}
	ip(t, a, "link", "set", "dev", "nz1", "master", br)
	sub := netip.PrefixFrom(addrIn(bed.Prefix, 200), 30)
	if err := bed.AddAddr(t.Context(), a.NS, br, netip.PrefixFrom(addrIn(bed.Prefix, 201), 30)); err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"nz0", "nz1", br} {
		ip(t, a, "link", "set", "dev", dev, "up")
	}
	txPackets := func() int {
		t.Helper()
		out, err := a.Command(t.Context(), "cat", "/sys/class/net/"+br+"/statistics/tx_packets").Output()
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The kernel sends a few packets of its own when a link with an IPv4
	// address comes up (multicast reports); wait until it has finished, so
	// that any packet counted afterwards is ours. (Not a timing assertion:
	// the bound only stops a bed that never settles.)
	before := txPackets()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if !backoff.Sleep(t.Context(), 2*time.Second) {
			t.Fatal(t.Context().Err())
		}
		now := txPackets()
		if now == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s keeps sending packets of its own (%d)", br, now)
		}
		before = now
	}
	inSub := addrIn(bed.Prefix, 202).String()
	for _, allow := range []struct {
		name string
		j    job
	}{{"allow-list", job{Interfaces: []string{a.NIC}}}, {"default", job{NilAllow: true}}} {
		t.Run(allow.name, func(t *testing.T) {
			j := allow.j
			j.Kind, j.Arg = "free", wire.MustEncodeEmbedded(wire.FreeAddressesRequest{sub.Masked().String()})
			if res := run(t, a, j, nil); !res.Refused || len(res.Sent) != 0 {
				t.Errorf("free addresses in %s (bridge only): refused %v, sent %v; want refused, nothing sent", sub, res.Refused, res.Sent)
			}
			j.Kind, j.Arg = "vips", wire.MustEncodeEmbedded(wire.VerifyVIPsRequest{{VIP: wire.IP(inSub), VIPType: wire.VIPTypeAPI}})
			if res := run(t, a, j, nil); res.Error != "" || len(res.Sent) != 1 || res.Sent[a.NIC] == 0 {
				t.Errorf("verify %s: %s, sent %v; want sent on %s only", inSub, res.Error, res.Sent, a.NIC)
			}
			j.Kind, j.Arg = "connectivity", params(b)
			if res := run(t, a, j, nil); res.Error != "" || len(res.Sent) != 1 || res.Sent[a.NIC] == 0 {
				t.Errorf("connectivity: %s, sent %v; want sent on %s only", res.Error, res.Sent, a.NIC)
			}
		})
	}
	if after := txPackets(); after != before {
		t.Errorf("%s sent %d packets, want 0", br, after-before)
	}
}
