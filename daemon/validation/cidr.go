package validation

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"

	"github.com/nodezero/nodezero/wire"
)

// Cluster topology, as assisted's common helpers read it.

// isSNO: a single-node cluster has control_plane_count 1 (assisted's
// IsSingleNodeCluster); a cluster without a count is single-node when its
// high_availability_mode is None.
func isSNO(c *wire.Cluster) bool { return controlPlaneCount(c) == 1 }

// controlPlaneCount is control_plane_count, or the default assisted derives
// from high_availability_mode when it is unset (None → 1, else 3).
func controlPlaneCount(c *wire.Cluster) int64 {
	if c == nil {
		return 0
	}
	if c.ControlPlaneCount > 0 {
		return c.ControlPlaneCount
	}
	if c.HighAvailabilityMode == wire.ClusterHighAvailabilityModeNone {
		return 1
	}
	return 3
}

func isUMN(c *wire.Cluster) bool {
	return c != nil && c.UserManagedNetworking != nil && *c.UserManagedNetworking
}

func isDHCP(c *wire.Cluster) bool {
	return c != nil && c.VIPDHCPAllocation != nil && *c.VIPDHCPAllocation
}

func userManagedLB(c *wire.Cluster) bool {
	return c != nil && c.LoadBalancer != nil && c.LoadBalancer.Type == wire.LoadBalancerTypeUserManaged
}

func isDay2(c *wire.Cluster) bool { return c != nil && c.Kind == wire.ClusterKindAddHostsCluster }

// machineNetworkRequired: every cluster but a multi-node one with
// user-managed networking needs a machine network.
func machineNetworkRequired(c *wire.Cluster) bool { return !isUMN(c) || isSNO(c) }

// The CIDR lists skip entries without a CIDR (assisted counts an entry as
// present when any of its fields is set).
func machineNetworkCIDRs(c *wire.Cluster) []string {
	var out []string
	for _, n := range c.MachineNetworks {
		if n != nil && n.CIDR != "" {
			out = append(out, string(n.CIDR))
		}
	}
	return out
}

func clusterNetworkCIDRs(c *wire.Cluster) []string {
	var out []string
	for _, n := range c.ClusterNetworks {
		if n != nil && n.CIDR != "" {
			out = append(out, string(n.CIDR))
		}
	}
	return out
}

func serviceNetworkCIDRs(c *wire.Cluster) []string {
	var out []string
	for _, n := range c.ServiceNetworks {
		if n != nil && n.CIDR != "" {
			out = append(out, string(n.CIDR))
		}
	}
	return out
}

// familyOf returns 4 or 6 for an address or CIDR string.
func familyOf(s string) int {
	if isIPv6(s) {
		return 6
	}
	return 4
}

// families returns the sorted address families of cidrs; a CIDR that does
// not parse is an error.
func families(cidrs []string) ([]int, error) {
	out := make([]int, 0, len(cidrs))
	for _, c := range cidrs {
		if _, _, err := net.ParseCIDR(c); err != nil {
			return nil, err
		}
		out = append(out, familyOf(c))
	}
	sort.Ints(out)
	return out, nil
}

// canonFamilies folds runs of the same family into one entry.
func canonFamilies(f []int) []int {
	var out []int
	for i, x := range f {
		if i == 0 || x != f[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func sameFamilies(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// dualStack: machine, service or cluster networks hold both families.
func dualStack(c *wire.Cluster) bool {
	for _, list := range [][]string{machineNetworkCIDRs(c), serviceNetworkCIDRs(c), clusterNetworkCIDRs(c)} {
		var v4, v6 bool
		for _, s := range list {
			if _, _, err := net.ParseCIDR(s); err != nil {
				continue
			}
			if isIPv4(s) {
				v4 = true
			} else if isIPv6(s) {
				v6 = true
			}
		}
		if v4 && v6 {
			return true
		}
	}
	return false
}

// effectiveNetworkType is network_type, overridden by
// install_config_overrides' networking.networkType.
func effectiveNetworkType(c *wire.Cluster) string {
	t := ""
	if c.NetworkType != nil {
		t = string(*c.NetworkType)
	}
	if c.InstallConfigOverrides != "" {
		var o struct {
			Networking struct {
				NetworkType string `json:"networkType"`
			} `json:"networking"`
		}
		if json.Unmarshal([]byte(c.InstallConfigOverrides), &o) == nil && o.Networking.NetworkType != "" {
			t = o.Networking.NetworkType
		}
	}
	return t
}

// CIDR rules (assisted internal/network/cidr_validations.go). They return
// a problem in assisted's user-facing wording, or "" when there is none.

// minMaskDelta: a cluster or service network must hold at least 2^7 = 128
// addresses per host prefix.
const minMaskDelta = 7

func parseCIDR(s string) (*net.IPNet, string) {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		return nil, fmt.Sprintf("Failed to parse CIDR '%s': %v", s, err)
	}
	return n, ""
}

func networksOverlap(a, b string) string {
	if a == "" || b == "" {
		return ""
	}
	na, p := parseCIDR(a)
	if p != "" {
		return p
	}
	nb, p := parseCIDR(b)
	if p != "" {
		return p
	}
	if na.Contains(nb.IP) || nb.Contains(na.IP) {
		return fmt.Sprintf("CIDRS %s and %s overlap", a, b)
	}
	return ""
}

func clusterCIDRsOverlap(machine, clusterNet, service string, machineRequired bool) string {
	if machineRequired {
		if p := networksOverlap(machine, service); p != "" {
			return "MachineNetworkCIDR and ServiceNetworkCIDR: " + p
		}
		if p := networksOverlap(machine, clusterNet); p != "" {
			return "MachineNetworkCIDR and ClusterNetworkCidr: " + p
		}
	}
	if p := networksOverlap(service, clusterNet); p != "" {
		return "ServiceNetworkCidr and ClusterNetworkCidr: " + p
	}
	return ""
}

func hostPrefixProblem(prefix int64) string {
	if prefix < 1 {
		return fmt.Sprintf("Host prefix, now %d, must be a positive integer", prefix)
	}
	return ""
}

// clusterCIDRSizeProblem checks that the cluster network holds a host
// prefix per host (at least 4 hosts' worth unless single-node).
func clusterCIDRSizeProblem(hostPrefix int, cidr string, hosts int) string {
	n, p := parseCIDR(cidr)
	if p != "" {
		return p
	}
	ones, bits := n.Mask.Size()
	if hostPrefix > bits-minMaskDelta {
		return fmt.Sprintf("Host prefix, now %d, must be less than or equal to %d to allow at least 128 addresses", hostPrefix, bits-minMaskDelta)
	}
	want := 1
	if hosts != 1 {
		want = max(4, hosts)
	}
	possible := uint64(1) << min(63, max(hostPrefix-ones, 0))
	if uint64(want) > possible {
		return fmt.Sprintf("Cluster network CIDR prefix %d does not contain enough addresses for %d hosts each one with %d prefix (%d addresses)",
			ones, hosts, hostPrefix, uint64(1)<<min(63, bits-hostPrefix))
	}
	return ""
}

// VIP checks (assisted internal/network/machine_network_cidr.go).

// VIPUse is what hosts reported about addresses in use, the "not in use"
// half of api-vips-valid and ingress-vips-valid. When a cluster validation
// gets no VIPUse, a VIP is checked only as an address (inside its machine
// network, not its network or broadcast address, API and ingress distinct);
// a VIP's own verification field (verify-vips result) is honoured either
// way.
type VIPUse struct {
	// Free maps a machine network CIDR to the addresses that every host
	// that scanned it found free (the intersection of their
	// free-network-addresses replies).
	Free map[string]map[string]bool
}

// VIPUseFromHosts builds a VIPUse from the hosts' free-network-addresses
// results. Hosts without one, or whose stored one does not parse or lacks
// a network, do not count for that network. It returns nil when no host
// has reported.
func VIPUseFromHosts(hosts []HostEntry) *VIPUse {
	var u *VIPUse
	for _, h := range hosts {
		if h.Host == nil || h.Checks == nil || !h.Checks.FreeAddresses.Set || h.Checks.FreeAddresses.Unreadable {
			continue
		}
		nets := h.Checks.FreeAddresses.Value
		if u == nil {
			u = &VIPUse{Free: map[string]map[string]bool{}}
		}
		for _, n := range nets {
			if n == nil {
				continue
			}
			set := map[string]bool{}
			for _, a := range n.FreeAddresses {
				set[a] = true
			}
			prev, seen := u.Free[n.Network]
			if !seen {
				u.Free[n.Network] = set
				continue
			}
			for a := range prev {
				if !set[a] {
					delete(prev, a)
				}
			}
		}
	}
	return u
}

// vipFree returns the verification of a VIP: the VIP's own verify-vips
// result when decided, else the free list for its network; "" when there is
// no data at all (use == nil).
func vipFree(use *VIPUse, vip, cidr string, own wire.VIPVerification) wire.VIPVerification {
	if own == wire.VIPVerificationSucceeded || own == wire.VIPVerificationFailed {
		return own
	}
	if use == nil {
		return ""
	}
	free := use.Free[cidr]
	if len(free) == 0 {
		return wire.VIPVerificationUnverified
	}
	if free[vip] {
		return wire.VIPVerificationSucceeded
	}
	return wire.VIPVerificationFailed
}

// checkVIP verifies one VIP against one machine network. It returns the
// verification and, unless it succeeded, the problem. checkUse adds the
// "not in use" half; unchecked reports that there was no use data for it.
func checkVIP(hostCount int, cidr, vip, name string, own wire.VIPVerification, use *VIPUse, checkUse bool) (ver wire.VIPVerification, unchecked bool, problem string) {
	if cidr == "" {
		return wire.VIPVerificationUnverified, false, fmt.Sprintf("%s <%s> cannot be set if Machine Network CIDR is empty", name, vip)
	}
	ip := net.ParseIP(vip)
	_, n, perr := net.ParseCIDR(cidr)
	if ip == nil || perr != nil || !n.Contains(ip) {
		return wire.VIPVerificationFailed, false, fmt.Sprintf("%s <%s> does not belong to machine-network-cidr <%s>", name, vip, cidr)
	}
	if isIPv4(vip) {
		ip4 := ip.To4()
		bcast := make(net.IP, len(ip4))
		for i := range ip4 {
			bcast[i] = n.IP.To4()[i] | ^n.Mask[len(n.Mask)-4+i]
		}
		if ip4.Equal(bcast) {
			return wire.VIPVerificationFailed, false, fmt.Sprintf("%s <%s> is the broadcast address of machine-network-cidr <%s>", name, vip, cidr)
		}
		// Not in assisted: the network address of a /30 or wider subnet is
		// no more usable as a VIP than its broadcast address.
		if ones, _ := n.Mask.Size(); ones <= 30 && ip4.Equal(n.IP.To4()) {
			return wire.VIPVerificationFailed, false, fmt.Sprintf("%s <%s> is the network address of machine-network-cidr <%s>", name, vip, cidr)
		}
	}
	if !checkUse {
		return wire.VIPVerificationSucceeded, false, ""
	}
	switch vipFree(use, vip, cidr, own) {
	case "":
		return wire.VIPVerificationSucceeded, true, ""
	case wire.VIPVerificationSucceeded:
		return wire.VIPVerificationSucceeded, false, ""
	case wire.VIPVerificationFailed:
		msg := fmt.Sprintf("%s <%s> is already in use in cidr %s", name, vip, cidr)
		if !machineNetworkBigEnough(hostCount, n) {
			msg += ". The machine network range is too small for the cluster. Please redefine the network."
		}
		return wire.VIPVerificationFailed, false, msg
	default:
		return wire.VIPVerificationUnverified, false, fmt.Sprintf("%s <%s> are not verified yet.", name, vip)
	}
}

// machineNetworkBigEnough: room for the hosts, two VIPs and the network and
// broadcast addresses (one host needs 2 addresses).
func machineNetworkBigEnough(hosts int, n *net.IPNet) bool {
	ones, bits := n.Mask.Size()
	if hosts == 1 {
		return ones <= bits-1
	}
	if bits-ones >= 62 {
		return true
	}
	return int64(1)<<(bits-ones)-int64(hosts)-4 >= 0
}

// duplicateVIPs reports, per list, a VIP listed twice and (unless
// allowCommon) an address used for both API and ingress, which goes into
// both lists (assisted ValidateNoVIPAddressesDuplicates wording).
func duplicateVIPs(api []*wire.APIVIP, ingress []*wire.IngressVIP, allowCommon bool) (apiProblems, ingressProblems []string) {
	seenAPI, seenIngress := map[string]bool{}, map[string]bool{}
	for _, v := range api {
		if v == nil || v.IP == "" {
			continue
		}
		if seenAPI[string(v.IP)] {
			apiProblems = append(apiProblems, fmt.Sprintf("The IP address \"%s\" appears multiple times in apiVIPs", v.IP))
		}
		seenAPI[string(v.IP)] = true
	}
	for _, v := range ingress {
		if v == nil || v.IP == "" {
			continue
		}
		if seenIngress[string(v.IP)] {
			ingressProblems = append(ingressProblems, fmt.Sprintf("The IP address \"%s\" appears multiple times in ingressVIPs", v.IP))
		}
		seenIngress[string(v.IP)] = true
		if !allowCommon && seenAPI[string(v.IP)] {
			p := fmt.Sprintf("The IP address \"%s\" appears both in apiVIPs and ingressVIPs", v.IP)
			apiProblems, ingressProblems = append(apiProblems, p), append(ingressProblems, p)
		}
	}
	return apiProblems, ingressProblems
}
