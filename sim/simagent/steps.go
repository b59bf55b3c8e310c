package simagent

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/nodezero/nodezero/hostagent/diskspeed"
	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// The synthetic results. They are what a healthy host on a quiet network
// reports, derived from the step's args, so the same args always give the
// same output and the agent's reply cache leaves repeats out, as it does on
// a real host.
const (
	simRTTMs        = 0.25
	simNTPSource    = "ntp.sim.invalid"
	simImageBytes   = 5.5e8
	simImageSeconds = 1.8
	simSyncMs       = 2 // fsync p99 of an NVMe disk, well under the 10 ms limit
	maxFreeAddrs    = 16
)

// registryAddr is what names outside the cluster resolve to: an address of
// TEST-NET-2 (RFC 5737), data only like the hosts' own.
var registryAddr = netip.MustParseAddr("198.51.100.10")

// answer runs one instruction for h and returns what the real agent would
// post: the output, the stderr and the exit code.
func (a *Agent) answer(st *wire.Step) (output, stderr string, code int) {
	var out any
	var err error
	switch st.StepType {
	case wire.StepTypeInventory:
		if len(st.Args) != 1 || st.Args[0] != a.sessionHostID() {
			return "", fmt.Sprintf("inventory cmd accepts only 1 params in args and it should be UUID, given args %v", st.Args), step.ExitNotRun
		}
		return a.inventory, "", 0
	case wire.StepTypeConnectivityCheck:
		out, err = a.connectivity(st.Args)
	case wire.StepTypeFreeNetworkAddresses:
		out, err = a.freeAddresses(st.Args)
	case wire.StepTypeNTPSynchronizer:
		out, err = ntp(st.Args)
	case wire.StepTypeDomainResolution:
		out, err = a.resolve(st.Args)
	case wire.StepTypeVerifyVIPs:
		out, err = verifyVIPs(st.Args)
	case wire.StepTypeContainerImageAvailability:
		out, err = pullImages(st.Args)
	case wire.StepTypeInstallationDiskSpeedCheck:
		// The request and a timeout, as the real step takes them.
		var req diskspeed.Args
		if req, err = diskspeed.DecodeArgs(st.Args); err == nil {
			out = wire.DiskSpeedCheckResponse{Path: req.Path, IOSyncDuration: simSyncMs}
		}
	default:
		// The real agent's answer to a step it has no action for.
		return "", fmt.Sprintf("failed to find action for step type %s", st.StepType), step.ExitNotRun
	}
	if err != nil {
		return step.NotRun(err)
	}
	s, err := wire.EncodeEmbedded(out)
	if err != nil {
		return step.NotRun(err)
	}
	return s, "", 0
}

// connectivity reports every NIC address of every other host reachable
// over L2 and L3 from eno1, with a low RTT and no loss.
func (a *Agent) connectivity(args []string) (wire.ConnectivityReport, error) {
	var hosts wire.ConnectivityCheckParams
	if err := wire.DecodeStepArg(wire.StepTypeConnectivityCheck, args, &hosts); err != nil {
		return wire.ConnectivityReport{}, err
	}
	local := a.cfg.Host.Address.Addr().String()
	rep := wire.ConnectivityReport{RemoteHosts: make([]*wire.ConnectivityRemoteHost, 0, len(hosts))}
	for _, h := range hosts {
		if h == nil {
			continue
		}
		r := &wire.ConnectivityRemoteHost{HostID: h.HostID}
		for _, nic := range h.Nics {
			if nic == nil {
				continue
			}
			for _, cidr := range nic.IPAddresses {
				// Plain addresses (a CIDR from an older node zero); the agent reports bare addresses.
				ip := cidr
				if p, err := netip.ParsePrefix(cidr); err == nil {
					ip = p.Addr().String()
				}
				r.L2Connectivity = append(r.L2Connectivity, &wire.L2Connectivity{OutgoingNic: "eno1", OutgoingIPAddress: local,
					RemoteIPAddress: ip, RemoteMAC: nic.MAC, Successful: true})
				r.L3Connectivity = append(r.L3Connectivity, &wire.L3Connectivity{OutgoingNic: "eno1", RemoteIPAddress: ip,
					Successful: true, AverageRTTMs: simRTTMs})
				r.MTUReport = append(r.MTUReport, &wire.MTUReport{OutgoingNic: "eno1", RemoteIPAddress: ip, MTUSuccessful: true})
			}
		}
		rep.RemoteHosts = append(rep.RemoteHosts, r)
	}
	return rep, nil
}

// freeAddresses reports a few free addresses per network: the top of each
// network, which no simulated host takes. A real agent scans with nmap; the
// list it sends for a /16 is not what a load test is about.
func (a *Agent) freeAddresses(args []string) (wire.FreeNetworksAddresses, error) {
	var nets wire.FreeAddressesRequest
	if err := wire.DecodeStepArg(wire.StepTypeFreeNetworkAddresses, args, &nets); err != nil {
		return nil, err
	}
	out := make(wire.FreeNetworksAddresses, 0, len(nets))
	for _, n := range nets {
		p, err := netip.ParsePrefix(n)
		if err != nil {
			return nil, fmt.Errorf("free-network-addresses: %q is not a CIDR", n)
		}
		f := &wire.FreeNetworkAddresses{Network: n, FreeAddresses: []string{}}
		if p.Addr().Is4() && p.Bits() <= 24 {
			size := 1 << (32 - p.Bits())
			for i := size - 2; i > size-2-maxFreeAddrs; i-- {
				if addr, ok := addrAt(p, i); ok {
					f.FreeAddresses = append(f.FreeAddresses, addr.String())
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// ntp reports every requested source synced, or one of ours when none is
// given.
func ntp(args []string) (wire.NTPSynchronizationResponse, error) {
	var req wire.NTPSynchronizationRequest
	if err := wire.DecodeStepArg(wire.StepTypeNTPSynchronizer, args, &req); err != nil {
		return wire.NTPSynchronizationResponse{}, err
	}
	var out wire.NTPSynchronizationResponse
	for _, s := range strings.Split(req.NTPSource, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out.NTPSources = append(out.NTPSources, &wire.NTPSource{SourceName: s, SourceState: wire.SourceStateSynced})
		}
	}
	if len(out.NTPSources) == 0 {
		out.NTPSources = []*wire.NTPSource{{SourceName: simNTPSource, SourceState: wire.SourceStateSynced}}
	}
	return out, nil
}

// resolve answers the cluster's names with its VIPs, the wildcard probe with
// nothing (no wildcard DNS), and every other name with a registry address.
func (a *Agent) resolve(args []string) (wire.DomainResolutionResponse, error) {
	var req wire.DomainResolutionRequest
	if err := wire.DecodeStepArg(wire.StepTypeDomainResolution, args, &req); err != nil {
		return wire.DomainResolutionResponse{}, err
	}
	out := wire.DomainResolutionResponse{Resolutions: make([]*wire.DomainResolutionResponseResolutionsItem, 0, len(req.Domains))}
	for _, d := range req.Domains {
		if d == nil {
			continue
		}
		r := &wire.DomainResolutionResponseResolutionsItem{DomainName: d.DomainName, IPv4Addresses: []string{}, IPv6Addresses: []string{}}
		name := strings.TrimSuffix(d.DomainName, ".")
		var addr netip.Addr
		switch {
		case strings.HasPrefix(name, "validateNoWildcardDNS."):
		case strings.HasPrefix(name, "api.") || strings.HasPrefix(name, "api-int."):
			addr = a.cfg.APIVIP
		case strings.Contains(name, ".apps."):
			addr = a.cfg.IngressVIP
		default:
			addr = registryAddr
		}
		if addr.IsValid() {
			r.IPv4Addresses = append(r.IPv4Addresses, addr.String())
		}
		out.Resolutions = append(out.Resolutions, r)
	}
	return out, nil
}

// verifyVIPs reports every VIP free and usable.
func verifyVIPs(args []string) (wire.VerifyVIPsResponse, error) {
	var req wire.VerifyVIPsRequest
	if err := wire.DecodeStepArg(wire.StepTypeVerifyVIPs, args, &req); err != nil {
		return nil, err
	}
	out := make(wire.VerifyVIPsResponse, 0, len(req))
	for _, v := range req {
		if v != nil {
			out = append(out, &wire.VerifiedVIP{VIP: v.VIP, VIPType: v.VIPType, Verification: wire.VIPVerificationSucceeded})
		}
	}
	return out, nil
}

// pullImages reports every image pulled at a steady rate.
func pullImages(args []string) (wire.ContainerImageAvailabilityResponse, error) {
	var req wire.ContainerImageAvailabilityRequest
	if err := wire.DecodeStepArg(wire.StepTypeContainerImageAvailability, args, &req); err != nil {
		return wire.ContainerImageAvailabilityResponse{}, err
	}
	var out wire.ContainerImageAvailabilityResponse
	for _, img := range req.Images {
		out.Images = append(out.Images, &wire.ContainerImageAvailability{Name: img, Result: wire.ContainerImageAvailabilityResultSuccess,
			SizeBytes: simImageBytes, Time: simImageSeconds, DownloadRate: simImageBytes / simImageSeconds / 1e6})
	}
	return out, nil
}
