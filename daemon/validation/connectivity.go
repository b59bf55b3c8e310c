package validation

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"sort"
	"strings"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// Connectivity is what assisted stores in cluster.connectivity_majority_groups
// (internal/network/connectivity_groups.go Connectivity): per machine-network
// CIDR the L2 majority group, under "IPv4" and "IPv6" the L3 majority
// groups, and per host the addresses every other host reached over L3.
type Connectivity struct {
	MajorityGroups       map[string][]string `json:"majority_groups"`
	L3ConnectedAddresses map[string][]string `json:"l3_connected_addresses"`
}

// Keys of the L3 majority groups.
const (
	familyKeyIPv4 = "IPv4"
	familyKeyIPv6 = "IPv6"
)

// ConnectivityGroups computes a cluster's connectivity majority groups from
// its hosts' connectivity-check reports (host.connectivity) and inventories,
// as assisted's cluster monitor does (setConnectivityMajorityGroupsForCluster):
// an L2 group for every network of the hosts' addresses and an L3 group per
// address family. A majority group is the largest set of at least 3 hosts
// (2 for a two-node cluster) that all reach each other both ways; hosts
// come out sorted by ID. Assisted computes it only while the cluster is
// pending-for-input, insufficient or ready; the caller decides when.
//
// A host whose report does not parse counts as having reported nothing;
// the result is still complete and err names such hosts, for the log.
func ConnectivityGroups(c *v2.Cluster, hosts []HostEntry) (*Connectivity, error) {
	r := groupsMemo.get(hosts, controlPlaneCount(c), func() groupsResult {
		conn, err := connectivityGroups(c, hosts)
		return groupsResult{conn, err}
	})
	return r.conn, r.err
}

// groupsMemo is ConnectivityGroups' last result (see aggregateMemo).
var groupsMemo aggregateMemo[groupsResult]

type groupsResult struct {
	conn *Connectivity
	err  error
}

func connectivityGroups(c *v2.Cluster, hosts []HostEntry) (*Connectivity, error) {
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
		r := h.report()
		if r.Broken() {
			errs = append(errs, fmt.Errorf("parse connectivity report of host %s: %w", h.Host.ID, errBrokenReport))
			continue
		}
		reports[i] = r
	}
	minSize := 3
	if controlPlaneCount(c) == 2 {
		minSize = 2 // two nodes with fencing (assisted's minimum there)
	}
	out := &Connectivity{MajorityGroups: map[string][]string{}, L3ConnectedAddresses: map[string][]string{}}
	for _, cidr := range inventoryNetworks(list, true) {
		_, n, _ := net.ParseCIDR(cidr) // inventoryNetworks returns parsed networks
		adj := connectivityMatrix(list, reports, func(r *ConnReport, peer, _ int) bool { return r.l2Reaches(peer, n) })
		out.MajorityGroups[cidr] = majorityGroup(list, adj, minSize)
	}
	for _, v4 := range []bool{true, false} {
		addrs := hostAddresses(list, v4)
		adj := connectivityMatrix(list, reports, func(r *ConnReport, peer, to int) bool { return l3ReachesAll(r, peer, addrs[to]) })
		key := familyKeyIPv4
		if !v4 {
			key = familyKeyIPv6
		}
		out.MajorityGroups[key] = majorityGroup(list, adj, minSize)
	}
	out.L3ConnectedAddresses = l3ConnectedAddresses(list, reports)
	return out, errors.Join(errs...)
}

// Marshal returns the JSON text to store in cluster.connectivity_majority_groups.
func (c *Connectivity) Marshal() (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("marshal connectivity majority groups: %w", err)
	}
	return string(b), nil
}

// errBrokenReport: a stored connectivity report that does not parse.
var errBrokenReport = errors.New("the report does not parse")

// l3ReachesAll: every address of the family the remote host has was
// reached over L3 (and it has at least one).
func l3ReachesAll(r *ConnReport, peer int, want map[string]bool) bool {
	if len(want) == 0 {
		return false
	}
	found := 0
	r.l3Addrs(peer, func(a string) {
		if want[a] {
			found++
		}
	})
	return found == len(want)
}

// hostAddresses returns, per host, its inventory addresses of one family.
func hostAddresses(list []HostEntry, v4 bool) []map[string]bool {
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

// connectivityMatrix returns, per host index, the set of hosts it reaches
// (by reaches) and that reach it back; every host is in its own set.
func connectivityMatrix(list []HostEntry, reports []*ConnReport, reaches func(r *ConnReport, peer, to int) bool) []hostSet {
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
	// Keep only mutual edges.
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

// l3ConnectedAddresses: per host, the addresses of it that every other
// host reached over L3, sorted (assisted GatherL3ConnectedAddresses).
func l3ConnectedAddresses(list []HostEntry, reports []*ConnReport) map[string][]string {
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
			r.l3Addrs(p, func(a string) { seen = append(seen, a) })
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

// majorityGroup follows assisted's search (createFullMeshGroup): every
// host's view (itself and the hosts mutually connected to it) is a
// candidate group; the largest candidate that is a full mesh wins; a
// candidate that is not is intersected with the original views to yield
// smaller candidates. Ties go to the group seen from more of its members,
// then to the one with the lower host indexes.
func majorityGroup(list []HostEntry, adj []hostSet, minSize int) []string {
	groups := map[string]*connGroup{}
	for me, set := range adj {
		if set.count() < minSize {
			continue
		}
		p := newHostSet(len(list))
		p.add(me)
		addOrMerge(groups, &connGroup{set: set, participants: p})
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
			addOrMerge(groups, &connGroup{
				set:          set,
				participants: set.and(cand.participants.or(pg.participants)),
				primaries:    cand.primaries.or(pg.primaries),
			})
			biggest = max(biggest, n)
		}
	}
}

// connGroup is a candidate majority group: the hosts in it and those of
// them whose own view produced it.
type connGroup struct {
	set, participants hostSet
	primaries         hostSet // the original views it was intersected from
}

func addOrMerge(groups map[string]*connGroup, g *connGroup) {
	k := g.set.key()
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

func biggestSize(groups map[string]*connGroup) int {
	n := 0
	for _, g := range groups {
		n = max(n, g.set.count())
	}
	return n
}

func largestGroup(groups map[string]*connGroup, minSize int) *connGroup {
	size := biggestSize(groups)
	if size < minSize {
		return nil
	}
	var best *connGroup
	for _, g := range groups {
		if g.set.count() != size {
			continue
		}
		switch {
		case best == nil:
			best = g
		case g.participants.count() > best.participants.count():
			best = g
		case g.participants.count() == best.participants.count() && g.set.less(best.set):
			best = g
		}
	}
	return best
}

// hostSet is a set of host indexes.
type hostSet []uint64

func newHostSet(n int) hostSet { return make(hostSet, (n+63)/64) }

func (s hostSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s hostSet) remove(i int)   { s[i/64] &^= 1 << (i % 64) }
func (s hostSet) has(i int) bool { return i/64 < len(s) && s[i/64]&(1<<(i%64)) != 0 }

func (s hostSet) count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

func (s hostSet) and(o hostSet) hostSet {
	out := make(hostSet, len(s))
	for i := range s {
		if i < len(o) {
			out[i] = s[i] & o[i]
		}
	}
	return out
}

func (s hostSet) or(o hostSet) hostSet {
	out := make(hostSet, max(len(s), len(o)))
	copy(out, s)
	for i := range o {
		out[i] |= o[i]
	}
	return out
}

func (s hostSet) members() []int {
	var out []int
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << b
		}
	}
	return out
}

func (s hostSet) key() string {
	var b strings.Builder
	for _, w := range s {
		fmt.Fprintf(&b, "%016x", w)
	}
	return b.String()
}

// less orders sets as assisted's groupId.isLess: bigger first, then by the
// first differing member, lower first.
func (s hostSet) less(o hostSet) bool {
	a, b := s.members(), o.members()
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
