package validation

import (
	"slices"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// ClusterMemo keeps the last result of a cluster's connectivity aggregates
// (ConnectivityGroups, and the address collisions in Facts). Every
// evaluation recomputes a cluster's aggregates, most often for a change
// they do not read (a role, a status, a progress report), and at a
// thousand hosts each pass walks a million peer entries; when the inputs
// are those of the last call, the last result is returned. The caller owns
// one per cluster and passes it with that cluster's hosts; the package
// keeps none. The zero value is ready; it is safe for concurrent use.
type ClusterMemo struct {
	groups     aggregateMemo[groupsResult]
	collisions aggregateMemo[map[string][]string]
}

type groupsResult struct {
	conn *Connectivity
	err  error
}

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
			out[i] = connInput{id: h.Host.ID, conn: h.Conn, inv: h.Inventory}
		}
	}
	return out
}

// aggregateMemo keeps the last result of one aggregate over the hosts'
// connectivity. What it returns is shared: read only.
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
