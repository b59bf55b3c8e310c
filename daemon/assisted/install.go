package assisted

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strings"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// installArgs builds the install step's InstallCmdRequest for a host
// (assisted's install_cmd.go): the role, bootstrap hosts (and single-node
// hosts) sent as "bootstrap"; the installation disk; the installer
// arguments (constructHostInstallerArgs).
func (s *Service) installArgs(h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil || h.h.InstallationDiskPath == "" {
		return nil, false
	}
	role := h.h.Role
	if h.h.Bootstrap {
		role = v2.HostRoleBootstrap
	}
	req := v2.InstallCmdRequest{
		ClusterID: c.c.ID, InfraEnvID: h.h.InfraEnvID, HostID: h.h.ID, Role: role,
		BootDevice:        h.h.InstallationDiskPath,
		ControlPlaneCount: c.c.ControlPlaneCount,
		OpenshiftVersion:  c.c.OpenshiftVersion,
		InstallerArgs:     s.installerArgs(c, h),
	}
	if role == v2.HostRoleWorker {
		req.ControlPlaneCount = 0 // assisted-installer forces it for workers
	}
	if c.c.HTTPProxy != "" || c.c.HTTPSProxy != "" {
		hp, hsp, np := c.c.HTTPProxy, c.c.HTTPSProxy, c.c.NoProxy
		req.Proxy = &v2.Proxy{HTTPProxy: &hp, HTTPSProxy: &hsp, NoProxy: &np}
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, false
	}
	return []string{string(b)}, true
}

// installerArgs are the host's own installer arguments plus what the
// network needs: a static network configuration is copied to the installed
// system (--copy-network); otherwise, unless the user gave an ip= karg,
// each NIC holding an address in the primary machine network gets DHCP on
// first boot (ip=<mac with dashes>:dhcp).
func (s *Service) installerArgs(c *clusterRec, h *hostRec) string {
	var args []string
	if h.h.InstallerArgs != "" {
		_ = json.Unmarshal([]byte(h.h.InstallerArgs), &args) // checked when it was set
	}
	ie := s.infraEnvs[h.h.InfraEnvID]
	switch {
	case ie != nil && ie.ie.StaticNetworkConfig != "" && ie.ie.StaticNetworkConfig != "[]":
		if !slices.Contains(args, "--copy-network") && !slices.Contains(args, "-n") {
			args = append(args, "--copy-network")
		}
	case !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "ip=") }):
		args = append(args, dhcpKargs(c, h)...)
	}
	if len(args) == 0 {
		return ""
	}
	b, _ := json.Marshal(args)
	return string(b)
}

func dhcpKargs(c *clusterRec, h *hostRec) []string {
	if h.inv == nil || len(c.c.MachineNetworks) == 0 || c.c.MachineNetworks[0] == nil {
		return nil
	}
	pfx, err := netip.ParsePrefix(string(c.c.MachineNetworks[0].CIDR))
	if err != nil {
		return nil
	}
	mode := "dhcp"
	if pfx.Addr().Is6() {
		mode = "dhcp6"
	}
	var out []string
	for _, nic := range h.inv.Interfaces {
		addrs := nic.IPv4Addresses
		if pfx.Addr().Is6() {
			addrs = nic.IPv6Addresses
		}
		if nic.MACAddress == "" || !slices.ContainsFunc(addrs, func(a string) bool {
			p, err := netip.ParsePrefix(a)
			return err == nil && pfx.Contains(p.Addr())
		}) {
			continue
		}
		out = append(out, "--append-karg", "ip="+strings.ReplaceAll(nic.MACAddress, ":", "-")+":"+mode)
	}
	return out
}
