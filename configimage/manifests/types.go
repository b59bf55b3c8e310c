package manifests

// The manifest types. Field names and yaml keys are those of the CRDs the
// installer marshals (openshift/hive apis/hive/v1 ClusterDeployment and
// ClusterImageSet, assisted-service api/hiveextension/v1beta1
// AgentClusterInstall, api/v1beta1 InfraEnv and NMStateConfig, core/v1
// Secret), reduced to the fields the agent-based installer writes or reads.
// Keys are written sorted, so field order here does not matter; fields
// without omitempty are always written, as encoding/json writes them.

import "github.com/nodezero/nodezero/configimage/report"

// API versions and kinds.
const (
	HiveAPIVersion      = "hive.openshift.io/v1"
	HiveExtAPIVersion   = "extensions.hive.openshift.io/v1beta1"
	AgentAPIVersion     = "agent-install.openshift.io/v1beta1"
	SecretAPIVersion    = "v1"
	KindClusterDeploy   = "ClusterDeployment"
	KindClusterImageSet = "ClusterImageSet"
	KindAgentCluster    = "AgentClusterInstall"
	KindInfraEnv        = "InfraEnv"
	KindNMStateConfig   = "NMStateConfig"
	KindSecret          = "Secret"
)

// Annotation and label keys.
const (
	// InstallConfigOverridesAnnotation on the AgentClusterInstall carries a
	// JSON document merged into the generated install-config
	// (controllers.InstallConfigOverrides in assisted-service).
	InstallConfigOverridesAnnotation = "agent-install.openshift.io/install-config-overrides"
	// NMStateLabel selects a cluster's NMStateConfigs (installer
	// getNMStateConfigLabels).
	NMStateLabel = "infraenvs.agent-install.openshift.io"
	// ClusterConsumerLabel on the AgentClusterInstall becomes the cluster's
	// tags (hiveext.ClusterConsumerLabel).
	ClusterConsumerLabel = "agentclusterinstalls.agent-install.openshift.io/consumer"
	// PullSecretKey is the Secret's stringData key holding the pull secret.
	PullSecretKey = ".dockerconfigjson"
)

// Platform types as AgentClusterInstall spells them (hiveext PlatformType).
const (
	PlatformBareMetal = "BareMetal"
	PlatformNone      = "None"
	PlatformVSphere   = "VSphere"
	PlatformNutanix   = "Nutanix"
	PlatformExternal  = "External"
)

// TypeMeta is a manifest's apiVersion and kind.
type TypeMeta struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
}

// ObjectMeta is the part of metadata the manifests use.
type ObjectMeta struct {
	Annotations map[string]string `yaml:"annotations,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Name        string            `yaml:"name,omitempty"`
	Namespace   string            `yaml:"namespace,omitempty"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	Name string `yaml:"name"`
}

// LabelSelector selects by labels (matchExpressions are not supported).
type LabelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels,omitempty"`
}

// Empty is an object written as {}.
type Empty struct{}

// ClusterDeployment is hive's ClusterDeployment (cluster-deployment.yaml).
type ClusterDeployment struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta            `yaml:"metadata"`
	Spec     ClusterDeploymentSpec `yaml:"spec"`
	Status   Empty                 `yaml:"status"`
}

// ClusterDeploymentSpec is the part of hive's spec the installer writes.
type ClusterDeploymentSpec struct {
	BaseDomain         string                `yaml:"baseDomain"`
	ClusterInstallRef  *ClusterInstallRef    `yaml:"clusterInstallRef,omitempty"`
	ClusterName        string                `yaml:"clusterName"`
	ControlPlaneConfig ControlPlaneConfig    `yaml:"controlPlaneConfig"`
	Installed          bool                  `yaml:"installed"`
	Platform           ClusterPlatform       `yaml:"platform"`
	PullSecretRef      *LocalObjectReference `yaml:"pullSecretRef,omitempty"`
}

// ClusterInstallRef points at the AgentClusterInstall.
type ClusterInstallRef struct {
	Group   string `yaml:"group"`
	Kind    string `yaml:"kind"`
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
}

// ControlPlaneConfig is written as servingCertificates: {}.
type ControlPlaneConfig struct {
	ServingCertificates Empty `yaml:"servingCertificates"`
}

// ClusterPlatform is hive's platform; the installer leaves it empty, ZTP
// users set agentBareMetal.
type ClusterPlatform struct {
	AgentBareMetal *AgentBareMetal `yaml:"agentBareMetal,omitempty"`
}

// AgentBareMetal selects the agents of a ZTP cluster.
type AgentBareMetal struct {
	AgentSelector LabelSelector `yaml:"agentSelector"`
}

// ClusterImageSet is hive's ClusterImageSet (cluster-image-set.yaml).
type ClusterImageSet struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta          `yaml:"metadata"`
	Spec     ClusterImageSetSpec `yaml:"spec"`
	Status   Empty               `yaml:"status"`
}

// ClusterImageSetSpec holds the release image pull spec.
type ClusterImageSetSpec struct {
	ReleaseImage string `yaml:"releaseImage"`
}

// AgentClusterInstall is assisted-service's AgentClusterInstall
// (agent-cluster-install.yaml).
type AgentClusterInstall struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta                `yaml:"metadata"`
	Spec     AgentClusterInstallSpec   `yaml:"spec"`
	Status   AgentClusterInstallStatus `yaml:"status"`
}

// AgentClusterInstallSpec is the cluster's install configuration.
type AgentClusterInstallSpec struct {
	APIVIP                string                `yaml:"apiVIP,omitempty"`
	APIVIPs               []string              `yaml:"apiVIPs,omitempty"`
	Arbiter               *AgentMachinePool     `yaml:"arbiter,omitempty"`
	ClusterDeploymentRef  LocalObjectReference  `yaml:"clusterDeploymentRef"`
	Compute               []AgentMachinePool    `yaml:"compute,omitempty"`
	ControlPlane          *AgentMachinePool     `yaml:"controlPlane,omitempty"`
	DiskEncryption        *DiskEncryption       `yaml:"diskEncryption,omitempty"`
	External              *ExternalPlatformSpec `yaml:"external,omitempty"`
	HoldInstallation      bool                  `yaml:"holdInstallation,omitempty"`
	IgnitionEndpoint      *IgnitionEndpoint     `yaml:"ignitionEndpoint,omitempty"`
	ImageSetRef           *LocalObjectReference `yaml:"imageSetRef,omitempty"`
	IngressVIP            string                `yaml:"ingressVIP,omitempty"`
	IngressVIPs           []string              `yaml:"ingressVIPs,omitempty"`
	LoadBalancer          *LoadBalancer         `yaml:"loadBalancer,omitempty"`
	ManifestsConfigMapRef *LocalObjectReference `yaml:"manifestsConfigMapRef,omitempty"`
	MastersSchedulable    bool                  `yaml:"mastersSchedulable,omitempty"`
	Networking            Networking            `yaml:"networking"`
	NTPSources            []string              `yaml:"ntpSources,omitempty"`
	PlatformType          string                `yaml:"platformType,omitempty"`
	ProvisionRequirements ProvisionRequirements `yaml:"provisionRequirements"`
	Proxy                 *Proxy                `yaml:"proxy,omitempty"`
	SSHPublicKey          string                `yaml:"sshPublicKey,omitempty"`
}

// AgentMachinePool sets hyperthreading for a pool (master, arbiter, worker).
type AgentMachinePool struct {
	Hyperthreading string `yaml:"hyperthreading,omitempty"` // Enabled or Disabled
	Name           string `yaml:"name"`
}

// DiskEncryption configures installation disk encryption.
type DiskEncryption struct {
	EnableOn    string `yaml:"enableOn,omitempty"`
	Mode        string `yaml:"mode,omitempty"`
	TangServers string `yaml:"tangServers,omitempty"`
}

// ExternalPlatformSpec names an external platform.
type ExternalPlatformSpec struct {
	CloudControllerManager string `yaml:"cloudControllerManager,omitempty"`
	PlatformName           string `yaml:"platformName,omitempty"`
}

// IgnitionEndpoint overrides where hosts fetch their ignition.
type IgnitionEndpoint struct {
	CACertificateReference *CACertificateReference `yaml:"caCertificateReference,omitempty"`
	URL                    string                  `yaml:"url,omitempty"`
}

// CACertificateReference names the secret holding the endpoint's CA.
type CACertificateReference struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// LoadBalancer is ClusterManaged or UserManaged.
type LoadBalancer struct {
	Type string `yaml:"type,omitempty"`
}

// Networking is the cluster's networks.
type Networking struct {
	ClusterNetwork        []ClusterNetworkEntry `yaml:"clusterNetwork,omitempty"`
	MachineNetwork        []MachineNetworkEntry `yaml:"machineNetwork,omitempty"`
	NetworkType           string                `yaml:"networkType,omitempty"`
	ServiceNetwork        []string              `yaml:"serviceNetwork,omitempty"`
	UserManagedNetworking *bool                 `yaml:"userManagedNetworking,omitempty"`
}

// ClusterNetworkEntry is a pod network.
type ClusterNetworkEntry struct {
	CIDR       string `yaml:"cidr"`
	HostPrefix int32  `yaml:"hostPrefix,omitempty"`
}

// MachineNetworkEntry is a host network.
type MachineNetworkEntry struct {
	CIDR string `yaml:"cidr"`
}

// ProvisionRequirements are the agent counts per role.
type ProvisionRequirements struct {
	ArbiterAgents      int `yaml:"arbiterAgents,omitempty"`
	ControlPlaneAgents int `yaml:"controlPlaneAgents"`
	WorkerAgents       int `yaml:"workerAgents,omitempty"`
}

// Proxy is the cluster-wide proxy.
type Proxy struct {
	HTTPProxy  string `yaml:"httpProxy,omitempty"`
	HTTPSProxy string `yaml:"httpsProxy,omitempty"`
	NoProxy    string `yaml:"noProxy,omitempty"`
}

// AgentClusterInstallStatus is the empty status the installer writes.
type AgentClusterInstallStatus struct {
	DebugInfo struct {
		EventsURL string `yaml:"eventsURL"`
		LogsURL   string `yaml:"logsURL"`
	} `yaml:"debugInfo"`
	Progress struct {
		TotalPercentage int64 `yaml:"totalPercentage"`
	} `yaml:"progress"`
}

// InfraEnv is assisted-service's InfraEnv (infraenv.yaml).
type InfraEnv struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta     `yaml:"metadata"`
	Spec     InfraEnvSpec   `yaml:"spec"`
	Status   InfraEnvStatus `yaml:"status"`
}

// InfraEnvSpec is the discovery image's configuration.
type InfraEnvSpec struct {
	AdditionalNTPSources         []string              `yaml:"additionalNTPSources,omitempty"`
	AdditionalTrustBundle        string                `yaml:"additionalTrustBundle,omitempty"`
	AgentLabels                  map[string]string     `yaml:"agentLabels,omitempty"`
	ClusterRef                   *ClusterReference     `yaml:"clusterRef,omitempty"`
	CPUArchitecture              string                `yaml:"cpuArchitecture,omitempty"`
	IgnitionConfigOverride       string                `yaml:"ignitionConfigOverride,omitempty"`
	ImageType                    string                `yaml:"imageType,omitempty"`
	IPXEScriptType               string                `yaml:"ipxeScriptType"`
	KernelArguments              []KernelArgument      `yaml:"kernelArguments,omitempty"`
	NetworkDiscoveryDelaySeconds *int64                `yaml:"networkDiscoveryDelaySeconds,omitempty"`
	NMStateConfigLabelSelector   LabelSelector         `yaml:"nmStateConfigLabelSelector"`
	NTPSources                   []string              `yaml:"ntpSources,omitempty"`
	OSImageVersion               string                `yaml:"osImageVersion,omitempty"`
	Proxy                        *Proxy                `yaml:"proxy,omitempty"`
	PullSecretRef                *LocalObjectReference `yaml:"pullSecretRef"`
	SSHAuthorizedKey             string                `yaml:"sshAuthorizedKey,omitempty"`
}

// ClusterReference names the cluster an InfraEnv belongs to.
type ClusterReference struct {
	Name      string `yaml:"name"`
	Namespace string `yaml:"namespace"`
}

// KernelArgument is one discovery kernel argument change.
type KernelArgument struct {
	Operation string `yaml:"operation,omitempty"` // append, replace, delete
	Value     string `yaml:"value,omitempty"`
}

// InfraEnvStatus is the empty status the installer writes.
type InfraEnvStatus struct {
	AgentLabelSelector LabelSelector `yaml:"agentLabelSelector"`
	BootArtifacts      struct {
		DiscoveryIgnitionURL string `yaml:"discoveryIgnitionURL"`
		Initrd               string `yaml:"initrd"`
		IPXEScript           string `yaml:"ipxeScript"`
		Kernel               string `yaml:"kernel"`
		Rootfs               string `yaml:"rootfs"`
	} `yaml:"bootArtifacts"`
	DebugInfo struct {
		EventsURL string `yaml:"eventsURL"`
	} `yaml:"debugInfo"`
}

// NMStateConfig is one host's network configuration (a document of
// nmstateconfig.yaml).
type NMStateConfig struct {
	TypeMeta `yaml:",inline"`
	Metadata ObjectMeta        `yaml:"metadata"`
	Spec     NMStateConfigSpec `yaml:"spec"`
}

// NMStateConfigSpec is the nmstate document and the NIC names it uses.
type NMStateConfigSpec struct {
	Config     NetConfig   `yaml:"config,omitempty"`
	Interfaces []Interface `yaml:"interfaces,omitempty"`
}

// Interface maps a NIC name in the nmstate document to a MAC address.
type Interface struct {
	MACAddress string `yaml:"macAddress"`
	Name       string `yaml:"name"`
}

// Secret is the core/v1 Secret holding the pull secret (pull-secret.yaml).
type Secret struct {
	TypeMeta   `yaml:",inline"`
	Metadata   ObjectMeta        `yaml:"metadata"`
	StringData map[string]string `yaml:"stringData,omitempty"`
	Type       string            `yaml:"type,omitempty"`
}

// PullSecret returns the Secret's pull secret, "" when it has none.
func (s *Secret) PullSecret() string {
	if s == nil {
		return ""
	}
	return s.StringData[PullSecretKey]
}

// ExtraManifest is a user manifest for the cluster's openshift folder,
// kept byte for byte.
type ExtraManifest struct {
	Name string // base name, *.yaml or *.yml
	Data []byte
}

// Set is the agent-based installer's ZTP manifests plus the extra
// manifests.
type Set struct {
	ClusterDeployment   *ClusterDeployment
	AgentClusterInstall *AgentClusterInstall
	ClusterImageSet     *ClusterImageSet
	InfraEnv            *InfraEnv
	PullSecret          *Secret
	NMStateConfigs      []*NMStateConfig // nmstateconfig.yaml, one document each; may be empty
	ExtraManifests      []ExtraManifest  // openshift/*.y*ml, sorted by name

	// Warnings are what Load noticed and ignored (unknown fields). Write
	// does not use them.
	Warnings []report.Entry
}
