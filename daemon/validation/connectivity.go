package validation

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
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
//
// memo, when not nil, is the cluster's (ClusterMemo): the groups are
// taken from it when the reports, inventories and control plane count are
// those of its last call.
func ConnectivityGroups(c *wire.Cluster, hosts []HostEntry, memo *ClusterMemo) (*Connectivity, error) {
	if memo == nil {
		return connectivityGroups(c, hosts)
	}
	r := memo.groups.get(hosts, controlPlaneCount(c), func() groupsResult {
		conn, err := connectivityGroups(c, hosts)
		return groupsResult{conn, err}
	})
	return r.conn, r.err
}

// connectivityGroups is ConnectivityGroups without the memo. Every group
// and the L3 addresses are read off the same million runs at a thousand
// hosts (a run per host and peer), so they are all built in one pass over
// the reports, on the address and name indexes the reports hold
// (connMesh, connectivity_fast.go): an edge is a bit set, an L3 answer an
// integer counted.
func connectivityGroups(c *wire.Cluster, hosts []HostEntry) (*Connectivity, error) {
	return connectivityGroupsBatched(c, hosts, 0)
}

// connectivityGroupsBatched is connectivityGroups filling the L2 graphs of
// at most maxBatch networks per pass over the reports; 0: as many as
// matrixBudget allows (tests set it low to exercise several passes).
func connectivityGroupsBatched(c *wire.Cluster, hosts []HostEntry, maxBatch int) (*Connectivity, error) {
	list := make([]HostEntry, 0, len(hosts))
	for _, h := range hosts {
		if h.Host != nil {
			list = append(list, h)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Host.ID < list[j].Host.ID })
	reports := make([]*ConnReport, len(list))
	var errs []error
	// The reports are read on the indexes of one Interner: the first
	// report's. One compacted by another cannot be compared with them.
	var in *Interner
	for i, h := range list {
		r := h.Conn
		switch {
		case r == nil:
			continue
		case r.Broken():
			errs = append(errs, fmt.Errorf("parse connectivity report of host %s: %w", h.Host.ID, errBrokenReport))
			continue
		case r.in == nil:
			// The zero value: a report that lists no host.
		case in == nil:
			in = r.in
		case r.in != in:
			errs = append(errs, fmt.Errorf("connectivity report of host %s: %w", h.Host.ID, errOtherInterner))
			continue
		}
		reports[i] = r
	}
	if in == nil {
		in = NewInterner() // no report: nothing is reached
	}
	minSize := 3
	if controlPlaneCount(c) == 2 {
		minSize = 2 // two nodes with fencing (assisted's minimum there)
	}
	out := &Connectivity{MajorityGroups: map[string][]string{}}
	cidrs := inventoryNetworks(list, true)
	nets := make([]*net.IPNet, len(cidrs))
	for k, cidr := range cidrs {
		_, nets[k], _ = net.ParseCIDR(cidr) // inventoryNetworks returns parsed networks
	}
	m := newConnMesh(in, list, reports, nets)
	// The first pass fills the L3 graphs, counts the L3 answers and fills
	// the L2 graphs of the first batch of networks; a cluster with more
	// networks than a batch takes a pass per further batch.
	batch := l2Batch(len(list))
	if maxBatch > 0 {
		batch = min(batch, maxBatch)
	}
	l2 := make([]meshMatrix, min(batch, len(nets)))
	for k := range l2 {
		l2[k] = newMeshMatrix(len(list))
	}
	for lo := 0; lo == 0 || lo < len(nets); lo += batch {
		if lo > 0 { // the last batch's groups are made: reuse its graphs
			l2 = l2[:min(batch, len(nets)-lo)]
			for _, g := range l2 {
				g.reset()
			}
		}
		var l3 *[2]meshMatrix
		if lo == 0 {
			l3 = &[2]meshMatrix{newMeshMatrix(len(list)), newMeshMatrix(len(list))}
		}
		m.walk(lo, l2, l3)
		for k, g := range l2 {
			out.MajorityGroups[cidrs[lo+k]] = majorityGroup(list, g.mutual(), minSize)
		}
		if l3 != nil {
			out.MajorityGroups[familyKeyIPv4] = majorityGroup(list, l3[0].mutual(), minSize)
			out.MajorityGroups[familyKeyIPv6] = majorityGroup(list, l3[1].mutual(), minSize)
			out.L3ConnectedAddresses = m.l3Connected()
		}
	}
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

// errOtherInterner: a report compacted by another Interner than the
// cluster's other reports.
var errOtherInterner = errors.New("compacted by another interner than the other reports: left out")

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

// key is the set as a map key: its words' bytes, one allocation. (It was
// their hex through fmt, a thousand calls per group at a thousand hosts.)
// The sets of one search have the same length, so equal keys are equal
// sets.
func (s hostSet) key() string {
	var b strings.Builder
	b.Grow(8 * len(s))
	for _, w := range s {
		for range 8 {
			b.WriteByte(byte(w))
			w >>= 8
		}
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
