package netcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	probing "github.com/prometheus-community/pro-bing"
)

// pingResult is what one run of echoes found.
type pingResult struct {
	sent, recv int
	avgRTT     time.Duration
}

func (r pingResult) lossPercent() float64 {
	if r.sent == 0 {
		return 100
	}
	return float64(r.sent-r.recv) * 100 / float64(r.sent)
}

// echo sends count ICMP echoes to target from via (its interface and
// address), size bytes of payload, with the don't-fragment bit when df. It
// uses privileged raw sockets (pro-bing's "icmp" mode) because the
// unprivileged ping socket is disabled by default in new namespaces
// (docs/reference/dependency-notes.md §9). An unreachable target is a result with no
// replies, not an error; an error means the probe could not be sent.
func echo(ctx context.Context, via nicAddr, target netip.Addr, count int, size int, df bool, o Options) (pingResult, error) {
	p := probing.New(target.String())
	p.SetIPAddr(&net.IPAddr{IP: target.AsSlice()})
	p.SetPrivileged(true)
	p.SetLogger(probing.NoopLogger{})
	p.SetDoNotFragment(df)
	p.Count = count
	p.Interval = o.Interval
	p.Timeout = time.Duration(count-1)*o.Interval + o.Wait
	if size > 0 {
		p.Size = size
	}
	p.InterfaceName = via.nic.ifi.Name
	p.Source = via.addr.Addr().String()
	err := p.RunWithContext(ctx)
	st := p.Statistics()
	o.Stats.add(ProbeICMP, via.nic.ifi.Name, st.PacketsSent)
	res := pingResult{sent: st.PacketsSent, recv: st.PacketsRecv, avgRTT: st.AvgRtt}
	if res.sent == 0 && err == nil {
		err = errors.New("no echo sent")
	}
	if err != nil {
		return res, fmt.Errorf("icmp echo %s via %s: %w", target, via.nic.ifi.Name, err)
	}
	return res, nil
}

// isLocalFailure reports whether err means this host cannot send probes at
// all (no permission for raw sockets), as opposed to one probe failing
// (EMSGSIZE for a too-big don't-fragment echo, an unreachable network).
func isLocalFailure(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPROTONOSUPPORT)
}

// route returns the allowed interface and source address the kernel would
// use to reach target. It connects a UDP socket, which does a route lookup
// and sends nothing. ok is false when the route leaves through an
// interface that is not allowed (or there is no route).
func (l localState) route(target netip.Addr) (nicAddr, bool) {
	if on := l.nicsOnLink(target); len(on) > 0 {
		return on[0], true
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(target, 9)))
	if err != nil {
		return nicAddr{}, false
	}
	defer c.Close()
	src := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	for _, n := range l.allowed {
		for _, p := range n.prefixes {
			if p.Addr() == src {
				return nicAddr{nic: n, addr: p}, true
			}
		}
	}
	return nicAddr{}, false
}

// mtuPayload is the echo payload that fills an IP packet of mtu bytes:
// minus 20 (IPv4) or 40 (IPv6) header bytes and 8 ICMP header bytes, as the
// agent's `ping -M do -s MTU-28|MTU-48`.
func mtuPayload(mtu int, v4 bool) int {
	// An IP packet's length field is 16 bits: a loopback MTU of 65536
	// carries at most 65535 bytes, and a payload sized for more is never
	// sent at all.
	mtu = min(mtu, 65535)
	if v4 {
		return mtu - 28
	}
	return mtu - 48
}
