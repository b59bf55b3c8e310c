package boot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/onhost"
)

// Link is one network interface of the host.
type Link struct {
	Name  string
	MAC   string // lower case, colon separated; "" for links without one
	Addrs []netip.Prefix
}

// Links lists the host's interfaces and their addresses.
type Links interface {
	Links() ([]Link, error)
}

// SystemLinks reads the interfaces of the network namespace the process
// runs in (netlink, through the standard library).
type SystemLinks struct{}

// Links implements Links.
func (SystemLinks) Links() ([]Link, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	out := make([]Link, 0, len(ifs))
	for _, ifc := range ifs {
		l := Link{Name: ifc.Name, MAC: strings.ToLower(ifc.HardwareAddr.String())}
		addrs, err := ifc.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", ifc.Name, err)
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(n.IP)
			if !ok {
				continue
			}
			ones, _ := n.Mask.Size()
			l.Addrs = append(l.Addrs, netip.PrefixFrom(ip.Unmap(), ones))
		}
		out = append(out, l)
	}
	return out, nil
}

// HolderOf returns the link that holds ip, if any. IPv4-mapped IPv6 and
// zones are ignored in the comparison, so the rendezvous IP as the
// installer canonicalised it matches what the kernel reports.
func HolderOf(links []Link, ip netip.Addr) (Link, bool) {
	want := ip.Unmap().WithZone("")
	for _, l := range links {
		for _, a := range l.Addrs {
			if a.Addr().Unmap().WithZone("") == want {
				return l, true
			}
		}
	}
	return Link{}, false
}

// Decision is the outcome of the node-zero stage.
type Decision struct {
	NodeZero bool
	IP       netip.Addr
	MAC      string // node zero's bootstrap MAC
	// Hub is the service URL of a hub agent's decision (never node zero,
	// no rendezvous address); "" otherwise.
	Hub string
}

// Status is the console line for the decision (ABI's
// 60-rendezvous-host messages).
func (d Decision) Status() string {
	if d.Hub != "" {
		return fmt.Sprintf("This host is an agent of the service at %s.", d.Hub)
	}
	if d.NodeZero {
		return fmt.Sprintf("This host (%s) is the rendezvous host.", d.IP)
	}
	return fmt.Sprintf("This host is not the rendezvous host. The rendezvous host is at %s.", d.IP)
}

// DecideNodeZero polls the host's addresses every interval for up to
// window (ABI: 5 s and 30 s after network-online) and decides whether this
// host holds ip. A host whose addresses arrive late (DHCP) is still found
// within the window. 127.0.0.1 or ::1 (SelfRendezvous: a node config
// image, day 2) is every host's own: the host is its own node zero at once, with
// no bootstrap MAC (a day-2 host is never the bootstrap host).
func DecideNodeZero(ctx context.Context, src Links, ip netip.Addr, window, interval time.Duration) (Decision, error) {
	if !ip.IsValid() {
		return Decision{}, errors.New("node zero: no rendezvous IP")
	}
	if SelfRendezvous(ip) {
		return Decision{NodeZero: true, IP: ip}, nil
	}
	deadline := time.Now().Add(window)
	for {
		links, err := src.Links()
		if err != nil {
			return Decision{}, err
		}
		if l, ok := HolderOf(links, ip); ok {
			return Decision{NodeZero: true, IP: ip, MAC: l.MAC}, nil
		}
		if !time.Now().Add(interval).Before(deadline) {
			return Decision{IP: ip}, nil
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return Decision{}, ctx.Err()
		case <-t.C:
		}
	}
}

// WriteNode0 records a node-zero decision under root: node zero gets
// /etc/assisted/node0; any other host must not have one (a host that was
// node zero in an earlier boot with another config loses it).
func WriteNode0(root string, d Decision) error {
	path := filepath.Join(root, onhost.Node0Path)
	if !d.NodeZero {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("node zero: %w", err)
		}
		return nil
	}
	if err := atomicfile.Write(path, onhost.Node0(d.MAC), 0o644); err != nil {
		return fmt.Errorf("node zero: %w", err)
	}
	return nil
}

// SelfRendezvous reports whether ip is the rendezvous address of a node
// config image (ABI day 2: NODE_ZERO_IP=127.0.0.1): 127.0.0.1 or ::1
// exactly, which every host holds. Other loopback addresses are a
// sandbox's hosts' own, each held by one host, and decided as any other.
func SelfRendezvous(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip == netip.AddrFrom4([4]byte{127, 0, 0, 1}) || ip == netip.IPv6Loopback()
}
