package loadtest

import (
	"testing"
	"time"
)

// TestLoadtestCadence: --cadence upstream and --wait 0 are one mode, whose
// agents never send ?wait=.
func TestLoadtestCadence(t *testing.T) {
	tests := []struct {
		name        string
		cadence     string
		wait        time.Duration
		waitSet     bool
		wantCadence string
		wantWait    time.Duration
	}{
		{"default", LongPoll, 30 * time.Second, false, LongPoll, 30 * time.Second},
		{"long-poll with a wait", LongPoll, time.Second, true, LongPoll, time.Second},
		{"--wait 0", LongPoll, 0, true, Upstream, 0},
		{"--cadence upstream", Upstream, 30 * time.Second, false, Upstream, 0},
		{"--cadence upstream --wait 0", Upstream, 0, true, Upstream, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Hosts: 1, Agents: "sim", Runs: 1, Idle: time.Second, Poll: time.Second, Timeout: time.Second,
				InstallPoll: time.Second, InstallTimeout: time.Second, Cadence: tt.cadence, Wait: tt.wait}
			if err := o.Check(tt.waitSet); err != nil {
				t.Fatalf("check: %v", err)
			}
			if o.Cadence != tt.wantCadence || o.Wait != tt.wantWait {
				t.Errorf("cadence %q, wait %s; want %q, %s", o.Cadence, o.Wait, tt.wantCadence, tt.wantWait)
			}
		})
	}
}

func TestListenWatcher(t *testing.T) {
	w := &listenWatcher{found: make(chan string, 1)}
	chunks := []string{"nodezero service: made a key pair\nnodezero serv", "ice: listening on http://127.0.0.1:4",
		"1234/api/assisted-install/v2\n", "more output\n"}
	for _, c := range chunks {
		if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", c, n, err)
		}
	}
	select {
	case got := <-w.found:
		if got != "http://127.0.0.1:41234" {
			t.Errorf("found %q, want http://127.0.0.1:41234", got)
		}
	default:
		t.Fatal("no URL found")
	}
}

func TestLtMedian(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}
