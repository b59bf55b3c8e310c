// The cluster and the shapes its fields use, as the v2 swagger defines them:
// field names, JSON tags, omitempty and nullability exactly as there.

package wire

import (
	"time"
)

type Cluster struct {
	// Indicates the type of this object. Will be 'Cluster' if this is a complete object, 'AddHostsCluster' for cluster that add hosts to existing OCP cluster, 'DisconnectedCluster' for clusters with embe...
	Kind ClusterKind `json:"kind"`
	// (DEPRECATED) Please use 'control_plane_count' instead. Guaranteed availability of the installed cluster. 'Full' installs a Highly-Available cluster over multiple master nodes whereas 'None' install...
	HighAvailabilityMode ClusterHighAvailabilityMode `json:"high_availability_mode,omitempty"`
	// Unique identifier of the object.
	ID string `json:"id"`
	// Self link.
	Href string `json:"href"`
	// Name of the OpenShift cluster.
	Name        string `json:"name,omitempty"`
	UserName    string `json:"user_name,omitempty"`
	OrgID       string `json:"org_id,omitempty"`
	EmailDomain string `json:"email_domain,omitempty"`
	// Version of the OpenShift cluster.
	OpenshiftVersion string `json:"openshift_version,omitempty"`
	// OpenShift release image URI.
	OCPReleaseImage string `json:"ocp_release_image,omitempty"`
	// Cluster ID on OCP system.
	OpenshiftClusterID string     `json:"openshift_cluster_id,omitempty"`
	ImageInfo          *ImageInfo `json:"image_info,omitempty"`
	Platform           *Platform  `json:"platform,omitempty"`
	// Base domain of the cluster. All DNS records must be sub-domains of this base and include the cluster name.
	BaseDNSDomain string `json:"base_dns_domain,omitempty"`
	// IP address block from which Pod IPs are allocated. This block must not overlap with existing physical networks. These IP addresses are used for the Pod network, and if you need to access the Pods f...
	ClusterNetworkCIDR string `json:"cluster_network_cidr,omitempty"`
	// The subnet prefix length to assign to each individual node. For example, if clusterNetworkHostPrefix is set to 23, then each node is assigned a /23 subnet out of the given cidr (clusterNetworkCIDR)...
	ClusterNetworkHostPrefix int64 `json:"cluster_network_host_prefix,omitempty"`
	// The IP address pool to use for service IP addresses. You can enter only one IP address pool. If you need to access the services from an external network, configure load balancers and routers to man...
	ServiceNetworkCIDR string `json:"service_network_cidr,omitempty"`
	// The virtual IPs used to reach the OpenShift cluster's API. Enter one IP address for single-stack clusters, or up to two for dual-stack clusters (at most one IP address per IP stack used). The order...
	APIVIPs []*APIVIP `json:"api_vips,omitempty"`
	// The domain name used to reach the OpenShift cluster API.
	APIVIPDNSName *string `json:"api_vip_dns_name,omitempty"`
	// A CIDR that all hosts belonging to the cluster should have an interfaces with IP address that belongs to this CIDR. The api_vip belongs to this CIDR.
	MachineNetworkCIDR string `json:"machine_network_cidr,omitempty"`
	// The virtual IPs used for cluster ingress traffic. Enter one IP address for single-stack clusters, or up to two for dual-stack clusters (at most one IP address per IP stack used). The order of stack...
	IngressVIPs []*IngressVIP `json:"ingress_vips,omitempty"`
	// SSH public key for debugging OpenShift nodes.
	SSHPublicKey string `json:"ssh_public_key,omitempty"`
	// A proxy URL to use for creating HTTP connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPProxy string `json:"http_proxy,omitempty"`
	// A proxy URL to use for creating HTTPS connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\> or https://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPSProxy string `json:"https_proxy,omitempty"`
	// A comma-separated list of destination domain names, domains, IP addresses, or other network CIDRs to exclude from proxying.
	NoProxy string `json:"no_proxy,omitempty"`
	// Status of the OpenShift cluster.
	Status ClusterStatus `json:"status"`
	// Additional information pertaining to the status of the OpenShift cluster.
	StatusInfo string `json:"status_info"`
	// The last time that the cluster status was updated.
	StatusUpdatedAt DateTime `json:"status_updated_at,omitzero"`
	// Installation progress percentages of the cluster.
	Progress *ClusterProgressInfo `json:"progress,omitempty"`
	// Information regarding hosts' installation disks encryption.
	DiskEncryption *DiskEncryption `json:"disk_encryption,omitempty"`
	// Hosts that are associated with this cluster.
	Hosts []*Host `json:"hosts,omitempty"`
	// hosts associated to this cluster that are in 'known' state.
	ReadyHostCount int64 `json:"ready_host_count,omitempty"`
	// hosts associated to this cluster that are not in 'disabled' state.
	EnabledHostCount int64 `json:"enabled_host_count,omitempty"`
	// All hosts associated to this cluster.
	TotalHostCount int64 `json:"total_host_count,omitempty"`
	// Schedule workloads on masters
	SchedulableMasters bool `json:"schedulable_masters,omitempty"`
	// Indicates if schedule workloads on masters will be enabled regardless the value of 'schedulable_masters' property. Set to 'true' when not enough hosts are associated with this cluster to disable th...
	SchedulableMastersForcedTrue bool `json:"schedulable_masters_forced_true,omitempty"`
	// The last time that this cluster was updated.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// The time that this cluster was created.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// The time that this cluster started installation.
	InstallStartedAt DateTime `json:"install_started_at,omitzero"`
	// The time that this cluster completed installation.
	InstallCompletedAt DateTime `json:"install_completed_at,omitzero"`
	// List of host networks to be filled during query.
	HostNetworks []*HostNetwork `json:"host_networks,omitempty"`
	// True if the pull secret has been added to the cluster.
	PullSecretSet bool `json:"pull_secret_set,omitempty"`
	// Indicate if virtual IP DHCP allocation mode is enabled.
	VIPDHCPAllocation *bool `json:"vip_dhcp_allocation,omitempty"`
	// JSON-formatted string containing the validation results for each validation id grouped by category (network, hosts-data, etc.)
	ValidationsInfo string `json:"validations_info,omitempty"`
	// The progress of log collection or empty if logs are not applicable
	LogsInfo LogsState `json:"logs_info,omitempty"`
	// JSON-formatted string containing the user overrides for the install-config.yaml file.
	InstallConfigOverrides    string   `json:"install_config_overrides,omitempty"`
	ControllerLogsCollectedAt DateTime `json:"controller_logs_collected_at,omitzero"`
	ControllerLogsStartedAt   DateTime `json:"controller_logs_started_at,omitzero"`
	// Json formatted string containing the majority groups for connectivity checks.
	ConnectivityMajorityGroups string `json:"connectivity_majority_groups,omitempty"`
	// Json formatted string containing ip collisions detected in the cluster.
	IPCollisions string `json:"ip_collisions,omitempty"`
	// Json formatted string containing a list of host validations to be ignored. May also contain a list with a single string "all" to ignore all host validations. Some validations cannot be ignored.
	IgnoredHostValidations string `json:"ignored_host_validations,omitempty"`
	// Json formatted string containing a list of cluster validations to be ignored. May also contain a list with a single string "all" to ignore all cluster validations. Some validations cannot be ignored.
	IgnoredClusterValidations string `json:"ignored_cluster_validations,omitempty"`
	// swagger:ignore
	DeletedAt *time.Time `json:"deleted_at"`
	// (DEPRECATED) Indicate if the networking is managed by the user.
	UserManagedNetworking *bool `json:"user_managed_networking,omitempty"`
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	AdditionalNTPSource string `json:"additional_ntp_source,omitempty"`
	// A comma-separated list of NTP sources (name or IP) to be used as the only NTP configuration for the cluster hosts.
	NTPSources string `json:"ntp_sources,omitempty"`
	// Operators that are associated with this cluster.
	MonitoredOperators []*MonitoredOperator `json:"monitored_operators,omitempty"`
	// Bundles that were selected for this cluster, with the optional operators chosen by the user. Derived from monitored operators' source_bundles. Not persisted directly.
	OperatorBundles []*BundleCreateParams `json:"operator_bundles,omitempty"`
	// Unique identifier of the AMS subscription in OCM.
	AMSSubscriptionID string `json:"ams_subscription_id,omitempty"`
	// Enable/disable hyperthreading on master nodes, arbiter nodes, worker nodes, or a combination of them.
	Hyperthreading ClusterHyperthreading `json:"hyperthreading,omitempty"`
	// JSON-formatted string containing the usage information by feature name
	FeatureUsage string `json:"feature_usage,omitempty"`
	// The desired network type used. - OVNKubernetes: Default CNI for OpenShift (recommended) - OpenShiftSDN: Legacy SDN (deprecated in newer versions) - CiscoACI: Cisco ACI CNI (requires custom manifest...
	NetworkType *ClusterNetworkType `json:"network_type,omitempty"`
	// Cluster networks that are associated with this cluster.
	ClusterNetworks []*ClusterNetwork `json:"cluster_networks,omitempty"`
	// Service networks that are associated with this cluster.
	ServiceNetworks []*ServiceNetwork `json:"service_networks,omitempty"`
	// Machine networks that are associated with this cluster.
	MachineNetworks []*MachineNetwork `json:"machine_networks,omitempty"`
	// The CPU architecture of the image (x86_64/arm64/etc).
	CPUArchitecture ClusterCPUArchitecture `json:"cpu_architecture,omitempty"`
	// Explicit ignition endpoint overrides the default ignition endpoint.
	IgnitionEndpoint *IgnitionEndpoint `json:"ignition_endpoint,omitempty"`
	// Indicates whether this cluster is an imported day-2 cluster or a regular cluster. Clusters are considered imported when they are created via the ../clusters/import endpoint. Day-2 clusters converte...
	Imported bool `json:"imported,omitempty"`
	// A comma-separated list of tags that are associated to the cluster.
	Tags                        string                       `json:"tags,omitempty"`
	LastInstallationPreparation *LastInstallationPreparation `json:"last-installation-preparation,omitempty"`
	// Indication if organization soft timeouts is enabled for the cluster.
	OrgSoftTimeoutsEnabled bool `json:"org_soft_timeouts_enabled,omitempty"`
	// Specifies the required number of control plane nodes that should be part of the cluster.
	ControlPlaneCount int64         `json:"control_plane_count,omitempty"`
	LoadBalancer      *LoadBalancer `json:"load_balancer,omitempty"`
}

type ImageInfo struct {
	// SSH public key for debugging the installation.
	SSHPublicKey string `json:"ssh_public_key,omitempty"`
	SizeBytes    int64  `json:"size_bytes,omitempty"`
	DownloadURL  string `json:"download_url,omitempty"`
	// Image generator version.
	GeneratorVersion string    `json:"generator_version,omitempty"`
	CreatedAt        time.Time `json:"created_at,omitzero"`
	ExpiresAt        DateTime  `json:"expires_at,omitzero"`
	// static network configuration string in the format expected by discovery ignition generation
	StaticNetworkConfig string    `json:"static_network_config,omitempty"`
	Type                ImageType `json:"type,omitempty"`
}

// The configuration for the specific platform upon which to perform the installation.
type Platform struct {
	Type     PlatformType      `json:"type"`
	External *PlatformExternal `json:"external,omitempty"`
}

// Configuration used when installing with an external platform type.
type PlatformExternal struct {
	// Holds the arbitrary string representing the infrastructure provider name.
	PlatformName *string `json:"platform_name,omitempty"`
	// When set to external, this property will enable an external cloud provider.
	CloudControllerManager *PlatformExternalCloudControllerManager `json:"cloud_controller_manager,omitempty"`
}

// The virtual IP used to reach the OpenShift cluster's API.
type APIVIP struct {
	// The cluster that this VIP is associated with.
	ClusterID string `json:"cluster_id,omitempty"`
	// The IP address.
	IP IP `json:"ip,omitempty"`
	// API VIP verification result.
	Verification VIPVerification `json:"verification,omitempty"`
}

type IP string

// The virtual IP used for cluster ingress traffic.
type IngressVIP struct {
	// The cluster that this VIP is associated with.
	ClusterID string `json:"cluster_id,omitempty"`
	// The IP address.
	IP IP `json:"ip,omitempty"`
	// Ingress VIP verification result.
	Verification VIPVerification `json:"verification,omitempty"`
}

type ClusterProgressInfo struct {
	TotalPercentage                         int64           `json:"total_percentage,omitempty"`
	PreparingForInstallationStagePercentage int64           `json:"preparing_for_installation_stage_percentage,omitempty"`
	InstallingStagePercentage               int64           `json:"installing_stage_percentage,omitempty"`
	FinalizingStagePercentage               int64           `json:"finalizing_stage_percentage,omitempty"`
	FinalizingStage                         FinalizingStage `json:"finalizing_stage,omitempty"`
	FinalizingStageStartedAt                DateTime        `json:"finalizing_stage_started_at,omitzero"`
	FinalizingStageTimedOut                 bool            `json:"finalizing_stage_timed_out,omitempty"`
}

type DiskEncryption struct {
	// Enable/disable disk encryption on master nodes, arbiter nodes, worker nodes, or a combination of them.
	EnableOn DiskEncryptionEnableOn `json:"enable_on,omitempty"`
	// The disk encryption mode to use.
	Mode DiskEncryptionMode `json:"mode,omitempty"`
	// JSON-formatted string containing additional information regarding tang's configuration
	TangServers string `json:"tang_servers,omitempty"`
}

type HostNetwork struct {
	CIDR    string   `json:"cidr,omitempty"`
	HostIDs []string `json:"host_ids,omitempty"`
}

type MonitoredOperator struct {
	// The cluster that this operator is associated with.
	ClusterID string `json:"cluster_id,omitempty"`
	// Unique name of the operator.
	Name string `json:"name,omitempty"`
	// Operator version
	Version string `json:"version,omitempty"`
	// Namespace where to deploy an operator. Only some operators require a namespace.
	Namespace string `json:"namespace,omitempty"`
	// The name of the subscription of the operator.
	SubscriptionName string       `json:"subscription_name,omitempty"`
	OperatorType     OperatorType `json:"operator_type,omitempty"`
	// Blob of operator-dependent parameters that are required for installation.
	Properties string `json:"properties,omitempty"`
	// Positive number represents a timeout in seconds for the operator to be available.
	TimeoutSeconds int64          `json:"timeout_seconds,omitempty"`
	Status         OperatorStatus `json:"status,omitempty"`
	// Detailed information about the operator state.
	StatusInfo string `json:"status_info,omitempty"`
	// Time at which the operator was last updated.
	StatusUpdatedAt DateTime `json:"status_updated_at,omitzero"`
	// List of identifier of the bundles associated with the operator. Can be empty.
	Bundles []string `json:"bundles,omitempty"`
	// Whether the operator can't be installed without being required by another operator.
	DependencyOnly bool `json:"dependency_only,omitempty"`
	// IDs of the bundles this operator was selected through. Empty for standalone selections. An operator can belong to multiple bundles.
	SourceBundles []string `json:"source_bundles,omitempty"`
}

type BundleCreateParams struct {
	// Bundle identifier (e.g., "openshift-ai").
	ID string `json:"id"`
	// List of optional operator names the user selected for this bundle.
	OptionalOperators []string `json:"optional_operators,omitempty"`
}

// A network from which Pod IPs are allocated. This block must not overlap with existing physical networks. These IP addresses are used for the Pod network, and if you need to access the Pods from an ...
type ClusterNetwork struct {
	// The cluster that this network is associated with.
	ClusterID string `json:"cluster_id,omitempty"`
	// The IP block address pool.
	CIDR Subnet `json:"cidr,omitempty"`
	// The subnet prefix length to assign to each individual node. For example if is set to 23, then each node is assigned a /23 subnet out of the given CIDR, which allows for 510 (2^(32 - 23) - 2) pod IP...
	HostPrefix int64 `json:"host_prefix,omitempty"`
}

type Subnet string

// IP address block for service IP blocks.
type ServiceNetwork struct {
	// A network to use for service IP addresses. If you need to access the services from an external network, configure load balancers and routers to manage the traffic.
	ClusterID string `json:"cluster_id,omitempty"`
	// The IP block address pool.
	CIDR Subnet `json:"cidr,omitempty"`
}

// A network that all hosts belonging to the cluster should have an interface with IP address in. The VIPs (if exist) belong to this network.
type MachineNetwork struct {
	// The cluster that this network is associated with.
	ClusterID string `json:"cluster_id,omitempty"`
	// The IP block address pool.
	CIDR Subnet `json:"cidr,omitempty"`
}

// Explicit ignition endpoint overrides the default ignition endpoint.
type IgnitionEndpoint struct {
	// The URL for the ignition endpoint.
	URL *string `json:"url,omitempty"`
	// base64 encoded CA certficate to be used when contacting the URL via https.
	CACertificate *string `json:"ca_certificate,omitempty"`
}

// Gives the status of the last installation preparation (if any)
type LastInstallationPreparation struct {
	// The last installation preparation status
	Status LastInstallationPreparationStatus `json:"status,omitempty"`
	// The reason for the preparation status if applicable
	Reason string `json:"reason,omitempty"`
}

type LoadBalancer struct {
	// Indicates if the load balancer will be managed by the cluster or by the user. This is optional and The default is `cluster-managed`. `cluster-managed` means that the cluster will start the componen...
	Type LoadBalancerType `json:"type,omitempty"`
}

// ImportClusterParams is import-cluster-params: the minimal data of an
// installed OpenShift cluster that v2ImportCluster turns into a day-2
// (AddHostsCluster) cluster, to add hosts to it.
type ImportClusterParams struct {
	// OpenShift cluster name (assisted takes the name from
	// api_vip_dnsname when that is api.<name>.<domain>).
	Name *string `json:"name"`
	// The domain name used to reach the OpenShift cluster API.
	APIVipDnsname *string `json:"api_vip_dnsname"`
	// Version of the OpenShift cluster.
	OpenshiftVersion string `json:"openshift_version,omitempty"`
	// The id of the OCP cluster that hosts will be added to (a UUID).
	OpenshiftClusterID *string `json:"openshift_cluster_id"`
}

type ClusterCreateParams struct {
	// Name of the OpenShift cluster.
	Name string `json:"name"`
	// (DEPRECATED) Please use 'control_plane_count' instead. Guaranteed availability of the installed cluster. 'Full' installs a Highly-Available cluster over multiple master nodes whereas 'None' install...
	HighAvailabilityMode ClusterHighAvailabilityMode `json:"high_availability_mode,omitempty"`
	// Version of the OpenShift cluster.
	OpenshiftVersion string `json:"openshift_version"`
	// OpenShift release image URI.
	OCPReleaseImage string `json:"ocp_release_image,omitempty"`
	// Base domain of the cluster. All DNS records must be sub-domains of this base and include the cluster name.
	BaseDNSDomain string `json:"base_dns_domain,omitempty"`
	// IP address block from which Pod IPs are allocated. This block must not overlap with existing physical networks. These IP addresses are used for the Pod network, and if you need to access the Pods f...
	ClusterNetworkCIDR string `json:"cluster_network_cidr,omitempty"`
	// The subnet prefix length to assign to each individual node. For example, if clusterNetworkHostPrefix is set to 23, then each node is assigned a /23 subnet out of the given cidr (clusterNetworkCIDR)...
	ClusterNetworkHostPrefix int64 `json:"cluster_network_host_prefix,omitempty"`
	// The IP address pool to use for service IP addresses. You can enter only one IP address pool. If you need to access the services from an external network, configure load balancers and routers to man...
	ServiceNetworkCIDR string `json:"service_network_cidr,omitempty"`
	// The virtual IPs used to reach the OpenShift cluster's API. Enter one IP address for single-stack clusters, or up to two for dual-stack clusters (at most one IP address per IP stack used). The order...
	APIVIPs []*APIVIP `json:"api_vips,omitempty"`
	// The virtual IPs used for cluster ingress traffic. Enter one IP address for single-stack clusters, or up to two for dual-stack clusters (at most one IP address per IP stack used). The order of stack...
	IngressVIPs []*IngressVIP `json:"ingress_vips,omitempty"`
	// The pull secret obtained from Red Hat OpenShift Cluster Manager at console.redhat.com/openshift/install/pull-secret.
	PullSecret string `json:"pull_secret"`
	// SSH public key for debugging OpenShift nodes.
	SSHPublicKey string `json:"ssh_public_key,omitempty"`
	// Indicate if virtual IP DHCP allocation mode is enabled.
	VIPDHCPAllocation *bool `json:"vip_dhcp_allocation,omitempty"`
	// A proxy URL to use for creating HTTP connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPProxy *string `json:"http_proxy,omitempty"`
	// A proxy URL to use for creating HTTPS connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\> or https://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPSProxy *string `json:"https_proxy,omitempty"`
	// An "*" or a comma-separated list of destination domain names, domains, IP addresses, or other network CIDRs to exclude from proxying.
	NoProxy *string `json:"no_proxy,omitempty"`
	// (DEPRECATED) Indicate if the networking is managed by the user.
	UserManagedNetworking *bool `json:"user_managed_networking,omitempty"`
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	AdditionalNTPSource *string `json:"additional_ntp_source,omitempty"`
	// A comma-separated list of NTP sources (name or IP) to be used as the only NTP configuration for the cluster hosts.
	NTPSources *string `json:"ntp_sources,omitempty"`
	// List of standalone OLM operators to be installed (not part of any bundle). For the full list of supported operators, check the endpoint `/v2/supported-operators`:
	OLMOperators []*OperatorCreateParams `json:"olm_operators,omitempty"`
	// List of operator bundles selected by the user with their optional operator choices. The backend expands bundles into their required operators, adds selected optional operators, resolves all depende...
	OperatorBundles []*BundleCreateParams `json:"operator_bundles,omitempty"`
	// Enable/disable hyperthreading on master nodes, arbiter nodes, worker nodes, or a combination of them.
	Hyperthreading ClusterHyperthreading `json:"hyperthreading,omitempty"`
	// The desired network type used. - OVNKubernetes: Default CNI for OpenShift (recommended) - OpenShiftSDN: Legacy SDN (deprecated in newer versions) - CiscoACI: Cisco ACI CNI (requires custom manifest...
	NetworkType *ClusterNetworkType `json:"network_type,omitempty"`
	// Schedule workloads on masters
	SchedulableMasters bool `json:"schedulable_masters,omitempty"`
	// Cluster networks that are associated with this cluster.
	ClusterNetworks []*ClusterNetwork `json:"cluster_networks,omitempty"`
	// Service networks that are associated with this cluster.
	ServiceNetworks []*ServiceNetwork `json:"service_networks,omitempty"`
	// Machine networks that are associated with this cluster.
	MachineNetworks []*MachineNetwork `json:"machine_networks,omitempty"`
	Platform        *Platform         `json:"platform,omitempty"`
	// The CPU architecture of the image (x86_64/arm64/etc).
	CPUArchitecture ClusterCPUArchitecture `json:"cpu_architecture,omitempty"`
	// Installation disks encryption mode and host roles to be applied.
	DiskEncryption *DiskEncryption `json:"disk_encryption,omitempty"`
	// Explicit ignition endpoint overrides the default ignition endpoint.
	IgnitionEndpoint *IgnitionEndpoint `json:"ignition_endpoint,omitempty"`
	// A comma-separated list of tags that are associated to the cluster.
	Tags *string `json:"tags,omitempty"`
	// Specifies the required number of control plane nodes that should be part of the cluster.
	ControlPlaneCount *int64        `json:"control_plane_count,omitempty"`
	LoadBalancer      *LoadBalancer `json:"load_balancer,omitempty"`
}

type OperatorCreateParams struct {
	Name string `json:"name,omitempty"`
	// Blob of operator-dependent parameters that are required for installation.
	Properties string `json:"properties,omitempty"`
}

type V2ClusterUpdateParams struct {
	// OpenShift cluster name.
	Name *string `json:"name,omitempty"`
	// Base domain of the cluster. All DNS records must be sub-domains of this base and include the cluster name.
	BaseDNSDomain *string `json:"base_dns_domain,omitempty"`
	// IP address block from which Pod IPs are allocated. This block must not overlap with existing physical networks. These IP addresses are used for the Pod network, and if you need to access the Pods f...
	ClusterNetworkCIDR *string   `json:"cluster_network_cidr,omitempty"`
	Platform           *Platform `json:"platform,omitempty"`
	// The subnet prefix length to assign to each individual node. For example, if clusterNetworkHostPrefix is set to 23, then each node is assigned a /23 subnet out of the given cidr (clusterNetworkCIDR)...
	ClusterNetworkHostPrefix *int64 `json:"cluster_network_host_prefix,omitempty"`
	// The IP address pool to use for service IP addresses. You can enter only one IP address pool. If you need to access the services from an external network, configure load balancers and routers to man...
	ServiceNetworkCIDR *string `json:"service_network_cidr,omitempty"`
	// The virtual IPs used to reach the OpenShift cluster's API. Enter one IP address for single-stack clusters, or up to two for dual-stack clusters (at most one IP address per IP stack used). The order...
	APIVIPs []*APIVIP `json:"api_vips,omitempty"`
	// The virtual IPs used for cluster ingress traffic. Enter one IP address for single-stack clusters, or up to two for dual-stack clusters (at most one IP address per IP stack used). The order of stack...
	IngressVIPs []*IngressVIP `json:"ingress_vips,omitempty"`
	// The domain name used to reach the OpenShift cluster API.
	APIVIPDNSName *string `json:"api_vip_dns_name,omitempty"`
	// A CIDR that all hosts belonging to the cluster should have an interfaces with IP address that belongs to this CIDR. The api_vip belongs to this CIDR.
	MachineNetworkCIDR *string `json:"machine_network_cidr,omitempty"`
	// The pull secret obtained from Red Hat OpenShift Cluster Manager at console.redhat.com/openshift/install/pull-secret.
	PullSecret *string `json:"pull_secret,omitempty"`
	// SSH public key for debugging OpenShift nodes.
	SSHPublicKey *string `json:"ssh_public_key,omitempty"`
	// Indicate if virtual IP DHCP allocation mode is enabled.
	VIPDHCPAllocation *bool `json:"vip_dhcp_allocation,omitempty"`
	// A proxy URL to use for creating HTTP connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPProxy *string `json:"http_proxy,omitempty"`
	// A proxy URL to use for creating HTTPS connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\> or https://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPSProxy *string `json:"https_proxy,omitempty"`
	// An "*" or a comma-separated list of destination domain names, domains, IP addresses, or other network CIDRs to exclude from proxying.
	NoProxy *string `json:"no_proxy,omitempty"`
	// (DEPRECATED) Indicate if the networking is managed by the user.
	UserManagedNetworking *bool `json:"user_managed_networking,omitempty"`
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	AdditionalNTPSource *string `json:"additional_ntp_source,omitempty"`
	// A comma-separated list of NTP sources (name or IP) to be used as the only NTP configuration for the cluster hosts.
	NTPSources *string `json:"ntp_sources,omitempty"`
	// List of standalone OLM operators to be installed (not part of any bundle). For the full list of supported operators, check the endpoint `/v2/supported-operators`:
	OLMOperators []*OperatorCreateParams `json:"olm_operators,omitempty"`
	// List of operator bundles selected by the user with their optional operator choices. The backend expands bundles into their required operators, adds selected optional operators, resolves all depende...
	OperatorBundles []*BundleCreateParams `json:"operator_bundles,omitempty"`
	// Enable/disable hyperthreading on master nodes, arbiter nodes, worker nodes, or a combination of them.
	Hyperthreading *ClusterHyperthreading `json:"hyperthreading,omitempty"`
	// The desired network type used. - OVNKubernetes: Default CNI for OpenShift (recommended) - OpenShiftSDN: Legacy SDN (deprecated in newer versions) - CiscoACI: Cisco ACI CNI (requires custom manifest...
	NetworkType *ClusterNetworkType `json:"network_type,omitempty"`
	// Schedule workloads on masters
	SchedulableMasters bool `json:"schedulable_masters,omitempty"`
	// Cluster networks that are associated with this cluster.
	ClusterNetworks []*ClusterNetwork `json:"cluster_networks,omitempty"`
	// Service networks that are associated with this cluster.
	ServiceNetworks []*ServiceNetwork `json:"service_networks,omitempty"`
	// Machine networks that are associated with this cluster.
	MachineNetworks []*MachineNetwork `json:"machine_networks,omitempty"`
	// Installation disks encryption mode and host roles to be applied.
	DiskEncryption *DiskEncryption `json:"disk_encryption,omitempty"`
	// Explicit ignition endpoint overrides the default ignition endpoint.
	IgnitionEndpoint *IgnitionEndpoint `json:"ignition_endpoint,omitempty"`
	// A comma-separated list of tags that are associated to the cluster.
	Tags *string `json:"tags,omitempty"`
	// Specifies the required number of control plane nodes that should be part of the cluster.
	ControlPlaneCount *int64        `json:"control_plane_count,omitempty"`
	LoadBalancer      *LoadBalancer `json:"load_balancer,omitempty"`
}

type ClusterList []*Cluster

type Proxy struct {
	// A proxy URL to use for creating HTTP connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPProxy *string `json:"http_proxy,omitempty"`
	// A proxy URL to use for creating HTTPS connections outside the cluster. http://\<username\>:\<pswd\>@\<ip\>:\<port\> or https://\<username\>:\<pswd\>@\<ip\>:\<port\>
	HTTPSProxy *string `json:"https_proxy,omitempty"`
	// An "*" or a comma-separated list of destination domain names, domains, IP addresses, or other network CIDRs to exclude from proxying.
	NoProxy *string `json:"no_proxy,omitempty"`
}
