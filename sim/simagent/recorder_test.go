package simagent

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func netipMust(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(hundred...), 99, 99 * time.Millisecond},
		{"max", ms(hundred...), 100, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %g) = %v, want %v", tt.sorted, tt.p, got, tt.want)
			}
		})
	}
}

func TestRecorder(t *testing.T) {
	r := NewRecorder()
	before := time.Now()
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			r.Observe(KindStepReply, time.Duration(i+1)*time.Millisecond, nil)
			r.Observe("zz other", time.Second, nil)
			r.Observe(KindRegister, time.Millisecond, nil)
		})
	}
	wg.Wait()
	r.Observe(KindRegister, time.Hour, errors.New("connection refused"))
	r.Observe(KindRegister, time.Hour, errors.New("later"))
	r.Observe(KindRegister, time.Hour, errors.New("later"))
	// Past maxErrorTexts distinct texts, the rest are lumped together.
	for i := range maxErrorTexts {
		r.Observe(KindProgress, time.Hour, fmt.Errorf("error %02d", i))
	}
	r.Observe(KindProgress, time.Hour, errors.New("one too many"))
	r.Observe(KindProgress, time.Hour, errors.New("two too many"))
	var progressTexts []ErrorText
	for i := range maxErrorTexts {
		progressTexts = append(progressTexts, ErrorText{fmt.Sprintf("error %02d", i), 1})
	}
	progressTexts = append([]ErrorText{{otherErrors, 2}}, progressTexts...)
	want := []Summary{
		{Kind: KindRegister, Count: 100, Errors: 3, FirstError: "connection refused",
			ErrorTexts: []ErrorText{{"later", 2}, {"connection refused", 1}},
			P50:        time.Millisecond, P99: time.Millisecond, Max: time.Millisecond},
		{Kind: KindStepReply, Count: 100, P50: 50 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond},
		{Kind: KindProgress, Errors: maxErrorTexts + 2, FirstError: "error 00", ErrorTexts: progressTexts},
		{Kind: "zz other", Count: 100, P50: time.Second, P99: time.Second, Max: time.Second},
	}
	got := r.Summaries()
	after := time.Now()
	// First and Last are when the first and last successes ended: a kind
	// with none has neither.
	for i := range got {
		if s := &got[i]; s.Count > 0 && (s.First.Before(before) || s.Last.Before(s.First) || s.Last.After(after)) || s.Count == 0 && !(s.First.IsZero() && s.Last.IsZero()) {
			t.Errorf("%s: successes from %v to %v, want between %v and %v (zero with none)", s.Kind, s.First, s.Last, before, after)
		}
		got[i].First, got[i].Last = time.Time{}, time.Time{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summaries (-want +got):\n%s", diff)
	}
}
