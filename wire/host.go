package wire

import (
	"time"
)

type Host struct {
	// Indicates the type of this object. Will be 'Host' if this is a complete object or 'HostLink' if it is just a link, or 'AddToExistingClusterHost' for host being added to existing OCP cluster, or
	Kind HostKind `json:"kind"`
	// Unique identifier of the object.
	ID string `json:"id"`
	// Self link.
	Href string `json:"href"`
	// The cluster that this host is associated with.
	ClusterID *string `json:"cluster_id,omitempty"`
	// The infra-env that this host is associated with.
	InfraEnvID string     `json:"infra_env_id,omitempty"`
	Status     HostStatus `json:"status"`
	StatusInfo string     `json:"status_info"`
	// JSON-formatted string containing the validation results for each validation id grouped by category (network, hardware, etc.)
	ValidationsInfo string `json:"validations_info,omitempty"`
	// The progress of log collection or empty if logs are not applicable
	LogsInfo LogsState `json:"logs_info,omitempty"`
	// The last time that the host status was updated.
	StatusUpdatedAt DateTime          `json:"status_updated_at,omitzero"`
	Progress        *HostProgressInfo `json:"progress,omitempty"`
	// Time at which the current progress stage started.
	StageStartedAt DateTime `json:"stage_started_at,omitzero"`
	// Time at which the current progress stage was last updated.
	StageUpdatedAt DateTime    `json:"stage_updated_at,omitzero"`
	ProgressStages []HostStage `json:"progress_stages"`
	Connectivity   string      `json:"connectivity,omitempty"`
	// Contains a serialized api_vip_connectivity_response
	APIVIPConnectivity string `json:"api_vip_connectivity,omitempty"`
	TangConnectivity   string `json:"tang_connectivity,omitempty"`
	Inventory          string `json:"inventory,omitempty"`
	FreeAddresses      string `json:"free_addresses,omitempty"`
	// The configured NTP sources on the host.
	NTPSources string `json:"ntp_sources,omitempty"`
	// Additional information about disks, formatted as JSON.
	DisksInfo       string   `json:"disks_info,omitempty"`
	Role            HostRole `json:"role,omitempty"`
	SuggestedRole   HostRole `json:"suggested_role,omitempty"`
	Bootstrap       bool     `json:"bootstrap,omitempty"`
	LogsCollectedAt DateTime `json:"logs_collected_at,omitzero"`
	LogsStartedAt   DateTime `json:"logs_started_at,omitzero"`
	// Installer version.
	InstallerVersion string `json:"installer_version,omitempty"`
	// Contains the inventory disk path, This field is replaced by installation_disk_id field and used for backward compatability with the old UI.
	InstallationDiskPath string `json:"installation_disk_path,omitempty"`
	// Contains the inventory disk id to install on.
	InstallationDiskID string    `json:"installation_disk_id,omitempty"`
	UpdatedAt          time.Time `json:"updated_at,omitzero"`
	CreatedAt          time.Time `json:"created_at,omitzero"`
	// The last time the host's agent communicated with the service.
	CheckedInAt DateTime `json:"checked_in_at,omitzero"`
	// Indicate that connection to assisted service was timed out when soft timeout is enabled.
	ConnectionTimedOut bool `json:"connection_timed_out,omitempty"`
	// The last time the host's agent tried to register in the service.
	RegisteredAt          DateTime         `json:"registered_at,omitzero"`
	DiscoveryAgentVersion string           `json:"discovery_agent_version,omitempty"`
	RequestedHostname     string           `json:"requested_hostname,omitempty"`
	UserName              string           `json:"user_name,omitempty"`
	MediaStatus           *HostMediaStatus `json:"media_status,omitempty"`
	// swagger:ignore
	DeletedAt *time.Time `json:"deleted_at"`
	// Json formatted string containing the user overrides for the host's pointer ignition
	IgnitionConfigOverrides string `json:"ignition_config_overrides,omitempty"`
	InstallerArgs           string `json:"installer_args,omitempty"`
	// The time on the host as seconds since the Unix epoch.
	Timestamp             int64  `json:"timestamp,omitempty"`
	MachineConfigPoolName string `json:"machine_config_pool_name,omitempty"`
	// Array of image statuses.
	ImagesStatus string `json:"images_status,omitempty"`
	// The domain name resolution result.
	DomainNameResolutions string `json:"domain_name_resolutions,omitempty"`
	// True if the token to fetch the ignition from ignition_endpoint_url is set.
	IgnitionEndpointTokenSet bool `json:"ignition_endpoint_token_set,omitempty"`
	// Json containing node's labels.
	NodeLabels string `json:"node_labels,omitempty"`
	// A comma-separated list of disks that will be formatted once installation begins, unless otherwise set to be skipped by skip_formatting_disks. This means that this list also includes disks that appe...
	DisksToBeFormatted string `json:"disks_to_be_formatted,omitempty"`
	// A comma-seperated list of host disks that the service will avoid formatting.
	SkipFormattingDisks string `json:"skip_formatting_disks,omitempty"`
	// The host's BMC credentials that will be used in TNF.
	FencingCredentials string `json:"fencing_credentials,omitempty"`
}

type HostProgressInfo struct {
	InstallationPercentage int64     `json:"installation_percentage,omitempty"`
	CurrentStage           HostStage `json:"current_stage,omitempty"`
	ProgressInfo           string    `json:"progress_info,omitempty"`
	// Time at which the current progress stage started.
	StageStartedAt DateTime `json:"stage_started_at,omitzero"`
	// Time at which the current progress stage was last updated.
	StageUpdatedAt DateTime `json:"stage_updated_at,omitzero"`
	// Indicate of the current stage has been timed out.
	StageTimedOut bool `json:"stage_timed_out,omitempty"`
}

// Command for starting the next step runner
type HostRegistrationResponseNextStepRunnerCommand struct {
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// How long in seconds to wait before retrying registration if the command fails
	RetrySeconds int64 `json:"retry_seconds,omitempty"`
}

type HostRegistrationResponse struct {
	Host
	// Command for starting the next step runner
	NextStepRunnerCommand *HostRegistrationResponseNextStepRunnerCommand `json:"next_step_runner_command,omitempty"`
}

type HostCreateParams struct {
	HostID                string `json:"host_id"`
	DiscoveryAgentVersion string `json:"discovery_agent_version,omitempty"`
}

type HostUpdateParams struct {
	HostRole            *HostUpdateParamsHostRole `json:"host_role,omitempty"`
	HostName            *string                   `json:"host_name,omitempty"`
	DisksSelectedConfig []*DiskConfigParams       `json:"disks_selected_config,omitempty"`
	// Allows changing the host's skip_formatting_disks parameter
	DisksSkipFormatting   []*DiskSkipFormattingParams `json:"disks_skip_formatting,omitempty"`
	MachineConfigPoolName *string                     `json:"machine_config_pool_name,omitempty"`
	// A string which will be used as Authorization Bearer token to fetch the ignition from ignition_endpoint_url.
	IgnitionEndpointToken *string `json:"ignition_endpoint_token,omitempty"`
	// JSON-formatted string of additional HTTP headers when fetching the ignition.
	IgnitionEndpointHTTPHeaders []*IgnitionEndpointHTTPHeadersParams `json:"ignition_endpoint_http_headers,omitempty"`
	// Labels to be added to the corresponding node.
	NodeLabels []*NodeLabelParams `json:"node_labels,omitempty"`
	// The host's BMC credentials that will be used in TNF.
	FencingCredentials *FencingCredentialsParams `json:"fencing_credentials,omitempty"`
}

type DiskConfigParams struct {
	ID   string   `json:"id"`
	Role DiskRole `json:"role,omitempty"`
}

// Allows an addition or removal of a host disk from the host's skip_formatting_disks list
type DiskSkipFormattingParams struct {
	// The ID of the disk that is being added to or removed from the host's skip_formatting_disks list
	DiskID string `json:"disk_id"`
	// True if you wish to add the disk to the skip_formatting_disks list, false if you wish to remove it
	SkipFormatting bool `json:"skip_formatting"`
}

type IgnitionEndpointHTTPHeadersParams struct {
	// The key for the http header's key-value pair.
	Key string `json:"key"`
	// The value for the http header's key-value pair.
	Value string `json:"value"`
}

type NodeLabelParams struct {
	// The key for the label's key-value pair.
	Key string `json:"key"`
	// The value for the label's key-value pair.
	Value string `json:"value"`
}

type FencingCredentialsParams struct {
	// The URL of the host's BMC, for example https://bmc1.example.com.
	Address string `json:"address"`
	// The username to connect to the host's BMC.
	Username string `json:"username"`
	// The password to connect to the host's BMC.
	Password string `json:"password"`
	// Whether to enable or disable certificate verification when connecting to the host's BMC.
	CertificateVerification FencingCredentialsParamsCertificateVerification `json:"certificate_verification,omitempty"`
	// The MAC address identifying the host for MAC-based fencing credentials.
	MACAddress *string `json:"mac_address,omitempty"`
}

type HostProgress struct {
	CurrentStage HostStage `json:"current_stage,omitempty"`
	ProgressInfo string    `json:"progress_info,omitempty"`
}

type HostList []*Host

type NextStepCmdRequest struct {
	// Infra env id
	InfraEnvID string `json:"infra_env_id"`
	// Host id
	HostID string `json:"host_id"`
	// Agent image version
	AgentVersion string `json:"agent_version"`
}

type HostKind string

const (
	HostKindHost                     HostKind = "Host"
	HostKindAddToExistingClusterHost HostKind = "AddToExistingClusterHost"
)

type HostStatus string

const (
	HostStatusDiscovering                 HostStatus = "discovering"
	HostStatusKnown                       HostStatus = "known"
	HostStatusDisconnected                HostStatus = "disconnected"
	HostStatusInsufficient                HostStatus = "insufficient"
	HostStatusDisabled                    HostStatus = "disabled"
	HostStatusPreparingForInstallation    HostStatus = "preparing-for-installation"
	HostStatusPreparingFailed             HostStatus = "preparing-failed"
	HostStatusPreparingSuccessful         HostStatus = "preparing-successful"
	HostStatusPendingForInput             HostStatus = "pending-for-input"
	HostStatusInstalling                  HostStatus = "installing"
	HostStatusInstallingInProgress        HostStatus = "installing-in-progress"
	HostStatusInstallingPendingUserAction HostStatus = "installing-pending-user-action"
	HostStatusResettingPendingUserAction  HostStatus = "resetting-pending-user-action"
	HostStatusInstalled                   HostStatus = "installed"
	HostStatusError                       HostStatus = "error"
	HostStatusResetting                   HostStatus = "resetting"
	HostStatusAddedToExistingCluster      HostStatus = "added-to-existing-cluster"
	HostStatusCancelled                   HostStatus = "cancelled"
	HostStatusBinding                     HostStatus = "binding"
	HostStatusUnbinding                   HostStatus = "unbinding"
	HostStatusUnbindingPendingUserAction  HostStatus = "unbinding-pending-user-action"
	HostStatusKnownUnbound                HostStatus = "known-unbound"
	HostStatusDisconnectedUnbound         HostStatus = "disconnected-unbound"
	HostStatusInsufficientUnbound         HostStatus = "insufficient-unbound"
	HostStatusDisabledUnbound             HostStatus = "disabled-unbound"
	HostStatusDiscoveringUnbound          HostStatus = "discovering-unbound"
	HostStatusReclaiming                  HostStatus = "reclaiming"
	HostStatusReclaimingRebooting         HostStatus = "reclaiming-rebooting"
)

type HostMediaStatus string

const (
	HostMediaStatusConnected    HostMediaStatus = "connected"
	HostMediaStatusDisconnected HostMediaStatus = "disconnected"
)

type LogsState string

const (
	LogsStateRequested  LogsState = "requested"
	LogsStateCollecting LogsState = "collecting"
	LogsStateCompleted  LogsState = "completed"
	LogsStateTimeout    LogsState = "timeout"
	LogsStateEmpty      LogsState = ""
)

type HostStage string

const (
	HostStageStartingInstallation      HostStage = "Starting installation"
	HostStageWaitingForControlPlane    HostStage = "Waiting for control plane"
	HostStageWaitingForBootkube        HostStage = "Waiting for bootkube"
	HostStageWaitingForController      HostStage = "Waiting for controller"
	HostStageInstalling                HostStage = "Installing"
	HostStageWritingImageToDisk        HostStage = "Writing image to disk"
	HostStageCopyingRegistryDataToDisk HostStage = "Copying registry data to disk"
	HostStageRebooting                 HostStage = "Rebooting"
	HostStageWaitingForIgnition        HostStage = "Waiting for ignition"
	HostStageConfiguring               HostStage = "Configuring"
	HostStageJoined                    HostStage = "Joined"
	HostStageDone                      HostStage = "Done"
	HostStageFailed                    HostStage = "Failed"
)

type HostRole string

const (
	HostRoleAutoAssign HostRole = "auto-assign"
	HostRoleMaster     HostRole = "master"
	HostRoleArbiter    HostRole = "arbiter"
	HostRoleWorker     HostRole = "worker"
	HostRoleBootstrap  HostRole = "bootstrap"
)

type HostUpdateParamsHostRole string

const (
	HostUpdateParamsHostRoleAutoAssign HostUpdateParamsHostRole = "auto-assign"
	HostUpdateParamsHostRoleMaster     HostUpdateParamsHostRole = "master"
	HostUpdateParamsHostRoleArbiter    HostUpdateParamsHostRole = "arbiter"
	HostUpdateParamsHostRoleWorker     HostUpdateParamsHostRole = "worker"
)

type DiskRole string

const (
	DiskRoleNone    DiskRole = "none"
	DiskRoleInstall DiskRole = "install"
)

type FencingCredentialsParamsCertificateVerification string

const (
	FencingCredentialsParamsCertificateVerificationEnabled  FencingCredentialsParamsCertificateVerification = "Enabled"
	FencingCredentialsParamsCertificateVerificationDisabled FencingCredentialsParamsCertificateVerification = "Disabled"
)

type HostValidationID string

const (
	HostValidationIDConnected                                   HostValidationID = "connected"
	HostValidationIDMediaConnected                              HostValidationID = "media-connected"
	HostValidationIDHasInventory                                HostValidationID = "has-inventory"
	HostValidationIDInventoryNotPartiallyTruncated              HostValidationID = "inventory-not-partially-truncated"
	HostValidationIDInventoryNotFullyTruncated                  HostValidationID = "inventory-not-fully-truncated"
	HostValidationIDHasMinCPUCores                              HostValidationID = "has-min-cpu-cores"
	HostValidationIDHasMinValidDisks                            HostValidationID = "has-min-valid-disks"
	HostValidationIDHasMinMemory                                HostValidationID = "has-min-memory"
	HostValidationIDMachineCIDRDefined                          HostValidationID = "machine-cidr-defined"
	HostValidationIDHasCPUCoresForRole                          HostValidationID = "has-cpu-cores-for-role"
	HostValidationIDHasMemoryForRole                            HostValidationID = "has-memory-for-role"
	HostValidationIDHostnameUnique                              HostValidationID = "hostname-unique"
	HostValidationIDHostnameValid                               HostValidationID = "hostname-valid"
	HostValidationIDBelongsToMachineCIDR                        HostValidationID = "belongs-to-machine-cidr"
	HostValidationIDIgnitionDownloadable                        HostValidationID = "ignition-downloadable"
	HostValidationIDBelongsToMajorityGroup                      HostValidationID = "belongs-to-majority-group"
	HostValidationIDValidPlatformNetworkSettings                HostValidationID = "valid-platform-network-settings"
	HostValidationIDNTPSynced                                   HostValidationID = "ntp-synced"
	HostValidationIDTimeSyncedBetweenHostAndService             HostValidationID = "time-synced-between-host-and-service"
	HostValidationIDContainerImagesAvailable                    HostValidationID = "container-images-available"
	HostValidationIDLsoRequirementsSatisfied                    HostValidationID = "lso-requirements-satisfied"
	HostValidationIDOcsRequirementsSatisfied                    HostValidationID = "ocs-requirements-satisfied"
	HostValidationIDOdfRequirementsSatisfied                    HostValidationID = "odf-requirements-satisfied"
	HostValidationIDLvmRequirementsSatisfied                    HostValidationID = "lvm-requirements-satisfied"
	HostValidationIDMceRequirementsSatisfied                    HostValidationID = "mce-requirements-satisfied"
	HostValidationIDMtvRequirementsSatisfied                    HostValidationID = "mtv-requirements-satisfied"
	HostValidationIDOscRequirementsSatisfied                    HostValidationID = "osc-requirements-satisfied"
	HostValidationIDSufficientInstallationDiskSpeed             HostValidationID = "sufficient-installation-disk-speed"
	HostValidationIDCnvRequirementsSatisfied                    HostValidationID = "cnv-requirements-satisfied"
	HostValidationIDSufficientNetworkLatencyRequirementForRole  HostValidationID = "sufficient-network-latency-requirement-for-role"
	HostValidationIDSufficientPacketLossRequirementForRole      HostValidationID = "sufficient-packet-loss-requirement-for-role"
	HostValidationIDHasDefaultRoute                             HostValidationID = "has-default-route"
	HostValidationIDAPIDomainNameResolvedCorrectly              HostValidationID = "api-domain-name-resolved-correctly"
	HostValidationIDAPIIntDomainNameResolvedCorrectly           HostValidationID = "api-int-domain-name-resolved-correctly"
	HostValidationIDAppsDomainNameResolvedCorrectly             HostValidationID = "apps-domain-name-resolved-correctly"
	HostValidationIDReleaseDomainNameResolvedCorrectly          HostValidationID = "release-domain-name-resolved-correctly"
	HostValidationIDCompatibleWithClusterPlatform               HostValidationID = "compatible-with-cluster-platform"
	HostValidationIDDNSWildcardNotConfigured                    HostValidationID = "dns-wildcard-not-configured"
	HostValidationIDDiskEncryptionRequirementsSatisfied         HostValidationID = "disk-encryption-requirements-satisfied"
	HostValidationIDNonOverlappingSubnets                       HostValidationID = "non-overlapping-subnets"
	HostValidationIDVsphereDiskUUIDEnabled                      HostValidationID = "vsphere-disk-uuid-enabled"
	HostValidationIDCompatibleAgent                             HostValidationID = "compatible-agent"
	HostValidationIDNoSkipInstallationDisk                      HostValidationID = "no-skip-installation-disk"
	HostValidationIDNoSkipMissingDisk                           HostValidationID = "no-skip-missing-disk"
	HostValidationIDNoIPCollisionsInNetwork                     HostValidationID = "no-ip-collisions-in-network"
	HostValidationIDNoISCSINicBelongsToMachineCIDR              HostValidationID = "no-iscsi-nic-belongs-to-machine-cidr"
	HostValidationIDNodeFeatureDiscoveryRequirementsSatisfied   HostValidationID = "node-feature-discovery-requirements-satisfied"
	HostValidationIDNvidiaGPURequirementsSatisfied              HostValidationID = "nvidia-gpu-requirements-satisfied"
	HostValidationIDPipelinesRequirementsSatisfied              HostValidationID = "pipelines-requirements-satisfied"
	HostValidationIDServicemeshRequirementsSatisfied            HostValidationID = "servicemesh-requirements-satisfied"
	HostValidationIDServerlessRequirementsSatisfied             HostValidationID = "serverless-requirements-satisfied"
	HostValidationIDOpenshiftAiRequirementsSatisfied            HostValidationID = "openshift-ai-requirements-satisfied"
	HostValidationIDAuthorinoRequirementsSatisfied              HostValidationID = "authorino-requirements-satisfied"
	HostValidationIDMTUValid                                    HostValidationID = "mtu-valid"
	HostValidationIDNmstateRequirementsSatisfied                HostValidationID = "nmstate-requirements-satisfied"
	HostValidationIDAmdGPURequirementsSatisfied                 HostValidationID = "amd-gpu-requirements-satisfied"
	HostValidationIDKmmRequirementsSatisfied                    HostValidationID = "kmm-requirements-satisfied"
	HostValidationIDNodeHealthcheckRequirementsSatisfied        HostValidationID = "node-healthcheck-requirements-satisfied"
	HostValidationIDSelfNodeRemediationRequirementsSatisfied    HostValidationID = "self-node-remediation-requirements-satisfied"
	HostValidationIDFenceAgentsRemediationRequirementsSatisfied HostValidationID = "fence-agents-remediation-requirements-satisfied"
	HostValidationIDNodeMaintenanceRequirementsSatisfied        HostValidationID = "node-maintenance-requirements-satisfied"
	HostValidationIDKubeDeschedulerRequirementsSatisfied        HostValidationID = "kube-descheduler-requirements-satisfied"
	HostValidationIDClusterObservabilityRequirementsSatisfied   HostValidationID = "cluster-observability-requirements-satisfied"
	HostValidationIDNumaResourcesRequirementsSatisfied          HostValidationID = "numa-resources-requirements-satisfied"
	HostValidationIDOadpRequirementsSatisfied                   HostValidationID = "oadp-requirements-satisfied"
	HostValidationIDMetallbRequirementsSatisfied                HostValidationID = "metallb-requirements-satisfied"
	HostValidationIDLokiRequirementsSatisfied                   HostValidationID = "loki-requirements-satisfied"
	HostValidationIDOpenshiftLoggingRequirementsSatisfied       HostValidationID = "openshift-logging-requirements-satisfied"
)

type HostRoleUpdateParams string

const (
	HostRoleUpdateParamsAutoAssign HostRoleUpdateParams = "auto-assign"
	HostRoleUpdateParamsMaster     HostRoleUpdateParams = "master"
	HostRoleUpdateParamsArbiter    HostRoleUpdateParams = "arbiter"
	HostRoleUpdateParamsWorker     HostRoleUpdateParams = "worker"
)
