package validation

import (
	"net"
	"slices"
	"sort"

	"github.com/nodezero/nodezero/wire"
)

// This file is connectivityGroups' machinery. At a thousand hosts the
// reports hold a million runs (one per host and peer: the addresses the
// peer answered), and every majority group and the L3 addresses are
// decided run by run. So the runs are read once, in one pass
// (connMesh.walk), in the form the reports keep them, name and address
// indexes: no string, no lock, no map and no allocation per run. Strings
// are looked up once per host before the pass, and made once per address
// of the result after it.

// snapshot returns the table's strings and, for the address table, their
// parsed addresses, as they are now. The table only appends, and never
// changes an entry once written, so the slices stay valid without the
// lock, and an index interned before the call is below their length.
func (t *internTable) snapshot() (vals []string, ips []net.IP) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.vals[:len(t.vals):len(t.vals)], t.ips[:len(t.ips):len(t.ips)]
}

// matrixBudget bounds the bytes of the L2 graphs one pass fills (a bit per
// host pair and network). A cluster whose hosts each bring a network of
// their own (a /128 DHCPv6 address each, say) has as many networks as
// hosts: those graphs are filled a batch at a time, a pass each, rather
// than a thousand 128 KB graphs at once.
const matrixBudget = 16 << 20

// l2Batch is how many networks' graphs one pass fills for n hosts.
func l2Batch(n int) int {
	return max(1, matrixBudget/max(1, n*len(newHostSet(n))*8))
}

// connMesh is one connectivityGroups computation's view of the cluster:
// the hosts in ID order, their reports (nil: none, or one that does not
// parse), and the intern tables as of the computation's start.
type connMesh struct {
	list    []HostEntry
	reports []*ConnReport
	names   []string // the name table: a name index's host ID
	vals    []string // the address table: an address index's text
	ips     []net.IP // and its parsed address (nil: it does not parse)
	// self is, per host, the name index of its ID; -1 when no report
	// ever named it (then none names it now).
	self []int64
	// hostOf is, per name index, the host with that ID (the last one in
	// the list when two share it, as before the rewrite), -1 for a name
	// that is no host of the list.
	hostOf []int32
	// want is, per host, its inventory addresses of each family as
	// spans of wantIdx.
	want    []hostWant
	wantIdx []uint32
	// nets are the networks of the hosts' addresses (one L2 group
	// each); netV6 tells the IPv6 ones, where an L3 answer counts as an
	// L2 one.
	nets  []*net.IPNet
	netV6 []bool
	// addr is, per address index, what the pass found out about it.
	addr []addrState
	// inNet holds the networks of the addresses (addrState's spans).
	inNet []int32
	// overflow counts the L3 answers of an address for a peer other
	// than the one its addrState counts for (countL3).
	overflow map[uint64]int32
}

// hostWant spans, per family (0: IPv4, 1: IPv6), the address indexes a
// peer must all answer over L3 for a host to reach it over that family.
// An empty span: the host has no address of the family, or has one that
// no report ever named (never interned, so never answered); no host
// reaches it then.
type hostWant struct{ from, to [2]int32 }

// addrState is what the pass keeps per address index: which networks hold
// the address (worked out the first time a run names it), and how many
// runs of one peer name it as answered over L3.
type addrState struct {
	netsFrom, netsTo int32  // span of inNet; netsFrom < 0: not worked out yet
	owner            uint32 // 1 + the name index of the peer count is for; 0: none yet
	count            int32
}

// newConnMesh resolves the hosts' IDs and inventory addresses to indexes
// of in (the Interner that compacted every report), one table lookup each,
// and then takes the tables' snapshot: everything looked up, and every
// index in the reports (compacted before this call), is below the
// snapshot's length.
func newConnMesh(in *Interner, list []HostEntry, reports []*ConnReport, nets []*net.IPNet) *connMesh {
	names, addrs := &in.names, &in.addrs
	m := &connMesh{list: list, reports: reports, nets: nets, self: make([]int64, len(list))}
	for i, h := range list {
		m.self[i] = -1
		if id, ok := names.lookup(h.Host.ID); ok {
			m.self[i] = int64(id)
		}
	}
	m.want = make([]hostWant, len(list))
	var texts []string
	for f, v4 := range []bool{true, false} {
		for i, h := range list {
			texts = inventoryAddresses(texts[:0], h.Inventory, v4)
			m.want[i].from[f] = int32(len(m.wantIdx))
			for _, s := range texts {
				a, ok := addrs.lookup(s)
				if !ok {
					m.wantIdx = m.wantIdx[:m.want[i].from[f]]
					break
				}
				m.wantIdx = append(m.wantIdx, a)
			}
			m.want[i].to[f] = int32(len(m.wantIdx))
		}
	}
	m.names, _ = names.snapshot()
	m.vals, m.ips = addrs.snapshot()
	m.hostOf = make([]int32, len(m.names))
	for i := range m.hostOf {
		m.hostOf[i] = -1
	}
	for i, id := range m.self {
		if id >= 0 {
			m.hostOf[id] = int32(i)
		}
	}
	m.netV6 = make([]bool, len(nets))
	for k, n := range nets {
		m.netV6[k] = n.IP.To4() == nil
	}
	m.addr = make([]addrState, len(m.vals))
	for a := range m.addr {
		m.addr[a].netsFrom = -1
	}
	return m
}

// inventoryAddresses appends to texts the distinct addresses of one family
// of every interface of inv, in Go's canonical text: the text a report's
// address must have to count as the host's.
func inventoryAddresses(texts []string, inv *wire.Inventory, v4 bool) []string {
	if inv == nil {
		return texts
	}
	for _, iface := range inv.Interfaces {
		if iface == nil {
			continue
		}
		for _, a := range familyAddresses(iface, v4) {
			if ip, _, err := net.ParseCIDR(a); err == nil {
				if s := ip.String(); !slices.Contains(texts, s) {
					texts = append(texts, s)
				}
			}
		}
	}
	return texts
}

// findNets works out which networks (indexes into m.nets, ascending)
// hold address a, the first time a run names it: the runs name a few
// thousand distinct addresses a million times.
func (m *connMesh) findNets(a uint32) {
	s := &m.addr[a]
	s.netsFrom = int32(len(m.inNet))
	if ip := m.ips[a]; ip != nil {
		for k, n := range m.nets {
			if n.Contains(ip) {
				m.inNet = append(m.inNet, int32(k))
			}
		}
	}
	s.netsTo = int32(len(m.inNet))
}

// countL3 counts one run of peer naming address a as answered over L3.
// Nearly always an address answers for one peer only, so its count lives
// in its addrState; a count for any other peer (an address two hosts
// share, a stranger's) goes to the overflow map, keyed by peer and
// address.
func (m *connMesh) countL3(peer, a uint32) {
	s := &m.addr[a]
	switch s.owner {
	case peer + 1:
		s.count++
	case 0:
		s.owner, s.count = peer+1, 1
	default:
		if m.overflow == nil {
			m.overflow = map[uint64]int32{}
		}
		m.overflow[uint64(peer)<<32|uint64(a)]++
	}
}

// meshMatrix is one graph's edges: row i holds the hosts host i reaches.
// The pass reads a host's report at a time, so it fills one row at a time.
type meshMatrix []hostSet

func newMeshMatrix(n int) meshMatrix {
	w := len(newHostSet(n))
	buf := make([]uint64, n*w)
	m := make(meshMatrix, n)
	for i := range n {
		m[i] = hostSet(buf[i*w : (i+1)*w : (i+1)*w])
	}
	return m
}

// reset removes every edge, for the next batch of networks.
func (m meshMatrix) reset() {
	for _, row := range m {
		clear(row)
	}
}

// mutual keeps the edges whose reverse is there too, and puts each host in
// its own row: connectivityGroups' adjacency. It goes by 64×64 blocks:
// block (I, J) of the result is block (I, J) AND the transpose of block
// (J, I), a few hundred word operations per block where testing each pair
// would be a million bit tests at a thousand hosts; a pair of blocks with
// no edge (a network of a few hosts) costs two reads. It reuses m.
func (m meshMatrix) mutual() []hostSet {
	blocks := (len(m) + 63) / 64
	var x, y [64]uint64
	for bi := range blocks {
		for bj := bi; bj < blocks; bj++ {
			xs, ys := m.loadBlock(&x, bi, bj), m.loadBlock(&y, bj, bi)
			switch {
			case !xs && !ys:
				continue // no edge either way: nothing to drop
			case !xs || !ys:
				x, y = [64]uint64{}, [64]uint64{} // edges one way only
			default:
				xt, yt := x, y
				transpose64(&xt)
				transpose64(&yt)
				for r := range 64 {
					x[r] &= yt[r]
					y[r] &= xt[r]
				}
			}
			m.storeBlock(&x, bi, bj)
			if bj != bi {
				m.storeBlock(&y, bj, bi)
			}
		}
	}
	for i, row := range m {
		row.add(i)
	}
	return m
}

// loadBlock copies block (bi, bj), word bj of rows 64·bi to 64·bi+63, into
// b, rows past the last host as zeros, and tells whether it has an edge.
func (m meshMatrix) loadBlock(b *[64]uint64, bi, bj int) bool {
	seen := uint64(0)
	for r := range 64 {
		b[r] = 0
		if i := bi*64 + r; i < len(m) {
			b[r] = m[i][bj]
			seen |= b[r]
		}
	}
	return seen != 0
}

// storeBlock writes b back as block (bi, bj).
func (m meshMatrix) storeBlock(b *[64]uint64, bi, bj int) {
	for r := range 64 {
		if i := bi*64 + r; i < len(m) {
			m[i][bj] = b[r]
		}
	}
}

// transpose64 transposes a 64×64 bit matrix, row r in b[r], column c in
// bit c. It swaps the top-right and bottom-left 32×32 quadrants, then does
// the same inside every quadrant at once with 16×16 ones, and so on down
// to single bits: the step of size j exchanges, for every row pair (r,
// r+j) with r&j == 0, the high j bits of each 2j-bit group of row r with
// the low j bits of the same group of row r+j.
func transpose64(b *[64]uint64) {
	mask := uint64(0x00000000ffffffff) // the low j bits of each 2j-bit group
	for j := 32; j != 0; j >>= 1 {
		for r := 0; r < 64; r = (r + j + 1) &^ j { // the rs with r&j == 0
			t := ((b[r] >> j) ^ b[r+j]) & mask
			b[r] ^= t << j
			b[r+j] ^= t
		}
		mask ^= mask << (j / 2)
	}
}

// walk reads every run of every report once and records:
//   - for each network k of [lo, lo+len(l2)), in l2[k-lo], the edge from
//     a host to a peer that answered an L2 probe on an address in k, or an
//     L3 probe when k is IPv6 (NDP replies get lost; assisted counts those
//     too);
//   - with l3 set (the first pass), in l3[f], the edge from a host to a
//     peer that answered L3 probes on all the peer's inventory addresses
//     of family f (IPv4, IPv6); and, with countL3, the runs naming each
//     peer's addresses as answered over L3.
//
// Edges go to hosts of the list only. A host's run of itself sets its own
// bit (mutual sets it anyway) and is no L3 answer, as before the rewrite.
func (m *connMesh) walk(lo int, l2 []meshMatrix, l3 *[2]meshMatrix) {
	hi := lo + len(l2)
	rows := make([]hostSet, len(l2)) // the reporting host's row of each of l2
	for from, r := range m.reports {
		if r == nil {
			continue
		}
		for k := range l2 {
			rows[k] = l2[k][from]
		}
		var rows3 [2]hostSet
		if l3 != nil {
			rows3 = [2]hostSet{l3[0][from], l3[1][from]}
		}
		self := m.self[from]
		start := uint32(0)
		for _, peer := range r.peers {
			run := r.reached[start:peer.end]
			start = peer.end
			to := m.hostOf[peer.id]
			count := l3 != nil && int64(peer.id) != self
			if to < 0 && !count {
				continue
			}
			word, bit := uint32(to)>>6, uint64(1)<<(uint32(to)&63)
			for _, a := range run {
				ai := a & reachedAddr
				s := &m.addr[ai]
				if count && a&reachedL3 != 0 {
					if s.owner == peer.id+1 { // countL3's common case, inline
						s.count++
					} else {
						m.countL3(peer.id, ai)
					}
				}
				if to < 0 {
					continue
				}
				if s.netsFrom < 0 {
					m.findNets(ai)
				}
				for _, k := range m.inNet[s.netsFrom:s.netsTo] {
					if int(k) < lo {
						continue
					}
					if int(k) >= hi {
						break
					}
					if a&reachedL2 != 0 || (m.netV6[k] && a&reachedL3 != 0) {
						rows[int(k)-lo][word] |= bit
					}
				}
			}
			if to < 0 || l3 == nil {
				continue
			}
			w := &m.want[to]
			for f := range rows3 {
				if w.to[f] > w.from[f] && l3AnswersAll(run, m.wantIdx[w.from[f]:w.to[f]]) {
					rows3[f][word] |= bit
				}
			}
		}
	}
}

// l3AnswersAll: each of want (distinct address indexes) is among the run's
// L3 answers. The run's addresses are distinct too, so counting the run's
// L3 answers that are in want is enough.
func l3AnswersAll(run []uint32, want []uint32) bool {
	found := 0
	for _, a := range run {
		if a&reachedL3 != 0 && slices.Contains(want, a&reachedAddr) {
			found++
		}
	}
	return found == len(want)
}

// l3Connected returns, per host ID, the addresses named as answered over
// L3 in as many runs as the list has other hosts (assisted's
// GatherL3ConnectedAddresses: every other host reached it), sorted. As
// before the rewrite, a peer outside the list gets its addresses too, and
// a report naming a peer twice counts twice.
func (m *connMesh) l3Connected() map[string][]string {
	out := map[string][]string{}
	want := int32(len(m.list) - 1)
	for a, s := range m.addr {
		if s.owner != 0 && s.count == want {
			id := m.names[s.owner-1]
			out[id] = append(out[id], m.vals[a])
		}
	}
	for k, n := range m.overflow {
		if n == want {
			id := m.names[k>>32]
			out[id] = append(out[id], m.vals[uint32(k)])
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}
