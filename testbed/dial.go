package testbed

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// FreePrefix returns the first /24 inside 10.231.0.0/16 that overlaps
// nothing in the root namespace: a prefix New will accept.
func FreePrefix(ctx context.Context) (netip.Prefix, error) {
	used, err := rootPrefixes(ctx)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("free prefix: %w", err)
	}
	for x := range 256 {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 231, byte(x), 0}), 24)
		if _, ok := overlapping(p, used); !ok {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("free prefix: no /24 in 10.231.0.0/16 is free")
}

// DialContext connects from inside h's namespace, as a process on the host
// would: the socket is made on a thread that joined the namespace and stays
// in it after the thread is gone. Only addresses inside the bed are dialed;
// anything else is refused with ErrOutsideRange. It fits
// http.Transport.DialContext, so a test in the root namespace can talk to
// a service that listens inside the bed.
func (h *Host) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return h.bed.dial(ctx, h.NS, h.Name, network, address)
}

// DialContext connects from the bed's switch namespace, where the bridge
// and its gateway address are: the way in to a host that is not a
// namespace of the bed (a virtual machine on the bridge). The same rules
// as Host.DialContext's hold.
func (b *Bed) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return b.dial(ctx, b.Switch, "the switch", network, address)
}

func (b *Bed) dial(ctx context.Context, ns, from, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s from %s: %w", address, from, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("dial %s from %s: want an IP address: %w", address, from, err)
	}
	if !b.owns(netip.PrefixFrom(a.Unmap(), a.BitLen())) {
		return nil, fmt.Errorf("dial %s from %s: %w (%s)", address, from, ErrOutsideRange, b.prefixes())
	}
	var c net.Conn
	err = inNetns(ns, func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s from %s: %w", address, from, err)
	}
	return c, nil
}
