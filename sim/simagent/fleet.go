package simagent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// DefaultAgentVersion is what simulated agents report as their version: an
// image reference of the length an ABI host sends.
const DefaultAgentVersion = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:5e1ad0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0"

// FleetConfig is a set of simulated agents sharing one service.
type FleetConfig struct {
	URL        string // the service base URL, e.g. http://127.0.0.1:8090
	Token      string // the agent token (X-Secret-Key)
	InfraEnvID string
	Hosts      int // how many agents
	// Masters is how many of the hosts, the first ones, are master-class
	// hardware; the rest are worker-class.
	Masters int
	// Network holds the hosts' addresses and the VIPs; zero means
	// DefaultNetwork.
	Network netip.Prefix
	Wait    time.Duration
	// Ramp spreads the agents' starts evenly over this long; 0 starts
	// them all at once, as when a rack powers on together.
	Ramp         time.Duration
	AgentVersion string   // "" means DefaultAgentVersion
	Observer     Observer // nil: none
	// Install is how the hosts run the install step; its zero value
	// refuses it.
	Install InstallConfig
}

// Fleet is a running set of simulated agents.
type Fleet struct {
	hosts  []Host
	tr     *http.Transport
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartFleet starts cfg.Hosts agents, all at once, and returns while they
// register. Stop ends them.
func StartFleet(ctx context.Context, cfg FleetConfig) (*Fleet, error) {
	if cfg.Hosts <= 0 || cfg.Ramp < 0 {
		return nil, fmt.Errorf("start fleet: %d hosts, ramp %s: want hosts and a ramp of 0 or more", cfg.Hosts, cfg.Ramp)
	}
	if !cfg.Network.IsValid() {
		cfg.Network = DefaultNetwork
	}
	if n := MaxHosts(cfg.Network); cfg.Hosts > n {
		return nil, fmt.Errorf("start fleet: %w: %s holds %d hosts, not %d", ErrNetwork, cfg.Network, n, cfg.Hosts)
	}
	if cfg.AgentVersion == "" {
		cfg.AgentVersion = DefaultAgentVersion
	}
	api, ingress, err := VIPs(cfg.Network)
	if err != nil {
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	// One transport for every agent, with two idle connections kept per
	// agent: each agent has at most two requests in flight (its long poll
	// and, while it installs, the installer's), so connections are reused
	// and never churned.
	tr := &http.Transport{
		Proxy:               nil, // loopback only: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2*cfg.Hosts + 16,
		MaxIdleConnsPerHost: 2*cfg.Hosts + 16,
		IdleConnTimeout:     90 * time.Second,
	}
	client, err := wire.NewClient(cfg.URL, wire.WithAgentToken(cfg.Token), wire.WithAgentVersion(cfg.AgentVersion),
		wire.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return nil, fmt.Errorf("start fleet: %w", err)
	}
	agents := make([]*Agent, cfg.Hosts)
	for i := range agents {
		class := Worker
		if i < cfg.Masters {
			class = Master
		}
		h, err := NewHost(i, cfg.Network, class)
		if err != nil {
			return nil, fmt.Errorf("start fleet: %w", err)
		}
		if agents[i], err = New(Config{Client: client, AgentVersion: cfg.AgentVersion, InfraEnvID: cfg.InfraEnvID,
			Host: h, Wait: cfg.Wait, APIVIP: api, IngressVIP: ingress, Observer: cfg.Observer, Install: cfg.Install}); err != nil {
			return nil, fmt.Errorf("start fleet: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &Fleet{tr: tr, cancel: cancel, hosts: make([]Host, len(agents))}
	for i, a := range agents {
		f.hosts[i] = a.Host()
		delay := time.Duration(int64(cfg.Ramp) * int64(i) / int64(len(agents)))
		f.wg.Go(func() {
			if backoff.Sleep(ctx, delay) {
				_ = a.Run(ctx) // Run fails only when ctx is done
			}
		})
	}
	return f, nil
}

// Hosts returns the fleet's hosts, in index order.
func (f *Fleet) Hosts() []Host { return f.hosts }

// Wait returns once every agent has ended, or with ctx's error. An agent
// ends once its installed host is done (node zero's once it reported the
// installation complete), so after an install Wait is when every request
// the fleet made has been observed.
func (f *Fleet) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { // ends with the agents; Stop ends them when ctx does
		f.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop cancels every agent, waits for them and closes their connections.
func (f *Fleet) Stop() {
	f.cancel()
	f.wg.Wait()
	f.tr.CloseIdleConnections()
}
