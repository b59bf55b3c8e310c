package validation

import (
	"net"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// hostRule is one row of the host validation table.
type hostRule struct {
	ID       wire.HostValidationID
	Category wire.ValidationCategory
	Fn       func(*hostContext) (wire.ValidationStatus, string)
	// Skip lists install stages during which the result is left out of
	// validations_info (it still counts as a condition).
	Skip []wire.HostStage
}

// manualRebootStages: once a host reboots into the installed system its
// agent is gone, so liveness-type results are hidden (assisted common.go).
var manualRebootStages = []wire.HostStage{
	wire.HostStageRebooting, wire.HostStageWaitingForIgnition, wire.HostStageConfiguring,
	wire.HostStageJoined, wire.HostStageDone,
}

// hostRules is the host validation table, in assisted's emission order
// (internal/host/refresh_status_preprocessor.go newValidations).
var hostRules = []hostRule{
	{wire.HostValidationIDConnected, wire.CategoryNetwork, hostConnected, manualRebootStages},
	{wire.HostValidationIDMediaConnected, wire.CategoryNetwork, hostMediaConnected, manualRebootStages},
	{wire.HostValidationIDHasInventory, wire.CategoryHardware, hostHasInventory, nil},
	{wire.HostValidationIDInventoryNotPartiallyTruncated, wire.CategoryHardware, hostNotPartiallyTruncated, nil},
	{wire.HostValidationIDInventoryNotFullyTruncated, wire.CategoryHardware, hostNotFullyTruncated, nil},
	{wire.HostValidationIDHasMinCPUCores, wire.CategoryHardware, hostMinCPUCores, nil},
	{wire.HostValidationIDHasMinMemory, wire.CategoryHardware, hostMinMemory, nil},
	{wire.HostValidationIDHasMinValidDisks, wire.CategoryHardware, hostMinValidDisks, nil},
	{wire.HostValidationIDMachineCIDRDefined, wire.CategoryNetwork, hostMachineCIDRDefined, nil},
	{wire.HostValidationIDHasCPUCoresForRole, wire.CategoryHardware, hostCPUCoresForRole, nil},
	{wire.HostValidationIDHasMemoryForRole, wire.CategoryHardware, hostMemoryForRole, nil},
	{wire.HostValidationIDHostnameUnique, wire.CategoryHardware, hostHostnameUnique, nil},
	{wire.HostValidationIDBelongsToMachineCIDR, wire.CategoryNetwork, hostBelongsToMachineCIDR, nil},
	{wire.HostValidationIDHostnameValid, wire.CategoryHardware, hostHostnameValid, nil},
	{wire.HostValidationIDBelongsToMajorityGroup, wire.CategoryNetwork, hostBelongsToMajorityGroup, nil},
	{wire.HostValidationIDMTUValid, wire.CategoryNetwork, hostMTUValid, nil},
	{wire.HostValidationIDNTPSynced, wire.CategoryNetwork, hostNTPSynced, manualRebootStages},
	{wire.HostValidationIDTimeSyncedBetweenHostAndService, wire.CategoryNetwork, hostTimeSynced, manualRebootStages},
	{wire.HostValidationIDContainerImagesAvailable, wire.CategoryNetwork, hostContainerImagesAvailable, nil},
	{wire.HostValidationIDSufficientInstallationDiskSpeed, wire.CategoryHardware, hostInstallationDiskSpeed, nil},
	{wire.HostValidationIDSufficientNetworkLatencyRequirementForRole, wire.CategoryNetwork, hostNetworkLatency, nil},
	{wire.HostValidationIDSufficientPacketLossRequirementForRole, wire.CategoryNetwork, hostPacketLoss, nil},
	{wire.HostValidationIDHasDefaultRoute, wire.CategoryNetwork, hostDefaultRoute, nil},
	{wire.HostValidationIDAPIDomainNameResolvedCorrectly, wire.CategoryNetwork, hostAPIDomainResolved, nil},
	{wire.HostValidationIDAPIIntDomainNameResolvedCorrectly, wire.CategoryNetwork, hostAPIIntDomainResolved, nil},
	{wire.HostValidationIDAppsDomainNameResolvedCorrectly, wire.CategoryNetwork, hostAppsDomainResolved, nil},
	// Switched off in assisted (MGMT-15213); shown here, gating nothing.
	{wire.HostValidationIDReleaseDomainNameResolvedCorrectly, wire.CategoryNetwork, hostReleaseDomainResolved, nil},
	{wire.HostValidationIDCompatibleWithClusterPlatform, wire.CategoryHardware, hostCompatibleWithPlatform, nil},
	{wire.HostValidationIDDNSWildcardNotConfigured, wire.CategoryNetwork, hostDNSWildcardNotConfigured, nil},
	{wire.HostValidationIDNoIPCollisionsInNetwork, wire.CategoryNetwork, hostNoIPCollisions, nil},
	// nodezero's own, shown only with host configs (hints.go).
	{wire.HostValidationIDInstallationDiskMatchesHints, wire.CategoryHardware, hostDiskMatchesHints, nil},
}

// nonIgnorableHost may not be forced by a cluster's ignore list.
var nonIgnorableHost = []string{
	string(wire.HostValidationIDConnected), string(wire.HostValidationIDHasInventory),
	string(wire.HostValidationIDInventoryNotFullyTruncated), string(wire.HostValidationIDMachineCIDRDefined),
	string(wire.HostValidationIDHostnameUnique), string(wire.HostValidationIDHostnameValid),
}

// HostValidationIDs lists the host validations this package evaluates, in
// emission order.
func HostValidationIDs() []wire.HostValidationID {
	ids := make([]wire.HostValidationID, len(hostRules))
	for i, r := range hostRules {
		ids[i] = r.ID
	}
	return ids
}

// hostContext is what a host validation reads.
type hostContext struct {
	v       *Validator
	host    *wire.Host
	inv     *wire.Inventory // nil when absent or unusable
	invBad  string          // why a present inventory is unusable
	cluster *wire.Cluster
	facts   *ClusterFacts
	now     time.Time
	sno     bool
	role    wire.HostRole
	req     RoleRequirements // for the host's effective role
	minCPU  int64            // for any role
	minRAM  int64            // MiB, for any role
	// conn is the host's compacted connectivity report; nil: none yet.
	conn *ConnReport
	// checks are the host's check results (never nil), groups the
	// cluster's majority groups.
	checks *HostChecks
	groups Reported[*Connectivity]
	// own is the host's inventory addresses (ownIPs), made once.
	own map[string]bool
}

// ownIPs is the set of the host's inventory addresses, in net.IP's
// canonical text; empty without an inventory. Several validations ask
// it, so it is made once per evaluation.
func (c *hostContext) ownIPs() map[string]bool {
	if c.own != nil {
		return c.own
	}
	c.own = map[string]bool{}
	if c.inv == nil {
		return c.own
	}
	for _, i := range c.inv.Interfaces {
		if i == nil {
			continue
		}
		for _, list := range [][]string{i.IPv4Addresses, i.IPv6Addresses} {
			for _, a := range list {
				if ip, _, err := net.ParseCIDR(a); err == nil {
					c.own[ip.String()] = true
				}
			}
		}
	}
	return c.own
}

func (v *Validator) newHostContext(in HostInput) *hostContext {
	c := &hostContext{v: v, host: in.Host, inv: in.Inventory, cluster: in.Cluster, facts: in.Facts, now: in.Now,
		conn: in.Conn, checks: in.Checks.orNone(), groups: in.Groups}
	if c.now.IsZero() {
		c.now = time.Now()
	}
	if c.inv != nil {
		// assisted refuses to validate such an inventory at all.
		switch {
		case c.inv.Memory == nil:
			c.invBad, c.inv = "Inventory is not valid, Memory not detected", nil
		case c.inv.CPU == nil:
			c.invBad, c.inv = "Inventory is not valid, CPU not detected", nil
		}
	}
	if c.facts == nil {
		c.facts = v.Facts(c.cluster, []HostEntry{{Host: c.host, Inventory: c.inv, Conn: c.conn, Checks: c.checks}}, nil)
	}
	c.role = EffectiveRole(c.host)
	if c.cluster != nil {
		c.sno = isSNO(c.cluster)
		c.req = c.facts.versionReq.ForHost(c.host, c.inv, c.sno)
		c.minCPU, c.minRAM = c.facts.versionReq.Minimum(c.sno)
	} else {
		c.req = c.facts.versionReq.Unbound()
		c.minCPU, c.minRAM = c.facts.versionReq.Minimum(false)
	}
	return c
}

// ValidateHost evaluates every host validation.
func (v *Validator) ValidateHost(in HostInput) Report {
	c := v.newHostContext(in)
	var ignore ignoreList
	if in.Cluster != nil {
		ignore = parseIgnoreList(in.Cluster.IgnoredHostValidations, nonIgnorableHost)
	}
	stage := currentStage(in.Host)
	rep := Report{Conditions: make(map[string]bool, len(hostRules))}
	for _, r := range hostRules {
		id := string(r.ID)
		var st wire.ValidationStatus
		var msg string
		if !ignore.set && v.DisabledHost[id] {
			st, msg = wire.ValidationDisabled, messageDisabled
		} else {
			st, msg = r.Fn(c)
		}
		rep.Conditions[id] = st == wire.ValidationSuccess || st == statusHidden || st == wire.ValidationDisabled
		if st == statusHidden || stageIn(stage, r.Skip) {
			continue
		}
		if ignore.ignores(id) {
			rep.Conditions[id] = true
		}
		rep.Results = append(rep.Results, wire.Validation{ID: id, Status: st, Message: msg, Category: r.Category})
	}
	_, _, rep.Preparation.DiskSpeed, _ = c.installationDiskSpeed()
	rep.Preparation.Images = c.imagesOutcome()
	return rep
}

func currentStage(h *wire.Host) wire.HostStage {
	if h.Progress == nil {
		return ""
	}
	return h.Progress.CurrentStage
}

func stageIn(s wire.HostStage, list []wire.HostStage) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}
