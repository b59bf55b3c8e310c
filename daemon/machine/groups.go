package machine

import v2 "github.com/nodezero/nodezero/daemon/v2"

// Validation groups as assisted-service names them
// (internal/host/statemachine.go, internal/cluster/statemachine.go;
// reference/assisted-service.md §2.4, §3.2). The rules are built from these
// lists at package init; treat them as read-only.
var (
	// HasValidInventory: the agent sent an inventory that is not fully
	// truncated.
	HasValidInventory = []v2.HostValidationID{
		v2.HostValidationIDHasInventory,
		v2.HostValidationIDInventoryNotFullyTruncated,
	}

	// HasMinRequiredHardware: the host could serve some role at all.
	HasMinRequiredHardware = []v2.HostValidationID{
		v2.HostValidationIDHasMinValidDisks,
		v2.HostValidationIDHasMinCPUCores,
		v2.HostValidationIDHasMinMemory,
		v2.HostValidationIDCompatibleWithClusterPlatform,
		v2.HostValidationIDDiskEncryptionRequirementsSatisfied,
	}

	// RequiredInputFieldsExist: input only the user can give.
	RequiredInputFieldsExist = []v2.HostValidationID{
		v2.HostValidationIDMachineCIDRDefined,
	}

	// IsSufficientForInstall: everything else that gates known, in
	// assisted's order. release-domain-name-resolved-correctly is left out
	// on purpose, as in assisted (MGMT-15213: wrong behind mirrors and
	// proxies).
	IsSufficientForInstall = []v2.HostValidationID{
		v2.HostValidationIDHasMemoryForRole,
		v2.HostValidationIDHasCPUCoresForRole,
		v2.HostValidationIDBelongsToMachineCIDR,
		v2.HostValidationIDHostnameUnique,
		v2.HostValidationIDHostnameValid,
		v2.HostValidationIDIgnitionDownloadable,
		v2.HostValidationIDBelongsToMajorityGroup,
		v2.HostValidationIDOdfRequirementsSatisfied,
		v2.HostValidationIDLsoRequirementsSatisfied,
		v2.HostValidationIDCnvRequirementsSatisfied,
		v2.HostValidationIDLvmRequirementsSatisfied,
		v2.HostValidationIDMceRequirementsSatisfied,
		v2.HostValidationIDMtvRequirementsSatisfied,
		v2.HostValidationIDOscRequirementsSatisfied,
		v2.HostValidationIDSufficientNetworkLatencyRequirementForRole,
		v2.HostValidationIDSufficientPacketLossRequirementForRole,
		v2.HostValidationIDHasDefaultRoute,
		v2.HostValidationIDAPIDomainNameResolvedCorrectly,
		v2.HostValidationIDAPIIntDomainNameResolvedCorrectly,
		v2.HostValidationIDAppsDomainNameResolvedCorrectly,
		v2.HostValidationIDDNSWildcardNotConfigured,
		v2.HostValidationIDValidPlatformNetworkSettings,
		v2.HostValidationIDSufficientInstallationDiskSpeed,
		v2.HostValidationIDNonOverlappingSubnets,
		v2.HostValidationIDCompatibleAgent,
		v2.HostValidationIDTimeSyncedBetweenHostAndService,
		v2.HostValidationIDNoSkipInstallationDisk,
		v2.HostValidationIDNoSkipMissingDisk,
		v2.HostValidationIDNoIPCollisionsInNetwork,
		v2.HostValidationIDNoISCSINicBelongsToMachineCIDR,
		v2.HostValidationIDNodeFeatureDiscoveryRequirementsSatisfied,
		v2.HostValidationIDNvidiaGPURequirementsSatisfied,
		v2.HostValidationIDPipelinesRequirementsSatisfied,
		v2.HostValidationIDServicemeshRequirementsSatisfied,
		v2.HostValidationIDServerlessRequirementsSatisfied,
		v2.HostValidationIDOpenshiftAiRequirementsSatisfied,
		v2.HostValidationIDAuthorinoRequirementsSatisfied,
		v2.HostValidationIDNmstateRequirementsSatisfied,
		v2.HostValidationIDAmdGPURequirementsSatisfied,
		v2.HostValidationIDKmmRequirementsSatisfied,
		v2.HostValidationIDNodeHealthcheckRequirementsSatisfied,
		v2.HostValidationIDSelfNodeRemediationRequirementsSatisfied,
		v2.HostValidationIDFenceAgentsRemediationRequirementsSatisfied,
		v2.HostValidationIDNodeMaintenanceRequirementsSatisfied,
		v2.HostValidationIDKubeDeschedulerRequirementsSatisfied,
		v2.HostValidationIDClusterObservabilityRequirementsSatisfied,
		v2.HostValidationIDNumaResourcesRequirementsSatisfied,
		v2.HostValidationIDOadpRequirementsSatisfied,
		v2.HostValidationIDMetallbRequirementsSatisfied,
		v2.HostValidationIDLokiRequirementsSatisfied,
		v2.HostValidationIDOpenshiftLoggingRequirementsSatisfied,
		// nodezero's own: a configured host whose hints match no disk.
		v2.HostValidationIDInstallationDiskMatchesHints,
	}

	// HostValidationsHandledApart gate some rules outside the groups:
	// connected and media-connected guard every pre-install refresh rule,
	// vsphere-disk-uuid-enabled gates pending-for-input and known.
	HostValidationsHandledApart = []v2.HostValidationID{
		v2.HostValidationIDConnected,
		v2.HostValidationIDMediaConnected,
		v2.HostValidationIDVsphereDiskUUIDEnabled,
	}

	// HostValidationsNotGating are shown to the user but never block a
	// transition: ntp-synced and mtu-valid are advisory,
	// inventory-not-partially-truncated only warns,
	// release-domain-name-resolved-correctly is disabled (MGMT-15213),
	// container-images-available is read through HostFacts.ImageAvailability
	// during preparation, and ocs-requirements-satisfied is a legacy
	// operator assisted no longer gates on.
	HostValidationsNotGating = []v2.HostValidationID{
		v2.HostValidationIDNTPSynced,
		v2.HostValidationIDMTUValid,
		v2.HostValidationIDInventoryNotPartiallyTruncated,
		v2.HostValidationIDReleaseDomainNameResolvedCorrectly,
		v2.HostValidationIDContainerImagesAvailable,
		v2.HostValidationIDOcsRequirementsSatisfied,
	}
)

var (
	// PendingConditions: cluster input the user must give.
	PendingConditions = []v2.ClusterValidationID{
		v2.ClusterValidationIDMachineCIDRDefined,
		v2.ClusterValidationIDClusterCIDRDefined,
		v2.ClusterValidationIDServiceCIDRDefined,
		v2.ClusterValidationIDDNSDomainDefined,
		v2.ClusterValidationIDPullSecretSet,
	}

	// VIPsDefined: both VIP lists are set (or allocated by DHCP).
	VIPsDefined = []v2.ClusterValidationID{
		v2.ClusterValidationIDIngressVIPsDefined,
		v2.ClusterValidationIDAPIVIPsDefined,
	}

	// RequiredForInstall: everything else that gates ready, in assisted's
	// order.
	RequiredForInstall = []v2.ClusterValidationID{
		v2.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR,
		v2.ClusterValidationIDAPIVIPsValid,
		v2.ClusterValidationIDIngressVIPsValid,
		v2.ClusterValidationIDAllHostsAreReadyToInstall,
		v2.ClusterValidationIDSufficientMastersCount,
		v2.ClusterValidationIDNetworkPrefixValid,
		v2.ClusterValidationIDNoCidrsOverlapping,
		v2.ClusterValidationIDNTPServerConfigured,
		v2.ClusterValidationIDOdfRequirementsSatisfied,
		v2.ClusterValidationIDLsoRequirementsSatisfied,
		v2.ClusterValidationIDCnvRequirementsSatisfied,
		v2.ClusterValidationIDLvmRequirementsSatisfied,
		v2.ClusterValidationIDMceRequirementsSatisfied,
		v2.ClusterValidationIDMtvRequirementsSatisfied,
		v2.ClusterValidationIDOscRequirementsSatisfied,
		v2.ClusterValidationIDNetworkTypeValid,
		v2.ClusterValidationIDCustomManifestsRequirementsSatisfied,
		v2.ClusterValidationIDNetworksSameAddressFamilies,
		v2.ClusterValidationIDNodeFeatureDiscoveryRequirementsSatisfied,
		v2.ClusterValidationIDNvidiaGPURequirementsSatisfied,
		v2.ClusterValidationIDPipelinesRequirementsSatisfied,
		v2.ClusterValidationIDServicemeshRequirementsSatisfied,
		v2.ClusterValidationIDServerlessRequirementsSatisfied,
		v2.ClusterValidationIDOpenshiftAiRequirementsSatisfied,
		v2.ClusterValidationIDAuthorinoRequirementsSatisfied,
		v2.ClusterValidationIDNmstateRequirementsSatisfied,
		v2.ClusterValidationIDAmdGPURequirementsSatisfied,
		v2.ClusterValidationIDKmmRequirementsSatisfied,
		v2.ClusterValidationIDNodeHealthcheckRequirementsSatisfied,
		v2.ClusterValidationIDSelfNodeRemediationRequirementsSatisfied,
		v2.ClusterValidationIDFenceAgentsRemediationRequirementsSatisfied,
		v2.ClusterValidationIDNodeMaintenanceRequirementsSatisfied,
		v2.ClusterValidationIDKubeDeschedulerRequirementsSatisfied,
		v2.ClusterValidationIDClusterObservabilityRequirementsSatisfied,
		v2.ClusterValidationIDNumaResourcesRequirementsSatisfied,
		v2.ClusterValidationIDOadpRequirementsSatisfied,
		v2.ClusterValidationIDMetallbRequirementsSatisfied,
		v2.ClusterValidationIDLokiRequirementsSatisfied,
		v2.ClusterValidationIDOpenshiftLoggingRequirementsSatisfied,
		// nodezero's own: every host config matches a registered host.
		v2.ClusterValidationIDConfiguredHostsRegistered,
	}

	// ClusterValidationsNotGating are computed and shown but gate nothing in
	// assisted's cluster machine.
	ClusterValidationsNotGating = []v2.ClusterValidationID{
		v2.ClusterValidationIDPlatformRequirementsSatisfied,
		v2.ClusterValidationIDOcsRequirementsSatisfied,
		v2.ClusterValidationIDOpenshiftAiGPURequirementsSatisfied,
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
var notGating = func() map[v2.HostValidationID]bool {
	m := map[v2.HostValidationID]bool{}
	for _, id := range HostValidationsNotGating {
		m[id] = true
	}
	return m
}()

// Advisory reports whether a host validation never gates a transition
// (HostValidationsNotGating): its failure is shown, never given as the
// reason a host cannot be installed.
func Advisory(id v2.HostValidationID) bool { return notGating[id] }
