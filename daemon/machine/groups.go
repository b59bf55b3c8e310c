package machine

import "github.com/nodezero/nodezero/wire"

// Validation groups as assisted-service names them
// (internal/host/statemachine.go, internal/cluster/statemachine.go;
// docs/reference/assisted-service.md §2.4, §3.2). The rules are built from these
// lists at package init; treat them as read-only.
var (
	// HasValidInventory: the agent sent an inventory that is not fully
	// truncated.
	HasValidInventory = []wire.HostValidationID{
		wire.HostValidationIDHasInventory,
		wire.HostValidationIDInventoryNotFullyTruncated,
	}

	// HasMinRequiredHardware: the host could serve some role at all.
	HasMinRequiredHardware = []wire.HostValidationID{
		wire.HostValidationIDHasMinValidDisks,
		wire.HostValidationIDHasMinCPUCores,
		wire.HostValidationIDHasMinMemory,
		wire.HostValidationIDCompatibleWithClusterPlatform,
		wire.HostValidationIDDiskEncryptionRequirementsSatisfied,
	}

	// RequiredInputFieldsExist: input only the user can give.
	RequiredInputFieldsExist = []wire.HostValidationID{
		wire.HostValidationIDMachineCIDRDefined,
	}

	// IsSufficientForInstall: everything else that gates known, in
	// assisted's order. release-domain-name-resolved-correctly is left out
	// on purpose, as in assisted (MGMT-15213: wrong behind mirrors and
	// proxies).
	IsSufficientForInstall = []wire.HostValidationID{
		wire.HostValidationIDHasMemoryForRole,
		wire.HostValidationIDHasCPUCoresForRole,
		wire.HostValidationIDBelongsToMachineCIDR,
		wire.HostValidationIDHostnameUnique,
		wire.HostValidationIDHostnameValid,
		wire.HostValidationIDIgnitionDownloadable,
		wire.HostValidationIDBelongsToMajorityGroup,
		wire.HostValidationIDOdfRequirementsSatisfied,
		wire.HostValidationIDLsoRequirementsSatisfied,
		wire.HostValidationIDCnvRequirementsSatisfied,
		wire.HostValidationIDLvmRequirementsSatisfied,
		wire.HostValidationIDMceRequirementsSatisfied,
		wire.HostValidationIDMtvRequirementsSatisfied,
		wire.HostValidationIDOscRequirementsSatisfied,
		wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
		wire.HostValidationIDSufficientPacketLossRequirementForRole,
		wire.HostValidationIDHasDefaultRoute,
		wire.HostValidationIDAPIDomainNameResolvedCorrectly,
		wire.HostValidationIDAPIIntDomainNameResolvedCorrectly,
		wire.HostValidationIDAppsDomainNameResolvedCorrectly,
		wire.HostValidationIDDNSWildcardNotConfigured,
		wire.HostValidationIDValidPlatformNetworkSettings,
		wire.HostValidationIDSufficientInstallationDiskSpeed,
		wire.HostValidationIDNonOverlappingSubnets,
		wire.HostValidationIDCompatibleAgent,
		wire.HostValidationIDTimeSyncedBetweenHostAndService,
		wire.HostValidationIDNoSkipInstallationDisk,
		wire.HostValidationIDNoSkipMissingDisk,
		wire.HostValidationIDNoIPCollisionsInNetwork,
		wire.HostValidationIDNoISCSINicBelongsToMachineCIDR,
		wire.HostValidationIDNodeFeatureDiscoveryRequirementsSatisfied,
		wire.HostValidationIDNvidiaGPURequirementsSatisfied,
		wire.HostValidationIDPipelinesRequirementsSatisfied,
		wire.HostValidationIDServicemeshRequirementsSatisfied,
		wire.HostValidationIDServerlessRequirementsSatisfied,
		wire.HostValidationIDOpenshiftAiRequirementsSatisfied,
		wire.HostValidationIDAuthorinoRequirementsSatisfied,
		wire.HostValidationIDNmstateRequirementsSatisfied,
		wire.HostValidationIDAmdGPURequirementsSatisfied,
		wire.HostValidationIDKmmRequirementsSatisfied,
		wire.HostValidationIDNodeHealthcheckRequirementsSatisfied,
		wire.HostValidationIDSelfNodeRemediationRequirementsSatisfied,
		wire.HostValidationIDFenceAgentsRemediationRequirementsSatisfied,
		wire.HostValidationIDNodeMaintenanceRequirementsSatisfied,
		wire.HostValidationIDKubeDeschedulerRequirementsSatisfied,
		wire.HostValidationIDClusterObservabilityRequirementsSatisfied,
		wire.HostValidationIDNumaResourcesRequirementsSatisfied,
		wire.HostValidationIDOadpRequirementsSatisfied,
		wire.HostValidationIDMetallbRequirementsSatisfied,
		wire.HostValidationIDLokiRequirementsSatisfied,
		wire.HostValidationIDOpenshiftLoggingRequirementsSatisfied,
		// nodezero's own: a configured host whose hints match no disk.
		wire.HostValidationIDInstallationDiskMatchesHints,
	}

	// HostValidationsHandledApart gate some rules outside the groups:
	// connected and media-connected guard every pre-install refresh rule,
	// vsphere-disk-uuid-enabled gates pending-for-input and known.
	HostValidationsHandledApart = []wire.HostValidationID{
		wire.HostValidationIDConnected,
		wire.HostValidationIDMediaConnected,
		wire.HostValidationIDVsphereDiskUUIDEnabled,
	}

	// HostValidationsNotGating are shown to the user but never block a
	// transition: ntp-synced and mtu-valid are advisory,
	// inventory-not-partially-truncated only warns,
	// release-domain-name-resolved-correctly is disabled (MGMT-15213),
	// container-images-available is read through HostFacts.ImageAvailability
	// during preparation, and ocs-requirements-satisfied is a legacy
	// operator assisted no longer gates on.
	HostValidationsNotGating = []wire.HostValidationID{
		wire.HostValidationIDNTPSynced,
		wire.HostValidationIDMTUValid,
		wire.HostValidationIDInventoryNotPartiallyTruncated,
		wire.HostValidationIDReleaseDomainNameResolvedCorrectly,
		wire.HostValidationIDContainerImagesAvailable,
		wire.HostValidationIDOcsRequirementsSatisfied,
	}
)

var (
	// PendingConditions: cluster input the user must give.
	PendingConditions = []wire.ClusterValidationID{
		wire.ClusterValidationIDMachineCIDRDefined,
		wire.ClusterValidationIDClusterCIDRDefined,
		wire.ClusterValidationIDServiceCIDRDefined,
		wire.ClusterValidationIDDNSDomainDefined,
		wire.ClusterValidationIDPullSecretSet,
	}

	// VIPsDefined: both VIP lists are set (or allocated by DHCP).
	VIPsDefined = []wire.ClusterValidationID{
		wire.ClusterValidationIDIngressVIPsDefined,
		wire.ClusterValidationIDAPIVIPsDefined,
	}

	// RequiredForInstall: everything else that gates ready, in assisted's
	// order.
	RequiredForInstall = []wire.ClusterValidationID{
		wire.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR,
		wire.ClusterValidationIDAPIVIPsValid,
		wire.ClusterValidationIDIngressVIPsValid,
		wire.ClusterValidationIDAllHostsAreReadyToInstall,
		wire.ClusterValidationIDSufficientMastersCount,
		wire.ClusterValidationIDNetworkPrefixValid,
		wire.ClusterValidationIDNoCidrsOverlapping,
		wire.ClusterValidationIDNTPServerConfigured,
		wire.ClusterValidationIDOdfRequirementsSatisfied,
		wire.ClusterValidationIDLsoRequirementsSatisfied,
		wire.ClusterValidationIDCnvRequirementsSatisfied,
		wire.ClusterValidationIDLvmRequirementsSatisfied,
		wire.ClusterValidationIDMceRequirementsSatisfied,
		wire.ClusterValidationIDMtvRequirementsSatisfied,
		wire.ClusterValidationIDOscRequirementsSatisfied,
		wire.ClusterValidationIDNetworkTypeValid,
		wire.ClusterValidationIDCustomManifestsRequirementsSatisfied,
		wire.ClusterValidationIDNetworksSameAddressFamilies,
		wire.ClusterValidationIDNodeFeatureDiscoveryRequirementsSatisfied,
		wire.ClusterValidationIDNvidiaGPURequirementsSatisfied,
		wire.ClusterValidationIDPipelinesRequirementsSatisfied,
		wire.ClusterValidationIDServicemeshRequirementsSatisfied,
		wire.ClusterValidationIDServerlessRequirementsSatisfied,
		wire.ClusterValidationIDOpenshiftAiRequirementsSatisfied,
		wire.ClusterValidationIDAuthorinoRequirementsSatisfied,
		wire.ClusterValidationIDNmstateRequirementsSatisfied,
		wire.ClusterValidationIDAmdGPURequirementsSatisfied,
		wire.ClusterValidationIDKmmRequirementsSatisfied,
		wire.ClusterValidationIDNodeHealthcheckRequirementsSatisfied,
		wire.ClusterValidationIDSelfNodeRemediationRequirementsSatisfied,
		wire.ClusterValidationIDFenceAgentsRemediationRequirementsSatisfied,
		wire.ClusterValidationIDNodeMaintenanceRequirementsSatisfied,
		wire.ClusterValidationIDKubeDeschedulerRequirementsSatisfied,
		wire.ClusterValidationIDClusterObservabilityRequirementsSatisfied,
		wire.ClusterValidationIDNumaResourcesRequirementsSatisfied,
		wire.ClusterValidationIDOadpRequirementsSatisfied,
		wire.ClusterValidationIDMetallbRequirementsSatisfied,
		wire.ClusterValidationIDLokiRequirementsSatisfied,
		wire.ClusterValidationIDOpenshiftLoggingRequirementsSatisfied,
		// nodezero's own: every host config matches a registered host.
		wire.ClusterValidationIDConfiguredHostsRegistered,
	}

	// ClusterValidationsNotGating are computed and shown but gate nothing in
	// assisted's cluster machine.
	ClusterValidationsNotGating = []wire.ClusterValidationID{
		wire.ClusterValidationIDPlatformRequirementsSatisfied,
		wire.ClusterValidationIDOcsRequirementsSatisfied,
		wire.ClusterValidationIDOpenshiftAiGPURequirementsSatisfied,
	}
)

// Named conditions over the groups.
var (
	hasValidInventory        = allHost("hasValidInventory", HasValidInventory)
	hasMinRequiredHardware   = allHost("hasMinRequiredHardware", HasMinRequiredHardware)
	requiredInputFieldsExist = allHost("requiredInputFieldsExist", RequiredInputFieldsExist)
	isSufficientForInstall   = allHost("isSufficientForInstall", IsSufficientForInstall)

	pendingConditions  = allCluster("pendingConditions", PendingConditions)
	vipsDefined        = allCluster("vipsDefined", VIPsDefined)
	requiredForInstall = allCluster("requiredForInstall", RequiredForInstall)
)

// notGating is HostValidationsNotGating as a set.
var notGating = func() map[wire.HostValidationID]bool {
	m := map[wire.HostValidationID]bool{}
	for _, id := range HostValidationsNotGating {
		m[id] = true
	}
	return m
}()

// Advisory reports whether a host validation never gates a transition
// (HostValidationsNotGating): its failure is shown, never given as the
// reason a host cannot be installed.
func Advisory(id wire.HostValidationID) bool { return notGating[id] }
