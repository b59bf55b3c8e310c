package backoff

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAgentBounds checks the sequence against the real agent's policy:
// interval 0.5 s ×1.5 up to 60 s, each delay within ±50 % of it and never
// above 60 s.
func TestAgentBounds(t *testing.T) {
	for run := range 50 {
		b := Agent()
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

func TestWithoutJitter(t *testing.T) {
	b := Backoff{Initial: time.Second, Factor: 2, Max: 5 * time.Second}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("delays (-want +got):\n%s", d)
	}
}

func TestJitterNeverAboveMax(t *testing.T) {
	b := Backoff{Initial: time.Second, Factor: 2, Jitter: 0.25, Max: 2 * time.Second}
	for i := range 200 {
		if d := b.Next(); d > 2*time.Second || d < 750*time.Millisecond {
			t.Fatalf("delay %d = %s, want within [750ms, 2s]", i, d)
		}
	}
}

func TestSleep(t *testing.T) {
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep(1ms) = false, want true")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep(cancelled ctx, 1h) = true, want false")
	}
	if Sleep(ctx, 0) {
		t.Error("Sleep(cancelled ctx, 0) = true, want false")
	}
}
