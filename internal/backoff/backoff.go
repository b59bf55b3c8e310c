// Package backoff is how nodezero waits between retries: capped, jittered,
// exponentially growing delays, and a sleep that ends early when its
// context does. The agent's instruction loop, the simulated agent, the
// installer's progress reports, the ARP prober, registration and the
// sandbox's host supervisor all wait through it. It imports only the
// standard library.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff yields delays Initial, Initial×Factor, … up to Max, each moved by
// up to ±Jitter of itself (0.5 is ±50 %) and never above Max. The zero
// value of its state starts the sequence; Reset starts it again.
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Jitter  float64
	Max     time.Duration

	cur time.Duration
}

// Agent is the real agent's policy on a failed request: the defaults of
// cenkalti/backoff's ExponentialBackOff that it uses (docs/reference/agent-and-installer.md
// §1.6): 0.5 s, ×1.5, ±50 %, 60 s. Unlike that library, the jittered delay
// itself is capped too, so a reconnect never waits more than 60 s.
func Agent() Backoff {
	return Backoff{Initial: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Max: 60 * time.Second}
}

// Next returns the next delay.
func (b *Backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.Initial
	} else {
		b.cur = min(time.Duration(float64(b.cur)*b.Factor), b.Max)
	}
	d := b.cur
	if b.Jitter > 0 {
		d = time.Duration(float64(d) * (1 - b.Jitter + 2*b.Jitter*rand.Float64()))
	}
	return max(min(d, b.Max), 0)
}

// Reset starts the sequence again.
func (b *Backoff) Reset() { b.cur = 0 }

// Sleep waits d or until ctx is done; it reports whether d elapsed (false
// at once when ctx is already done, whatever d).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
