package validation

import (
	"math"
	"net"
	"strings"
	"sync"

	"github.com/nodezero/nodezero/daemon/agentjson"
	"github.com/nodezero/nodezero/wire"
)

// ConnReport is a host's connectivity-check report reduced to what the
// validations and the cluster aggregates read of it. A report names every
// other host of the cluster, so a cluster's reports grow with the square of
// its size: about 300 KB of JSON per host at a thousand hosts, 300 MB in
// all, and several times that parsed. What is kept here is, per remote
// host, the addresses that answered (L2 and L3, as indexes into a shared
// table), plus the few probes a validation may quote in a message: the L3
// probes slower or lossier than the lowest threshold of any role, the
// failed MTU probes and the address collisions the report shows. That is a
// dozen bytes per remote host. The text itself is the store's (the API
// reads it from there).
//
// A ConnReport is never changed once made: a new report replaces it, so the
// pointer stands for the content. The zero value is a report that lists no
// host.
type ConnReport struct {
	// in holds the host IDs and addresses the indexes below stand for.
	in    *Interner
	peers []connPeer
	// reached holds the addresses that answered, the peers' runs one
	// after another (connPeer.end): an address index with reachedL2 and
	// reachedL3 flags.
	reached    []uint32
	slow       []slowProbe
	mtuBroken  []mtuProbe
	collisions []collision
	// bad: the text did not parse; the validations say so, the
	// aggregates count the host as having reported nothing.
	bad bool
}

type connPeer struct {
	id  uint32 // into the name table
	end uint32 // end of its run in reached
}

const (
	reachedL2   = 1 << 31
	reachedL3   = 1 << 30
	reachedAddr = reachedL3 - 1
)

// slowProbe is an L3 probe that a latency or packet-loss threshold may fail.
type slowProbe struct {
	peer       uint32 // name table
	addr       uint32 // address table
	rtt, loss  float64
	successful bool
}

type mtuProbe struct{ nic, addr string }

// collision is one address seen answering from two MACs on the same
// outgoing interface (ipCollisions' note).
type collision struct{ ip, mac1, mac2 string }

// Broken reports whether the report's text did not parse.
func (r *ConnReport) Broken() bool { return r != nil && r.bad }

// Peers is how many remote hosts the report lists.
func (r *ConnReport) Peers() int {
	if r == nil {
		return 0
	}
	return len(r.peers)
}

// run returns the addresses that answered peer i.
func (r *ConnReport) run(i int) []uint32 {
	start := uint32(0)
	if i > 0 {
		start = r.peers[i-1].end
	}
	return r.reached[start:r.peers[i].end]
}

// Interner holds the host IDs and addresses that connectivity reports name,
// each once: a thousand hosts' reports name the same thousand hosts and
// addresses a million times, and a compacted report (ConnReport) keeps
// indexes into it. Reports are compared with each other (majority groups,
// reachability between two hosts) only when one Interner compacted them
// all: the service keeps one for every report it holds. It only grows, by
// the distinct values seen. It is safe for concurrent use.
type Interner struct {
	names, addrs internTable
}

// NewInterner returns an empty Interner.
func NewInterner() *Interner {
	return &Interner{names: internTable{index: map[string]uint32{}}, addrs: internTable{index: map[string]uint32{}}}
}

type internTable struct {
	mu    sync.RWMutex
	index map[string]uint32
	vals  []string
	// addrs only: the parsed address (nil when it does not parse) and
	// the index of its canonical text (net.IP.String; its own index when
	// it is canonical or does not parse).
	ips   []net.IP
	canon []uint32
}

func (t *internTable) id(s string, parse bool) uint32 {
	t.mu.RLock()
	i, ok := t.index[s]
	t.mu.RUnlock()
	if ok {
		return i
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.insertLocked(s, parse)
}

func (t *internTable) insertLocked(s string, parse bool) uint32 {
	if i, ok := t.index[s]; ok {
		return i
	}
	// s may be a substring of a large text (agentjson.ScanConnectivity): the
	// table keeps a copy.
	s = strings.Clone(s)
	i := uint32(len(t.vals))
	t.index[s] = i
	t.vals = append(t.vals, s)
	if parse {
		ip := net.ParseIP(s)
		t.ips = append(t.ips, ip)
		t.canon = append(t.canon, i)
		if ip != nil {
			if c := ip.String(); c != s {
				t.canon[i] = t.insertLocked(c, true)
			}
		}
	}
	return i
}

// canonical returns address i parsed, and the index of its canonical text.
func (t *internTable) canonical(i uint32) (net.IP, uint32) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.ips[i], t.canon[i]
}

// lookup returns s's index without adding it.
func (t *internTable) lookup(s string) (uint32, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, ok := t.index[s]
	return i, ok
}

func (t *internTable) str(i uint32) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.vals[i]
}

func (t *internTable) ip(i uint32) net.IP {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.ips[i]
}

// timingFloor is the lowest latency and packet-loss threshold of any role
// in any version: a probe at or below both fails no validation, so its
// figures need not be kept.
type timingFloor struct{ latency, loss float64 }

// keepAll keeps every L3 probe: for reports compacted without a
// Validator's thresholds.
var keepAll = timingFloor{math.Inf(-1), math.Inf(-1)}

func (v *Validator) timingFloor() timingFloor {
	f := timingFloor{math.Inf(1), math.Inf(1)}
	for _, vr := range v.requirements().all() {
		for _, rr := range []RoleRequirements{vr.Master, vr.Arbiter, vr.Worker, vr.SNO, vr.EdgeWorker} {
			if rr.NetworkLatencyThresholdMs != nil {
				f.latency = min(f.latency, *rr.NetworkLatencyThresholdMs)
			}
			if rr.PacketLossPercentage != nil {
				f.loss = min(f.loss, *rr.PacketLossPercentage)
			}
		}
	}
	return f
}

// ParseConnectivity compacts a stored report's text with in; a text that
// does not parse gives a report marked Broken, as assisted's validations
// see it.
func (v *Validator) ParseConnectivity(in *Interner, text string) *ConnReport {
	return parseConnReport(in, text, v.timingFloor())
}

// DecodeConnectivity compacts a report's text as a step reply brings it,
// with in, or says why the text is not a report. doc is the report as
// assisted stores it: decoded into the model and encoded again, so only
// the model's fields are kept.
func (v *Validator) DecodeConnectivity(in *Interner, text string) (r *ConnReport, doc string, err error) {
	return decodeConnReport(in, text, v.timingFloor())
}

func parseConnReport(in *Interner, text string, floor timingFloor) *ConnReport {
	r, _, err := decodeConnReport(in, text, floor)
	if err != nil {
		return &ConnReport{in: in, bad: true}
	}
	return r
}

// decodeConnReport reads the text once, straight into the compact form and
// the stored document, when it is in the form agents write
// (agentjson.ScanConnectivity); any other text is decoded by encoding/json, for
// its meaning or its error, compacted the same way and encoded again.
func decodeConnReport(in *Interner, text string, floor timingFloor) (*ConnReport, string, error) {
	b := newConnBuilder(in, floor)
	if doc, ok := agentjson.ScanConnectivity(text, b.add); ok {
		return b.out, doc, nil
	}
	var r wire.ConnectivityReport
	if err := wire.DecodeEmbedded(text, &r); err != nil {
		return nil, "", err
	}
	doc, err := wire.EncodeEmbedded(&r)
	if err != nil {
		return nil, "", err
	}
	return compactConnectivity(in, &r, floor), doc, nil
}

func compactConnectivity(in *Interner, r *wire.ConnectivityReport, floor timingFloor) *ConnReport {
	b := newConnBuilder(in, floor)
	b.out.peers = make([]connPeer, 0, len(r.RemoteHosts))
	for _, rh := range r.RemoteHosts {
		if rh != nil {
			b.add(rh)
		}
	}
	return b.out
}

// connBuilder compacts a report one remote host at a time. It keeps no
// string of the hosts it is given (the fast reader's are substrings of a
// 300 KB text): the intern tables and the probes kept copy theirs.
type connBuilder struct {
	in    *Interner
	out   *ConnReport
	floor timingFloor
	// Per outgoing interface, the MAC each address (canonical text's
	// index) answered from.
	seenMAC map[string]map[uint32]string
}

func newConnBuilder(in *Interner, floor timingFloor) *connBuilder {
	return &connBuilder{in: in, out: &ConnReport{in: in}, floor: floor, seenMAC: map[string]map[uint32]string{}}
}

func (b *connBuilder) add(rh *wire.ConnectivityRemoteHost) {
	out, names, addrs := b.out, &b.in.names, &b.in.addrs
	peer := names.id(rh.HostID, false)
	start := len(out.reached)
	mark := func(addr string, flag uint32) {
		a := addrs.id(addr, true)
		for i := start; i < len(out.reached); i++ {
			if out.reached[i]&reachedAddr == a {
				out.reached[i] |= flag
				return
			}
		}
		out.reached = append(out.reached, a|flag)
	}
	for _, l2 := range rh.L2Connectivity {
		if l2 == nil {
			continue
		}
		if l2.Successful {
			mark(l2.RemoteIPAddress, reachedL2)
		}
		b.noteMAC(l2)
	}
	for _, l3 := range rh.L3Connectivity {
		if l3 == nil {
			continue
		}
		if l3.Successful {
			mark(l3.RemoteIPAddress, reachedL3)
		}
		if l3.AverageRTTMs > b.floor.latency || l3.PacketLossPercentage > b.floor.loss {
			out.slow = append(out.slow, slowProbe{peer: peer, addr: addrs.id(l3.RemoteIPAddress, true),
				rtt: l3.AverageRTTMs, loss: l3.PacketLossPercentage, successful: l3.Successful})
		}
	}
	for _, m := range rh.MTUReport {
		if m != nil && !m.MTUSuccessful {
			out.mtuBroken = append(out.mtuBroken, mtuProbe{nic: strings.Clone(m.OutgoingNic), addr: strings.Clone(m.RemoteIPAddress)})
		}
	}
	out.peers = append(out.peers, connPeer{id: peer, end: uint32(len(out.reached))})
}

// noteMAC records an address answering from a second MAC on the same
// outgoing interface (assisted's getCollidingIPs). Loopback and link-local
// addresses are left out.
func (b *connBuilder) noteMAC(l2 *wire.L2Connectivity) {
	if l2.RemoteMAC == "" || l2.RemoteIPAddress == "" {
		return
	}
	r, seen, addrs := b.out, b.seenMAC, &b.in.addrs
	ip, key := addrs.canonical(addrs.id(l2.RemoteIPAddress, true))
	if ip == nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
		return
	}
	// seen lives while one report is compacted; the collisions kept copy
	// their strings.
	macs := seen[l2.OutgoingNic]
	if macs == nil {
		macs = map[uint32]string{}
		seen[strings.Clone(l2.OutgoingNic)] = macs
	}
	prev, ok := macs[key]
	if ok && !strings.EqualFold(prev, l2.RemoteMAC) {
		r.collisions = append(r.collisions, collision{addrs.str(key), prev, strings.Clone(l2.RemoteMAC)})
	}
	if !ok || prev != l2.RemoteMAC {
		macs[key] = strings.Clone(l2.RemoteMAC)
	}
}

// l2Reaches: the peer answered an L2 probe on an address in n; for IPv6,
// where NDP replies get lost, an L3 answer in n also counts (as in
// assisted).
func (r *ConnReport) l2Reaches(i int, n *net.IPNet) bool {
	v6 := n.IP.To4() == nil
	for _, a := range r.run(i) {
		if a&reachedL2 == 0 && !(v6 && a&reachedL3 != 0) {
			continue
		}
		if ip := r.in.addrs.ip(a & reachedAddr); ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// anyReached: the peer answered at least one probe of the kind (reachedL2
// or reachedL3).
func (r *ConnReport) anyReached(i int, flag uint32) bool {
	for _, a := range r.run(i) {
		if a&flag != 0 {
			return true
		}
	}
	return false
}
