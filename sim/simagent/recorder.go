package simagent

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Recorder is an Observer that keeps every latency, per request kind, and
// summarises them. It is safe for concurrent use. A thousand agents make a
// few requests a second once idle, so keeping every sample is cheap.
type Recorder struct {
	mu    sync.Mutex
	kinds map[string]*series
}

type series struct {
	d        []time.Duration // successful requests
	first    time.Time       // when the first successful one ended
	last     time.Time       // when the last successful one ended
	errors   int
	firstErr string
	byText   map[string]int // errors by text, at most maxErrorTexts of them
}

// maxErrorTexts bounds the distinct error texts a kind keeps; the rest are
// counted under otherErrors.
const maxErrorTexts = 20

const otherErrors = "(other errors)"

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder { return &Recorder{kinds: map[string]*series{}} }

// Observe implements Observer.
func (r *Recorder) Observe(kind string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.kinds[kind]
	if s == nil {
		s = &series{d: make([]time.Duration, 0, 1024)}
		r.kinds[kind] = s
	}
	if err != nil {
		text := err.Error()
		if s.errors == 0 {
			s.firstErr = text
			s.byText = map[string]int{}
		}
		s.errors++
		if _, ok := s.byText[text]; !ok && len(s.byText) >= maxErrorTexts {
			text = otherErrors
		}
		s.byText[text]++
		return
	}
	s.d = append(s.d, d)
	s.last = time.Now()
	if s.first.IsZero() {
		s.first = s.last
	}
}

// Summary is the latency of one request kind. Percentiles are over the
// successful requests, by nearest rank.
type Summary struct {
	Kind       string
	Count      int // successful requests
	Errors     int
	FirstError string
	// ErrorTexts counts the errors by text, most frequent first.
	ErrorTexts []ErrorText
	P50, P99   time.Duration
	Max        time.Duration
	// First and Last are when the first and the last successful request
	// ended: with a ramp, when that phase began and was over.
	First, Last time.Time
}

// ErrorText is how often one error happened.
type ErrorText struct {
	Text  string
	Count int
}

// kindOrder is the table order: the agent's requests in protocol order,
// then the install's, then any other kind by name.
var kindOrder = []string{KindRegister, KindNextSteps, KindNextStepsHeld, KindNextStepsPoll, KindStepReply, KindStepReplyConnectivity,
	KindIgnition, KindProgress, KindClusterHosts, KindGetCluster, KindComplete}

// Summaries returns one summary per kind seen, in table order.
func (r *Recorder) Summaries() []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.kinds))
	for k := range r.kinds {
		names = append(names, k)
	}
	rank := func(k string) int {
		if i := slices.Index(kindOrder, k); i >= 0 {
			return i
		}
		return len(kindOrder)
	}
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	out := make([]Summary, 0, len(names))
	for _, k := range names {
		s := r.kinds[k]
		d := slices.Clone(s.d)
		slices.Sort(d)
		var texts []ErrorText
		for t, n := range s.byText {
			texts = append(texts, ErrorText{Text: t, Count: n})
		}
		slices.SortFunc(texts, func(a, b ErrorText) int {
			if a.Count != b.Count {
				return b.Count - a.Count
			}
			return strings.Compare(a.Text, b.Text)
		})
		out = append(out, Summary{Kind: k, Count: len(d), Errors: s.errors, FirstError: s.firstErr, ErrorTexts: texts,
			P50: Percentile(d, 50), P99: Percentile(d, 99), Max: Percentile(d, 100), First: s.first, Last: s.last})
	}
	return out
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by
// nearest rank, or 0 for no samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(len(sorted))*p/100)) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
