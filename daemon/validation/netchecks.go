package validation

import (
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Host validations fed by the connectivity checks the agents run: majority
// group, MTU, latency and packet loss between hosts of a role, address
// collisions (assisted internal/host/validator.go).

// maxNamedPeers bounds the peers a message lists (assisted's
// maxHostTimingMetrics is 4: it prints 5, then "and others...").
const maxNamedPeers = 4

func isDay2Host(h *wire.Host) bool { return h.Kind == wire.HostKindAddToExistingClusterHost }

// twoNodeFencing: a two-node cluster without an arbiter (assisted's
// IsClusterTopologyTwoNodesWithFencing), where majority groups have 2 hosts.
func twoNodeFencing(c *wire.Cluster) bool { return controlPlaneCount(c) == 2 }

const (
	msgMajorityOK     = "Host has connectivity to the majority of hosts in the cluster"
	msgMajorityFailed = "No connectivity to the majority of hosts in the cluster"
)

func hostBelongsToMajorityGroup(c *hostContext) (wire.ValidationStatus, string) {
	switch {
	case c.cluster == nil:
		return statusHidden, ""
	case isDay2Host(c.host):
		return wire.ValidationSuccess, "Day2 host is not required to be connected to other hosts in the cluster"
	case c.sno:
		return wire.ValidationSuccess, msgMajorityOK
	case !c.groups.Set:
		return wire.ValidationPending, "Machine Network CIDR or Connectivity Majority Groups missing"
	case c.groups.Unreadable:
		return wire.ValidationError, "Parse error for connectivity majority group"
	}
	conn := c.groups.Value
	l3 := isUMN(c.cluster) || userManagedLB(c.cluster)
	var st wire.ValidationStatus
	if l3 {
		st = c.belongsToL3Group(conn)
	} else {
		st = c.belongsToL2Group(conn.MajorityGroups)
	}
	if st == wire.ValidationFailure {
		enough := 3
		if twoNodeFencing(c.cluster) {
			enough = 2
		}
		if c.facts.hostCount < enough {
			return wire.ValidationPending, "Not enough hosts in cluster to calculate connectivity groups"
		}
	}
	switch st {
	case wire.ValidationSuccess:
		return st, msgMajorityOK
	case wire.ValidationFailure:
		if u := c.unreachablePeers(l3); u != "" {
			return st, msgMajorityFailed + "; unreachable: " + u
		}
		return st, msgMajorityFailed
	case wire.ValidationPending:
		return st, "Not enough information to calculate host majority groups"
	}
	return st, "Parse error for the cluster's machine networks"
}

func (c *hostContext) belongsToL2Group(groups map[string][]string) wire.ValidationStatus {
	if len(machineNetworkCIDRs(c.cluster)) == 0 {
		return wire.ValidationPending
	}
	if groups == nil {
		return wire.ValidationFailure
	}
	groupFor := func(n *net.IPNet) []string {
		for k, ids := range groups {
			_, gn, err := net.ParseCIDR(k) // "IPv4"/"IPv6" keys are L3 groups
			if err == nil && gn.String() == n.String() {
				return ids
			}
		}
		return nil
	}
	for _, cidr := range machineNetworkCIDRs(c.cluster) {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			return wire.ValidationError
		}
		if !containsString(groupFor(n), c.host.ID) {
			return wire.ValidationFailure
		}
	}
	return wire.ValidationSuccess
}

func (c *hostContext) belongsToL3Group(conn *Connectivity) wire.ValidationStatus {
	var v4, v6 bool
	for _, list := range [][]string{clusterNetworkCIDRs(c.cluster), serviceNetworkCIDRs(c.cluster), machineNetworkCIDRs(c.cluster)} {
		for _, s := range list {
			if _, _, err := net.ParseCIDR(s); err != nil {
				return wire.ValidationError
			}
			if isIPv4(s) {
				v4 = true
			} else {
				v6 = true
			}
		}
	}
	addrs, ok := conn.L3ConnectedAddresses[c.host.ID]
	if !(v4 || v6) || !ok {
		return wire.ValidationFailure
	}
	var got4, got6 bool
	for _, a := range addrs {
		if isIPv4(a) {
			got4 = true
		} else {
			got6 = true
		}
	}
	if (!v4 || got4) && (!v6 || got6) {
		return wire.ValidationSuccess
	}
	return wire.ValidationFailure
}

// unreachablePeers lists, as "name (address)", the other hosts that this
// host and that do not reach each other both ways according to their
// reports (L2 in the machine networks, or L3 with l3).
func (c *hostContext) unreachablePeers(l3 bool) string {
	me := c.facts.peers[c.host.ID]
	if me == nil {
		return ""
	}
	nets := c.facts.machineNets
	var names []string
	for _, id := range c.facts.peerIDs {
		if id == c.host.ID {
			continue
		}
		p := c.facts.peers[id]
		if reaches(me, p, nets, l3) && reaches(p, me, nets, l3) {
			continue
		}
		if len(names) == maxNamedPeers+1 {
			names = append(names, "and others...")
			break
		}
		name := p.label()
		if a := p.addressIn(nets); a != "" {
			name += " (" + a + ")"
		}
		names = append(names, name)
	}
	return strings.Join(names, ", ")
}

// reaches: from's report has a successful probe to to.
func reaches(from, to *peer, nets []*net.IPNet, l3 bool) bool {
	r := from.report
	if r == nil || len(r.peers) == 0 {
		return false
	}
	id, ok := r.in.names.lookup(to.id)
	if !ok {
		return false
	}
	for i, p := range r.peers {
		if p.id != id {
			continue
		}
		if l3 {
			if r.anyReached(i, reachedL3) {
				return true
			}
			continue
		}
		if len(nets) == 0 && r.anyReached(i, reachedL2) {
			return true
		}
		for _, n := range nets {
			if r.l2Reaches(i, n) {
				return true
			}
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// connectivityReport is the host's compacted connectivity report, or an
// error when its text did not parse.
func (c *hostContext) connectivityReport() (*ConnReport, error) {
	if c.conn.Broken() {
		return nil, errBrokenReport
	}
	return c.conn, nil
}

// hostMTUValid: with user-managed networking every MTU probe counts, else
// only those from an interface in a machine network to an address in one.
func hostMTUValid(c *hostContext) (wire.ValidationStatus, string) {
	switch {
	case c.cluster == nil:
		return statusHidden, ""
	case c.inv == nil:
		return wire.ValidationPending, "Missing host inventory"
	case isDay2Host(c.host):
		return wire.ValidationSuccess, "Day2 host is not required to be connected to other hosts in the cluster"
	case c.sno:
		return statusHidden, ""
	case c.conn == nil:
		return wire.ValidationPending, "Missing MTU report information"
	}
	r, err := c.connectivityReport()
	if err != nil {
		return wire.ValidationError, "Internal error - failed to parse host connectivity report"
	}
	umn := isUMN(c.cluster)
	var nets []*net.IPNet
	if !umn {
		for _, s := range machineNetworkCIDRs(c.cluster) {
			_, n, err := net.ParseCIDR(s)
			if err != nil {
				return wire.ValidationFailure, fmt.Sprintf("failed to parse machine network CIDR %s: %v", s, err)
			}
			nets = append(nets, n)
		}
	}
	for _, m := range r.mtuBroken {
		if !umn {
			remote := net.ParseIP(m.addr)
			if remote == nil || !inAny(nets, remote) || !c.nicInNetworks(m.nic, nets, remote.To4() == nil) {
				continue
			}
		}
		return wire.ValidationFailure, fmt.Sprintf("MTU is broken. Interface: %s, remote IP address: %s", m.nic, m.addr)
	}
	return wire.ValidationSuccess, "MTU is ok"
}

func inAny(nets []*net.IPNet, ip net.IP) bool {
	for _, n := range nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// nicInNetworks: the named interface has an address of the family in one
// of nets.
func (c *hostContext) nicInNetworks(name string, nets []*net.IPNet, v6 bool) bool {
	for _, i := range c.inv.Interfaces {
		if i == nil || i.Name != name {
			continue
		}
		for _, a := range familyAddresses(i, !v6) {
			if ip, _, err := net.ParseCIDR(a); err == nil && inAny(nets, ip) {
				return true
			}
		}
	}
	return false
}

// timingTest is one of the two L3 thresholds checked between hosts of the
// same role.
type timingTest struct {
	what      string // "network latency" or "packet loss"
	threshold func(RoleRequirements) *float64
	measure   func(slowProbe) float64
	unit      string
	pass      string
	missing   string
	summary   string // format: threshold, host, peers
}

var latencyTest = timingTest{
	what:      "network latency",
	threshold: func(r RoleRequirements) *float64 { return r.NetworkLatencyThresholdMs },
	measure:   func(p slowProbe) float64 { return p.rtt },
	unit:      " ms",
	pass:      "Network latency requirement has been satisfied.",
	missing:   "Missing network latency information.",
	summary:   "A total network latency above the tolerated threshold of %.2f ms was encountered when performing network latency tests between host %s and %s",
}

var packetLossTest = timingTest{
	what:      "packet loss",
	threshold: func(r RoleRequirements) *float64 { return r.PacketLossPercentage },
	measure:   func(p slowProbe) float64 { return p.loss },
	unit:      "%",
	pass:      "Packet loss requirement has been satisfied.",
	missing:   "Missing packet loss information.",
	summary:   "A total packet loss above the tolerated threshold of %.2f%% was encountered when performing connectivity validation between host %s and %s",
}

func hostNetworkLatency(c *hostContext) (wire.ValidationStatus, string) { return c.timing(latencyTest) }
func hostPacketLoss(c *hostContext) (wire.ValidationStatus, string)     { return c.timing(packetLossTest) }

// timing compares each L3 probe to a peer of the same effective role with
// the role's threshold. Peers that are not hosts of the cluster are left
// out (assisted fails the validation on them; a report can outlive a
// deleted host).
func (c *hostContext) timing(t timingTest) (wire.ValidationStatus, string) {
	switch {
	case c.inv == nil:
		return wire.ValidationPending, "The inventory is not available yet."
	case c.cluster == nil:
		return statusHidden, ""
	}
	limit := t.threshold(c.req)
	if c.facts.hostCount <= 1 || limit == nil || c.role == wire.HostRoleAutoAssign || isDay2Host(c.host) {
		return wire.ValidationSuccess, t.pass
	}
	if c.conn == nil {
		return wire.ValidationPending, t.missing
	}
	r, err := c.connectivityReport()
	if err != nil {
		return wire.ValidationError, "Parse error while attempting to process the connectivity report"
	}
	// Only the slow probes can fail a threshold (ConnReport keeps those
	// above the lowest threshold of any role), in report order.
	seen := map[string]bool{}
	var bad []string
	more := false
	for _, probe := range r.slow {
		p := c.facts.peers[r.in.names.str(probe.peer)]
		if p == nil || p.role != c.role {
			continue
		}
		addr := r.in.addrs.str(probe.addr)
		if t.measure(probe) <= *limit || seen[addr] {
			continue
		}
		seen[addr] = true
		if len(bad) > maxNamedPeers {
			more = true
			continue
		}
		bad = append(bad, fmt.Sprintf("%s at %s (%.2f%s)", p.label(), addr, t.measure(probe), t.unit))
	}
	if len(bad) == 0 {
		return wire.ValidationSuccess, t.pass
	}
	if more {
		bad[len(bad)-1] += " and others..."
	}
	msg := fmt.Sprintf(t.summary, *limit, c.hostLabel(), strings.Join(bad, ", "))
	return wire.ValidationFailure, msg + "\n" + c.pingAdvice(t.what)
}

func (c *hostContext) hostLabel() string {
	if n := RealHostname(c.host, c.inv); n != "" {
		return n
	}
	return c.host.ID
}

// pingAdvice is assisted's advisory: the ping commands the agent ran, to
// run by hand on the host.
func (c *hostContext) pingAdvice(what string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Actions:\n1: Check if there are multiple devices on the same L2 network, if so then use the built-in nmstate-based advanced networking configuration to create a bond or disable all but one of the interfaces.\n")
	fmt.Fprintf(&b, "2: Please try the following commands on the host %s to investigate the %s further\n\n", c.hostLabel(), what)
	n := 0
	for _, i := range c.inv.Interfaces {
		if i == nil {
			continue
		}
		for _, a := range i.IPv4Addresses {
			if n > maxNamedPeers {
				b.WriteString("etc...\n")
				return b.String()
			}
			fmt.Fprintf(&b, "ping -c 10 -W 3 -q -I %s %s\n", i.Name, a)
			n++
		}
	}
	return b.String()
}

func hostNoIPCollisions(c *hostContext) (wire.ValidationStatus, string) {
	switch {
	case c.cluster == nil:
		return wire.ValidationSuccess, "Cluster has not yet been defined, skipping validation."
	case c.inv == nil:
		return wire.ValidationSuccess, "Host inventory has not yet been defined, skipping validation."
	case isDay2(c.cluster):
		return wire.ValidationSuccess, fmt.Sprintf("Skipping validation for day 2 host %s", c.host.ID)
	}
	mine := c.ownIPs()
	ips := make([]string, 0, len(c.facts.collisions))
	for ip := range c.facts.collisions {
		if mine[ip] {
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return wire.ValidationSuccess, fmt.Sprintf("No IP collisions were detected by host %s", c.host.ID)
	}
	sort.Strings(ips)
	lines := make([]string, 0, len(ips))
	for _, ip := range ips {
		macs := make([]string, 0, len(c.facts.collisions[ip]))
		for _, m := range c.facts.collisions[ip] {
			if name := c.facts.macHost[m]; name != "" {
				m += " (" + name + ")"
			}
			macs = append(macs, m)
		}
		lines = append(lines, fmt.Sprintf("Collisions detected for host ID %s, IP address: %s Mac addresses: %s", c.host.ID, ip, strings.Join(macs, ",")))
	}
	return wire.ValidationFailure, strings.Join(lines, "\n")
}
