package wire

import (
	"time"
)

type InfraEnv struct {
	// Indicates the type of this object.
	Kind InfraEnvKind `json:"kind"`
	// Unique identifier of the object.
	ID string `json:"id"`
	// Self link.
	Href string `json:"href"`
	// Version of the OpenShift cluster (used to infer the RHCOS version - temporary until generic logic implemented).
	OpenshiftVersion string `json:"openshift_version,omitempty"`
	// Name of the infra-env.
	Name        string `json:"name"`
	UserName    string `json:"user_name,omitempty"`
	OrgID       string `json:"org_id,omitempty"`
	EmailDomain string `json:"email_domain,omitempty"`
	Proxy       *Proxy `json:"proxy,omitempty"`
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	AdditionalNTPSources string `json:"additional_ntp_sources,omitempty"`
	// A comma-separated list of NTP sources (name or IP) to be used as the only NTP configuration for hosts in this infra-env.
	NTPSources string `json:"ntp_sources,omitempty"`
	// SSH public key for debugging the installation.
	SSHAuthorizedKey string `json:"ssh_authorized_key,omitempty"`
	// True if the pull secret has been added to the cluster.
	PullSecretSet bool `json:"pull_secret_set,omitempty"`
	// static network configuration string in the format expected by discovery ignition generation.
	StaticNetworkConfig string `json:"static_network_config,omitempty"`
	// The IP address of the host that will act as the rendezvous (bootstrap) node for agent-based installations. This is optional for disconnected-iso image type and specifies which host will run the ass...
	RendezvousIP *string   `json:"rendezvous_ip,omitempty"`
	Type         ImageType `json:"type"`
	// Json formatted string containing the user overrides for the initial ignition config.
	IgnitionConfigOverride string `json:"ignition_config_override,omitempty"`
	// If set, all hosts that register will be associated with the specified cluster.
	ClusterID   string `json:"cluster_id,omitempty"`
	SizeBytes   int64  `json:"size_bytes,omitempty"`
	DownloadURL string `json:"download_url,omitempty"`
	// Image generator version.
	GeneratorVersion string `json:"generator_version,omitempty"`
	// The last time that this infra-env was updated.
	UpdatedAt time.Time `json:"updated_at"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt DateTime  `json:"expires_at,omitzero"`
	// The CPU architecture of the image (x86_64/arm64/etc).
	CPUArchitecture InfraEnvCPUArchitecture `json:"cpu_architecture,omitempty"`
	// JSON formatted string array representing the discovery image kernel arguments.
	KernelArguments *string `json:"kernel_arguments,omitempty"`
	// PEM-encoded X.509 certificate bundle. Hosts discovered by this infra-env will trust the certificates in this bundle. Clusters formed from the hosts discovered by this infra-env will also trust the ...
	AdditionalTrustBundle string `json:"additional_trust_bundle,omitempty"`
	// The number of seconds to wait before mapping host MACs to interfaces when applying static network config on minimal ISO. This can be used on hosts that need time to discover their NICs.
	NetworkDiscoveryDelaySeconds *int64 `json:"network_discovery_delay_seconds,omitempty"`
}

type InfraEnvCreateParams struct {
	// Name of the infra-env.
	Name  string `json:"name"`
	Proxy *Proxy `json:"proxy,omitempty"`
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	AdditionalNTPSources *string `json:"additional_ntp_sources,omitempty"`
	// A comma-separated list of NTP sources (name or IP) to be used as the only NTP configuration for hosts in this infra-env.
	NTPSources *string `json:"ntp_sources,omitempty"`
	// SSH public key for debugging the installation.
	SSHAuthorizedKey *string `json:"ssh_authorized_key,omitempty"`
	// The pull secret obtained from Red Hat OpenShift Cluster Manager at console.redhat.com/openshift/install/pull-secret.
	PullSecret          string                     `json:"pull_secret"`
	StaticNetworkConfig []*HostStaticNetworkConfig `json:"static_network_config,omitempty"`
	// The IP address of the host that will act as the rendezvous (bootstrap) node for agent-based installations. This is optional for disconnected-iso image type and specifies which host will run the ass...
	RendezvousIP *string   `json:"rendezvous_ip,omitempty"`
	ImageType    ImageType `json:"image_type,omitempty"`
	// JSON formatted string containing the user overrides for the initial ignition config.
	IgnitionConfigOverride string `json:"ignition_config_override,omitempty"`
	// If set, all hosts that register will be associated with the specified cluster.
	ClusterID *string `json:"cluster_id,omitempty"`
	// Version of the OpenShift cluster (used to infer the RHCOS version - temporary until generic logic implemented).
	OpenshiftVersion string `json:"openshift_version,omitempty"`
	// The CPU architecture of the image (x86_64/arm64/etc).
	CPUArchitecture InfraEnvCreateParamsCPUArchitecture `json:"cpu_architecture,omitempty"`
	KernelArguments KernelArguments                     `json:"kernel_arguments,omitempty"`
	// PEM-encoded X.509 certificate bundle. Hosts discovered by this infra-env will trust the certificates in this bundle. Clusters formed from the hosts discovered by this infra-env will also trust the ...
	AdditionalTrustBundle string `json:"additional_trust_bundle,omitempty"`
	// The number of seconds to wait before mapping host MACs to interfaces when applying static network config on minimal ISO. This can be used on hosts that need time to discover their NICs.
	NetworkDiscoveryDelaySeconds *int64 `json:"network_discovery_delay_seconds,omitempty"`
}

type HostStaticNetworkConfig struct {
	// yaml string that can be processed by nmstate
	NetworkYaml string `json:"network_yaml,omitempty"`
	// mapping of host macs to logical interfaces used in the network yaml
	MACInterfaceMap MACInterfaceMap `json:"mac_interface_map,omitempty"`
}

type MACInterfaceMap []*MACInterfaceMapItem

// MACInterfaceMapItem is one entry of mac_interface_map (an inline object
// in the swagger).
type MACInterfaceMapItem struct {
	// mac address present on the host
	MACAddress string `json:"mac_address"`
	// nic name used in the yaml, which relates 1:1 to the mac address
	LogicalNicName string `json:"logical_nic_name,omitempty"`
}

// List of kernel arugment objects that define the operations and values to be applied.
type KernelArguments []*KernelArgument

// pair of [operation, argument] specifying the argument and what operation should be applied on it.
type KernelArgument struct {
	// The operation to apply on the kernel argument.
	Operation KernelArgumentOperation `json:"operation,omitempty"`
	// Kernel argument can have the form <parameter> or <parameter>=<value>. The following examples should be supported: rd.net.timeout.carrier=60 isolcpus=1,2,10-20,100-2000:2/25 quiet The parsing by the...
	Value string `json:"value,omitempty"`
}

type InfraEnvUpdateParams struct {
	Proxy *Proxy `json:"proxy,omitempty"`
	// A comma-separated list of NTP sources (name or IP) going to be added to all the hosts.
	AdditionalNTPSources *string `json:"additional_ntp_sources,omitempty"`
	// A comma-separated list of NTP sources (name or IP) to be used as the only NTP configuration for hosts in this infra-env.
	NTPSources *string `json:"ntp_sources,omitempty"`
	// SSH public key for debugging the installation.
	SSHAuthorizedKey *string `json:"ssh_authorized_key,omitempty"`
	// The pull secret obtained from Red Hat OpenShift Cluster Manager at console.redhat.com/openshift/install/pull-secret.
	PullSecret          string                     `json:"pull_secret,omitempty"`
	StaticNetworkConfig []*HostStaticNetworkConfig `json:"static_network_config,omitempty"`
	// The IP address of the host that will act as the rendezvous (bootstrap) node for agent-based installations. This is optional for disconnected-iso image type and specifies which host will run the ass...
	RendezvousIP *string   `json:"rendezvous_ip,omitempty"`
	ImageType    ImageType `json:"image_type,omitempty"`
	// JSON formatted string containing the user overrides for the initial ignition config.
	IgnitionConfigOverride string          `json:"ignition_config_override,omitempty"`
	KernelArguments        KernelArguments `json:"kernel_arguments,omitempty"`
	// Allows users to change the additional_trust_bundle infra-env field
	AdditionalTrustBundle *string `json:"additional_trust_bundle,omitempty"`
	// Version of the OS image
	OpenshiftVersion *string `json:"openshift_version,omitempty"`
	// The number of seconds to wait before mapping host MACs to interfaces when applying static network config on minimal ISO. This can be used on hosts that need time to discover their NICs.
	NetworkDiscoveryDelaySeconds *int64 `json:"network_discovery_delay_seconds,omitempty"`
}

type InfraEnvList []*InfraEnv

type InfraEnvKind string

const (
	InfraEnvKindInfraEnv InfraEnvKind = "InfraEnv"
)

type InfraEnvCPUArchitecture string

const (
	InfraEnvCPUArchitectureX8664   InfraEnvCPUArchitecture = "x86_64"
	InfraEnvCPUArchitectureAarch64 InfraEnvCPUArchitecture = "aarch64"
	InfraEnvCPUArchitectureArm64   InfraEnvCPUArchitecture = "arm64"
	InfraEnvCPUArchitecturePpc64le InfraEnvCPUArchitecture = "ppc64le"
	InfraEnvCPUArchitectureS390x   InfraEnvCPUArchitecture = "s390x"
)

type InfraEnvCreateParamsCPUArchitecture string

const (
	InfraEnvCreateParamsCPUArchitectureX8664   InfraEnvCreateParamsCPUArchitecture = "x86_64"
	InfraEnvCreateParamsCPUArchitectureAarch64 InfraEnvCreateParamsCPUArchitecture = "aarch64"
	InfraEnvCreateParamsCPUArchitectureArm64   InfraEnvCreateParamsCPUArchitecture = "arm64"
	InfraEnvCreateParamsCPUArchitecturePpc64le InfraEnvCreateParamsCPUArchitecture = "ppc64le"
	InfraEnvCreateParamsCPUArchitectureS390x   InfraEnvCreateParamsCPUArchitecture = "s390x"
)

type KernelArgumentOperation string

const (
	KernelArgumentOperationAppend  KernelArgumentOperation = "append"
	KernelArgumentOperationReplace KernelArgumentOperation = "replace"
	KernelArgumentOperationDelete  KernelArgumentOperation = "delete"
)
