package hostagent

import (
	"sync"
	"time"
)

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
