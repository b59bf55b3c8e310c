package validation

import (
	"slices"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// report returns the host's compacted connectivity report: Conn, else its
// text compacted (callers that hold reports as text: tests; the service
// passes Conn, compacted once on arrival), else nil (none yet).
func (h HostEntry) report() *ConnReport {
	if h.Conn != nil {
		return h.Conn
	}
	if h.Host == nil || h.Host.Connectivity == "" {
		return nil
	}
	return parseConnReport(h.Host.Connectivity, keepAll)
}

// parseMajorityGroups returns a cluster's majority groups document parsed
// (shared: read only). Every host validation reads its cluster's, and a
// cluster's groups list every host (another square of the cluster size per
// evaluation), so the parse is kept (docCache).
func parseMajorityGroups(text string) (*Connectivity, error) {
	conn, err := majorityGroupsDocs.parse(text)
	if conn == nil && err == nil {
		return noGroups, nil // the text is null
	}
	return conn, err
}

// noGroups is a groups document that lists none (shared: read only).
var noGroups = &Connectivity{}

// connInput is what the connectivity aggregates (majority groups, address
// collisions) read of one host: its report and its inventory's addresses.
// Inventories and reports are replaced, never changed in place, so their
// pointers stand for their content.
type connInput struct {
	id   string
	conn *ConnReport
	inv  *wire.Inventory
}

func connInputsOf(hosts []HostEntry) []connInput {
	out := make([]connInput, len(hosts))
	for i, h := range hosts {
		if h.Host != nil {
			out[i] = connInput{id: h.Host.ID, conn: h.report(), inv: h.Inventory}
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
