package hostagent

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// backoff yields capped, jittered, exponentially growing delays.
type backoff struct {
	initial time.Duration
	factor  float64
	jitter  float64 // ±fraction of the current interval
	max     time.Duration

	cur time.Duration
}

// getBackoff is the instruction loop's policy on a failed GET: the defaults
// of cenkalti/backoff's ExponentialBackOff that the real agent uses
// (agent-and-installer.md §1.6): 0.5 s, ×1.5, ±50 %, 60 s. Unlike that
// library, the jittered delay itself is capped too, so a reconnect never
// waits more than 60 s.
func getBackoff() backoff {
	return backoff{initial: 500 * time.Millisecond, factor: 1.5, jitter: 0.5, max: 60 * time.Second}
}

// Next returns the next delay.
func (b *backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.initial
	} else {
		b.cur = min(time.Duration(float64(b.cur)*b.factor), b.max)
	}
	d := b.cur
	if b.jitter > 0 {
		d = time.Duration(float64(d) * (1 - b.jitter + 2*b.jitter*rand.Float64()))
	}
	return max(min(d, b.max), 0)
}

// Reset starts the sequence again.
func (b *backoff) Reset() { b.cur = 0 }

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
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

// logLimiter rate-limits repeated error logs: a key logs when its message
// changed or when every has passed since it last logged, and reports how
// many logs it swallowed in between.
type logLimiter struct {
	every time.Duration

	mu   sync.Mutex
	last map[string]limited
}

type limited struct {
	at         time.Time
	msg        string
	suppressed int
}

func newLogLimiter(every time.Duration) *logLimiter {
	return &logLimiter{every: every, last: map[string]limited{}}
}

// allow reports whether to log msg under key now, and how many logs under
// key were suppressed since the last one.
func (l *logLimiter) allow(key, msg string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.last[key]
	if ok && e.msg == msg && now.Sub(e.at) < l.every {
		e.suppressed++
		l.last[key] = e
		return false, 0
	}
	l.last[key] = limited{at: now, msg: msg}
	return true, e.suppressed
}

// forget clears key, so its next failure logs at once (after a recovery).
func (l *logLimiter) forget(key string) {
	l.mu.Lock()
	delete(l.last, key)
	l.mu.Unlock()
}
