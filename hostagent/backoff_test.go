package hostagent

import (
	"context"
	"testing"
	"time"
)

// TestGetBackoffBounds checks the sequence against the real agent's policy:
// interval 0.5 s ×1.5 up to 60 s, each delay within ±50 % of it and never
// above 60 s.
func TestGetBackoffBounds(t *testing.T) {
	for run := range 50 {
		b := getBackoff()
		interval := 500 * time.Millisecond
		for i := range 20 {
			d := b.Next()
			lo, hi := interval/2, min(interval*3/2, 60*time.Second)
			if d < lo || d > hi {
				t.Fatalf("run %d, delay %d = %s, want within [%s, %s]", run, i+1, d, lo, hi)
			}
			interval = min(time.Duration(float64(interval)*1.5), 60*time.Second)
		}
		if b.cur != 60*time.Second {
			t.Fatalf("interval after 20 steps = %s, want capped at 60s", b.cur)
		}
		b.Reset()
		if d := b.Next(); d > 750*time.Millisecond {
			t.Fatalf("first delay after Reset = %s, want <= 750ms", d)
		}
	}
}

func TestBackoffWithoutJitter(t *testing.T) {
	b := backoff{initial: time.Second, factor: 2, max: 5 * time.Second}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays = %v, want %v", got, want)
		}
	}
}

func TestSleep(t *testing.T) {
	if !sleep(context.Background(), time.Millisecond) {
		t.Error("sleep(1ms) = false, want true")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if sleep(ctx, time.Hour) {
		t.Error("sleep(cancelled ctx, 1h) = true, want false")
	}
	if sleep(ctx, 0) {
		t.Error("sleep(cancelled ctx, 0) = true, want false")
	}
}

func TestLogLimiter(t *testing.T) {
	l := newLogLimiter(30 * time.Second)
	t0 := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	steps := []struct {
		name       string
		at         time.Duration
		key, msg   string
		want       bool
		suppressed int
	}{
		{"first", 0, "register", "connection refused", true, 0},
		{"repeat", time.Second, "register", "connection refused", false, 0},
		{"repeat again", 2 * time.Second, "register", "connection refused", false, 0},
		{"other key", 2 * time.Second, "next-steps", "connection refused", true, 0},
		{"new message", 3 * time.Second, "register", "503", true, 2},
		{"window passed", 40 * time.Second, "register", "503", true, 0},
	}
	for _, s := range steps {
		ok, n := l.allow(s.key, s.msg, t0.Add(s.at))
		if ok != s.want || n != s.suppressed {
			t.Errorf("%s: allow = %v, %d; want %v, %d", s.name, ok, n, s.want, s.suppressed)
		}
	}
	l.forget("register")
	if ok, _ := l.allow("register", "503", t0.Add(41*time.Second)); !ok {
		t.Error("allow after forget = false, want true")
	}
}
