// Package loopback runs the responders `nodezero sandbox` puts next to its
// hosts on this machine's loopback, in-process and with no external binary:
// an authoritative DNS for the cluster's names (StartDNS), a read-only
// OCI distribution registry holding the release image (StartRegistry,
// StartRegistryTLS, StartRegistryTLSWith to serve the same certificate
// again) and an SNTP server with this machine's clock (StartNTP).
//
// Nothing here leaves loopback: every responder refuses a listen address
// that is not a loopback IP, the DNS answers only the names it was given
// and never forwards a query, the registry serves only the images it was
// given, and the NTP server answers client requests only.
//
// loopback imports only internal/pki of the project.
package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// ErrNotLoopback is returned (wrapped) by the Start functions for a listen
// address that is not a loopback IP and port.
var ErrNotLoopback = errors.New("listen address is not a loopback ip:port")

// loopbackAddr parses listen ("127.0.0.1:0", "[::1]:5353") and checks that
// it is on loopback.
func loopbackAddr(listen string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(listen)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %q: %v", ErrNotLoopback, listen, err)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return netip.AddrPort{}, fmt.Errorf("%w: %q", ErrNotLoopback, listen)
	}
	return ap, nil
}

// Accept-loop back-off after an unexpected error: doubles from the first
// value up to the cap, back to the first after a success.
const (
	backoffFirst = 5 * time.Millisecond
	backoffCap   = time.Second
)

// pause waits d (or until ctx ends, reported as false) and returns the
// next back-off.
func pause(ctx context.Context, d time.Duration) (time.Duration, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return d, false
	case <-t.C:
	}
	return min(2*d, backoffCap), true
}

// closed reports whether err comes from a listener or socket being closed,
// the way a serve loop learns it should stop.
func closed(err error) bool { return errors.Is(err, net.ErrClosed) }

// serveUDP answers each datagram on conn with answer's reply (nil: none)
// until conn is closed; answered, when set, counts the replies sent. A
// read error other than the close backs off (pause) instead of spinning.
func serveUDP(ctx context.Context, conn net.PacketConn, size int, answer func(req []byte) []byte, answered func()) {
	buf := make([]byte, size)
	wait := backoffFirst
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if closed(err) {
				return
			}
			var ok bool
			if wait, ok = pause(ctx, wait); !ok {
				return
			}
			continue
		}
		wait = backoffFirst
		if resp := answer(buf[:n]); resp != nil {
			// A lost answer is the client's to ask again, as over any UDP.
			if _, err := conn.WriteTo(resp, from); err == nil && answered != nil {
				answered()
			}
		}
	}
}
