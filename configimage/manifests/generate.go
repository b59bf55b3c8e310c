package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// DefaultNamespace is the namespace the installer gives the manifests when
// install-config.yaml names none (OptionalInstallConfig.ClusterNamespace).
const DefaultNamespace = "cluster0"

// Spec is what Generate needs, taken from validated install-config and
// agent-config inputs. It carries plain values so this package does not
// depend on the input types; the mapping follows openshift/installer
// pkg/asset/agent/manifests (docs/reference/abi-on-host.md §9.2).
type Spec struct {
	ClusterName string // metadata.name
	Namespace   string // metadata.namespace; "" = DefaultNamespace
	BaseDomain  string

	ReleaseImage string // ClusterImageSet spec.releaseImage
	Version      string // OpenShift version: the image set is named openshift-<Version>

	ControlPlaneAgents int // controlPlane.replicas
	ArbiterAgents      int // arbiter.replicas
	WorkerAgents       int // sum of compute[].replicas

	// PlatformType is AgentClusterInstall's spelling (PlatformBareMetal …)
	// or install-config's (baremetal, none, vsphere, nutanix, external).
	PlatformType           string
	ExternalPlatformName   string
	CloudControllerManager string // External or ""
	APIVIPs, IngressVIPs   []string
	LoadBalancerType       string // UserManaged, ClusterManaged or "" (baremetal only)

	ClusterNetworks []ClusterNetworkEntry
	ServiceNetworks []string
	MachineNetworks []string
	NetworkType     string // "" = OVNKubernetes

	SSHKey     string
	PullSecret string // the .dockerconfigjson document

	Proxy                 *Proxy
	RendezvousIP          string // joins the proxy's noProxy with its machine network
	AdditionalNTPSources  []string
	AdditionalTrustBundle string
	CPUArchitecture       string // amd64, arm64, x86_64 … ; "" leaves it unset

	// InstallConfigOverrides is the JSON for the AgentClusterInstall
	// annotation (fips, capabilities, platform hosts with BMCs …); "" = none.
	InstallConfigOverrides string

	Hosts          []Host
	ExtraManifests []ExtraManifest
}

// Host is one agent-config host.
type Host struct {
	Hostname      string
	Role          string // master, arbiter, worker or ""
	Interfaces    []Interface
	NetworkConfig string // nmstate YAML; "" = no NMStateConfig for this host
}

// ErrSpec is returned (wrapped) by Generate for an incomplete spec.
var ErrSpec = errors.New("invalid manifest spec")

// Generate builds the manifests the installer would write for spec.
func Generate(spec Spec) (*Set, error) {
	var probs []string
	need := func(ok bool, what string) {
		if !ok {
			probs = append(probs, what)
		}
	}
	need(spec.ClusterName != "", "cluster name is required")
	need(spec.BaseDomain != "", "base domain is required")
	need(spec.ReleaseImage != "", "release image is required")
	need(spec.Version != "", "version is required")
	need(spec.PullSecret != "", "pull secret is required")
	need(spec.ControlPlaneAgents > 0, "control plane agents must be at least 1")
	platform, ok := hivePlatform(spec.PlatformType)
	need(ok, fmt.Sprintf("platform type %q is not one of BareMetal, None, VSphere, Nutanix, External", spec.PlatformType))
	if spec.InstallConfigOverrides != "" && !json.Valid([]byte(spec.InstallConfigOverrides)) {
		probs = append(probs, "install-config overrides are not valid JSON")
	}
	pullSecret, err := normalizeDockerConfig(spec.PullSecret)
	if err != nil && spec.PullSecret != "" {
		probs = append(probs, fmt.Sprintf("pull secret: %v", err))
	}
	nm, err := nmStateConfigs(spec)
	if err != nil {
		probs = append(probs, err.Error())
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrSpec, strings.Join(probs, "; "))
	}

	ns := spec.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	name := spec.ClusterName
	psName := name + "-pull-secret"
	meta := ObjectMeta{Name: name, Namespace: ns}
	imageSet := "openshift-" + spec.Version
	ssh := strings.Trim(spec.SSHKey, "|\n\t")
	var proxy *Proxy
	if spec.Proxy != nil {
		proxy = withRendezvousNoProxy(*spec.Proxy, spec.MachineNetworks, spec.RendezvousIP)
	}

	s := &Set{NMStateConfigs: nm, ExtraManifests: spec.ExtraManifests}
	s.ClusterDeployment = &ClusterDeployment{
		TypeMeta: TypeMeta{HiveAPIVersion, KindClusterDeploy},
		Metadata: meta,
		Spec: ClusterDeploymentSpec{
			BaseDomain:  spec.BaseDomain,
			ClusterName: name,
			ClusterInstallRef: &ClusterInstallRef{
				Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: KindAgentCluster, Name: name,
			},
			PullSecretRef: &LocalObjectReference{Name: psName},
		},
	}
	s.ClusterImageSet = &ClusterImageSet{
		TypeMeta: TypeMeta{HiveAPIVersion, KindClusterImageSet},
		Metadata: ObjectMeta{Name: imageSet, Namespace: ns},
		Spec:     ClusterImageSetSpec{ReleaseImage: spec.ReleaseImage},
	}
	s.PullSecret = &Secret{
		TypeMeta:   TypeMeta{SecretAPIVersion, KindSecret},
		Metadata:   ObjectMeta{Name: psName, Namespace: ns},
		StringData: map[string]string{PullSecretKey: pullSecret},
	}
	s.AgentClusterInstall = agentClusterInstall(spec, meta, platform, imageSet, ssh, proxy)
	s.InfraEnv = &InfraEnv{
		TypeMeta: TypeMeta{AgentAPIVersion, KindInfraEnv},
		Metadata: meta,
		Spec: InfraEnvSpec{
			ClusterRef:                 &ClusterReference{Name: name, Namespace: ns},
			SSHAuthorizedKey:           ssh,
			PullSecretRef:              &LocalObjectReference{Name: psName},
			NMStateConfigLabelSelector: LabelSelector{MatchLabels: map[string]string{NMStateLabel: name}},
			CPUArchitecture:            RPMArch(spec.CPUArchitecture),
			AdditionalTrustBundle:      spec.AdditionalTrustBundle,
			Proxy:                      proxy,
			AdditionalNTPSources:       spec.AdditionalNTPSources,
		},
	}
	for _, c := range s.NMStateConfigs {
		c.Metadata.Namespace = ns
	}
	return s, nil
}

func agentClusterInstall(spec Spec, meta ObjectMeta, platform, imageSet, ssh string, proxy *Proxy) *AgentClusterInstall {
	aci := &AgentClusterInstall{
		TypeMeta: TypeMeta{HiveExtAPIVersion, KindAgentCluster},
		Metadata: meta,
		Spec: AgentClusterInstallSpec{
			ImageSetRef:          &LocalObjectReference{Name: imageSet},
			ClusterDeploymentRef: LocalObjectReference{Name: spec.ClusterName},
			SSHPublicKey:         ssh,
			ProvisionRequirements: ProvisionRequirements{
				ControlPlaneAgents: spec.ControlPlaneAgents,
				ArbiterAgents:      spec.ArbiterAgents,
				WorkerAgents:       spec.WorkerAgents,
			},
			PlatformType: platform,
			Proxy:        proxy,
		},
	}
	n := &aci.Spec.Networking
	n.ClusterNetwork = append(n.ClusterNetwork, spec.ClusterNetworks...)
	for _, mn := range spec.MachineNetworks {
		n.MachineNetwork = append(n.MachineNetwork, MachineNetworkEntry{CIDR: mn})
	}
	n.ServiceNetwork = append(n.ServiceNetwork, spec.ServiceNetworks...)
	// setNetworkType: OVNKubernetes unless the input names OpenShiftSDN;
	// other types reach assisted through the overrides.
	n.NetworkType = "OVNKubernetes"
	if spec.NetworkType == "OpenShiftSDN" {
		n.NetworkType = spec.NetworkType
	}
	n.UserManagedNetworking = defaultUserManagedNetworking(platform)
	if platform == PlatformExternal {
		aci.Spec.External = &ExternalPlatformSpec{
			PlatformName: spec.ExternalPlatformName, CloudControllerManager: spec.CloudControllerManager,
		}
	}
	switch platform {
	case PlatformBareMetal:
		// Baremetal writes the singular VIP fields too (their first value).
		aci.Spec.APIVIPs, aci.Spec.IngressVIPs = spec.APIVIPs, spec.IngressVIPs
		if len(spec.APIVIPs) > 0 {
			aci.Spec.APIVIP = spec.APIVIPs[0]
		}
		if len(spec.IngressVIPs) > 0 {
			aci.Spec.IngressVIP = spec.IngressVIPs[0]
		}
		if spec.LoadBalancerType != "" {
			lb := "ClusterManaged"
			if spec.LoadBalancerType == "UserManaged" {
				lb = "UserManaged"
			}
			aci.Spec.LoadBalancer = &LoadBalancer{Type: lb}
		}
	case PlatformVSphere, PlatformNutanix:
		aci.Spec.APIVIPs, aci.Spec.IngressVIPs = spec.APIVIPs, spec.IngressVIPs
	}
	if spec.InstallConfigOverrides != "" {
		aci.Metadata.Annotations = map[string]string{InstallConfigOverridesAnnotation: spec.InstallConfigOverrides}
	}
	return aci
}

// nmStateConfigs makes one NMStateConfig per host with a network config,
// named <cluster>-<index of the host> (installer nmstateconfig.go).
func nmStateConfigs(spec Spec) ([]*NMStateConfig, error) {
	var out []*NMStateConfig
	for i, h := range spec.Hosts {
		if h.NetworkConfig == "" {
			continue
		}
		cfg, err := NetConfig(h.NetworkConfig).Canonical()
		if err != nil {
			return nil, fmt.Errorf("host %d (%s): %w", i, h.Hostname, err)
		}
		out = append(out, &NMStateConfig{
			TypeMeta: TypeMeta{AgentAPIVersion, KindNMStateConfig},
			Metadata: ObjectMeta{
				Name:   fmt.Sprintf("%s-%d", spec.ClusterName, i),
				Labels: map[string]string{NMStateLabel: spec.ClusterName},
			},
			Spec: NMStateConfigSpec{Config: cfg, Interfaces: append([]Interface(nil), h.Interfaces...)},
		})
	}
	return out, nil
}

// withRendezvousNoProxy adds the machine network holding the rendezvous IP
// to noProxy when a proxy is set (installer common.go getProxy).
func withRendezvousNoProxy(p Proxy, machineNetworks []string, rendezvousIP string) *Proxy {
	if (p.HTTPProxy == "" && p.HTTPSProxy == "") || rendezvousIP == "" {
		return &p
	}
	ip, err := netip.ParseAddr(rendezvousIP)
	if err != nil {
		return &p
	}
	cidr := ""
	for _, mn := range machineNetworks {
		if pfx, err := netip.ParsePrefix(mn); err == nil && pfx.Contains(ip) {
			cidr = mn
			break
		}
	}
	switch {
	case cidr == "":
	case p.NoProxy == "":
		p.NoProxy = cidr
	case !strings.Contains(p.NoProxy, cidr):
		p.NoProxy += "," + cidr
	}
	return &p
}

// hivePlatform maps install-config's platform names to
// AgentClusterInstall's (agent.HivePlatformType; the installer also reads
// the lower-case names back, OCPBUGS-7495). "" stays "".
func hivePlatform(p string) (string, bool) {
	switch strings.ToLower(p) {
	case "":
		return "", true
	case "baremetal":
		return PlatformBareMetal, true
	case "none":
		return PlatformNone, true
	case "vsphere":
		return PlatformVSphere, true
	case "nutanix":
		return PlatformNutanix, true
	case "external":
		return PlatformExternal, true
	}
	return p, false
}

// defaultUserManagedNetworking is what the installer sets (and assumes on
// load, as ZTP's mutating webhook does): true for none and external,
// unset otherwise.
func defaultUserManagedNetworking(platform string) *bool {
	if platform == PlatformNone || platform == PlatformExternal {
		t := true
		return &t
	}
	return nil
}

// RPMArch turns Go architecture names into the RPM names InfraEnv wants
// (amd64 → x86_64, arm64 → aarch64); others pass through.
func RPMArch(arch string) string {
	switch arch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return arch
}

// normalizeDockerConfig re-indents the pull secret JSON with two spaces
// and sorted keys, as the installer does before writing it
// (agentpullsecret.go normalizeDockerConfig).
func normalizeDockerConfig(s string) (string, error) {
	var data map[string]any
	if err := json.Unmarshal([]byte(s), &data); err != nil {
		return s, err
	}
	b, err := json.MarshalIndent(data, "", "  ")
	if err != nil {
		return s, err
	}
	return string(b), nil
}
