package netcheck

import (
	"context"
	"fmt"
	"net/netip"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// vipProbes is how many ARP requests and echoes ask for one VIP.
const vipProbes = 3

func parseVIPs(req wire.VerifyVIPsRequest) ([]netip.Addr, error) {
	out := make([]netip.Addr, len(req))
	for i, v := range req {
		if v == nil {
			return nil, fmt.Errorf("verify-vips [%d]: null vip: %w", i, ErrInvalidArgs)
		}
		a, err := netip.ParseAddr(string(v.VIP))
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("verify-vips [%d]: vip %q is not an IP address: %w", i, v.VIP, ErrInvalidArgs)
		}
		out[i] = a.Unmap()
	}
	return out, nil
}

// VerifyVIPs tells, for each VIP, whether something already uses it:
//   - failed: this host holds it, or something answered an ARP request
//     (IPv4) or an ICMP echo for it, sent from an allowed interface whose
//     subnet holds the VIP;
//   - succeeded: it was asked for and nothing answered;
//   - unverified: no allowed interface is on its subnet, so nothing was
//     sent. (The agent's nmap would probe through the default route and
//     call a silent address succeeded; we neither send off-subnet nor
//     claim a check we did not make.)
//
// IPv6 VIPs get the echo only (no neighbour solicitation).
func VerifyVIPs(ctx context.Context, req wire.VerifyVIPsRequest, opts Options) (wire.VerifyVIPsResponse, error) {
	addrs, err := parseVIPs(req)
	if err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	local, err := readLocal(o.Interfaces)
	if err != nil {
		return nil, fmt.Errorf("verify-vips: %w", err)
	}
	out := make(wire.VerifyVIPsResponse, len(req))
	errs := make([]error, len(req))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, v := range req {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			verdict, err := verifyVIP(ctx, local, addrs[i], o)
			out[i] = &wire.VerifiedVIP{VIP: v.VIP, VIPType: v.VIPType, Verification: verdict}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("verify-vips: %w", err)
		}
	}
	return out, nil
}

func verifyVIP(ctx context.Context, local localState, vip netip.Addr, o Options) (wire.VIPVerification, error) {
	if local.own[vip] {
		return wire.VIPVerificationFailed, nil
	}
	vias := local.nicsOnLink(vip)
	if len(vias) == 0 {
		return wire.VIPVerificationUnverified, nil
	}
	count := min(vipProbes, o.Count)
	for _, via := range vias {
		if vip.Is4() {
			macs, err := arpQuery(ctx, via, vip, count, o)
			if err != nil && isLocalFailure(err) {
				return "", err
			}
			if len(macs) > 0 {
				return wire.VIPVerificationFailed, nil
			}
		}
		res, err := echo(ctx, via, vip, count, 0, false, o)
		if err != nil && isLocalFailure(err) {
			return "", err
		}
		if res.recv > 0 {
			return wire.VIPVerificationFailed, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return wire.VIPVerificationSucceeded, nil
}
