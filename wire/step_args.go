package wire

type Steps struct {
	NextInstructionSeconds int64 `json:"next_instruction_seconds,omitempty"`
	// What to do after finishing to run step instructions
	PostStepAction StepsPostStepAction `json:"post_step_action,omitempty"`
	Instructions   []*Step             `json:"instructions,omitempty"`
}

type Step struct {
	StepType StepType `json:"step_type,omitempty"`
	StepID   string   `json:"step_id,omitempty"`
	Args     []string `json:"args,omitempty"`
}

type StepReply struct {
	StepType StepType `json:"step_type,omitempty"`
	StepID   string   `json:"step_id,omitempty"`
	ExitCode int64    `json:"exit_code,omitempty"`
	Output   string   `json:"output,omitempty"`
	Error    string   `json:"error,omitempty"`
}

type ConnectivityCheckParams []*ConnectivityCheckHost

type ConnectivityCheckHost struct {
	HostID string                  `json:"host_id,omitempty"`
	Nics   []*ConnectivityCheckNic `json:"nics,omitempty"`
}

type ConnectivityCheckNic struct {
	Name        string   `json:"name,omitempty"`
	MAC         string   `json:"mac,omitempty"`
	IPAddresses []string `json:"ip_addresses,omitempty"`
}

type ConnectivityReport struct {
	RemoteHosts []*ConnectivityRemoteHost `json:"remote_hosts,omitempty"`
}

type ConnectivityRemoteHost struct {
	HostID         string            `json:"host_id,omitempty"`
	L2Connectivity []*L2Connectivity `json:"l2_connectivity,omitempty"`
	L3Connectivity []*L3Connectivity `json:"l3_connectivity,omitempty"`
	MTUReport      []*MTUReport      `json:"mtu_report,omitempty"`
}

type L2Connectivity struct {
	OutgoingNic       string `json:"outgoing_nic,omitempty"`
	OutgoingIPAddress string `json:"outgoing_ip_address,omitempty"`
	RemoteIPAddress   string `json:"remote_ip_address,omitempty"`
	RemoteMAC         string `json:"remote_mac,omitempty"`
	Successful        bool   `json:"successful,omitempty"`
}

type L3Connectivity struct {
	OutgoingNic     string `json:"outgoing_nic,omitempty"`
	RemoteIPAddress string `json:"remote_ip_address,omitempty"`
	Successful      bool   `json:"successful,omitempty"`
	// Average round trip time in milliseconds.
	AverageRTTMs float64 `json:"average_rtt_ms,omitempty"`
	// Percentage of packets lost during connectivity check.
	PacketLossPercentage float64 `json:"packet_loss_percentage,omitempty"`
}

type MTUReport struct {
	OutgoingNic     string `json:"outgoing_nic,omitempty"`
	RemoteIPAddress string `json:"remote_ip_address,omitempty"`
	MTUSuccessful   bool   `json:"mtu_successful,omitempty"`
}

type FreeAddressesRequest []string

type FreeNetworksAddresses []*FreeNetworkAddresses

type FreeNetworkAddresses struct {
	Network       string   `json:"network,omitempty"`
	FreeAddresses []string `json:"free_addresses,omitempty"`
}

type DHCPAllocationRequest struct {
	// The network interface (NIC) to run the DHCP requests on.
	Interface string `json:"interface"`
	// MAC address for the API virtual IP.
	APIVIPMAC string `json:"api_vip_mac"`
	// MAC address for the Ingress virtual IP.
	IngressVIPMAC string `json:"ingress_vip_mac"`
	// Contents of lease file to be used for API virtual IP.
	APIVIPLease string `json:"api_vip_lease,omitempty"`
	// Contents of lease file to be used for for Ingress virtual IP.
	IngressVIPLease string `json:"ingress_vip_lease,omitempty"`
}

type DHCPAllocationResponse struct {
	// The IPv4 address that was allocated by DHCP for the API virtual IP.
	APIVIPAddress string `json:"api_vip_address"`
	// The IPv4 address that was allocated by DHCP for the Ingress virtual IP.
	IngressVIPAddress string `json:"ingress_vip_address"`
	// Contents of last acquired lease for API virtual IP.
	APIVIPLease string `json:"api_vip_lease,omitempty"`
	// Contents of last acquired lease for Ingress virtual IP.
	IngressVIPLease string `json:"ingress_vip_lease,omitempty"`
}

type NTPSynchronizationRequest struct {
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	NTPSource string `json:"ntp_source"`
}

type NTPSynchronizationResponse struct {
	NTPSources []*NTPSource `json:"ntp_sources,omitempty"`
}

type NTPSource struct {
	// NTP source name or IP.
	SourceName string `json:"source_name,omitempty"`
	// Indication of state of an NTP source.
	SourceState SourceState `json:"source_state,omitempty"`
}

// DomainResolutionRequestDomainsItem is assisted's DomainResolutionRequestDomain
// (an x-go-type in the swagger, so spelled out by hand).
type DomainResolutionRequestDomainsItem struct {
	// The domain name that should be resolved
	DomainName string `json:"domain_name"`
}

type DomainResolutionRequest struct {
	Domains []*DomainResolutionRequestDomainsItem `json:"domains,omitempty"`
}

type DomainResolutionResponseResolutionsItem struct {
	// The domain that was resolved
	DomainName string `json:"domain_name"`
	// The IPv4 addresses of the domain, empty if none
	IPv4Addresses []string `json:"ipv4_addresses,omitempty"`
	// The IPv6 addresses of the domain, empty if none
	IPv6Addresses []string `json:"ipv6_addresses,omitempty"`
	// The cnames that were resolved for the domain, empty if none
	Cnames []string `json:"cnames,omitempty"`
}

type DomainResolutionResponse struct {
	Resolutions []*DomainResolutionResponseResolutionsItem `json:"resolutions,omitempty"`
}

type ContainerImageAvailabilityRequest struct {
	// Positive number represents a timeout in seconds for a pull operation.
	Timeout int64 `json:"timeout,omitempty"`
	// List of image names to be checked.
	Images []string `json:"images,omitempty"`
}

type ContainerImageAvailabilityResponse struct {
	// List of images that were checked.
	Images []*ContainerImageAvailability `json:"images,omitempty"`
}

type ContainerImageAvailability struct {
	// A fully qualified image name (FQIN).
	Name string `json:"name,omitempty"`
	// Size of the image in bytes.
	SizeBytes float64 `json:"size_bytes,omitempty"`
	// Seconds it took to pull the image.
	Time float64 `json:"time,omitempty"`
	// The rate of size/time in seconds MBps.
	DownloadRate float64                          `json:"download_rate,omitempty"`
	Result       ContainerImageAvailabilityResult `json:"result,omitempty"`
}

type DiskSpeedCheckRequest struct {
	// --filename argument for fio (expects a file or a block device path).
	Path string `json:"path"`
}

type DiskSpeedCheckResponse struct {
	// The 99th percentile of fdatasync durations in milliseconds.
	IOSyncDuration int64 `json:"io_sync_duration,omitempty"`
	// The device path.
	Path string `json:"path,omitempty"`
}

// list of vips to be verified.
type VerifyVIPsRequest []*VerifyVIP

// Request to verify single vip.
type VerifyVIP struct {
	VIP     IP      `json:"vip,omitempty"`
	VIPType VIPType `json:"vip_type,omitempty"`
}

// list of verified vips.
type VerifyVIPsResponse []*VerifiedVIP

// Single VIP verification result.
type VerifiedVIP struct {
	VIP          IP              `json:"vip,omitempty"`
	VIPType      VIPType         `json:"vip_type,omitempty"`
	Verification VIPVerification `json:"verification,omitempty"`
}

type LogsGatherCmdRequest struct {
	// Cluster id
	ClusterID string `json:"cluster_id"`
	// Infra env id
	InfraEnvID string `json:"infra_env_id"`
	// Host id
	HostID string `json:"host_id"`
	// Host is bootstrap or not
	Bootstrap bool `json:"bootstrap"`
	// Run installer gather logs
	InstallerGather bool `json:"installer_gather"`
	// List of master ips
	MasterIps []string `json:"master_ips,omitempty"`
}

type UpgradeAgentRequest struct {
	// Full image reference of the image that the agent should upgrade to, for example `quay.io/registry-proxy.engineering.redhat.com/rh-osbs/openshift4-assisted-installer-agent-rhel8:v1.0.0-142`.
	AgentImage string `json:"agent_image,omitempty"`
}

type UpgradeAgentResponse struct {
	// Full image reference of the image that the agent has upgraded to, for example `quay.io/registry-proxy.engineering.redhat.com/rh-osbs/openshift4-assisted-installer-agent-rhel8:v1.0.0-142`.
	AgentImage string             `json:"agent_image,omitempty"`
	Result     UpgradeAgentResult `json:"result,omitempty"`
}

type TangConnectivityRequest struct {
	// JSON-formatted string containing additional information regarding tang's configuration
	TangServers string `json:"tang_servers"`
}

type TangConnectivityResponseTangServerResponseItemSignaturesItem struct {
	Protected string `json:"protected,omitempty"`
	Signature string `json:"signature,omitempty"`
}

type TangConnectivityResponseTangServerResponseItem struct {
	// Tang URL.
	TangURL string `json:"tang_url,omitempty"`
	// Tang response payload.
	Payload    string                                                          `json:"payload,omitempty"`
	Signatures []*TangConnectivityResponseTangServerResponseItemSignaturesItem `json:"signatures,omitempty"`
}

type TangConnectivityResponse struct {
	// Tang check result.
	IsSuccess          bool                                              `json:"is_success,omitempty"`
	TangServerResponse []*TangConnectivityResponseTangServerResponseItem `json:"tang_server_response,omitempty"`
}

type APIVIPConnectivityRequest struct {
	// URL address of the API.
	URL string `json:"url"`
	// Whether to verify if the API VIP belongs to one of the interfaces (DEPRECATED).
	VerifyCIDR bool `json:"verify_cidr,omitempty"`
	// A CA certficate to be used when contacting the URL via https.
	CACertificate *string `json:"ca_certificate,omitempty"`
	// A string which will be used as Authorization Bearer token to fetch the ignition from ignition_endpoint_url (DEPRECATED use request_headers to pass this token).
	IgnitionEndpointToken *string `json:"ignition_endpoint_token,omitempty"`
	// Additional request headers to include when fetching the ignition from ignition_endpoint_url.
	RequestHeaders []*APIVIPConnectivityAdditionalRequestHeader `json:"request_headers,omitempty"`
}

type APIVIPConnectivityAdditionalRequestHeader struct {
	// Value of the header's key when making a request
	Key string `json:"key,omitempty"`
	// The value corresponding to the header key
	Value string `json:"value,omitempty"`
}

// The response from the day-2 agent's attempt to download the worker ignition file from the API machine config server of the target cluster. Note - the name "API VIP connectivity" is old and misleadi...
type APIVIPConnectivityResponse struct {
	// Whether the agent was able to download the ignition or not
	IsSuccess bool `json:"is_success,omitempty"`
	// This parameter mirrors the url parameter of the corresponding api_vip_connectivity_request
	URL string `json:"url,omitempty"`
	// The error that occurred while downloading the worker ignition file, ignored when is_success is true
	DownloadError string `json:"download_error,omitempty"`
	// Ignition file fetched from the target cluster's API machine config server. This ignition file may be incomplete as almost all files / systemd units are removed from it by the agent in order to save...
	Ignition string `json:"ignition,omitempty"`
}

type StepsPostStepAction string

const (
	StepsPostStepActionExit     StepsPostStepAction = "exit"
	StepsPostStepActionContinue StepsPostStepAction = "continue"
)

type StepType string

const (
	StepTypeConnectivityCheck          StepType = "connectivity-check"
	StepTypeExecute                    StepType = "execute"
	StepTypeInventory                  StepType = "inventory"
	StepTypeInstall                    StepType = "install"
	StepTypeFreeNetworkAddresses       StepType = "free-network-addresses"
	StepTypeDHCPLeaseAllocate          StepType = "dhcp-lease-allocate"
	StepTypeAPIVIPConnectivityCheck    StepType = "api-vip-connectivity-check"
	StepTypeTangConnectivityCheck      StepType = "tang-connectivity-check"
	StepTypeNTPSynchronizer            StepType = "ntp-synchronizer"
	StepTypeInstallationDiskSpeedCheck StepType = "installation-disk-speed-check"
	StepTypeContainerImageAvailability StepType = "container-image-availability"
	StepTypeDomainResolution           StepType = "domain-resolution"
	StepTypeStopInstallation           StepType = "stop-installation"
	StepTypeLogsGather                 StepType = "logs-gather"
	StepTypeNextStepRunner             StepType = "next-step-runner"
	StepTypeUpgradeAgent               StepType = "upgrade-agent"
	StepTypeDownloadBootArtifacts      StepType = "download-boot-artifacts"
	StepTypeRebootForReclaim           StepType = "reboot-for-reclaim"
	StepTypeVerifyVIPs                 StepType = "verify-vips"
)

type SourceState string

const (
	SourceStateSynced      SourceState = "synced"
	SourceStateCombined    SourceState = "combined"
	SourceStateNotCombined SourceState = "not_combined"
	SourceStateError       SourceState = "error"
	SourceStateVariable    SourceState = "variable"
	SourceStateUnreachable SourceState = "unreachable"
)

// Image availability result.
type ContainerImageAvailabilityResult string

const (
	ContainerImageAvailabilityResultSuccess ContainerImageAvailabilityResult = "success"
	ContainerImageAvailabilityResultFailure ContainerImageAvailabilityResult = "failure"
)

// The vip type.
type VIPType string

const (
	VIPTypeAPI     VIPType = "api"
	VIPTypeIngress VIPType = "ingress"
)

// Agent upgrade result.
type UpgradeAgentResult string

const (
	UpgradeAgentResultSuccess UpgradeAgentResult = "success"
	UpgradeAgentResultFailure UpgradeAgentResult = "failure"
)

type InstallCmdRequest struct {
	// Cluster id
	ClusterID string `json:"cluster_id"`
	// Infra env id
	InfraEnvID string `json:"infra_env_id"`
	// Host id
	HostID string   `json:"host_id"`
	Role   HostRole `json:"role"`
	// Boot device to write image on
	BootDevice string `json:"boot_device"`
	// Assisted installer controller image
	ControllerImage string `json:"controller_image"`
	// Assisted installer image
	InstallerImage string `json:"installer_image"`
	// Specifies the required number of control plane nodes that should be part of the cluster.
	ControlPlaneCount int64  `json:"control_plane_count,omitempty"`
	Proxy             *Proxy `json:"proxy,omitempty"`
	// Check CVO status if needed (the swagger's default is true: the
	// service always sends it).
	CheckCvo *bool `json:"check_cvo,omitempty"`
	// List of disks to format
	DisksToFormat []string `json:"disks_to_format"`
	// Must-gather images to use
	MustGatherImage string `json:"must_gather_image,omitempty"`
	// Machine config operator image
	McoImage string `json:"mco_image,omitempty"`
	// Version of the OpenShift cluster.
	OpenshiftVersion string `json:"openshift_version,omitempty"`
	// List of service ips
	ServiceIps []string `json:"service_ips,omitempty"`
	// Core-os installer addtional args
	InstallerArgs string `json:"installer_args,omitempty"`
	// Skip formatting installation disk
	SkipInstallationDiskCleanup bool `json:"skip_installation_disk_cleanup,omitempty"`
	// If true, assisted service will attempt to skip MCO reboot
	EnableSkipMcoReboot bool `json:"enable_skip_mco_reboot,omitempty"`
	// If true, notify number of reboots by assisted controller
	NotifyNumReboots bool `json:"notify_num_reboots,omitempty"`
	// CoreOS container image to use if installing to the local device
	CoreosImage string `json:"coreos_image,omitempty"`
	// Guaranteed availability of the installed cluster: Full or None
	// (single node). Newer swaggers replaced it with control_plane_count;
	// older assisted-installers read it.
	HighAvailabilityMode InstallCmdRequestHighAvailabilityMode `json:"high_availability_mode,omitempty"`
}

// InstallCmdRequestHighAvailabilityMode is install_cmd_request's
// high_availability_mode of older swaggers.
type InstallCmdRequestHighAvailabilityMode string

const (
	InstallCmdRequestHighAvailabilityModeFull InstallCmdRequestHighAvailabilityMode = "Full"
	InstallCmdRequestHighAvailabilityModeNone InstallCmdRequestHighAvailabilityMode = "None"
)
