package testenv

import (
	"testing"
	"time"
)

// Poll calls cond every 100 ms until it reports done, and returns how long
// that took (a reconcile latency, when the test made the change just
// before). It fails the test with what and cond's last message when the
// deadline passes: deadlines are generous (a loaded 2-core machine), the
// states polled for are exact.
func Poll(t testing.TB, what string, timeout time.Duration, cond func() (done bool, msg string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		done, msg := cond()
		if done {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %s: %s", what, timeout, msg)
		}
		<-tick.C
	}
}
