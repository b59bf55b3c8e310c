package inputs

import (
	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// InstallConfigFile is the name openshift-install gives the file.
const InstallConfigFile = "install-config.yaml"

// InstallConfig is install-config.yaml (apiVersion v1) as openshift-install
// reads it for agent-based installs (pkg/types/installconfig.go). Fields the
// agent flow ignores are accepted and reported as warnings.
type InstallConfig struct {
	APIVersion                  string               `yaml:"apiVersion"`
	Kind                        string               `yaml:"kind"`
	Metadata                    ObjectMeta           `yaml:"metadata"`
	BaseDomain                  string               `yaml:"baseDomain"`
	AdditionalTrustBundle       string               `yaml:"additionalTrustBundle"`
	AdditionalTrustBundlePolicy string               `yaml:"additionalTrustBundlePolicy"`
	SSHKey                      string               `yaml:"sshKey"`
	Networking                  *Networking          `yaml:"networking"`
	ControlPlane                *MachinePool         `yaml:"controlPlane"`
	Arbiter                     *MachinePool         `yaml:"arbiter"`
	Compute                     []MachinePool        `yaml:"compute"`
	Platform                    Platform             `yaml:"platform"`
	PullSecret                  string               `yaml:"pullSecret"`
	Proxy                       *Proxy               `yaml:"proxy"`
	ImageContentSources         []ImageContentSource `yaml:"imageContentSources"` // deprecated form of ImageDigestSources
	ImageDigestSources          []ImageDigestSource  `yaml:"imageDigestSources"`
	Publish                     string               `yaml:"publish"`
	FIPS                        bool                 `yaml:"fips"`
	CPUPartitioningMode         string               `yaml:"cpuPartitioningMode"`
	Capabilities                *Capabilities        `yaml:"capabilities"`
	FeatureSet                  string               `yaml:"featureSet"`
	FeatureGates                []string             `yaml:"featureGates"`
	CredentialsMode             string               `yaml:"credentialsMode,ignored"`
	BootstrapInPlace            *yaml.Node           `yaml:"bootstrapInPlace,ignored"`
	OperatorPublishingStrategy  *yaml.Node           `yaml:"operatorPublishingStrategy,ignored"`

	tree *report.Tree
}

// ObjectMeta is Kubernetes object metadata (metav1.ObjectMeta): the files
// use name, namespace, labels and annotations; the other keys are accepted
// and not read, as openshift-install's strict reader accepts every key of
// the type (a file written by kubectl or another tool may carry them).
type ObjectMeta struct {
	Name        string            `yaml:"name"`
	Namespace   string            `yaml:"namespace"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`

	GenerateName               *yaml.Node `yaml:"generateName"`
	SelfLink                   *yaml.Node `yaml:"selfLink"`
	UID                        *yaml.Node `yaml:"uid"`
	ResourceVersion            *yaml.Node `yaml:"resourceVersion"`
	Generation                 *yaml.Node `yaml:"generation"`
	CreationTimestamp          *yaml.Node `yaml:"creationTimestamp"`
	DeletionTimestamp          *yaml.Node `yaml:"deletionTimestamp"`
	DeletionGracePeriodSeconds *yaml.Node `yaml:"deletionGracePeriodSeconds"`
	OwnerReferences            *yaml.Node `yaml:"ownerReferences"`
	Finalizers                 *yaml.Node `yaml:"finalizers"`
	ManagedFields              *yaml.Node `yaml:"managedFields"`
}

// Networking is install-config's networking section.
type Networking struct {
	NetworkType         string                `yaml:"networkType"`
	MachineNetwork      []MachineNetworkEntry `yaml:"machineNetwork"`
	ClusterNetwork      []ClusterNetworkEntry `yaml:"clusterNetwork"`
	ServiceNetwork      []string              `yaml:"serviceNetwork"`
	ClusterNetworkMTU   int64                 `yaml:"clusterNetworkMTU"`
	OVNKubernetesConfig *yaml.Node            `yaml:"ovnKubernetesConfig"`
}

// MachineNetworkEntry is one machine network CIDR.
type MachineNetworkEntry struct {
	CIDR string `yaml:"cidr"`
}

// ClusterNetworkEntry is one pod network CIDR and the prefix given to each node.
type ClusterNetworkEntry struct {
	CIDR       string `yaml:"cidr"`
	HostPrefix int32  `yaml:"hostPrefix"`
}

// MachinePool is controlPlane, arbiter or one compute pool.
type MachinePool struct {
	Name           string     `yaml:"name"`
	Replicas       *int64     `yaml:"replicas"`
	Hyperthreading string     `yaml:"hyperthreading"`
	Architecture   string     `yaml:"architecture"`
	Fencing        *Fencing   `yaml:"fencing"`
	Platform       *yaml.Node `yaml:"platform,ignored"`
	DiskSetup      *yaml.Node `yaml:"diskSetup"`
}

// Fencing holds the BMC credentials of a two-node-with-fencing control plane.
type Fencing struct {
	Credentials []FencingCredential `yaml:"credentials"`
}

// FencingCredential is one control-plane host's BMC access for fencing.
type FencingCredential struct {
	Hostname                string `yaml:"hostname"`
	Address                 string `yaml:"address"`
	Username                string `yaml:"username"`
	Password                string `yaml:"password"`
	CertificateVerification string `yaml:"certificateVerification"`
}

// Platform holds exactly one platform section. Platforms other than those
// agent installs support are kept in Other so Validate can name them.
type Platform struct {
	BareMetal *BareMetalPlatform    `yaml:"baremetal"`
	None      *NonePlatform         `yaml:"none"`
	External  *ExternalPlatform     `yaml:"external"`
	VSphere   *VIPPlatform          `yaml:"vsphere"`
	Nutanix   *VIPPlatform          `yaml:"nutanix"`
	Other     map[string]*yaml.Node `yaml:",remain"`
}

// Platform names.
const (
	PlatformBareMetal = "baremetal"
	PlatformNone      = "none"
	PlatformExternal  = "external"
	PlatformVSphere   = "vsphere"
	PlatformNutanix   = "nutanix"
)

// Names returns the names of the platform sections present, in file order
// of the supported ones first, then the others sorted.
func (p Platform) Names() []string {
	var out []string
	for _, c := range []struct {
		name string
		set  bool
	}{
		{PlatformBareMetal, p.BareMetal != nil},
		{PlatformVSphere, p.VSphere != nil},
		{PlatformNone, p.None != nil},
		{PlatformExternal, p.External != nil},
		{PlatformNutanix, p.Nutanix != nil},
	} {
		if c.set {
			out = append(out, c.name)
		}
	}
	others := make([]string, 0, len(p.Other))
	for k := range p.Other {
		others = append(others, k)
	}
	sortStrings(others)
	return append(out, others...)
}

// Name returns the configured platform ("" when none is set).
func (p Platform) Name() string {
	if n := p.Names(); len(n) > 0 {
		return n[0]
	}
	return ""
}

// VIPs returns the API and ingress VIPs of the platform, whichever it is.
func (p Platform) VIPs() (api, ingress []string) {
	switch {
	case p.BareMetal != nil:
		return p.BareMetal.APIVIPs, p.BareMetal.IngressVIPs
	case p.VSphere != nil:
		return p.VSphere.APIVIPs, p.VSphere.IngressVIPs
	case p.Nutanix != nil:
		return p.Nutanix.APIVIPs, p.Nutanix.IngressVIPs
	}
	return nil, nil
}

// BareMetalPlatform is platform.baremetal.
type BareMetalPlatform struct {
	APIVIPs              []string        `yaml:"apiVIPs"`
	APIVIP               string          `yaml:"apiVIP"` // deprecated, folded into APIVIPs on load
	IngressVIPs          []string        `yaml:"ingressVIPs"`
	IngressVIP           string          `yaml:"ingressVIP"` // deprecated, folded into IngressVIPs on load
	Hosts                []BareMetalHost `yaml:"hosts"`
	AdditionalNTPServers []string        `yaml:"additionalNTPServers"`
	LoadBalancer         *LoadBalancer   `yaml:"loadBalancer"`
	ProvisioningNetwork  string          `yaml:"provisioningNetwork"`

	LibvirtURI                     *yaml.Node `yaml:"libvirtURI,ignored"`
	ClusterProvisioningIP          *yaml.Node `yaml:"clusterProvisioningIP,ignored"`
	BootstrapProvisioningIP        *yaml.Node `yaml:"bootstrapProvisioningIP,ignored"`
	ExternalBridge                 *yaml.Node `yaml:"externalBridge,ignored"`
	ExternalMACAddress             *yaml.Node `yaml:"externalMACAddress,ignored"`
	ProvisioningBridge             *yaml.Node `yaml:"provisioningBridge,ignored"`
	ProvisioningMACAddress         *yaml.Node `yaml:"provisioningMACAddress,ignored"`
	ProvisioningNetworkInterface   *yaml.Node `yaml:"provisioningNetworkInterface,ignored"`
	ProvisioningNetworkCIDR        *yaml.Node `yaml:"provisioningNetworkCIDR,ignored"`
	ProvisioningDHCPRange          *yaml.Node `yaml:"provisioningDHCPRange,ignored"`
	DefaultMachinePlatform         *yaml.Node `yaml:"defaultMachinePlatform,ignored"`
	BootstrapOSImage               *yaml.Node `yaml:"bootstrapOSImage,ignored"`
	ClusterOSImage                 *yaml.Node `yaml:"clusterOSImage,ignored"`
	BootstrapExternalStaticIP      *yaml.Node `yaml:"bootstrapExternalStaticIP,ignored"`
	BootstrapExternalStaticGateway *yaml.Node `yaml:"bootstrapExternalStaticGateway,ignored"`
	BootstrapExternalStaticDNS     *yaml.Node `yaml:"bootstrapExternalStaticDNS,ignored"`
}

// LoadBalancer selects who runs the API/ingress load balancer.
type LoadBalancer struct {
	Type string `yaml:"type"` // OpenShiftManagedDefault or UserManaged
}

// BareMetalHost is platform.baremetal.hosts[]; the agent flow uses these only
// when agent-config.yaml lists no hosts.
type BareMetalHost struct {
	Name            string           `yaml:"name"`
	Role            string           `yaml:"role"`
	BootMACAddress  string           `yaml:"bootMACAddress"`
	BMC             BMC              `yaml:"bmc"`
	RootDeviceHints *RootDeviceHints `yaml:"rootDeviceHints"`
	NetworkConfig   *yaml.Node       `yaml:"networkConfig"`
	BootMode        string           `yaml:"bootMode,ignored"`
	HardwareProfile string           `yaml:"hardwareProfile,ignored"`
}

// BMC is a host's baseboard management controller access.
type BMC struct {
	Address                        string `yaml:"address"`
	Username                       string `yaml:"username"`
	Password                       string `yaml:"password"`
	DisableCertificateVerification bool   `yaml:"disableCertificateVerification"`
}

// NonePlatform is platform.none. It takes no settings; VIPs written here are
// reported as an error rather than silently dropped.
type NonePlatform struct {
	APIVIPs     []string `yaml:"apiVIPs"`
	APIVIP      string   `yaml:"apiVIP"`
	IngressVIPs []string `yaml:"ingressVIPs"`
	IngressVIP  string   `yaml:"ingressVIP"`
}

// ExternalPlatform is platform.external.
type ExternalPlatform struct {
	PlatformName           string `yaml:"platformName"`
	CloudControllerManager string `yaml:"cloudControllerManager"`
}

// VIPPlatform is platform.vsphere or platform.nutanix: their VIPs are read,
// every other setting is kept verbatim for the install-config overrides.
type VIPPlatform struct {
	APIVIPs      []string              `yaml:"apiVIPs"`
	IngressVIPs  []string              `yaml:"ingressVIPs"`
	LoadBalancer *LoadBalancer         `yaml:"loadBalancer"`
	Rest         map[string]*yaml.Node `yaml:",remain"`
}

// Proxy is the cluster-wide proxy.
type Proxy struct {
	HTTPProxy  string `yaml:"httpProxy"`
	HTTPSProxy string `yaml:"httpsProxy"`
	NoProxy    string `yaml:"noProxy"`
}

// ImageContentSource is the deprecated mirror form.
type ImageContentSource struct {
	Source  string   `yaml:"source"`
	Mirrors []string `yaml:"mirrors"`
}

// ImageDigestSource lists mirrors of one source repository.
type ImageDigestSource struct {
	Source       string   `yaml:"source"`
	Mirrors      []string `yaml:"mirrors"`
	SourcePolicy string   `yaml:"sourcePolicy"`
}

// Capabilities selects optional cluster capabilities.
type Capabilities struct {
	BaselineCapabilitySet         string   `yaml:"baselineCapabilitySet"`
	AdditionalEnabledCapabilities []string `yaml:"additionalEnabledCapabilities"`
}

// LoadInstallConfig decodes install-config.yaml. name is the file name used
// in report entries. As openshift-install does, deprecated VIP fields are
// folded into the list forms and defaults are applied (networkType
// OVNKubernetes, machine network 10.0.0.0/16, cluster network 10.128.0.0/14
// with hostPrefix 23, service network 172.30.0.0/16, 3 control-plane and 3
// compute replicas, hyperthreading Enabled, architecture amd64). The config
// is nil when the file cannot be parsed at all.
//
// Unknown keys are warnings, and ignored: openshift-install tries
// UnmarshalStrict, and on an "unknown field" error logs a warning and reads
// the file again leniently (AssetBase.LoadFromFile in openshift/installer
// pkg/asset/installconfig/installconfigbase.go, which the agent's
// OptionalInstallConfig uses), so an install-config with an unknown key
// installs there too.
func LoadInstallConfig(name string, data []byte) (*InstallConfig, report.Report) {
	if name == "" {
		name = InstallConfigFile
	}
	ic := &InstallConfig{}
	tree, rep, ok := load(name, data, ic, lenient)
	if !ok {
		return nil, rep
	}
	ic.tree = tree
	ic.convert(&rep)
	ic.setDefaults()
	return ic, rep
}

// File is the file name the config was loaded from.
func (ic *InstallConfig) File() string {
	if ic.tree == nil {
		return InstallConfigFile
	}
	return ic.tree.File
}

// convert folds the deprecated singular VIPs into the lists, as the
// installer's conversion (upconvertVIP) does.
func (ic *InstallConfig) convert(rep *report.Report) {
	bm := ic.Platform.BareMetal
	if bm == nil {
		return
	}
	up := func(list *[]string, old, oldName, newName string) {
		if old == "" {
			return
		}
		base := "platform.baremetal."
		ic.warn(rep, base+oldName, oldName+" is deprecated; use "+newName)
		switch {
		case len(*list) == 0:
			*list = []string{old}
			ic.tree.Set(base+newName+"[0]", ic.tree.Value(base+oldName))
		case !contains(*list, old):
			ic.errorf(rep, base+oldName, msgInvalid(old, oldName+" is deprecated; only "+newName+" needs to be specified"))
		}
	}
	up(&bm.APIVIPs, bm.APIVIP, "apiVIP", "apiVIPs")
	up(&bm.IngressVIPs, bm.IngressVIP, "ingressVIP", "ingressVIPs")
}

// Installer defaults (pkg/types/defaults).
const (
	DefaultNetworkType    = "OVNKubernetes"
	DefaultMachineCIDR    = "10.0.0.0/16"
	DefaultClusterCIDR    = "10.128.0.0/14"
	DefaultHostPrefix     = 23
	DefaultServiceCIDR    = "172.30.0.0/16"
	DefaultReplicas       = 3
	DefaultArchitecture   = "amd64"
	DefaultHyperthreading = "Enabled"
)

func (ic *InstallConfig) setDefaults() {
	if ic.Networking == nil {
		ic.Networking = &Networking{}
	}
	n := ic.Networking
	if n.NetworkType == "" {
		n.NetworkType = DefaultNetworkType
	}
	if len(n.MachineNetwork) == 0 {
		n.MachineNetwork = []MachineNetworkEntry{{CIDR: DefaultMachineCIDR}}
	}
	if len(n.ClusterNetwork) == 0 {
		n.ClusterNetwork = []ClusterNetworkEntry{{CIDR: DefaultClusterCIDR, HostPrefix: DefaultHostPrefix}}
	}
	if len(n.ServiceNetwork) == 0 {
		n.ServiceNetwork = []string{DefaultServiceCIDR}
	}
	if ic.ControlPlane == nil {
		ic.ControlPlane = &MachinePool{}
	}
	if ic.ControlPlane.Name == "" {
		ic.ControlPlane.Name = "master"
	}
	poolDefaults(ic.ControlPlane)
	if len(ic.Compute) == 0 {
		ic.Compute = []MachinePool{{Name: "worker"}}
	}
	for i := range ic.Compute {
		poolDefaults(&ic.Compute[i])
	}
	if ic.Arbiter != nil {
		if ic.Arbiter.Name == "" {
			ic.Arbiter.Name = "arbiter"
		}
		if ic.Arbiter.Hyperthreading == "" {
			ic.Arbiter.Hyperthreading = DefaultHyperthreading
		}
		if ic.Arbiter.Architecture == "" {
			ic.Arbiter.Architecture = DefaultArchitecture
		}
	}
	if ic.Publish == "" {
		ic.Publish = "External"
	}
}

func poolDefaults(p *MachinePool) {
	if p.Replicas == nil {
		r := int64(DefaultReplicas)
		p.Replicas = &r
	}
	if p.Hyperthreading == "" {
		p.Hyperthreading = DefaultHyperthreading
	}
	if p.Architecture == "" {
		p.Architecture = DefaultArchitecture
	}
}

// ReplicaCounts returns the control-plane, arbiter and compute replicas
// (as GetReplicaCount in pkg/asset/agent/installconfig.go).
func (ic *InstallConfig) ReplicaCounts() (masters, arbiters, workers int64) {
	if ic.ControlPlane != nil && ic.ControlPlane.Replicas != nil {
		masters = *ic.ControlPlane.Replicas
	}
	if ic.Arbiter != nil && ic.Arbiter.Replicas != nil {
		arbiters = *ic.Arbiter.Replicas
	}
	for _, c := range ic.Compute {
		if c.Replicas != nil {
			workers += *c.Replicas
		}
	}
	return masters, arbiters, workers
}

// ClusterDomain is <metadata.name>.<baseDomain>.
func (ic *InstallConfig) ClusterDomain() string {
	return ic.Metadata.Name + "." + trimDot(ic.BaseDomain)
}

// RPMArchitecture maps an install-config architecture to the name
// assisted-service and the InfraEnv use (amd64 → x86_64, arm64 → aarch64).
func RPMArchitecture(arch string) string {
	switch arch {
	case "", "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return arch
}

func (ic *InstallConfig) warn(rep *report.Report, path, msg string) {
	rep.Entries = append(rep.Entries, entryAt(ic.tree, InstallConfigFile, path, report.Warning, msg))
}

func (ic *InstallConfig) errorf(rep *report.Report, path, msg string) {
	rep.Entries = append(rep.Entries, entryAt(ic.tree, InstallConfigFile, path, report.Error, msg))
}

// entryAt is an entry about path, placed where the tree has it (or its
// nearest parent); without a tree (a config built in Go) in defaultFile.
func entryAt(tree *report.Tree, defaultFile, path string, sev report.Severity, msg string) report.Entry {
	e := report.Entry{File: defaultFile, Path: path, Severity: sev, Message: msg}
	if tree != nil {
		p := tree.Value(path)
		e.File, e.Line, e.Column = tree.File, p.Line, p.Column
	}
	return e
}
