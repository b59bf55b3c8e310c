package validation

import (
	"fmt"
	"strings"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// The host validations that read the inventory and the cluster: one
// function per rule of host.go's table, in its order.

// preRebootStages are the bootstrap stages before Rebooting: while a host
// is in one (or not installing), it must keep checking in.
var preRebootStages = []wire.HostStage{
	wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
	wire.HostStageCopyingRegistryDataToDisk, wire.HostStageWaitingForControlPlane,
	wire.HostStageWaitingForBootkube, wire.HostStageWaitingForController,
}

func hostConnected(c *hostContext) (wire.ValidationStatus, string) {
	limit := c.v.disconnectionTimeout()
	if c.host.Bootstrap {
		limit += bootstrapExtraTimeout
	}
	stage := currentStage(c.host)
	preReboot := stage == "" || stageIn(stage, preRebootStages)
	if !preReboot || c.now.Sub(c.host.CheckedInAt.Time()) <= limit {
		return wire.ValidationSuccess, "Host is connected"
	}
	return wire.ValidationFailure, "Host is disconnected"
}

func hostMediaConnected(c *hostContext) (wire.ValidationStatus, string) {
	if c.host.MediaStatus == nil || *c.host.MediaStatus != wire.HostMediaStatusDisconnected {
		return wire.ValidationSuccess, "Media device is connected"
	}
	return wire.ValidationFailure, "Unable to read from the discovery media. It was either disconnected or poor network conditions prevented it from being read. Try using the minimal ISO option and be sure to keep the media connected until the installation is completed"
}

// hostHasInventory fails, not pends, without an inventory: assisted's
// has-inventory is a plain boolean (discovering hosts show it failing).
func hostHasInventory(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv != nil {
		return wire.ValidationSuccess, "Valid inventory exists for the host"
	}
	if c.invBad != "" {
		return wire.ValidationFailure, c.invBad
	}
	return wire.ValidationFailure, "Inventory has not been received for the host"
}

func truncationReason(t *wire.InventoryTruncation) string {
	s := fmt.Sprintf("Inventory is truncated (%s)", t.Type)
	if len(t.Reasons) > 0 {
		s += ": " + strings.Join(t.Reasons, "; ")
	}
	return s
}

func hostNotPartiallyTruncated(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	t := c.inv.Truncation
	switch {
	case t == nil:
		return wire.ValidationSuccess, "Inventory is not truncated"
	case t.Type == wire.InventoryTruncationTypePartial:
		return wire.ValidationFailure, truncationReason(t)
	case t.Type == wire.InventoryTruncationTypeFull:
		return wire.ValidationSuccess, "Inventory is not partially truncated (inventory fully truncated)"
	}
	return wire.ValidationError, "Unexpected inventory truncation type"
}

func hostNotFullyTruncated(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	t := c.inv.Truncation
	switch {
	case t == nil:
		return wire.ValidationSuccess, "Inventory is not truncated"
	case t.Type == wire.InventoryTruncationTypePartial:
		return wire.ValidationSuccess, "Inventory is partially truncated"
	case t.Type == wire.InventoryTruncationTypeFull:
		return wire.ValidationFailure, truncationReason(t)
	}
	return wire.ValidationError, "Unexpected inventory truncation type"
}

func hostMinCPUCores(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	if c.inv.CPU.Count >= c.minCPU {
		return wire.ValidationSuccess, "Sufficient CPU cores"
	}
	return wire.ValidationFailure, fmt.Sprintf("The host is not eligible to participate in Openshift Cluster because the minimum required CPU cores for any role is %d, found only %d", c.minCPU, c.inv.CPU.Count)
}

// memoryToleranceMiB: VMs often get a little less RAM than asked for, so
// assisted accepts 100 MiB below a requirement.
const memoryToleranceMiB = 100

const mib = 1 << 20

// hostMinMemory allows, besides the 100 MiB tolerance, 2% of the
// requirement when the agent measured memory from /proc/meminfo (usable
// memory standing in for physical memory).
func hostMinMemory(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	tolerance := int64(memoryToleranceMiB)
	if c.inv.Memory.PhysicalBytesMethod == wire.MemoryMethodMeminfo {
		tolerance += c.minRAM / 50
	}
	if c.inv.Memory.PhysicalBytes >= (c.minRAM-tolerance)*mib {
		return wire.ValidationSuccess, "Sufficient minimum RAM"
	}
	return wire.ValidationFailure, fmt.Sprintf("The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is %s, found only %s",
		binaryBytes(c.minRAM*mib), binaryBytes(c.inv.Memory.PhysicalBytes))
}

// hostMinValidDisks reads the eligibility stored in the inventory (see
// ProcessInventory).
func hostMinValidDisks(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	if len(c.inv.Disks) == 0 {
		return wire.ValidationError, "Failed to detected disks"
	}
	for _, d := range c.inv.Disks {
		if d.InstallationEligibility != nil && d.InstallationEligibility.Eligible {
			return wire.ValidationSuccess, "Sufficient disk capacity"
		}
	}
	return wire.ValidationFailure, "No eligible disks were found, please check specific disks to see why they are not eligible"
}

func hostMachineCIDRDefined(c *hostContext) (wire.ValidationStatus, string) {
	switch {
	case c.cluster == nil:
		return statusHidden, ""
	case isUMN(c.cluster):
		return wire.ValidationSuccess, "No Machine Network CIDR needed: User Managed Networking"
	case isDay2(c.cluster):
		return wire.ValidationSuccess, "No Machine Network CIDR needed: Day2 cluster"
	case len(machineNetworkCIDRs(c.cluster)) > 0:
		return wire.ValidationSuccess, "Machine Network CIDR is defined"
	case isDHCP(c.cluster):
		return wire.ValidationFailure, "Machine Network CIDR is undefined"
	}
	return wire.ValidationFailure, "Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs"
}

func hostCPUCoresForRole(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory or role"
	}
	if c.inv.CPU.Count >= c.req.CPUCores {
		return wire.ValidationSuccess, fmt.Sprintf("Sufficient CPU cores for role %s", c.role)
	}
	return wire.ValidationFailure, fmt.Sprintf("Require at least %d CPU cores for %s role, found only %d", c.req.CPUCores, c.role, c.inv.CPU.Count)
}

// hostMemoryForRole has only the 100 MiB tolerance, also for meminfo.
func hostMemoryForRole(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory or role"
	}
	if c.inv.Memory.PhysicalBytes >= (c.req.RAMMiB-memoryToleranceMiB)*mib {
		return wire.ValidationSuccess, fmt.Sprintf("Sufficient RAM for role %s", c.role)
	}
	return wire.ValidationFailure, fmt.Sprintf("Require at least %s RAM for role %s, found only %s",
		binaryBytes(c.req.RAMMiB*mib), c.role, binaryBytes(c.inv.Memory.PhysicalBytes))
}

func hostHostnameUnique(c *hostContext) (wire.ValidationStatus, string) {
	if c.cluster == nil {
		return statusHidden, ""
	}
	if c.inv == nil {
		return wire.ValidationPending, "Missing inventory"
	}
	name := RealHostname(c.host, c.inv)
	u := c.facts.hostnames[name]
	if u.count > 1 || (u.count == 1 && u.first != c.host.ID) {
		return wire.ValidationFailure, fmt.Sprintf("Hostname %s is not unique in cluster", name)
	}
	return wire.ValidationSuccess, fmt.Sprintf("Hostname %s is unique in cluster", name)
}

func hostBelongsToMachineCIDR(c *hostContext) (wire.ValidationStatus, string) {
	cl := c.cluster
	if cl == nil {
		return statusHidden, ""
	}
	available := len(machineNetworkCIDRs(cl)) > 0
	// Multi-node UMN needs no machine network; its bootstrap host only when
	// the user set one.
	if isUMN(cl) && !c.sno && (!c.host.Bootstrap || !available) {
		return wire.ValidationSuccess, "No machine network CIDR validation needed: User Managed Networking"
	}
	if isDay2(cl) {
		return wire.ValidationSuccess, "No machine network CIDR validation needed: Day2 cluster"
	}
	if c.inv == nil || !available {
		return wire.ValidationPending, "Missing inventory or machine network CIDR"
	}
	allowVirtual := c.v.AllowVirtualInterfaces
	if !userManagedLB(cl) {
		in := c.facts.machineOK
		for _, n := range c.facts.machineNets {
			in = in && belongsToNetwork(c.inv, n, allowVirtual)
		}
		if !in {
			return wire.ValidationFailure, "Host does not belong to machine network CIDRs. Verify that the host belongs to every CIDR listed under machine networks"
		}
		return wire.ValidationSuccess, "Host belongs to all machine network CIDRs"
	}
	for _, n := range c.facts.machineNets {
		if belongsToNetwork(c.inv, n, allowVirtual) {
			return wire.ValidationSuccess, "Host belongs to at least one machine network CIDR"
		}
	}
	return wire.ValidationFailure, "Host does not belong to any machine network CIDR. Verify that the host belongs to at least one CIDR listed under machine networks"
}

// hostHostnameValid fails (rather than pends) without an inventory, as
// assisted does.
func hostHostnameValid(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationFailure, "Missing inventory"
	}
	name := RealHostname(c.host, c.inv)
	if isForbiddenHostname(name) {
		return wire.ValidationFailure, fmt.Sprintf("The host name %s is forbidden", name)
	}
	if len(name) > maxHostnameLength || !hostnameRE.MatchString(name) {
		return wire.ValidationFailure, fmt.Sprintf("Hostname %s is forbidden, hostname should match pattern %s", name, HostnamePattern)
	}
	return wire.ValidationSuccess, fmt.Sprintf("Hostname %s is allowed", name)
}

const (
	maxServiceAheadOfHost = 20 * time.Minute
	maxHostAheadOfService = time.Hour
)

func hostTimeSynced(c *hostContext) (wire.ValidationStatus, string) {
	if c.host.Timestamp == 0 {
		return wire.ValidationPending, "Missing host time, can't determine synchronization between host and service"
	}
	now := c.now.UTC()
	diff := now.Sub(time.Unix(c.host.Timestamp, 0))
	switch {
	case diff > maxServiceAheadOfHost:
		return wire.ValidationFailure, fmt.Sprintf("Host clock is not synchronized, service time is ahead of host's at least for %.1f minutes, please configure an NTP server via DHCP. Service time: %s", maxServiceAheadOfHost.Minutes(), now)
	case diff < -maxHostAheadOfService:
		return wire.ValidationFailure, fmt.Sprintf("Host clock is not synchronized, host time is ahead of service at least for %.1f minutes, please configure an NTP server via DHCP. Service time: %s", maxHostAheadOfService.Minutes(), now)
	}
	return wire.ValidationSuccess, "Host clock is synchronized with service"
}

func hostDefaultRoute(c *hostContext) (wire.ValidationStatus, string) {
	if c.inv == nil {
		return wire.ValidationPending, "Missing default routing information."
	}
	for _, r := range c.inv.Routes {
		if r.Destination == "" || r.Gateway == "" {
			continue
		}
		if ok, err := isDefaultRoute(r); err == nil && ok {
			return wire.ValidationSuccess, "Host has been configured with at least one default route."
		}
	}
	return wire.ValidationFailure, "Host has not yet been configured with a default route."
}

// Platform providers' host checks (assisted internal/provider/*).
const (
	vmwareManufacturer  = "VMware, Inc."
	nutanixManufacturer = "Nutanix"
	ociManufacturer     = "OracleCloud.com"
)

func hostCompatibleWithPlatform(c *hostContext) (wire.ValidationStatus, string) {
	if c.cluster == nil {
		return statusHidden, ""
	}
	var pt wire.PlatformType
	if c.cluster.Platform != nil {
		pt = c.cluster.Platform.Type
	}
	if c.inv == nil || pt == "" {
		return wire.ValidationPending, "Missing inventory or platform isn't set"
	}
	manufacturer := ""
	if c.inv.SystemVendor != nil {
		manufacturer = c.inv.SystemVendor.Manufacturer
	}
	var ok bool
	switch pt {
	case wire.PlatformTypeBaremetal, wire.PlatformTypeNone:
		ok = true
	case wire.PlatformTypeVsphere:
		ok = manufacturer == vmwareManufacturer
	case wire.PlatformTypeNutanix:
		ok = manufacturer == nutanixManufacturer
	case wire.PlatformTypeExternal:
		ok = !isOCI(c.cluster.Platform) || manufacturer == ociManufacturer
	default:
		return wire.ValidationError, "Validation error"
	}
	if ok {
		return wire.ValidationSuccess, fmt.Sprintf("Host is compatible with cluster platform %s", pt)
	}
	return wire.ValidationFailure, fmt.Sprintf("Host is not compatible with cluster platform %s; either disable this host or discover a new compatible host.", pt)
}

func isOCI(p *wire.Platform) bool {
	return p != nil && p.Type == wire.PlatformTypeExternal && p.External != nil &&
		p.External.PlatformName != nil && *p.External.PlatformName == "oci"
}
