package loadtest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options are one load test: the command's flags.
type Options struct {
	Hosts    int
	Agents   string // "real" or "sim"
	Runs     int
	Startups int // extra service starts for the startup figure
	Idle     time.Duration
	Cadence  string // LongPoll or Upstream
	Wait     time.Duration
	Poll     time.Duration // how often the cluster is polled while hosts come up
	Ramp     time.Duration
	Timeout  time.Duration
	Bin      string // the nodezero binary run as the service and the real agents
	// Dir is the work directory, kept afterwards; "" is a temporary
	// directory, removed after a run that succeeded.
	Dir   string
	HW    string // the hardware trees of real agents
	Pprof string // the run services' --pprof address
	// The install after the idle window (simulated agents only).
	Install        bool
	DiskMiB        int
	Write          time.Duration
	Reboot         time.Duration
	InstallPoll    time.Duration
	InstallTimeout time.Duration
}

// The agents' cadences (Options.Cadence).
const (
	// LongPoll: each instructions request carries ?wait=, as nodezero's
	// agent sends it; node zero answers when a step is due.
	LongPoll = "long-poll"
	// Upstream: no ?wait=; the agent sleeps next_instruction_seconds
	// between requests, as assisted-installer-agent does.
	Upstream = "upstream"
)

// Hardware are the test hardware trees real agents run on, in start
// order: three control-plane hosts, then workers.
var Hardware = []string{"master-0", "master-1", "master-2", "worker-0", "worker-1"}

// Masters is how many control-plane hosts the load test's cluster has.
const Masters = 3

const (
	// The real agents' VIPs: loopback addresses no agent takes (agents are
	// 127.0.0.11 and up, as in the issue).
	realAPIVIP     = "127.0.0.100"
	realIngressVIP = "127.0.0.101"
	// pullSecret passes the pull secret check; it opens nothing.
	pullSecret = `{"auths":{"quay.io":{"auth":"bG9hZHRlc3Q6bm90LWEtc2VjcmV0","email":"loadtest@example.com"}}}`
)

// Check checks the options and settles the cadence: --wait 0 is the
// upstream one, which never long-polls (waitSet: --wait was given).
func (o *Options) Check(waitSet bool) error {
	var probs []string
	switch {
	case o.Cadence == Upstream && waitSet && o.Wait != 0:
		probs = append(probs, fmt.Sprintf("--cadence %s --wait %s: upstream agents never long-poll; leave out --wait", Upstream, o.Wait))
	case o.Cadence == Upstream:
		o.Wait = 0
	case o.Cadence == LongPoll && o.Wait == 0:
		o.Cadence = Upstream
	case o.Cadence != LongPoll:
		probs = append(probs, fmt.Sprintf("--cadence %q: want %s or %s", o.Cadence, LongPoll, Upstream))
	}
	switch o.Agents {
	case "sim":
	case "real":
		if o.Hosts > len(Hardware) {
			probs = append(probs, fmt.Sprintf("--hosts %d: real agents run on %d hardware trees at most", o.Hosts, len(Hardware)))
		}
	default:
		probs = append(probs, fmt.Sprintf("--agents %q: want real or sim", o.Agents))
	}
	if o.Agents == "real" && o.Hosts <= len(Hardware) {
		for _, hw := range Hardware[:max(o.Hosts, 0)] {
			if _, err := os.Stat(filepath.Join(o.HW, hw)); err != nil {
				probs = append(probs, fmt.Sprintf("--hw %s: %v (run from the repository root or pass --hw)", o.HW, err))
				break
			}
		}
	}
	if o.Hosts < 1 {
		probs = append(probs, fmt.Sprintf("--hosts %d: want at least 1", o.Hosts))
	}
	if o.Runs < 1 || o.Startups < 0 {
		probs = append(probs, fmt.Sprintf("--runs %d, --startups %d: want at least 1 run", o.Runs, o.Startups))
	}
	if o.Pprof != "" {
		if ap, err := netip.ParseAddrPort(o.Pprof); err != nil || !ap.Addr().IsLoopback() {
			probs = append(probs, fmt.Sprintf("--service-pprof %q: want a loopback address and port", o.Pprof))
		}
	}
	if o.Idle <= 0 || o.Poll <= 0 || o.Timeout <= 0 || o.Wait < 0 || o.Ramp < 0 {
		probs = append(probs, "--idle, --poll and --timeout must be positive, --wait and --ramp not negative")
	}
	if o.DiskMiB < 0 || o.Write < 0 || o.Reboot < 0 || o.InstallPoll <= 0 || o.InstallTimeout <= 0 {
		probs = append(probs, "--disk-mib, --write and --reboot must not be negative, --install-poll and --install-timeout positive")
	}
	if len(probs) > 0 {
		return fmt.Errorf("loadtest: %s", strings.Join(probs, "; "))
	}
	return nil
}
