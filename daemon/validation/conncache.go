package validation

import (
	"encoding/json"
	"slices"
	"sync"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// connCacheBytes bounds the text of the connectivity reports kept parsed.
// A report lists every other host, so a cluster's reports grow with the
// square of its size: about 300 MiB of text at a thousand hosts. The
// cluster facts hold every current host's parsed report anyway (peers),
// and these are the same objects, so the cache costs memory only for the
// reports of hosts gone or reported again, which this bounds; 512 MiB
// covers the full mesh of about 1,300 hosts. Past that the cache keeps
// what fits and the rest is parsed on every use. A variable for tests.
var connCacheBytes = 512 << 20

// connCache memoises each host's parsed connectivity report. The same
// report is read by every validation of its host (latency, packet loss,
// MTU), by the cluster facts and majority groups of every evaluation and
// by every monitor round, and it changes only when the agent posts a new
// one: parsing a hundred-peer report takes a few hundred µs, and it was
// done several times per host per request. An entry is used only while
// the host's text is the one it was parsed from (equal strings, usually
// the very same bytes), so nothing needs invalidating. The parsed reports
// are shared: read them, never change them.
var connCache = struct {
	sync.Mutex
	hosts map[string]connEntry
	bytes int
}{hosts: map[string]connEntry{}}

type connEntry struct {
	text   string
	report *v2.ConnectivityReport
}

// parseConnectivity returns host id's connectivity report text parsed,
// from the cache when it holds the same text.
func parseConnectivity(id, text string) (*v2.ConnectivityReport, error) {
	connCache.Lock()
	e, ok := connCache.hosts[id]
	connCache.Unlock()
	if ok && e.text == text {
		return e.report, nil
	}
	r := new(v2.ConnectivityReport)
	if err := json.Unmarshal([]byte(text), r); err != nil {
		return nil, err
	}
	if len(text) > connCacheBytes/4 {
		return r, nil // one report must not push out the rest
	}
	connCache.Lock()
	defer connCache.Unlock()
	if old, ok := connCache.hosts[id]; ok {
		connCache.bytes -= len(old.text)
		delete(connCache.hosts, id)
	}
	// Make room by dropping arbitrary hosts (map order): a cluster too big
	// for the budget gains nothing from a finer policy.
	for k, old := range connCache.hosts {
		if connCache.bytes+len(text) <= connCacheBytes {
			break
		}
		connCache.bytes -= len(old.text)
		delete(connCache.hosts, k)
	}
	connCache.hosts[id] = connEntry{text: text, report: r}
	connCache.bytes += len(text)
	return r, nil
}

// groupsCache holds the last cluster.connectivity_majority_groups parsed:
// every host validation reads its cluster's, and a cluster's groups list
// every host (another square of the cluster size per evaluation). One
// entry serves the one cluster node zero installs; with several, a miss
// parses as before.
var groupsCache struct {
	sync.Mutex
	text string
	conn *Connectivity
}

// parseMajorityGroups returns a cluster's majority groups document parsed
// (shared: read only).
func parseMajorityGroups(text string) (*Connectivity, error) {
	groupsCache.Lock()
	conn, last := groupsCache.conn, groupsCache.text
	groupsCache.Unlock()
	if conn != nil && last == text {
		return conn, nil
	}
	conn = new(Connectivity)
	if err := json.Unmarshal([]byte(text), conn); err != nil {
		return nil, err
	}
	groupsCache.Lock()
	groupsCache.text, groupsCache.conn = text, conn
	groupsCache.Unlock()
	return conn, nil
}

// connInput is what the connectivity aggregates (majority groups, address
// collisions) read of one host: its report and its inventory's addresses.
// Inventories are replaced, never changed in place, so the pointer stands
// for the content; equal report strings are usually the same bytes, which
// compare at once.
type connInput struct {
	id, conn string
	inv      *v2.Inventory
}

func connInputsOf(hosts []HostEntry) []connInput {
	out := make([]connInput, len(hosts))
	for i, h := range hosts {
		if h.Host != nil {
			out[i] = connInput{id: h.Host.ID, conn: h.Host.Connectivity, inv: h.Inventory}
		}
	}
	return out
}

// aggregateMemo keeps the last result of an aggregate over the hosts'
// connectivity. Every evaluation recomputes the cluster's aggregates, most
// often for a change they do not read (a role, a status, a progress
// report), and at a thousand hosts each pass walks a million peer entries;
// when the inputs are the same as last time, the last result is returned
// (shared: read only).
type aggregateMemo[T any] struct {
	mu    sync.Mutex
	key   []connInput
	extra int64 // a cluster setting the aggregate also reads
	val   T
	valid bool
}

func (m *aggregateMemo[T]) get(hosts []HostEntry, extra int64, compute func() T) T {
	key := connInputsOf(hosts)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.valid && m.extra == extra && slices.Equal(m.key, key) {
		return m.val
	}
	m.val, m.key, m.extra, m.valid = compute(), key, extra, true
	return m.val
}
