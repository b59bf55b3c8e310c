package validation

import (
	"errors"
	"fmt"
	"math/rand"
	"net"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// The ref* functions are connectivityGroups and the helpers it used before
// it was rewritten over address indexes (connectivity_fast.go), kept as
// they were: string addresses, one lock per table read, one pass per
// network, a bit test per host pair, group keys in hex.
// TestConnectivityGroupsMatchesReference holds the rewrite to their
// results exactly.

// names and addrs are the tables of the Interner every report of the tests
// is compacted with (the reference read them as package tables).
var (
	names = &testInterner.names
	addrs = &testInterner.addrs
)

func refConnectivityGroups(c *wire.Cluster, hosts []HostEntry) (*Connectivity, error) {
	list := make([]HostEntry, 0, len(hosts))
	for _, h := range hosts {
		if h.Host != nil {
			list = append(list, h)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Host.ID < list[j].Host.ID })
	reports := make([]*ConnReport, len(list))
	var errs []error
	for i, h := range list {
		r := h.Conn
		if r.Broken() {
			errs = append(errs, fmt.Errorf("parse connectivity report of host %s: %w", h.Host.ID, errBrokenReport))
			continue
		}
		reports[i] = r
	}
	minSize := 3
	if controlPlaneCount(c) == 2 {
		minSize = 2
	}
	out := &Connectivity{MajorityGroups: map[string][]string{}, L3ConnectedAddresses: map[string][]string{}}
	for _, cidr := range inventoryNetworks(list, true) {
		_, n, _ := net.ParseCIDR(cidr)
		adj := refConnectivityMatrix(list, reports, func(r *ConnReport, peer, _ int) bool { return refL2Reaches(r, peer, n) })
		out.MajorityGroups[cidr] = refMajorityGroup(list, adj, minSize)
	}
	for _, v4 := range []bool{true, false} {
		addrs := refHostAddresses(list, v4)
		adj := refConnectivityMatrix(list, reports, func(r *ConnReport, peer, to int) bool { return refL3ReachesAll(r, peer, addrs[to]) })
		key := familyKeyIPv4
		if !v4 {
			key = familyKeyIPv6
		}
		out.MajorityGroups[key] = refMajorityGroup(list, adj, minSize)
	}
	out.L3ConnectedAddresses = refL3ConnectedAddresses(list, reports)
	return out, errors.Join(errs...)
}

// refMajorityGroup is majorityGroup with its groups keyed by refKey (the
// hex key hostSet.key replaced).
func refMajorityGroup(list []HostEntry, adj []hostSet, minSize int) []string {
	groups := map[string]*connGroup{}
	for me, set := range adj {
		if set.count() < minSize {
			continue
		}
		p := newHostSet(len(list))
		p.add(me)
		refAddOrMerge(groups, &connGroup{set: set, participants: p})
	}
	primaries := make([]*connGroup, 0, len(groups))
	for _, g := range groups {
		primaries = append(primaries, g)
	}
	sort.Slice(primaries, func(i, j int) bool { return primaries[i].set.less(primaries[j].set) })
	for i, g := range primaries {
		g.primaries = newHostSet(len(primaries))
		g.primaries.add(i)
	}
	for {
		cand := largestGroup(groups, minSize)
		if cand == nil {
			return []string{}
		}
		if cand.set.count() == cand.participants.count() {
			out := make([]string, 0, cand.set.count())
			for _, i := range cand.set.members() {
				out = append(out, list[i].Host.ID)
			}
			return out
		}
		size := cand.set.count()
		for k, g := range groups {
			if g.set.count() == size {
				delete(groups, k)
			}
		}
		biggest := biggestSize(groups)
		for i, pg := range primaries {
			if cand.primaries.has(i) || pg.set.count() < biggest {
				continue
			}
			set := cand.set.and(pg.set)
			n := set.count()
			if n < minSize || n >= size {
				continue
			}
			refAddOrMerge(groups, &connGroup{
				set:          set,
				participants: set.and(cand.participants.or(pg.participants)),
				primaries:    cand.primaries.or(pg.primaries),
			})
			biggest = max(biggest, n)
		}
	}
}

func refAddOrMerge(groups map[string]*connGroup, g *connGroup) {
	k := refKey(g.set)
	old, ok := groups[k]
	if !ok {
		groups[k] = g
		return
	}
	old.participants = old.set.and(old.participants.or(g.participants))
	if old.primaries != nil && g.primaries != nil {
		old.primaries = old.primaries.or(g.primaries)
	}
}

func refKey(s hostSet) string {
	var b strings.Builder
	for _, w := range s {
		fmt.Fprintf(&b, "%016x", w)
	}
	return b.String()
}

func refL2Reaches(r *ConnReport, i int, n *net.IPNet) bool {
	v6 := n.IP.To4() == nil
	for _, a := range r.run(i) {
		if a&reachedL2 == 0 && !(v6 && a&reachedL3 != 0) {
			continue
		}
		if ip := addrs.ip(a & reachedAddr); ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// refL3Addrs would be the copy of (*ConnReport).l3Addrs; the oracle calls
// the method itself, which this change leaves as it was (and which only
// the oracle uses now).

func refL3ReachesAll(r *ConnReport, peer int, want map[string]bool) bool {
	if len(want) == 0 {
		return false
	}
	found := 0
	refL3Addrs(r, peer, func(a string) {
		if want[a] {
			found++
		}
	})
	return found == len(want)
}

func refHostAddresses(list []HostEntry, v4 bool) []map[string]bool {
	out := make([]map[string]bool, len(list))
	for i, h := range list {
		if h.Inventory == nil {
			continue
		}
		set := map[string]bool{}
		for _, iface := range h.Inventory.Interfaces {
			if iface == nil {
				continue
			}
			for _, a := range familyAddresses(iface, v4) {
				if ip, _, err := net.ParseCIDR(a); err == nil {
					set[ip.String()] = true
				}
			}
		}
		out[i] = set
	}
	return out
}

func refConnectivityMatrix(list []HostEntry, reports []*ConnReport, reaches func(r *ConnReport, peer, to int) bool) []hostSet {
	index := make(map[uint32]int, len(list))
	for i, h := range list {
		if id, ok := names.lookup(h.Host.ID); ok {
			index[id] = i
		}
	}
	n := len(list)
	out := make([]hostSet, n)
	for i := range out {
		out[i] = newHostSet(n)
	}
	for from, r := range reports {
		if r == nil {
			continue
		}
		for p, peer := range r.peers {
			to, ok := index[peer.id]
			if ok && reaches(r, p, to) {
				out[from].add(to)
			}
		}
	}
	for i := range n {
		for j := range n {
			if i != j && out[i].has(j) && !out[j].has(i) {
				out[i].remove(j)
			}
		}
	}
	for i := range n {
		out[i].add(i)
	}
	return out
}

func refL3ConnectedAddresses(list []HostEntry, reports []*ConnReport) map[string][]string {
	counts := map[string]map[string]int{}
	for i, r := range reports {
		if r == nil {
			continue
		}
		self, selfNamed := names.lookup(list[i].Host.ID)
		for p, peer := range r.peers {
			if selfNamed && peer.id == self {
				continue
			}
			var seen []string
			refL3Addrs(r, p, func(a string) { seen = append(seen, a) })
			if len(seen) == 0 {
				continue
			}
			id := names.str(peer.id)
			if counts[id] == nil {
				counts[id] = map[string]int{}
			}
			for _, a := range seen {
				counts[id][a]++
			}
		}
	}
	out := map[string][]string{}
	for id, m := range counts {
		for a, n := range m {
			if n == len(list)-1 {
				out[id] = append(out[id], a)
			}
		}
		sort.Strings(out[id])
	}
	return out
}

// randomCluster builds a cluster of 1 to 40 hosts (a few of up to 150)
// for the oracle test,
// reaching for the corners the rewrite must agree on: IPv4, IPv6 and
// dual-stack inventories with overlapping subnets and shared addresses,
// addresses no report ever names (never interned), host IDs unique to the
// case (so some are never interned either), missing peers, failed and
// one-way probes, probes of addresses the peer does not have or that do
// not parse, a non-canonical spelling of an address, a report listing a
// peer twice or its own host, strangers, hosts with no report or a broken
// one, nil hosts and interfaces, and two-node clusters (minSize 2).
func randomCluster(rng *rand.Rand, tag int) (*wire.Cluster, []HostEntry) {
	c := testCluster()
	c.ControlPlaneCount = []int64{1, 2, 3, 3, 5}[rng.Intn(5)]
	n := 1 + rng.Intn(40)
	if tag%25 == 24 {
		n = 41 + rng.Intn(110) // over two 64-host blocks of meshMatrix.mutual
	}
	// How broken this cluster's network is.
	pMissing := []float64{0, 0, 0.05, 0.3}[rng.Intn(4)]
	pFail := []float64{0, 0, 0.05, 0.3, 0.7}[rng.Intn(5)]
	v4Nets := []string{"10.0.0.%d/24", "10.0.1.%d/24", "10.0.%d.7/16", "192.168.111.%d/24"}
	v6Nets := []string{"fd00::%x/64", "fd00:0:0:1::%x/64", "2001:db8::%x/48", "fe80::%x/64", "::ffff:10.0.0.%d/120"}
	stack := rng.Intn(3) // 0: IPv4, 1: IPv6, 2: dual
	// hidden are addresses no report probes (the agent skipped that
	// interface, say): one of this case only is never interned.
	hidden := map[string]bool{}
	addr := func(pool []string) string {
		f := pool[rng.Intn(len(pool))]
		var s string
		switch rng.Intn(10) {
		case 0: // an address of this case only
			if f[0] == '1' && f[1] != '9' {
				s = fmt.Sprintf("10.%d.%d.%d/16", 100+tag%100, rng.Intn(256), 1+rng.Intn(250))
			} else {
				s = fmt.Sprintf("fd%02x:%x::%x/64", tag%256, tag, 1+rng.Intn(1000))
			}
		case 1:
			s = "not-a-cidr"
		default:
			s = fmt.Sprintf(f, 1+rng.Intn(12)) // few values: shared addresses
		}
		if rng.Intn(8) == 0 {
			hidden[s] = true
		}
		return s
	}
	hosts := make([]HostEntry, n)
	for i := range hosts {
		id := fmt.Sprintf("c%d-h%02d", tag, rng.Intn(3*n)) // duplicates possible
		h := HostEntry{Host: testHost(id, wire.HostRoleAutoAssign)}
		if rng.Intn(12) != 0 {
			inv := &wire.Inventory{}
			for k := range 1 + rng.Intn(2) {
				if rng.Intn(15) == 0 {
					inv.Interfaces = append(inv.Interfaces, nil)
					continue
				}
				iface := &wire.Interface{Name: fmt.Sprintf("eth%d", k), Type: []string{"physical", "bond", "bridge"}[rng.Intn(3)]}
				for range 1 + rng.Intn(2) {
					if stack != 1 || rng.Intn(10) == 0 {
						iface.IPv4Addresses = append(iface.IPv4Addresses, addr(v4Nets))
					}
					if stack != 0 || rng.Intn(10) == 0 {
						iface.IPv6Addresses = append(iface.IPv6Addresses, addr(v6Nets))
					}
				}
				inv.Interfaces = append(inv.Interfaces, iface)
			}
			h.Inventory = inv
		}
		hosts[i] = h
	}
	// probed returns the addresses a report probes on host o.
	probed := func(o HostEntry) []string {
		var out []string
		if o.Inventory != nil {
			for _, iface := range o.Inventory.Interfaces {
				if iface == nil {
					continue
				}
				for _, a := range append(append([]string{}, iface.IPv4Addresses...), iface.IPv6Addresses...) {
					if ip, _, err := net.ParseCIDR(a); err == nil && !hidden[a] {
						s := ip.String()
						switch rng.Intn(30) {
						case 0: // does not parse
							s += "x"
						case 1: // the same address, another spelling
							if ip.To4() != nil {
								s = "::ffff:" + s
							} else {
								s = strings.ToUpper(s)
							}
						}
						out = append(out, s)
					}
				}
			}
		}
		if rng.Intn(20) == 0 {
			out = append(out, fmt.Sprintf("10.0.0.%d", rng.Intn(256)), "fd00::"+fmt.Sprint(rng.Intn(50)))
		}
		return out
	}
	for from, h := range hosts {
		switch rng.Intn(15) {
		case 0:
			continue // no report yet
		case 1:
			h.Host.Connectivity = "{not json"
			continue
		}
		var r wire.ConnectivityReport
		for to, o := range hosts {
			if (to == from && rng.Intn(20) != 0) || rng.Float64() < pMissing {
				continue
			}
			copies := 1
			if rng.Intn(40) == 0 {
				copies = 2
			}
			for range copies {
				rh := &wire.ConnectivityRemoteHost{HostID: o.Host.ID}
				for _, a := range probed(o) {
					rh.L2Connectivity = append(rh.L2Connectivity, &wire.L2Connectivity{RemoteIPAddress: a, Successful: rng.Float64() >= pFail})
					rh.L3Connectivity = append(rh.L3Connectivity, &wire.L3Connectivity{RemoteIPAddress: a, Successful: rng.Float64() >= pFail})
				}
				r.RemoteHosts = append(r.RemoteHosts, rh)
			}
		}
		if rng.Intn(10) == 0 {
			r.RemoteHosts = append(r.RemoteHosts, nil, &wire.ConnectivityRemoteHost{HostID: fmt.Sprintf("stranger-%d", rng.Intn(5)),
				L3Connectivity: []*wire.L3Connectivity{{RemoteIPAddress: "10.0.0.3", Successful: true}}})
		}
		hosts[from].Conn = compactConnectivity(testInterner, &r, keepAll)
	}
	for range rng.Intn(3) {
		hosts = append(hosts, HostEntry{})
	}
	rng.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	return c, hosts
}

// TestConnectivityGroupsMatchesReference compares connectivityGroups with
// the reference on random clusters (fixed seed: a failure reproduces),
// also with the L2 graphs filled one and two networks per pass.
func TestConnectivityGroupsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(20261122))
	nonEmpty := map[string]int{}
	check := func(name string, c *wire.Cluster, hosts []HostEntry) {
		t.Helper()
		want, wantErr := refConnectivityGroups(c, hosts)
		for _, batch := range []int{0, 1, 2} {
			got, gotErr := connectivityGroupsBatched(c, hosts, batch)
			if !reflect.DeepEqual(got.MajorityGroups, want.MajorityGroups) {
				t.Errorf("%s, batch %d: MajorityGroups = %v, want %v", name, batch, got.MajorityGroups, want.MajorityGroups)
			}
			if !reflect.DeepEqual(got.L3ConnectedAddresses, want.L3ConnectedAddresses) {
				t.Errorf("%s, batch %d: L3ConnectedAddresses = %v, want %v", name, batch, got.L3ConnectedAddresses, want.L3ConnectedAddresses)
			}
			if !reflect.DeepEqual(gotErr, wantErr) {
				t.Errorf("%s, batch %d: err = %v, want %v", name, batch, gotErr, wantErr)
			}
		}
		for k, g := range want.MajorityGroups {
			if len(g) > 0 {
				nonEmpty[k]++
			}
		}
		if len(want.L3ConnectedAddresses) > 0 {
			nonEmpty["l3"]++
		}
	}
	check("no hosts", testCluster(), nil)
	check("nil hosts only", testCluster(), []HostEntry{{}, {}})
	for tag := range 400 {
		c, hosts := randomCluster(rng, tag)
		check(fmt.Sprintf("case %d", tag), c, hosts)
	}
	// The cases must reach the interesting outcomes, not only empty ones.
	for _, k := range []string{familyKeyIPv4, familyKeyIPv6, "10.0.0.0/24", "fd00::/64", "l3"} {
		if nonEmpty[k] < 10 {
			t.Errorf("only %d cases have a non-empty %s result", nonEmpty[k], k)
		}
	}
}

// fullMesh1000 is a 1,000-host cluster on one /16 whose hosts all reach
// each other over L2 and L3, with its reports compacted.
func fullMesh1000() (*wire.Cluster, []HostEntry) {
	c := testCluster()
	c.MachineNetworks = []*wire.MachineNetwork{{CIDR: "10.20.0.0/16"}}
	const n = 1000
	hosts := make([]HostEntry, n)
	ips := make([]string, n)
	for i := range hosts {
		ips[i] = fmt.Sprintf("10.20.%d.%d", 1+i/250, 1+i%250)
		hosts[i] = HostEntry{
			Host:      testHost(fmt.Sprintf("mesh-%04d", i), wire.HostRoleWorker),
			Inventory: testInventory(fmt.Sprintf("node-%04d", i), 8, 16, ips[i]+"/16"),
		}
	}
	v := &Validator{}
	for from := range hosts {
		var r wire.ConnectivityReport
		for to, o := range hosts {
			if to == from {
				continue
			}
			r.RemoteHosts = append(r.RemoteHosts, &wire.ConnectivityRemoteHost{
				HostID:         o.Host.ID,
				L2Connectivity: []*wire.L2Connectivity{{OutgoingNic: "eth0", RemoteIPAddress: ips[to], RemoteMAC: "52:54:00:aa:bb:01", Successful: true}},
				L3Connectivity: []*wire.L3Connectivity{{OutgoingNic: "eth0", RemoteIPAddress: ips[to], Successful: true, AverageRTTMs: 1}},
			})
		}
		hosts[from].Conn = compactConnectivity(testInterner, &r, v.timingFloor())
	}
	return c, hosts
}

// BenchmarkConnectivityGroups1000 computes the majority groups of a
// 1,000-host full mesh. It calls connectivityGroups, not
// ConnectivityGroups, whose memo would answer every iteration after the
// first from the last result.
func BenchmarkConnectivityGroups1000(b *testing.B) {
	c, hosts := fullMesh1000()
	got, err := connectivityGroups(c, hosts)
	if err != nil || len(got.MajorityGroups["10.20.0.0/16"]) != len(hosts) || len(got.L3ConnectedAddresses) != len(hosts) {
		b.Fatalf("the full mesh is not one group: err %v, %d in the L2 group, %d hosts with L3 addresses",
			err, len(got.MajorityGroups["10.20.0.0/16"]), len(got.L3ConnectedAddresses))
	}
	b.ReportAllocs()
	for b.Loop() {
		connectivityGroups(c, hosts)
	}
}

// TestMeshMatrixMutual checks the block-transposing mutual against the
// definition, on sizes around the 64-host blocks.
func TestMeshMatrixMutual(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, n := range []int{0, 1, 2, 5, 63, 64, 65, 127, 128, 129, 200} {
		// A negative density: every edge from a lower host to a higher
		// one, a few back (blocks with edges one way only).
		for _, density := range []float64{0, 0.002, 0.1, 0.5, 0.95, 1, -1} {
			m := newMeshMatrix(n)
			edge := make([][]bool, n)
			for i := range n {
				edge[i] = make([]bool, n)
				for j := range n {
					if density >= 0 && rng.Float64() < density || density < 0 && (i < j || rng.Intn(200) == 0) {
						edge[i][j] = true
						m[i].add(j)
					}
				}
			}
			got := m.mutual()
			for i := range n {
				for j := range n {
					if want := i == j || edge[i][j] && edge[j][i]; got[i].has(j) != want {
						t.Fatalf("n %d density %v: mutual has(%d, %d) = %v, want %v", n, density, i, j, !want, want)
					}
				}
			}
		}
	}
}

// refL3Addrs is the old ConnReport.l3Addrs: fn with each distinct address
// peer i answered over L3.
func refL3Addrs(r *ConnReport, i int, fn func(string)) {
	for _, a := range r.run(i) {
		if a&reachedL3 != 0 {
			fn(addrs.str(a & reachedAddr))
		}
	}
}
