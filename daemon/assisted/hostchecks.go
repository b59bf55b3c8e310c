package assisted

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// The host checks (issue #5): which steps a host gets in each status, the
// args the service builds for them from the cluster and the other hosts,
// and where their replies are kept. The validations that read the replies
// live in daemon/validation.

// discoverySteps are the steps of a discovered host before install, in
// assisted-service's order (reference/assisted-service.md §7.1, known /
// insufficient / pending-for-input). tang-connectivity-check is left out
// until disk encryption with tang is supported.
var discoverySteps = []wire.StepType{
	wire.StepTypeConnectivityCheck,
	wire.StepTypeFreeNetworkAddresses,
	wire.StepTypeDHCPLeaseAllocate,
	wire.StepTypeInventory,
	wire.StepTypeNTPSynchronizer,
	wire.StepTypeDomainResolution,
	wire.StepTypeVerifyVIPs,
}

// preparationSteps are the steps of a host while its cluster prepares for
// installation (reference §7.1, preparing-for-installation): the VIP
// leases are renewed, the installation disk's speed measured and the
// release image pulled. The two checks are handed out once per
// preparation, again only when their step timed out unanswered.
var preparationSteps = []wire.StepType{
	wire.StepTypeDHCPLeaseAllocate,
	wire.StepTypeInstallationDiskSpeedCheck,
	wire.StepTypeContainerImageAvailability,
}

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

// checkArgs builds the single JSON arg of a host check, or reports that the
// step has nothing to do for this host now (it is then not handed out).
// Callers hold the model lock.
func (s *Service) checkArgs(st wire.StepType, h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	var v any
	switch st {
	case wire.StepTypeConnectivityCheck:
		if c == nil {
			return nil, false
		}
		return []string{connectivityArgs(c, h)}, true
	case wire.StepTypeFreeNetworkAddresses:
		nets := freeAddressNetworks(h.inv)
		if len(nets) == 0 {
			return nil, false
		}
		v = nets
	case wire.StepTypeNTPSynchronizer:
		// The cluster's source, else the infra-env's (ABI registers the
		// agent-config's additionalNTPSources on the infra-env).
		src := ""
		if c != nil {
			src = c.c.AdditionalNTPSource
		}
		if ie := s.infraEnvs[h.h.InfraEnvID]; src == "" && ie != nil {
			src = ie.ie.AdditionalNTPSources
		}
		v = wire.NTPSynchronizationRequest{NTPSource: src}
	case wire.StepTypeVerifyVIPs:
		if c == nil || dhcpVIPs(&c.c) {
			return nil, false
		}
		req := verifyVIPsRequest(&c.c)
		if len(req) == 0 {
			return nil, false
		}
		v = req
	case wire.StepTypeDomainResolution:
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
		v = req
	case wire.StepTypeInstallationDiskSpeedCheck:
		key := validation.InstallationDiskKey(&h.h)
		if key == "" || s.awaiting(h, st, diskSpeedTimeout) {
			return nil, false
		}
		if infos, err := validation.ParseDisksInfo(h.h.DisksInfo); err == nil {
			if ds := infos[key].DiskSpeed; ds != nil && ds.Tested {
				return nil, false // measured: assisted does not measure again
			}
		}
		b, err := json.Marshal(wire.DiskSpeedCheckRequest{Path: key})
		if err != nil {
			return nil, false
		}
		return []string{string(b), strconv.Itoa(int(diskSpeedTimeout.Seconds()))}, true
	case wire.StepTypeContainerImageAvailability:
		if c == nil || s.awaiting(h, st, imageAvailabilityTimeout) {
			return nil, false
		}
		statuses, err := validation.ParseImagesStatus(h.h.ImagesStatus)
		if err != nil {
			statuses = nil
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
		v = req
	case wire.StepTypeDHCPLeaseAllocate:
		if c == nil || !dhcpVIPs(&c.c) {
			return nil, false
		}
		nic := machineNetworkNIC(&c.c, h.inv)
		if nic == "" {
			return nil, false
		}
		v = wire.DHCPAllocationRequest{
			Interface: nic, APIVIPMAC: VIPMAC(c.c.ID, "api"), IngressVIPMAC: VIPMAC(c.c.ID, "ingress"),
			APIVIPLease: c.apiLease, IngressVIPLease: c.ingressLease,
		}
	case wire.StepTypeLogsGather:
		req, ok := s.logsGatherArgs(h)
		if !ok {
			return nil, false
		}
		v = req
	case wire.StepTypeStopInstallation:
		return nil, !handedOut(h, st) // no args: the agent knows what to stop
	default:
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return []string{string(b)}, true
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

// checkReply is a host check's output, decoded and re-encoded through the
// typed model as assisted-service does (unknown fields dropped), ready to be
// kept on the host or the cluster.
type checkReply struct {
	doc string // the re-encoded document
	// A connectivity report, compacted (decodeConnectivity); sum is the
	// SHA-256 of the agent's output.
	conn     *validation.ConnReport
	sum      [32]byte
	verified wire.VerifyVIPsResponse
	dhcp     *wire.DHCPAllocationResponse
	// The preparation checks are kept whatever their exit code: a failed
	// measurement or pull is a result.
	diskSpeed *wire.DiskSpeedCheckResponse
	exitCode  int64
	images    []*wire.ContainerImageAvailability
}

// decodeCheckReply decodes the output of a host check. It runs before the
// model lock is taken. Outputs of step types the service does not keep are
// (nil, nil).
func decodeCheckReply(r *wire.StepReply) (*checkReply, error) {
	switch r.StepType {
	case wire.StepTypeInstallationDiskSpeedCheck, wire.StepTypeContainerImageAvailability:
		return decodePreparationReply(r)
	}
	if r.ExitCode != 0 {
		return nil, nil
	}
	var v any
	switch r.StepType {
	case wire.StepTypeFreeNetworkAddresses:
		v = new(wire.FreeNetworksAddresses)
	case wire.StepTypeNTPSynchronizer:
		v = new(wire.NTPSynchronizationResponse)
	case wire.StepTypeVerifyVIPs:
		v = new(wire.VerifyVIPsResponse)
	case wire.StepTypeDomainResolution:
		v = new(wire.DomainResolutionResponse)
	case wire.StepTypeDHCPLeaseAllocate:
		v = new(wire.DHCPAllocationResponse)
	default:
		return nil, nil
	}
	if err := wire.DecodeEmbedded(r.Output, v); err != nil {
		return nil, badRequest("output: %s is not valid: %v", r.StepType, err)
	}
	out := &checkReply{}
	switch x := v.(type) {
	case *wire.DHCPAllocationResponse:
		for field, a := range map[string]string{"api_vip_address": x.APIVIPAddress, "ingress_vip_address": x.IngressVIPAddress} {
			if ip, err := netip.ParseAddr(a); err != nil || !ip.Is4() {
				return nil, badRequest("output: dhcp-lease-allocate: %s %q is not an IPv4 address", field, a)
			}
		}
		out.dhcp = x
	case *wire.NTPSynchronizationResponse:
		v = x.NTPSources
	case *wire.VerifyVIPsResponse:
		for _, vv := range *x {
			if vv == nil {
				continue
			}
			switch vv.Verification {
			case wire.VIPVerificationSucceeded, wire.VIPVerificationFailed, wire.VIPVerificationUnverified:
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

// decodePreparationReply decodes the reply of a preparation check. An empty
// output with exit code 0 is the agent saying the check is already running
// (nil, nil); a failed disk speed check may have no output at all.
func decodePreparationReply(r *wire.StepReply) (*checkReply, error) {
	out := &checkReply{exitCode: r.ExitCode}
	if strings.TrimSpace(r.Output) == "" {
		if r.ExitCode == 0 || r.StepType != wire.StepTypeInstallationDiskSpeedCheck {
			return nil, nil
		}
		out.diskSpeed = &wire.DiskSpeedCheckResponse{}
		return out, nil
	}
	switch r.StepType {
	case wire.StepTypeInstallationDiskSpeedCheck:
		var ds wire.DiskSpeedCheckResponse
		if err := wire.DecodeEmbedded(r.Output, &ds); err != nil {
			return nil, badRequest("output: %s is not valid: %v", r.StepType, err)
		}
		if ds.IOSyncDuration < 0 {
			return nil, badRequest("output: %s: io_sync_duration %d is negative", r.StepType, ds.IOSyncDuration)
		}
		out.diskSpeed = &ds
	case wire.StepTypeContainerImageAvailability:
		var resp wire.ContainerImageAvailabilityResponse
		if err := wire.DecodeEmbedded(r.Output, &resp); err != nil {
			return nil, badRequest("output: %s is not valid: %v", r.StepType, err)
		}
		for _, im := range resp.Images {
			if im == nil {
				continue
			}
			switch {
			case im.Name == "":
				return nil, badRequest("output: %s: an image without a name", r.StepType)
			case im.Result != wire.ContainerImageAvailabilityResultSuccess && im.Result != wire.ContainerImageAvailabilityResultFailure:
				return nil, badRequest("output: %s: image %q: result %q: want success or failure", r.StepType, im.Name, im.Result)
			case !finiteNonNegative(im.SizeBytes, im.Time, im.DownloadRate):
				return nil, badRequest("output: %s: image %q: size, time and rate must be non-negative numbers", r.StepType, im.Name)
			}
			out.images = append(out.images, im)
		}
	}
	return out, nil
}

func finiteNonNegative(xs ...float64) bool {
	for _, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// keepCheckReply stores a decoded check on the host (or, for verify-vips,
// the cluster) and marks what must be re-evaluated. Callers hold the model
// lock inside a txn.
func (t *txn) keepCheckReply(h *hostRec, typ wire.StepType, r *checkReply) {
	var field *string
	switch typ {
	case wire.StepTypeConnectivityCheck:
		t.keepConnectivity(h, r)
		return
	case wire.StepTypeFreeNetworkAddresses:
		field = &h.h.FreeAddresses
	case wire.StepTypeNTPSynchronizer:
		field = &h.h.NTPSources
	case wire.StepTypeDomainResolution:
		field = &h.h.DomainNameResolutions
	case wire.StepTypeVerifyVIPs:
		t.keepVIPVerification(h, r.verified)
		return
	case wire.StepTypeDHCPLeaseAllocate:
		t.keepLeases(h, r.dhcp)
		return
	case wire.StepTypeInstallationDiskSpeedCheck:
		t.keepDiskSpeed(h, r)
		return
	case wire.StepTypeContainerImageAvailability:
		t.keepImages(h, r.images)
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

// keepDiskSpeed records the installation disk's speed test in
// host.disks_info under the measured path (the installation disk's key when
// the agent named none), as assisted's SetDiskSpeed does.
func (t *txn) keepDiskSpeed(h *hostRec, r *checkReply) {
	path := r.diskSpeed.Path
	if path == "" {
		path = validation.InstallationDiskKey(&h.h)
	}
	if path == "" {
		return
	}
	infos, err := validation.ParseDisksInfo(h.h.DisksInfo)
	if err != nil {
		infos = map[string]validation.DiskInfo{} // unreadable: start again
	}
	info := infos[path]
	info.Path = path
	info.DiskSpeed = &validation.DiskSpeed{Tested: true, ExitCode: r.exitCode, SpeedMs: r.diskSpeed.IOSyncDuration}
	infos[path] = info
	b, err := json.Marshal(infos)
	if err != nil || string(b) == h.h.DisksInfo {
		return
	}
	h.h.DisksInfo = string(b)
	if r.exitCode != 0 {
		t.hostEvent(h, evHostDiskSpeed, sevWarning, fmt.Sprintf("Host %s: the installation disk speed check on %s failed with exit code %d", h.name(), path, r.exitCode))
	}
	t.putHost(h)
	t.touchHost(h)
}

// keepImages merges pulled images into host.images_status by name, as
// assisted's UpdateImageStatus does, with an event for each new result.
func (t *txn) keepImages(h *hostRec, images []*wire.ContainerImageAvailability) {
	if len(images) == 0 {
		return
	}
	statuses, err := validation.ParseImagesStatus(h.h.ImagesStatus)
	if err != nil {
		statuses = map[string]*wire.ContainerImageAvailability{}
	}
	for _, im := range images {
		if old := statuses[im.Name]; old != nil && *old == *im {
			continue
		}
		statuses[im.Name] = im
		if im.Result == wire.ContainerImageAvailabilityResultSuccess {
			t.hostEvent(h, evHostImageStatus, sevInfo, fmt.Sprintf("Host %s: New image status %s. result: %s. time: %.2f seconds; size: %.2f bytes; download rate: %.2f MBps",
				h.name(), im.Name, im.Result, im.Time, im.SizeBytes, im.DownloadRate))
		} else {
			t.hostEvent(h, evHostImageStatus, sevWarning, fmt.Sprintf("Host %s: New image status %s. result: %s", h.name(), im.Name, im.Result))
		}
	}
	b, err := json.Marshal(statuses)
	if err != nil || string(b) == h.h.ImagesStatus {
		return
	}
	h.h.ImagesStatus = string(b)
	t.putHost(h)
	t.touchHost(h)
}

// forgetFailedImages drops the failed pulls from host.images_status when a
// new preparation starts, so the images are pulled again rather than the
// old failure failing it at once.
func forgetFailedImages(h *hostRec) {
	statuses, err := validation.ParseImagesStatus(h.h.ImagesStatus)
	if err != nil {
		h.h.ImagesStatus = ""
		return
	}
	n := len(statuses)
	for name, a := range statuses {
		if a == nil || a.Result != wire.ContainerImageAvailabilityResultSuccess {
			delete(statuses, name)
		}
	}
	if len(statuses) == n {
		return
	}
	if b, err := json.Marshal(statuses); err == nil {
		h.h.ImagesStatus = string(b)
	}
}

// keepVIPVerification records what a host saw of the cluster's VIPs: a VIP
// any host found in use stays failed until a host finds it free again.
func (t *txn) keepVIPVerification(h *hostRec, vs wire.VerifyVIPsResponse) {
	c := t.s.clusters[h.clusterID()]
	if c == nil {
		return
	}
	changed := false
	for _, v := range vs {
		for _, a := range c.c.APIVIPs {
			if a != nil && v.VIPType == wire.VIPTypeAPI && a.IP == v.VIP && a.Verification != v.Verification {
				a.Verification, changed = v.Verification, true
			}
		}
		for _, a := range c.c.IngressVIPs {
			if a != nil && v.VIPType == wire.VIPTypeIngress && a.IP == v.VIP && a.Verification != v.Verification {
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
func (t *txn) keepLeases(h *hostRec, r *wire.DHCPAllocationResponse) {
	c := t.s.clusters[h.clusterID()]
	if c == nil || !dhcpVIPs(&c.c) {
		return
	}
	changed := false
	if len(c.c.APIVIPs) != 1 || string(c.c.APIVIPs[0].IP) != r.APIVIPAddress {
		c.c.APIVIPs = []*wire.APIVIP{{IP: wire.IP(r.APIVIPAddress), ClusterID: c.c.ID}}
		changed = true
	}
	if len(c.c.IngressVIPs) != 1 || string(c.c.IngressVIPs[0].IP) != r.IngressVIPAddress {
		c.c.IngressVIPs = []*wire.IngressVIP{{IP: wire.IP(r.IngressVIPAddress), ClusterID: c.c.ID}}
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
