package netcheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// ErrInvalidArgs is wrapped by every error about a step's arguments.
var ErrInvalidArgs = errors.New("invalid arguments")

// remoteHost is one entry of ConnectivityCheckParams, parsed.
type remoteHost struct {
	id    string
	addrs []netip.Addr // distinct, in the order given
	macs  []string     // canonical lowercase
}

// parseConnectivityParams checks and parses the hosts to probe. Addresses
// are plain, as the swagger's connectivity-check-nic has them; one with a
// prefix length, as node zero sent them before, is accepted too.
func parseConnectivityParams(params wire.ConnectivityCheckParams) ([]remoteHost, error) {
	var hosts []remoteHost
	for i, h := range params {
		if h == nil {
			return nil, fmt.Errorf("connectivity-check hosts[%d]: null host: %w", i, ErrInvalidArgs)
		}
		rh := remoteHost{id: h.HostID}
		for j, n := range h.Nics {
			if n == nil {
				return nil, fmt.Errorf("connectivity-check hosts[%d].nics[%d]: null nic: %w", i, j, ErrInvalidArgs)
			}
			if n.MAC != "" {
				mac, err := net.ParseMAC(n.MAC)
				if err != nil {
					return nil, fmt.Errorf("connectivity-check hosts[%d].nics[%d].mac: %w: %w", i, j, err, ErrInvalidArgs)
				}
				rh.macs = append(rh.macs, mac.String())
			}
			for k, s := range n.IPAddresses {
				a, err := parseAddr(s)
				if err != nil {
					return nil, fmt.Errorf("connectivity-check hosts[%d].nics[%d].ip_addresses[%d]: %w: %w", i, j, k, err, ErrInvalidArgs)
				}
				if !slices.Contains(rh.addrs, a) {
					rh.addrs = append(rh.addrs, a)
				}
			}
		}
		hosts = append(hosts, rh)
	}
	return hosts, nil
}

// parseAddr accepts "10.0.0.5/24" or "10.0.0.5".
func parseAddr(s string) (netip.Addr, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Addr{}, err
		}
		return p.Addr().Unmap(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, err
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("address %q: zones are not supported", s)
	}
	return a.Unmap(), nil
}

// ConnectivityCheck probes every address of every host in params, hosts
// o.Parallel at a time and the addresses of one host all at once:
//   - L3: o.Count ICMP echoes through the interface the kernel routes by. If
//     that interface is not allowed nothing is sent and the entry reads
//     unsuccessful with 100% loss and no outgoing_nic.
//   - L2 (IPv4 only; IPv6 neighbour solicitation is not done): o.Count ARP
//     requests from each allowed interface whose subnet holds the address;
//     one entry per distinct MAC that answered, successful when the MAC is
//     one of the host's; one unsuccessful entry when nothing answered.
//   - MTU: for each such interface (or the routed one) whose MTU is not
//     1500, 3 don't-fragment echoes that fill the MTU; mtu_successful when
//     one comes back.
//
// The report is sorted as the agent sorts it: hosts by id, entries by
// remote IP (then MAC, then outgoing NIC). An error means the arguments
// were bad or this host cannot send probes at all (e.g. no CAP_NET_RAW).
func ConnectivityCheck(ctx context.Context, params wire.ConnectivityCheckParams, opts Options) (*wire.ConnectivityReport, error) {
	hosts, err := parseConnectivityParams(params)
	if err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	local, err := readLocal(o.Interfaces)
	if err != nil {
		return nil, fmt.Errorf("connectivity-check: %w", err)
	}
	report := &wire.ConnectivityReport{RemoteHosts: make([]*wire.ConnectivityRemoteHost, len(hosts))}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, o.Parallel)
	)
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			rh, err := checkHost(ctx, local, h, o)
			report.RemoteHosts[i] = rh
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, fmt.Errorf("connectivity-check: %w", err)
	}
	slices.SortStableFunc(report.RemoteHosts, func(a, b *wire.ConnectivityRemoteHost) int { return cmp.Compare(a.HostID, b.HostID) })
	return report, nil
}

// checkHost probes every address of h concurrently. Its error is only a
// local failure (see isLocalFailure); other probe errors are results.
func checkHost(ctx context.Context, local localState, h remoteHost, o Options) (*wire.ConnectivityRemoteHost, error) {
	rh := &wire.ConnectivityRemoteHost{HostID: h.id}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	keep := func(l2 []*wire.L2Connectivity, l3 *wire.L3Connectivity, mtu []*wire.MTUReport, err error) {
		mu.Lock()
		defer mu.Unlock()
		rh.L2Connectivity = append(rh.L2Connectivity, l2...)
		if l3 != nil {
			rh.L3Connectivity = append(rh.L3Connectivity, l3)
		}
		rh.MTUReport = append(rh.MTUReport, mtu...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, a := range h.addrs {
		wg.Add(3)
		go func() { defer wg.Done(); l3, err := checkL3(ctx, local, a, o); keep(nil, l3, nil, err) }()
		go func() { defer wg.Done(); l2, err := checkL2(ctx, local, a, h.macs, o); keep(l2, nil, nil, err) }()
		go func() { defer wg.Done(); mtu, err := checkMTU(ctx, local, a, o); keep(nil, nil, mtu, err) }()
	}
	wg.Wait()
	sortHost(rh)
	return rh, errors.Join(errs...)
}

func checkL3(ctx context.Context, local localState, target netip.Addr, o Options) (*wire.L3Connectivity, error) {
	l3 := &wire.L3Connectivity{RemoteIPAddress: target.String(), PacketLossPercentage: 100}
	via, ok := local.route(target)
	if !ok {
		return l3, nil // would leave through an interface we may not use
	}
	l3.OutgoingNic = via.nic.ifi.Name
	res, err := echo(ctx, via, target, o.Count, 0, false, o)
	if err != nil && isLocalFailure(err) {
		return l3, err
	}
	l3.PacketLossPercentage = res.lossPercent()
	l3.Successful = res.recv > 0
	if res.recv > 0 {
		l3.AverageRTTMs = float64(res.avgRTT.Microseconds()) / 1000
	}
	return l3, nil
}

func checkL2(ctx context.Context, local localState, target netip.Addr, macs []string, o Options) ([]*wire.L2Connectivity, error) {
	if !target.Is4() {
		return nil, nil
	}
	var out []*wire.L2Connectivity
	for _, via := range local.nicsOnLink(target) {
		got, err := arpQuery(ctx, via, target, o.Count, o)
		if err != nil && isLocalFailure(err) {
			return out, err
		}
		base := wire.L2Connectivity{
			OutgoingNic: via.nic.ifi.Name, OutgoingIPAddress: via.addr.Addr().String(),
			RemoteIPAddress: target.String(),
		}
		if len(got) == 0 {
			e := base
			out = append(out, &e)
		}
		for _, mac := range got {
			e := base
			e.RemoteMAC = mac
			e.Successful = slices.Contains(macs, mac)
			out = append(out, &e)
		}
	}
	return out, nil
}

// mtuEchoes is the count of don't-fragment echoes, the agent's `ping -c 3`.
const mtuEchoes = 3

func checkMTU(ctx context.Context, local localState, target netip.Addr, o Options) ([]*wire.MTUReport, error) {
	vias := local.nicsOnLink(target)
	if len(vias) == 0 {
		if via, ok := local.route(target); ok {
			vias = []nicAddr{via}
		}
	}
	var out []*wire.MTUReport
	for _, via := range vias {
		mtu := via.nic.ifi.MTU
		if mtu == 1500 || mtu <= 0 {
			continue
		}
		res, err := echo(ctx, via, target, min(mtuEchoes, o.Count), mtuPayload(mtu, target.Is4()), true, o)
		if err != nil && isLocalFailure(err) {
			return out, err
		}
		out = append(out, &wire.MTUReport{OutgoingNic: via.nic.ifi.Name, RemoteIPAddress: target.String(), MTUSuccessful: res.recv > 0})
	}
	return out, nil
}

// sortHost orders entries by remote IP (as an address), then MAC, then NIC.
func sortHost(rh *wire.ConnectivityRemoteHost) {
	ip := func(s string) netip.Addr { a, _ := netip.ParseAddr(s); return a }
	slices.SortStableFunc(rh.L2Connectivity, func(a, b *wire.L2Connectivity) int {
		return cmp.Or(ip(a.RemoteIPAddress).Compare(ip(b.RemoteIPAddress)),
			cmp.Compare(a.RemoteMAC, b.RemoteMAC), cmp.Compare(a.OutgoingNic, b.OutgoingNic))
	})
	slices.SortStableFunc(rh.L3Connectivity, func(a, b *wire.L3Connectivity) int {
		return ip(a.RemoteIPAddress).Compare(ip(b.RemoteIPAddress))
	})
	slices.SortStableFunc(rh.MTUReport, func(a, b *wire.MTUReport) int {
		return cmp.Or(ip(a.RemoteIPAddress).Compare(ip(b.RemoteIPAddress)), cmp.Compare(a.OutgoingNic, b.OutgoingNic))
	})
}
