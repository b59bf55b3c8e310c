package validation

import (
	"encoding/json"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// The validations read some documents, kept as JSON text, on every
// evaluation: the DNS checks a host's domain resolutions four times, the
// NTP check its sources, every host check its cluster's majority groups. At a thousand hosts an evaluation
// revalidates every host, several times a second while reports come in,
// and the texts rarely change (and are often the same on every host). So
// each text's parse is kept, by the text itself; what is kept is shared
// and only ever read.

// docCache memoizes the parse of texts of one kind.
type docCache[T any] struct {
	mu sync.Mutex
	m  map[string]docParse[T]
}

type docParse[T any] struct {
	v   T
	err error
}

// maxCachedDocs bounds a docCache: past it the cache starts again empty
// (a thousand hosts' texts, several times over).
const maxCachedDocs = 4096

func (c *docCache[T]) parse(text string) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.m[text]; ok {
		return p.v, p.err
	}
	var p docParse[T]
	p.err = json.Unmarshal([]byte(text), &p.v)
	if c.m == nil || len(c.m) >= maxCachedDocs {
		c.m = map[string]docParse[T]{}
	}
	c.m[text] = p
	return p.v, p.err
}

var (
	resolutionDocs     docCache[wire.DomainResolutionResponse]
	ntpDocs            docCache[[]*wire.NTPSource]
	majorityGroupsDocs docCache[*Connectivity]
)
