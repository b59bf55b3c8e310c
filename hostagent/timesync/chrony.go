package timesync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// ErrNoDaemon is returned (wrapped) when chronyc is missing or cannot talk
// to a chronyd.
var ErrNoDaemon = errors.New("no chronyd to talk to")

// chrony drives a chronyd through chronyc.
type chrony struct {
	cmd      []string
	port     int
	resolver *net.Resolver
}

// run runs chronyc with args and returns its stdout; its stderr goes into
// the error.
func (c *chrony) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, chronycTimeout)
	defer cancel()
	argv := append(slices.Clone(c.cmd[1:]), args...)
	cmd := exec.CommandContext(ctx, c.cmd[0], argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		msg := strings.TrimSpace(stderr.String() + " " + stdout.String())
		var ee *exec.ExitError
		if !errors.As(err, &ee) || noDaemon(msg) {
			return "", fmt.Errorf("chronyc %s: %w: %v: %s", strings.Join(args, " "), ErrNoDaemon, err, msg)
		}
		return "", fmt.Errorf("chronyc %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return stdout.String(), nil
}

// noDaemon reports whether chronyc's message says no chronyd answered: "506
// Cannot talk to daemon" (no answer on the socket or port) or "Could not
// open connection to daemon" (no socket).
func noDaemon(msg string) bool {
	return strings.Contains(msg, "Cannot talk to daemon") || strings.Contains(msg, "connection to daemon")
}

// sync adds the sources chronyd does not have yet and returns its view of
// every source.
func (c *chrony) sync(ctx context.Context, sources []string) (*wire.NTPSynchronizationResponse, error) {
	out, err := c.run(ctx, "-n", "sources")
	if err != nil {
		return nil, err
	}
	have := ParseSources(out)
	added := false
	for _, src := range sources {
		if c.present(ctx, src, have) {
			continue
		}
		args := []string{"add", "server", src}
		if c.port != DefaultPort {
			args = append(args, "port", strconv.Itoa(c.port))
		}
		args = append(args, "iburst")
		if _, err := c.run(ctx, args...); err != nil {
			return nil, fmt.Errorf("add ntp source %s: %w", src, err)
		}
		added = true
	}
	if added {
		if out, err = c.run(ctx, "-n", "sources"); err != nil {
			return nil, err
		}
		have = ParseSources(out)
	}
	// chronyc -n prints addresses; name the requested sources as the
	// service sent them.
	names := map[string]string{}
	for _, src := range sources {
		for _, ip := range c.addrs(ctx, src) {
			names[ip] = src
		}
	}
	resp := &wire.NTPSynchronizationResponse{}
	for _, s := range have {
		if n, ok := names[s.SourceName]; ok {
			s.SourceName = n
		}
		resp.NTPSources = append(resp.NTPSources, s)
	}
	return resp, nil
}

// present reports whether src, or one of its addresses, is already a
// chronyd source.
func (c *chrony) present(ctx context.Context, src string, have []*wire.NTPSource) bool {
	addrs := c.addrs(ctx, src)
	for _, h := range have {
		if h.SourceName == src || slices.Contains(addrs, h.SourceName) {
			return true
		}
	}
	return false
}

// addrs returns the addresses of src: itself when it is an IP, else what
// the resolver gives (none when it fails: chronyd resolves on its own).
func (c *chrony) addrs(ctx context.Context, src string) []string {
	if ip := net.ParseIP(src); ip != nil {
		return []string{ip.String()}
	}
	ips, err := c.resolver.LookupHost(ctx, src)
	if err != nil {
		return nil
	}
	return ips
}

// sourceStates maps the state column of `chronyc sources` (the second
// character of a line) to the wire's states.
var sourceStates = map[byte]wire.SourceState{
	'*': wire.SourceStateSynced,
	'+': wire.SourceStateCombined,
	'-': wire.SourceStateNotCombined,
	'?': wire.SourceStateUnreachable,
	'x': wire.SourceStateError,
	'~': wire.SourceStateVariable,
}

// ParseSources parses the output of `chronyc -n sources`. Like the agent
// it keeps only NTP servers (lines starting with '^'), skipping peers,
// reference clocks, headers and lines with an unknown state.
func ParseSources(out string) []*wire.NTPSource {
	var srcs []*wire.NTPSource
	for _, line := range strings.Split(out, "\n") {
		if len(line) < 2 || line[0] != '^' {
			continue
		}
		state, ok := sourceStates[line[1]]
		if !ok {
			continue
		}
		fields := strings.Fields(line[2:])
		if len(fields) == 0 {
			continue
		}
		srcs = append(srcs, &wire.NTPSource{SourceName: fields[0], SourceState: state})
	}
	return srcs
}
