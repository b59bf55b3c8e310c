package assisted

import (
	"encoding/json"
	"net/netip"
	"sort"

	v2 "github.com/nodezero/nodezero/daemon/v2"
	"github.com/nodezero/nodezero/daemon/validation"
)

// The host checks (issue #5): which steps a host gets in each status, the
// args the service builds for them from the cluster and the other hosts,
// and where their replies are kept. The validations that read the replies
// live in daemon/validation.

// discoverySteps are the steps of a discovered host before install, in
// assisted-service's order (reference/assisted-service.md §7.1, known /
// insufficient / pending-for-input). tang-connectivity-check is left out
// until disk encryption with tang is supported.
var discoverySteps = []v2.StepType{
	v2.StepTypeConnectivityCheck,
	v2.StepTypeFreeNetworkAddresses,
	v2.StepTypeDHCPLeaseAllocate,
	v2.StepTypeInventory,
	v2.StepTypeNTPSynchronizer,
	v2.StepTypeDomainResolution,
	v2.StepTypeVerifyVIPs,
}

// freeAddressesMaxBits: the agent scans a network for free addresses only
// up to a /22 (1,024 addresses); the service does not ask for wider ones.
const freeAddressesMaxBits = 22

// checkArgs builds the single JSON arg of a host check, or reports that the
// step has nothing to do for this host now (it is then not handed out).
// Callers hold the model lock.
func (s *Service) checkArgs(st v2.StepType, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	var v any
	switch st {
	case v2.StepTypeConnectivityCheck:
		if c == nil {
			return nil, false
		}
		v = connectivityParams(c, h)
	case v2.StepTypeFreeNetworkAddresses:
		nets := freeAddressNetworks(h.inv)
		if len(nets) == 0 {
			return nil, false
		}
		v = nets
	case v2.StepTypeNTPSynchronizer:
		// The cluster's source, else the infra-env's (ABI registers the
		// agent-config's additionalNTPSources on the infra-env).
		src := ""
		if c != nil {
			src = c.c.AdditionalNTPSource
		}
		if ie := s.infraEnvs[h.h.InfraEnvID]; src == "" && ie != nil {
			src = ie.ie.AdditionalNTPSources
		}
		v = v2.NTPSynchronizationRequest{NTPSource: src}
	case v2.StepTypeVerifyVIPs:
		if c == nil || dhcpVIPs(&c.c) {
			return nil, false
		}
		req := verifyVIPsRequest(&c.c)
		if len(req) == 0 {
			return nil, false
		}
		v = req
	case v2.StepTypeDomainResolution:
		if c == nil {
			return nil, false
		}
		names := validation.DomainsToResolve(&c.c, s.val.ReleaseImageOf(&c.c))
		if len(names) == 0 {
			return nil, false
		}
		req := v2.DomainResolutionRequest{}
		for _, n := range names {
			req.Domains = append(req.Domains, &v2.DomainResolutionRequestDomainsItem{DomainName: n})
		}
		v = req
	case v2.StepTypeDHCPLeaseAllocate:
		if c == nil || !dhcpVIPs(&c.c) {
			return nil, false
		}
		nic := machineNetworkNIC(&c.c, h.inv)
		if nic == "" {
			return nil, false
		}
		v = v2.DHCPAllocationRequest{
			Interface: nic, APIVIPMAC: VIPMAC(c.c.ID, "api"), IngressVIPMAC: VIPMAC(c.c.ID, "ingress"),
			APIVIPLease: c.apiLease, IngressVIPLease: c.ingressLease,
		}
	default:
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return []string{string(b)}, true
}

func dhcpVIPs(c *v2.Cluster) bool { return c.VIPDHCPAllocation != nil && *c.VIPDHCPAllocation }

// connectivityParams lists every other host of the cluster that has sent an
// inventory, with its NICs' MACs and addresses, as assisted-service's
// connectivity-check command does. Hosts are in id order.
func connectivityParams(c *clusterRec, self *hostRec) v2.ConnectivityCheckParams {
	out := v2.ConnectivityCheckParams{}
	for _, h := range c.sorted() {
		if h == self || h.inv == nil {
			continue
		}
		ch := &v2.ConnectivityCheckHost{HostID: h.h.ID}
		for _, iface := range h.inv.Interfaces {
			if iface == nil {
				continue
			}
			addrs := append(append([]string(nil), iface.IPv4Addresses...), iface.IPv6Addresses...)
			if len(addrs) == 0 {
				continue
			}
			ch.Nics = append(ch.Nics, &v2.ConnectivityCheckNic{Name: iface.Name, MAC: iface.MACAddress, IPAddresses: addrs})
		}
		if len(ch.Nics) > 0 {
			out = append(out, ch)
		}
	}
	return out
}

// freeAddressNetworks are the IPv4 networks of the host's interfaces that
// are small enough to scan, canonical, sorted and without repeats.
func freeAddressNetworks(inv *v2.Inventory) v2.FreeAddressesRequest {
	if inv == nil {
		return nil
	}
	seen := map[string]bool{}
	var out v2.FreeAddressesRequest
	for _, iface := range inv.Interfaces {
		if iface == nil {
			continue
		}
		for _, a := range iface.IPv4Addresses {
			p, err := netip.ParsePrefix(a)
			if err != nil || !p.Addr().Is4() || p.Bits() < freeAddressesMaxBits || p.Bits() >= 31 || p.Addr().IsLinkLocalUnicast() {
				continue
			}
			n := p.Masked().String()
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// verifyVIPsRequest asks the agent whether the cluster's VIPs are free.
func verifyVIPsRequest(c *v2.Cluster) v2.VerifyVIPsRequest {
	var out v2.VerifyVIPsRequest
	for _, v := range c.APIVIPs {
		if v != nil && v.IP != "" {
			out = append(out, &v2.VerifyVIP{VIP: v.IP, VIPType: v2.VIPTypeAPI})
		}
	}
	for _, v := range c.IngressVIPs {
		if v != nil && v.IP != "" {
			out = append(out, &v2.VerifyVIP{VIP: v.IP, VIPType: v2.VIPTypeIngress})
		}
	}
	return out
}

// checkReply is a host check's output, decoded and re-encoded through the
// typed model as assisted-service does (unknown fields dropped), ready to be
// kept on the host or the cluster.
type checkReply struct {
	doc      string // the re-encoded document
	verified v2.VerifyVIPsResponse
	dhcp     *v2.DHCPAllocationResponse
}

// decodeCheckReply decodes the output of a host check. It runs before the
// model lock is taken. Outputs of step types the service does not keep are
// (nil, nil).
func decodeCheckReply(r *v2.StepReply) (*checkReply, error) {
	var v any
	switch r.StepType {
	case v2.StepTypeConnectivityCheck:
		v = new(v2.ConnectivityReport)
	case v2.StepTypeFreeNetworkAddresses:
		v = new(v2.FreeNetworksAddresses)
	case v2.StepTypeNTPSynchronizer:
		v = new(v2.NTPSynchronizationResponse)
	case v2.StepTypeVerifyVIPs:
		v = new(v2.VerifyVIPsResponse)
	case v2.StepTypeDomainResolution:
		v = new(v2.DomainResolutionResponse)
	case v2.StepTypeDHCPLeaseAllocate:
		v = new(v2.DHCPAllocationResponse)
	default:
		return nil, nil
	}
	if err := v2.DecodeEmbedded(r.Output, v); err != nil {
		return nil, badRequest("output: %s is not valid: %v", r.StepType, err)
	}
	out := &checkReply{}
	switch x := v.(type) {
	case *v2.DHCPAllocationResponse:
		for field, a := range map[string]string{"api_vip_address": x.APIVIPAddress, "ingress_vip_address": x.IngressVIPAddress} {
			if ip, err := netip.ParseAddr(a); err != nil || !ip.Is4() {
				return nil, badRequest("output: dhcp-lease-allocate: %s %q is not an IPv4 address", field, a)
			}
		}
		out.dhcp = x
	case *v2.NTPSynchronizationResponse:
		v = x.NTPSources
	case *v2.VerifyVIPsResponse:
		for _, vv := range *x {
			if vv == nil {
				continue
			}
			switch vv.Verification {
			case v2.VIPVerificationSucceeded, v2.VIPVerificationFailed, v2.VIPVerificationUnverified:
			default:
				return nil, badRequest("output: verify-vips: verification %q: want succeeded, failed or unverified", vv.Verification)
			}
			out.verified = append(out.verified, vv)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, internal(err, "marshal step output")
	}
	out.doc = string(b)
	return out, nil
}

// keepCheckReply stores a decoded check on the host (or, for verify-vips,
// the cluster) and marks what must be re-evaluated. Callers hold the model
// lock inside a txn.
func (t *txn) keepCheckReply(h *hostRec, typ v2.StepType, r *checkReply) {
	var field *string
	switch typ {
	case v2.StepTypeConnectivityCheck:
		field = &h.h.Connectivity
	case v2.StepTypeFreeNetworkAddresses:
		field = &h.h.FreeAddresses
	case v2.StepTypeNTPSynchronizer:
		field = &h.h.NTPSources
	case v2.StepTypeDomainResolution:
		field = &h.h.DomainNameResolutions
	case v2.StepTypeVerifyVIPs:
		t.keepVIPVerification(h, r.verified)
		return
	case v2.StepTypeDHCPLeaseAllocate:
		t.keepLeases(h, r.dhcp)
		return
	default:
		return
	}
	if *field == r.doc {
		return
	}
	*field = r.doc
	t.putHost(h)
	t.touchHost(h)
}

// keepVIPVerification records what a host saw of the cluster's VIPs: a VIP
// any host found in use stays failed until a host finds it free again.
func (t *txn) keepVIPVerification(h *hostRec, vs v2.VerifyVIPsResponse) {
	c := t.s.clusters[h.clusterID()]
	if c == nil {
		return
	}
	changed := false
	for _, v := range vs {
		for _, a := range c.c.APIVIPs {
			if a != nil && v.VIPType == v2.VIPTypeAPI && a.IP == v.VIP && a.Verification != v.Verification {
				a.Verification, changed = v.Verification, true
			}
		}
		for _, a := range c.c.IngressVIPs {
			if a != nil && v.VIPType == v2.VIPTypeIngress && a.IP == v.VIP && a.Verification != v.Verification {
				a.Verification, changed = v.Verification, true
			}
		}
	}
	if changed {
		t.putCluster(c)
		t.touchCluster(c)
	}
}

// keepLeases makes the leased addresses the cluster's VIPs and keeps the
// lease texts for the next renewal, as assisted-service does with
// vip_dhcp_allocation.
func (t *txn) keepLeases(h *hostRec, r *v2.DHCPAllocationResponse) {
	c := t.s.clusters[h.clusterID()]
	if c == nil || !dhcpVIPs(&c.c) {
		return
	}
	changed := false
	if len(c.c.APIVIPs) != 1 || string(c.c.APIVIPs[0].IP) != r.APIVIPAddress {
		c.c.APIVIPs = []*v2.APIVIP{{IP: v2.IP(r.APIVIPAddress), ClusterID: c.c.ID}}
		changed = true
	}
	if len(c.c.IngressVIPs) != 1 || string(c.c.IngressVIPs[0].IP) != r.IngressVIPAddress {
		c.c.IngressVIPs = []*v2.IngressVIP{{IP: v2.IP(r.IngressVIPAddress), ClusterID: c.c.ID}}
		changed = true
	}
	if r.APIVIPLease != "" && r.APIVIPLease != c.apiLease {
		c.apiLease, changed = r.APIVIPLease, true
	}
	if r.IngressVIPLease != "" && r.IngressVIPLease != c.ingressLease {
		c.ingressLease, changed = r.IngressVIPLease, true
	}
	if changed {
		t.putCluster(c)
		t.touchCluster(c)
	}
}

// machineNetworkNIC is the host's interface with an IPv4 address in the
// cluster's first IPv4 machine network: where DHCP for the VIPs is asked.
func machineNetworkNIC(c *v2.Cluster, inv *v2.Inventory) string {
	if inv == nil {
		return ""
	}
	for _, mn := range c.MachineNetworks {
		p, err := netip.ParsePrefix(string(mn.CIDR))
		if err != nil || !p.Addr().Is4() {
			continue
		}
		for _, iface := range inv.Interfaces {
			if iface == nil {
				continue
			}
			for _, a := range iface.IPv4Addresses {
				if ap, err := netip.ParsePrefix(a); err == nil && p.Contains(ap.Addr()) {
					return iface.Name
				}
			}
		}
	}
	return ""
}
