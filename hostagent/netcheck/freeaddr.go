package netcheck

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/nodezero/nodezero/wire"
)

// sweepRounds is how many times a silent address is asked for: a reply lost
// once does not make an address look free.
const sweepRounds = 3

// parseNetworks checks a free-network-addresses request: IPv4 CIDRs in
// canonical form (the network address, as the agent requires).
func parseNetworks(req wire.FreeAddressesRequest) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for i, s := range req {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("free-network-addresses [%d]: %w: %w", i, err, ErrInvalidArgs)
		}
		if !p.Addr().Is4() {
			return nil, fmt.Errorf("free-network-addresses [%d]: %s is not an IPv4 network: %w", i, s, ErrInvalidArgs)
		}
		if p != p.Masked() {
			return nil, fmt.Errorf("free-network-addresses [%d]: %s is not canonical, want %s: %w", i, s, p.Masked(), ErrInvalidArgs)
		}
		out = append(out, p)
	}
	return out, nil
}

// FreeAddresses finds the addresses of each network that nothing answers
// ARP for. Every address is asked for (network and broadcast included, as
// nmap's sweep in the agent reports them) from the allowed interface that
// holds an address in the network; this host's own addresses are never
// free. At most AddressLimit free addresses are returned in all.
//
// A network wider than a /22 is refused (ErrRefused). The real agent splits
// it into /22 chunks and sweeps them all; we refuse instead, because a
// machine network that wide is most likely a typo, and sweeping it would
// put up to 16 million ARP requests on a shared segment. A network that no
// allowed interface is on is refused too: probing it would mean sending on
// some other interface.
func FreeAddresses(ctx context.Context, req wire.FreeAddressesRequest, opts Options) (wire.FreeNetworksAddresses, error) {
	nets, err := parseNetworks(req)
	if err != nil {
		return nil, err
	}
	for _, p := range nets {
		if p.Bits() < MaxScanBits {
			return nil, fmt.Errorf("free-network-addresses: network %s is wider than /%d: %w", p, MaxScanBits, ErrRefused)
		}
	}
	o := opts.withDefaults()
	local, err := readLocal(o.Interfaces)
	if err != nil {
		return nil, fmt.Errorf("free-network-addresses: %w", err)
	}
	vias := make([]nicAddr, len(nets))
	for i, p := range nets {
		via, ok := local.nicIn(p)
		if !ok {
			return nil, fmt.Errorf("free-network-addresses: no allowed interface has an address in %s: %w", p, ErrRefused)
		}
		vias[i] = via
	}
	out := wire.FreeNetworksAddresses{}
	left := AddressLimit
	for i, p := range nets {
		var targets []netip.Addr
		for a := p.Addr(); p.Contains(a); a = a.Next() {
			if !local.own[a] {
				targets = append(targets, a)
			}
		}
		up, err := arpSweep(ctx, vias[i], targets, sweepRounds, o)
		if err != nil {
			return nil, fmt.Errorf("free-network-addresses: sweep %s on %s: %w", p, vias[i].nic.ifi.Name, err)
		}
		fa := &wire.FreeNetworkAddresses{Network: p.String(), FreeAddresses: []string{}}
		for _, a := range targets {
			if left == 0 {
				break
			}
			if !up[a] {
				fa.FreeAddresses = append(fa.FreeAddresses, a.String())
				left--
			}
		}
		out = append(out, fa)
	}
	return out, nil
}

// nicIn returns the allowed interface and address that lie inside p.
func (l localState) nicIn(p netip.Prefix) (nicAddr, bool) {
	for _, n := range l.allowed {
		for _, a := range n.prefixes {
			if a.Addr().Is4() && p.Contains(a.Addr()) {
				return nicAddr{nic: n, addr: a}, true
			}
		}
	}
	return nicAddr{}, false
}
