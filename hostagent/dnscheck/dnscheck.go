// Package dnscheck runs the domain-resolution step (docs/reference/agent-and-installer.md
// §2.7): it resolves each name the service asks about with the host's
// resolver and reports its IPv4 and IPv6 addresses and CNAME. A name that
// does not exist is an answer, not an error.
//
// dnscheck imports only the wire package.
package dnscheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// DefaultTimeout bounds the lookups of one name.
const DefaultTimeout = 10 * time.Second

// Options configure the step. The zero value uses the host's resolver.
type Options struct {
	// Server is a DNS server "host:port" to ask instead of the host's
	// resolv.conf servers (tests run their own).
	Server string
	// Timeout bounds the lookups of one name; 0 means DefaultTimeout.
	Timeout time.Duration
}

// resolver returns the resolver the options ask for.
func (o Options) resolver() *net.Resolver { return Resolver(o.Server) }

// Resolver is a resolver that asks server ("host:port") only, never the
// host's resolv.conf servers; "" is the system's resolver. The sandbox's
// hosts and the tests name their own DNS server with it.
func Resolver(server string) *net.Resolver {
	if server == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, server)
		},
	}
}

// Step returns the domain-resolution step function, shaped as
// step.Func. Invalid args answer -1 with the real agent's message.
func Step(opts Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	return func(ctx context.Context, args []string) (string, string, int) {
		names, err := DecodeArgs(args)
		if err != nil {
			return step.NotRun(err)
		}
		resp := Resolve(ctx, opts, names)
		out, err := wire.EncodeEmbedded(resp)
		if err != nil {
			return "", err.Error(), 1
		}
		return out, "", 0
	}
}

// DecodeArgs decodes the step's single arg and returns the names to
// resolve. Every domain needs a name.
func DecodeArgs(args []string) ([]string, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("domain resolution cmd accepts 1 params in args, given args %v", args)
	}
	var req wire.DomainResolutionRequest
	if err := wire.DecodeEmbedded(args[0], &req); err != nil {
		return nil, fmt.Errorf("domain resolution args: %w", err)
	}
	names := make([]string, 0, len(req.Domains))
	for _, d := range req.Domains {
		if d == nil || d.DomainName == "" {
			//lint:ignore ST1005 the real agent's wording
			return nil, errors.New("Every domain in a domain request must have a domain name field")
		}
		names = append(names, d.DomainName)
	}
	return names, nil
}

// Resolve looks up every name at once and returns the resolutions in the
// order given. A lookup that fails leaves that name's lists empty, as the
// agent does; the service judges the empty answer.
func Resolve(ctx context.Context, opts Options, names []string) *wire.DomainResolutionResponse {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	r := opts.resolver()
	resp := &wire.DomainResolutionResponse{Resolutions: make([]*wire.DomainResolutionResponseResolutionsItem, len(names))}
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
			defer cancel()
			resp.Resolutions[i] = resolveOne(ctx, r, name)
		}()
	}
	wg.Wait()
	return resp
}

// resolveOne resolves one name: its addresses and, when the name is an
// alias, the canonical name it points at.
func resolveOne(ctx context.Context, r *net.Resolver, name string) *wire.DomainResolutionResponseResolutionsItem {
	res := &wire.DomainResolutionResponseResolutionsItem{DomainName: name}
	ips, err := r.LookupIP(ctx, "ip", name)
	if err != nil {
		// Not found is the expected answer for a missing record; other
		// failures (timeout, refused) read the same to the service: no
		// addresses.
		return res
	}
	for _, ip := range ips {
		if ip4 := ip.To4(); ip4 != nil {
			res.IPv4Addresses = append(res.IPv4Addresses, ip4.String())
		} else {
			res.IPv6Addresses = append(res.IPv6Addresses, ip.String())
		}
	}
	if cname, err := r.LookupCNAME(ctx, name); err == nil && !sameName(cname, name) {
		res.Cnames = []string{strings.TrimSuffix(cname, ".")}
	}
	return res
}

// sameName compares two DNS names ignoring case and a final dot.
func sameName(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}
