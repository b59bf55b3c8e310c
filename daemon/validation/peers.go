package validation

import (
	"net"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// peer is what the connectivity validations read of one host of the
// cluster: its name for messages, its role (latency and packet loss are
// checked between hosts of the same role), its addresses and its parsed
// connectivity-check report.
type peer struct {
	id     string
	name   string
	role   wire.HostRole
	addrs  []net.IP
	report *ConnReport // nil: none yet, or it does not parse
}

// label names a peer in messages: its hostname, else its ID.
func (p *peer) label() string {
	if p.name != "" {
		return p.name
	}
	return p.id
}

// addressIn returns the peer's first address inside one of nets, else its
// first address, else "".
func (p *peer) addressIn(nets []*net.IPNet) string {
	for _, ip := range p.addrs {
		for _, n := range nets {
			if n.Contains(ip) {
				return ip.String()
			}
		}
	}
	if len(p.addrs) > 0 {
		return p.addrs[0].String()
	}
	return ""
}

func (f *ClusterFacts) addPeers(hosts []HostEntry, memo *ClusterMemo) {
	f.peers = make(map[string]*peer, len(hosts))
	f.macHost = map[string]string{}
	for _, h := range hosts {
		if h.Host == nil {
			continue
		}
		f.hostCount++
		p := &peer{id: h.Host.ID, name: RealHostname(h.Host, h.Inventory), role: EffectiveRole(h.Host)}
		if h.Inventory != nil {
			for _, i := range h.Inventory.Interfaces {
				if i == nil {
					continue
				}
				if i.MACAddress != "" {
					f.macHost[strings.ToLower(i.MACAddress)] = p.label()
				}
				for _, a := range append(append([]string{}, i.IPv4Addresses...), i.IPv6Addresses...) {
					if ip, _, err := net.ParseCIDR(a); err == nil {
						p.addrs = append(p.addrs, ip)
					}
				}
			}
		}
		if r := h.Conn; r != nil && !r.bad {
			p.report = r
		}
		f.peers[p.id] = p
		f.peerIDs = append(f.peerIDs, p.id)
	}
	sort.Strings(f.peerIDs)
	if memo != nil {
		f.collisions = memo.collisions.get(hosts, 0, func() map[string][]string { return IPCollisions(hosts) })
	} else {
		f.collisions = IPCollisions(hosts)
	}
}

// IPCollisions returns the addresses held by more than one MAC, each with
// its MACs sorted: the shape of assisted's cluster.ip_collisions. Two
// sources count: a host's connectivity report that saw one address answer
// from two MACs on the same outgoing interface (assisted's cluster monitor,
// getCollidingIPs), and — nodezero's addition — the same address in the
// inventories of two hosts on interfaces with different MACs (two hosts
// given the same static address). Loopback and link-local addresses are
// left out.
func IPCollisions(hosts []HostEntry) map[string][]string {
	macs := map[string]map[string]bool{}
	note := func(ip string, ms ...string) {
		if macs[ip] == nil {
			macs[ip] = map[string]bool{}
		}
		for _, m := range ms {
			macs[ip][strings.ToLower(m)] = true
		}
	}
	// Inventories: address → MAC → host.
	owners := map[string]map[string]string{}
	for _, h := range hosts {
		if h.Host == nil || h.Inventory == nil {
			continue
		}
		for _, i := range h.Inventory.Interfaces {
			if i == nil || i.MACAddress == "" {
				continue
			}
			for _, a := range append(append([]string{}, i.IPv4Addresses...), i.IPv6Addresses...) {
				ip, _, err := net.ParseCIDR(a)
				if err != nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
					continue
				}
				k := ip.String()
				if owners[k] == nil {
					owners[k] = map[string]string{}
				}
				owners[k][strings.ToLower(i.MACAddress)] = h.Host.ID
			}
		}
	}
	for ip, byMAC := range owners {
		hostsSeen := map[string]bool{}
		for _, id := range byMAC {
			hostsSeen[id] = true
		}
		if len(byMAC) > 1 && len(hostsSeen) > 1 {
			for m := range byMAC {
				note(ip, m)
			}
		}
	}
	// Connectivity reports: per reporting host and outgoing interface, the
	// MAC each remote address answered from.
	for _, h := range hosts {
		if h.Host == nil {
			continue
		}
		r := h.Conn
		if r == nil || r.bad {
			continue
		}
		for _, x := range r.collisions {
			note(x.ip, x.mac1, x.mac2)
		}
	}
	out := make(map[string][]string, len(macs))
	for ip, set := range macs {
		list := make([]string, 0, len(set))
		for m := range set {
			list = append(list, m)
		}
		sort.Strings(list)
		out[ip] = list
	}
	return out
}
