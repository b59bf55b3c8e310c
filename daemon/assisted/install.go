package assisted

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// InstallImages are the images the install step names: the
// assisted-installer, its controller and the agent (assisted-service's
// INSTALLER_IMAGE, CONTROLLER_IMAGE and AGENT_DOCKER_IMAGE, which ABI takes
// from the release), and the release's machine-config-operator and
// must-gather images (which assisted reads from the release with oc).
// Node zero takes them from its payload.
type InstallImages struct {
	Installer, Controller, MCO, MustGather, Agent string
}

// assisted-service's defaults for the images it is not given.
const (
	defaultInstallerImage  = "quay.io/edge-infrastructure/assisted-installer:latest"
	defaultControllerImage = "quay.io/edge-infrastructure/assisted-installer-controller:latest"
	defaultAgentImage      = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
)

// DefaultImages are assisted-service's defaults: an installer, a
// controller and an agent image.
func DefaultImages() InstallImages { return InstallImages{}.withDefaults() }

// withDefaults fills the images assisted-service has defaults for.
func (im InstallImages) withDefaults() InstallImages {
	if im.Installer == "" {
		im.Installer = defaultInstallerImage
	}
	if im.Controller == "" {
		im.Controller = defaultControllerImage
	}
	if im.Agent == "" {
		im.Agent = defaultAgentImage
	}
	return im
}

// minSkipMCORebootVersion is the first OpenShift version whose installs may
// skip the machine-config-operator's reboot (assisted's
// MinimalVersionForSKipMCOReboot).
var minSkipMCORebootVersion = [2]int{4, 15}

// installArgs builds the install step's InstallCmdRequest for a host as
// assisted's install_cmd.go fills it: the role, bootstrap hosts (and
// single-node hosts) sent as "bootstrap"; the installation disk; the
// release's images; check_cvo from the service's config; the MCO reboot
// skipped where the version allows it and the installation disk is no
// device-mapper device; reboots counted (assisted outside kube-api mode);
// the installer arguments (constructHostInstallerArgs); the disks to
// quick-format; the proxy with assisted's additions to no_proxy. An older
// assisted-installer reads high_availability_mode, which newer services
// replaced with control_plane_count; both are sent.
func (s *Service) installArgs(h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil || h.h.InstallationDiskPath == "" {
		return nil, false
	}
	role := h.h.Role
	if h.h.Bootstrap {
		role = wire.HostRoleBootstrap
	}
	images := s.cfg.Images.withDefaults()
	checkCVO := s.cfg.CheckClusterVersion
	req := wire.InstallCmdRequest{
		ClusterID: c.c.ID, InfraEnvID: h.h.InfraEnvID, HostID: h.h.ID, Role: role,
		BootDevice:           h.h.InstallationDiskPath,
		ControlPlaneCount:    c.c.ControlPlaneCount,
		InstallerImage:       images.Installer,
		ControllerImage:      images.Controller,
		McoImage:             images.MCO,
		MustGatherImage:      images.MustGather,
		OpenshiftVersion:     c.c.OpenshiftVersion,
		CheckCvo:             &checkCVO,
		InstallerArgs:        s.installerArgs(c, h),
		NotifyNumReboots:     true,
		HighAvailabilityMode: wire.InstallCmdRequestHighAvailabilityModeFull,
	}
	if c.c.ControlPlaneCount == 1 {
		req.HighAvailabilityMode = wire.InstallCmdRequestHighAvailabilityModeNone
	}
	if role == wire.HostRoleWorker {
		req.ControlPlaneCount = 0 // assisted-installer forces it for workers
	}
	if isDay2Cluster(c) {
		// A day-2 host joins a running cluster: assisted names no MCO
		// or must-gather image for it.
		req.McoImage, req.MustGatherImage = "", ""
	}
	req.EnableSkipMcoReboot = c.c.CPUArchitecture != "s390x" && versionAtLeast(c.c.OpenshiftVersion, minSkipMCORebootVersion) &&
		!strings.HasPrefix(strings.TrimPrefix(installationDisk(h).Path, "/dev/"), "dm-")
	req.SkipInstallationDiskCleanup = strings.Contains(req.InstallerArgs, "--save-partlabel") || strings.Contains(req.InstallerArgs, "--save-partindex")
	req.DisksToFormat = disksToFormat(h, req.SkipInstallationDiskCleanup)
	req.Proxy = installProxy(&c.c)
	b, err := json.Marshal(req)
	if err != nil {
		return nil, false
	}
	return []string{string(b)}, true
}

// installationDisk is the host's installation disk from its inventory (a
// zero disk when it is not there).
func installationDisk(h *hostRec) wire.Disk {
	if h.inv == nil {
		return wire.Disk{}
	}
	for _, d := range h.inv.Disks {
		if d != nil && ((h.h.InstallationDiskID != "" && d.ID == h.h.InstallationDiskID) || diskPath(d) == h.h.InstallationDiskPath) {
			return *d
		}
	}
	return wire.Disk{}
}

// disksToFormat are the disks the installer quick-formats (assisted's
// GetDisksToBeFormatted): bootable, not removable (an mmcblk device counts
// as removable), not FC, iSCSI, LVM or multipath, not the installation
// media, and not on the host's skip_formatting_disks list; the
// installation disk is skipped too when its partitions are to be kept.
// Each is named by its id, else /dev/<name>. The list is never null.
func disksToFormat(h *hostRec, keepInstallDisk bool) []string {
	out := []string{}
	if h.inv == nil {
		return out
	}
	skip := strings.Split(h.h.SkipFormattingDisks, ",")
	for _, d := range h.inv.Disks {
		if d == nil || !d.Bootable || d.Removable || strings.Contains(d.ByPath, "mmcblk") || d.IsInstallationMedia {
			continue
		}
		switch d.DriveType {
		case wire.DriveTypeFC, wire.DriveTypeISCSI, wire.DriveTypeLVM, wire.DriveTypeMultipath:
			continue
		}
		id := d.ID
		if id == "" {
			id = "/dev/" + d.Name
		}
		if slices.Contains(skip, id) || (keepInstallDisk && (id == h.h.InstallationDiskID || diskPath(d) == h.h.InstallationDiskPath)) {
			continue
		}
		out = append(out, id)
	}
	return out
}

// installProxy is the cluster's proxy as the installer gets it: only the
// proxies that are set, and no_proxy extended with what the installer must
// reach directly (assisted's getProxyArguments); nil without a proxy.
func installProxy(c *wire.Cluster) *wire.Proxy {
	if c.HTTPProxy == "" && c.HTTPSProxy == "" {
		return nil
	}
	p := &wire.Proxy{}
	if c.HTTPProxy != "" {
		v := c.HTTPProxy
		p.HTTPProxy = &v
	}
	if c.HTTPSProxy != "" {
		v := c.HTTPSProxy
		p.HTTPSProxy = &v
	}
	np := strings.TrimSpace(c.NoProxy)
	if np != "*" {
		var list []string
		if np != "" {
			list = strings.Split(np, ",")
		}
		list = append(list, "127.0.0.1", "localhost", ".svc", ".cluster.local", "api-int."+c.Name+"."+c.BaseDNSDomain)
		var uniq []string
		for _, e := range list {
			if !slices.Contains(uniq, e) {
				uniq = append(uniq, e)
			}
		}
		np = strings.Join(uniq, ",")
	}
	p.NoProxy = &np
	return p
}

// versionAtLeast reports whether an OpenShift version ("4.18", "4.18.0",
// "4.18.0-rc.1") is at least min (major, minor). An unreadable version is
// not.
func versionAtLeast(v string, min [2]int) bool {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.SplitN(parts[1], "-", 2)[0])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > min[0] || (major == min[0] && minor >= min[1])
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
