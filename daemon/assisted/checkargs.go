package assisted

import (
	"encoding/json"
	"net/netip"
	"sort"
	"strconv"
	"time"
	"unsafe"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// The args of the host checks (issue #5), built from the cluster and the
// other hosts: one function per row of the step table (steps.go). Callers
// hold the model lock.

// The preparation checks' timeouts (assisted's instruction manager): the
// disk speed check's goes to the agent as its second arg, the image
// check's in its request.
const (
	diskSpeedTimeout         = 8 * time.Minute
	imageAvailabilityTimeout = 16 * time.Minute
)

// freeAddressesMaxBits: the agent scans a network for free addresses only
// up to a /22 (1,024 addresses); the service does not ask for wider ones.
const freeAddressesMaxBits = 22

func connectivityStepArgs(s *Service, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil {
		return nil, false
	}
	return []string{connectivityArgs(c, h)}, true
}

func freeAddressesArgs(_ *Service, h *hostRec) ([]string, bool) {
	nets := freeAddressNetworks(h.inv)
	if len(nets) == 0 {
		return nil, false
	}
	return oneArg(nets)
}

// ntpArgs names the cluster's NTP source, else the infra-env's (ABI
// registers the agent-config's additionalNTPSources on the infra-env).
func ntpArgs(s *Service, h *hostRec) ([]string, bool) {
	src := ""
	if c := s.clusters[h.clusterID()]; c != nil {
		src = c.c.AdditionalNTPSource
	}
	if ie := s.infraEnvs[h.h.InfraEnvID]; src == "" && ie != nil {
		src = ie.ie.AdditionalNTPSources
	}
	return oneArg(wire.NTPSynchronizationRequest{NTPSource: src})
}

func verifyVIPsArgs(s *Service, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil || dhcpVIPs(&c.c) {
		return nil, false
	}
	req := verifyVIPsRequest(&c.c)
	if len(req) == 0 {
		return nil, false
	}
	return oneArg(req)
}

func domainArgs(s *Service, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil {
		return nil, false
	}
	names := validation.DomainsToResolve(&c.c, s.val.ReleaseImageOf(&c.c))
	if len(names) == 0 {
		return nil, false
	}
	req := wire.DomainResolutionRequest{}
	for _, n := range names {
		req.Domains = append(req.Domains, &wire.DomainResolutionRequestDomainsItem{DomainName: n})
	}
	return oneArg(req)
}

// diskSpeedArgs asks for the installation disk to be measured, once: a
// measured disk is not measured again (as in assisted), nor one whose
// measurement is under way.
func diskSpeedArgs(s *Service, h *hostRec) ([]string, bool) {
	key := validation.InstallationDiskKey(&h.h)
	if key == "" || s.awaiting(h, wire.StepTypeInstallationDiskSpeedCheck, diskSpeedTimeout) {
		return nil, false
	}
	if d := h.checks.Disks; !d.Unreadable {
		if ds := d.Value[key].DiskSpeed; ds != nil && ds.Tested {
			return nil, false
		}
	}
	b, err := json.Marshal(wire.DiskSpeedCheckRequest{Path: key})
	if err != nil {
		return nil, false
	}
	return []string{string(b), strconv.Itoa(int(diskSpeedTimeout.Seconds()))}, true
}

// imagesArgs asks for the required images not pulled yet.
func imagesArgs(s *Service, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil || s.awaiting(h, wire.StepTypeContainerImageAvailability, imageAvailabilityTimeout) {
		return nil, false
	}
	var statuses map[string]*wire.ContainerImageAvailability
	if !h.checks.Images.Unreadable {
		statuses = h.checks.Images.Value
	}
	req := wire.ContainerImageAvailabilityRequest{Timeout: int64(imageAvailabilityTimeout.Seconds())}
	for _, img := range s.val.RequiredImages(&c.c) {
		if a := statuses[img]; a == nil || a.Result != wire.ContainerImageAvailabilityResultSuccess {
			req.Images = append(req.Images, img)
		}
	}
	if len(req.Images) == 0 {
		return nil, false
	}
	return oneArg(req)
}

// dhcpArgs asks for the VIPs' leases on the host's machine-network NIC,
// with the cluster's VIP MACs and the leases to renew.
func dhcpArgs(s *Service, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil || !dhcpVIPs(&c.c) {
		return nil, false
	}
	nic := machineNetworkNIC(&c.c, h.inv)
	if nic == "" {
		return nil, false
	}
	return oneArg(wire.DHCPAllocationRequest{
		Interface: nic, APIVIPMAC: VIPMAC(c.c.ID, "api"), IngressVIPMAC: VIPMAC(c.c.ID, "ingress"),
		APIVIPLease: c.apiLease, IngressVIPLease: c.ingressLease,
	})
}

// awaiting reports whether a step of type st was handed to h less than
// timeout ago and is still unanswered: a preparation check is not handed
// out twice while the agent works on it.
func (s *Service) awaiting(h *hostRec, st wire.StepType, timeout time.Duration) bool {
	for _, typ := range h.agent.pending {
		if typ == st {
			last, ok := h.agent.issued[st]
			return ok && s.cfg.Now().Sub(last) < timeout
		}
	}
	return false
}

func dhcpVIPs(c *wire.Cluster) bool { return c.VIPDHCPAllocation != nil && *c.VIPDHCPAllocation }

// connectivityParams lists every other host of the cluster that has sent an
// inventory, with its NICs' MACs and addresses, as assisted-service's
// connectivity-check command does. Hosts are in id order. As there, hosts
// discovering or disconnected (no network now) are left out: a host cut
// off would otherwise fail the packet-loss validation of every host of its
// role for as long as it is away, and keep them insufficient.
func connectivityParams(c *clusterRec, self *hostRec) wire.ConnectivityCheckParams {
	out := wire.ConnectivityCheckParams{}
	for _, h := range c.sorted() {
		if h == self || !probeTarget(h) {
			continue
		}
		if ch := connectivityCheckHost(h); ch != nil {
			out = append(out, ch)
		}
	}
	return out
}

// connectivityCheckHost is h as a connectivity check lists it: its NICs
// with addresses; nil when it has none. The addresses are plain, without
// the inventory's prefix length: the swagger's connectivity-check-nic
// pattern allows no prefix, and the upstream agent refuses the step
// otherwise.
func connectivityCheckHost(h *hostRec) *wire.ConnectivityCheckHost {
	if h.inv == nil {
		return nil
	}
	ch := &wire.ConnectivityCheckHost{HostID: h.h.ID}
	for _, iface := range h.inv.Interfaces {
		if iface == nil {
			continue
		}
		var addrs []string
		for _, a := range append(append([]string(nil), iface.IPv4Addresses...), iface.IPv6Addresses...) {
			if ip, ok := plainAddr(a); ok {
				addrs = append(addrs, ip)
			}
		}
		if len(addrs) == 0 {
			continue
		}
		ch.Nics = append(ch.Nics, &wire.ConnectivityCheckNic{Name: iface.Name, MAC: iface.MACAddress, IPAddresses: addrs})
	}
	if len(ch.Nics) == 0 {
		return nil
	}
	return ch
}

// plainAddr is an inventory address ("192.168.111.10/24", or a bare one)
// without its prefix length, in canonical form; false when it is neither.
func plainAddr(s string) (string, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Addr().String(), true
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.String(), true
	}
	return "", false
}

// connectivityArgs is connectivityParams(c, self) as JSON text, put
// together from each host's entry, marshaled once per inventory
// (checkEntryFor), rather than marshaled whole for every host.
func connectivityArgs(c *clusterRec, self *hostRec) string {
	hosts := c.sorted()
	size := 2
	for _, h := range hosts {
		if h != self && probeTarget(h) {
			size += len(h.checkEntryFor()) + 1
		}
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	n := 0
	for _, h := range hosts {
		if h == self || !probeTarget(h) {
			continue
		}
		e := h.checkEntryFor()
		if e == nil {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, e...)
	}
	b = append(b, ']')
	// b is not written again: the string may share its memory.
	return unsafe.String(&b[0], len(b))
}

// checkEntryFor returns h as a connectivity check lists it (JSON), nil
// when it has no NIC with an address to probe.
func (h *hostRec) checkEntryFor() []byte {
	if h.checkEntryOf == h.inv && h.checkEntryOf != nil {
		return h.checkEntry
	}
	h.checkEntry, h.checkEntryOf = nil, h.inv
	if ch := connectivityCheckHost(h); ch != nil {
		h.checkEntry, _ = json.Marshal(ch) // plain strings: cannot fail
	}
	return h.checkEntry
}

// freeAddressNetworks are the IPv4 networks of the host's interfaces that
// are small enough to scan, canonical, sorted and without repeats.
func freeAddressNetworks(inv *wire.Inventory) wire.FreeAddressesRequest {
	if inv == nil {
		return nil
	}
	seen := map[string]bool{}
	var out wire.FreeAddressesRequest
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
func verifyVIPsRequest(c *wire.Cluster) wire.VerifyVIPsRequest {
	var out wire.VerifyVIPsRequest
	for _, v := range c.APIVIPs {
		if v != nil && v.IP != "" {
			out = append(out, &wire.VerifyVIP{VIP: v.IP, VIPType: wire.VIPTypeAPI})
		}
	}
	for _, v := range c.IngressVIPs {
		if v != nil && v.IP != "" {
			out = append(out, &wire.VerifyVIP{VIP: v.IP, VIPType: wire.VIPTypeIngress})
		}
	}
	return out
}

// machineNetworkNIC is the host's interface with an IPv4 address in the
// cluster's first IPv4 machine network: where DHCP for the VIPs is asked.
func machineNetworkNIC(c *wire.Cluster, inv *wire.Inventory) string {
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
