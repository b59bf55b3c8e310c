// Package timesync runs the ntp-synchronizer step (docs/reference/agent-and-installer.md
// §2.6): it makes the host's chronyd use the NTP sources the service asks
// for and reports each source's state. A host without a chronyd answering
// is checked with a small SNTP client (RFC 4330) in Go instead, against the
// requested sources only: never a default pool.
//
// timesync imports only the wire package.
package timesync

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// Defaults for Options fields left zero.
const (
	DefaultPort       = 123
	DefaultTimeout    = 5 * time.Second
	DefaultMaxOffset  = 10 * time.Minute
	chronycTimeout    = 30 * time.Second // the agent's "timeout 30 chronyc -n sources"
	ntpSourceMaxCount = 64
)

// Options configure the step. The zero value checks with SNTP on port 123.
type Options struct {
	// Chronyc is the chronyc command and its leading arguments, for example
	// {"chronyc"} or {"chronyc", "-h", "/run/test/chronyd.sock"}. Empty
	// means no chrony: SNTP only. When chronyc cannot reach a chronyd the
	// step falls back to SNTP too.
	Chronyc []string
	// Port is the NTP port of every source (both for chrony and SNTP);
	// 0 means 123. Tests point it at their own server.
	Port int
	// Timeout bounds one SNTP exchange; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxOffset is the largest |offset| between the host clock and an SNTP
	// source still reported synced; a larger one is reported "error" (the
	// state chrony gives a source it cannot trust). 0 means DefaultMaxOffset.
	MaxOffset time.Duration
	// Resolver resolves source names; nil means net.DefaultResolver.
	Resolver *net.Resolver
}

// DefaultOptions returns the options of a real host: chronyc from PATH if it
// is installed, SNTP otherwise.
func DefaultOptions() Options {
	var o Options
	if p, err := exec.LookPath("chronyc"); err == nil {
		o.Chronyc = []string{p}
	}
	return o
}

func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOffset == 0 {
		o.MaxOffset = DefaultMaxOffset
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	return o
}

// Step returns the ntp-synchronizer step function, shaped as
// step.Func. Invalid args answer -1 with the real agent's message.
func Step(opts Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	opts = opts.withDefaults()
	return func(ctx context.Context, args []string) (string, string, int) {
		sources, err := DecodeArgs(args)
		if err != nil {
			return step.NotRun(err)
		}
		resp, err := Check(ctx, opts, sources)
		if err != nil {
			return "", err.Error(), 1
		}
		out, err := wire.EncodeEmbedded(resp)
		if err != nil {
			return "", err.Error(), 1
		}
		return out, "", 0
	}
}

// DecodeArgs decodes the step's single arg and returns the requested
// sources, validated as the service's ValidateAdditionalNTPSource does (each
// an IP address or a host name). An empty ntp_source asks for none.
func DecodeArgs(args []string) ([]string, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("ntp synchronizer cmd accepts 1 params in args, given args %v", args)
	}
	var req wire.NTPSynchronizationRequest
	if err := wire.DecodeEmbedded(args[0], &req); err != nil {
		return nil, fmt.Errorf("ntp synchronizer args: %w", err)
	}
	if req.NTPSource == "" {
		return nil, nil
	}
	parts := strings.Split(req.NTPSource, ",")
	if len(parts) > ntpSourceMaxCount {
		return nil, errInvalidSource(req.NTPSource)
	}
	for _, s := range parts {
		if !validSource(s) {
			return nil, errInvalidSource(req.NTPSource)
		}
	}
	return parts, nil
}

// errInvalidSource is the real agent's message for a bad ntp_source,
// capitalised as the agent writes it.
func errInvalidSource(s string) error {
	//lint:ignore ST1005 the real agent's wording, which the service may show
	return fmt.Errorf("Invalid NTP source: %s", s)
}

// validSource reports whether s is an IP address or a DNS host name.
func validSource(s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	return validHostname(s)
}

// validHostname reports whether s is a DNS name: dot-separated labels of
// letters, digits and inner hyphens, each 1–63 bytes, 253 in all, an
// optional final dot.
func validHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Check reports the state of each source. With chronyc set and a chronyd
// answering, it adds the sources chronyd lacks and reports chronyd's view
// of all its sources, as the agent does; otherwise it queries each source
// with SNTP.
func Check(ctx context.Context, opts Options, sources []string) (*wire.NTPSynchronizationResponse, error) {
	opts = opts.withDefaults()
	if len(opts.Chronyc) > 0 {
		c := &chrony{cmd: opts.Chronyc, port: opts.Port, resolver: opts.Resolver}
		resp, err := c.sync(ctx, sources)
		if err == nil {
			return resp, nil
		}
		if !errors.Is(err, ErrNoDaemon) {
			return nil, err
		}
		// No chronyd to talk to: SNTP gives the service an answer it can
		// use rather than none.
	}
	return checkSNTP(ctx, opts, sources), nil
}
