package validation

import (
	"encoding/json"
	"sync"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// connCacheBytes bounds the text of the connectivity reports kept parsed.
// A report lists every other host, so a cluster's reports grow with the
// square of its size: 16 MiB holds a full mesh of about 190 hosts (a
// parsed report takes about as much memory as its text, which the host
// holds anyway). Past that the cache keeps what fits and the rest is
// parsed on every use, as before there was a cache.
const connCacheBytes = 16 << 20

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
