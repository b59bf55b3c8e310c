package inputs

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
)

// Validate applies openshift-install's rules for agent-based installs to
// both files and across them (pkg/types/validation, pkg/asset/agent/
// installconfig.go, pkg/asset/agent/agentconfig). Either argument may be nil;
// cross-file rules then do not run. Every failed rule adds an entry at the
// position of the offending node (or of its nearest parent in the file when
// the value was absent or defaulted).
func Validate(ic *InstallConfig, ac *AgentConfig) report.Report {
	v := &validator{ic: ic, ac: ac}
	if ic != nil {
		v.installConfig()
	}
	if ac != nil {
		v.agentConfig()
	}
	v.hosts()
	return v.rep
}

type validator struct {
	ic  *InstallConfig
	ac  *AgentConfig
	nc  *NodesConfig // day 2: its hosts alone, without ic and ac
	rep report.Report
}

func (v *validator) icErr(path, msg string) {
	v.rep.Entries = append(v.rep.Entries, entryAt(v.ic.tree, InstallConfigFile, path, report.Error, msg))
}

func (v *validator) icWarn(path, msg string) {
	v.rep.Entries = append(v.rep.Entries, entryAt(v.ic.tree, InstallConfigFile, path, report.Warning, msg))
}

func (v *validator) acErr(path, msg string) {
	v.rep.Entries = append(v.rep.Entries, entryAt(v.ac.tree, AgentConfigFile, path, report.Error, msg))
}

// acAt and icAt add an entry found inside a node whose position is known
// (the networkConfig documents); line 0 falls back to the path's.
func (v *validator) acAt(path string, line, col int, sev report.Severity, msg string) {
	v.rep.Entries = append(v.rep.Entries, at(entryAt(v.ac.tree, AgentConfigFile, path, sev, msg), line, col))
}

func (v *validator) icAt(path string, line, col int, sev report.Severity, msg string) {
	v.rep.Entries = append(v.rep.Entries, at(entryAt(v.ic.tree, InstallConfigFile, path, sev, msg), line, col))
}

func at(e report.Entry, line, col int) report.Entry {
	if line > 0 {
		e.Line, e.Column = line, col
	}
	return e
}

func (v *validator) acWarn(path, msg string) {
	v.rep.Entries = append(v.rep.Entries, entryAt(v.ac.tree, AgentConfigFile, path, report.Warning, msg))
}

// Platforms and architectures agent installs support
// (SupportedInstallerPlatforms, validateSupportedArchs).
var (
	supportedPlatforms     = []string{PlatformBareMetal, PlatformVSphere, PlatformNone, PlatformExternal, PlatformNutanix}
	supportedArchitectures = []string{"amd64", "arm64", "ppc64le", "s390x"}
)

func (v *validator) installConfig() {
	ic := v.ic
	switch ic.APIVersion {
	case "v1":
	case "":
		v.icErr("apiVersion", msgRequired("install-config version required"))
	default:
		v.icErr("apiVersion", msgInvalid(ic.APIVersion, `install-config version must be "v1"`))
	}
	v.sshKey()
	if ic.AdditionalTrustBundle != "" {
		if err := checkCABundle(ic.AdditionalTrustBundle); err != nil {
			v.icErr("additionalTrustBundle", msgInvalid(truncate(ic.AdditionalTrustBundle), err.Error()))
		}
	}
	switch ic.AdditionalTrustBundlePolicy {
	case "", "Proxyonly", "Always":
	default:
		v.icErr("additionalTrustBundlePolicy", msgInvalid(ic.AdditionalTrustBundlePolicy, `supported values "Proxyonly", "Always"`))
	}
	v.names()
	v.networking()
	v.vips()
	v.platform()
	v.pools()
	v.singleNode()
	if strings.TrimSpace(ic.PullSecret) == "" {
		v.icErr("pullSecret", msgRequired(`the pull secret is required: the JSON with an "auths" object from console.redhat.com`))
	} else if err := checkPullSecret(ic.PullSecret); err != nil {
		v.icErr("pullSecret", msgInvalid(redacted{}, err.Error()))
	}
	v.proxy()
	v.mirrors()
	v.misc()
}

func (v *validator) sshKey() {
	ic := v.ic
	if ic.SSHKey == "" {
		return
	}
	typ, err := parseSSHKey(ic.SSHKey)
	switch {
	case err != nil && ic.FIPS:
		v.icErr("sshKey", msgInvalid(truncate(ic.SSHKey), "Fatal error trying to parse configured public key: "+err.Error()))
	case err != nil:
		v.icErr("sshKey", msgInvalid(truncate(ic.SSHKey), err.Error()))
	case ic.FIPS && !fipsKeyType.MatchString(typ):
		v.icErr("sshKey", msgInvalid(truncate(ic.SSHKey),
			fmt.Sprintf("SSH key type %s unavailable when FIPS is enabled. Please use rsa or ecdsa.", typ)))
	}
}

var fipsKeyType = regexp.MustCompile(`^ecdsa-sha2-nistp\d{3}$|^ssh-rsa$`)

// truncate shortens long values (keys, bundles) in messages.
func truncate(s string) string {
	const max = 48
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}

func (v *validator) names() {
	ic := v.ic
	switch ic.Platform.Name() {
	case PlatformBareMetal, PlatformVSphere, PlatformNutanix:
		if err := checkClusterName(ic.Metadata.Name, true); err != nil {
			v.icErr("metadata.name", msgInvalid(ic.Metadata.Name, err.Error()))
			return
		}
	default:
		if err := checkClusterName(ic.Metadata.Name, false); err != nil {
			v.icErr("metadata.name", msgInvalid(ic.Metadata.Name, err.Error()))
			return
		}
	}
	if err := checkDomainName(ic.BaseDomain); err != nil {
		v.icErr("baseDomain", msgInvalid(ic.BaseDomain, err.Error()))
		return
	}
	if err := checkDomainName(ic.ClusterDomain()); err != nil {
		v.icErr("baseDomain", msgInvalid(ic.ClusterDomain(), err.Error()))
	}
}

func (v *validator) platform() {
	ic := v.ic
	p := ic.Platform
	names := p.Names()
	if len(names) == 0 {
		v.icErr("platform", msgRequired("must specify one of the platforms ("+strings.Join(supportedPlatforms, ", ")+")"))
		return
	}
	for _, n := range names[1:] {
		v.icErr("platform."+n, msgInvalid(names[0],
			fmt.Sprintf("must only specify a single type of platform; cannot use both %q and %q", names[0], n)))
	}
	for _, n := range names {
		if !contains(supportedPlatforms, n) {
			v.icErr("platform."+n, msgNotSupported(n, supportedPlatforms))
		}
	}
	name := names[0]
	if arch := ic.ControlPlane.Architecture; (arch == "ppc64le" || arch == "s390x") && name != PlatformNone {
		v.icErr("platform", msgInvalid(name, fmt.Sprintf("CPU architecture %q only supports platform %q.", arch, PlatformNone)))
	}
	if e := p.External; e != nil && e.PlatformName == "oci" && e.CloudControllerManager != "External" {
		v.icErr("platform.external.cloudControllerManager", msgInvalid(e.CloudControllerManager,
			"When using external oci platform, platform.external.cloudControllerManager must be set to External"))
	}
	if e := p.External; e != nil {
		switch e.CloudControllerManager {
		case "", "None", "External":
		default:
			v.icErr("platform.external.cloudControllerManager", msgNotSupported(e.CloudControllerManager, []string{"", "External", "None"}))
		}
	}
	if n := p.None; n != nil {
		for _, f := range []struct {
			name string
			set  bool
		}{{"apiVIPs", len(n.APIVIPs) > 0}, {"apiVIP", n.APIVIP != ""}, {"ingressVIPs", len(n.IngressVIPs) > 0}, {"ingressVIP", n.IngressVIP != ""}} {
			if f.set {
				v.icErr("platform.none."+f.name, msgForbidden("platform none has no VIPs: the API and ingress load balancing is yours to provide; remove "+
					f.name+" or use platform baremetal"))
			}
		}
	}
	for _, lb := range []struct {
		path string
		lb   *LoadBalancer
	}{{"platform.baremetal.loadBalancer.type", lbOf(p.BareMetal)}, {"platform.vsphere.loadBalancer.type", vipLB(p.VSphere)}, {"platform.nutanix.loadBalancer.type", vipLB(p.Nutanix)}} {
		if lb.lb == nil {
			continue
		}
		switch lb.lb.Type {
		case "", "OpenShiftManagedDefault", "UserManaged":
		default:
			v.icErr(lb.path, msgNotSupported(lb.lb.Type, []string{"OpenShiftManagedDefault", "UserManaged"}))
		}
	}
	if bm := p.BareMetal; bm != nil {
		for i, s := range bm.AdditionalNTPServers {
			if !checkNTPSource(s) {
				v.icErr(report.Index("platform.baremetal.additionalNTPServers", i), msgInvalid(s, "NTP server is not a valid IP or domain name"))
			}
		}
		switch bm.ProvisioningNetwork {
		case "", "Managed", "Unmanaged", "Disabled":
		default:
			v.icErr("platform.baremetal.provisioningNetwork", msgNotSupported(bm.ProvisioningNetwork, []string{"Managed", "Unmanaged", "Disabled"}))
		}
	}
}

func lbOf(bm *BareMetalPlatform) *LoadBalancer {
	if bm == nil {
		return nil
	}
	return bm.LoadBalancer
}

func vipLB(p *VIPPlatform) *LoadBalancer {
	if p == nil {
		return nil
	}
	return p.LoadBalancer
}

// pools checks controlPlane, arbiter and compute.
func (v *validator) pools() {
	ic := v.ic
	cp := ic.ControlPlane
	if cp == nil {
		v.icErr("controlPlane", msgRequired("controlPlane is required"))
		return
	}
	if cp.Name != "master" {
		v.icErr("controlPlane.name", msgNotSupported(cp.Name, []string{"master"}))
	}
	if cp.Replicas != nil && *cp.Replicas == 0 {
		v.icErr("controlPlane.replicas", msgInvalid(cp.Replicas, "number of control plane replicas must be positive"))
	}
	v.machinePool(cp, "controlPlane")
	if r := cp.Replicas; r != nil && (*r < 1 || *r > 5 || (ic.Arbiter == nil && *r == 2 && !v.twoNodeFencing())) {
		supported := []string{"3", "1", "4", "5", "2 (with arbiter)"}
		if v.gateEnabled("DualReplica") {
			supported = append(supported, "2 (with fencing)")
		}
		v.icErr("controlPlane.replicas", msgNotSupported(cp.Replicas, supported))
	}
	if a := ic.Arbiter; a != nil {
		if ic.Platform.Name() != PlatformBareMetal {
			v.icErr("arbiter", msgNotSupported(ic.Platform.Name(), []string{PlatformBareMetal}))
		}
		if a.Name != "arbiter" {
			v.icErr("arbiter.name", msgNotSupported(a.Name, []string{"arbiter"}))
		}
		if a.Replicas != nil && *a.Replicas == 0 {
			v.icErr("arbiter.replicas", msgInvalid(a.Replicas, "number of arbiter replicas must be positive"))
		}
		if cp.Replicas == nil || *cp.Replicas < 2 {
			v.icErr("arbiter.replicas", msgInvalid(cp.Replicas, "number of controlPlane replicas must be at least 2 for arbiter deployments"))
		}
		v.machinePool(a, "arbiter")
	}
	seen := map[string]bool{}
	for i := range ic.Compute {
		p := &ic.Compute[i]
		path := report.Index("compute", i)
		if p.Name != "worker" {
			v.icErr(path+".name", msgNotSupported(p.Name, []string{"worker", "edge"}))
		}
		if seen[p.Name] {
			v.icErr(path+".name", msgDuplicate(p.Name))
		}
		seen[p.Name] = true
		if p.Architecture != cp.Architecture {
			v.icErr(path+".architecture", msgInvalid(p.Architecture,
				"heteregeneous multi-arch is not supported; compute pool architecture must match control plane"))
		}
		v.machinePool(p, path)
	}
}

func (v *validator) machinePool(p *MachinePool, path string) {
	if p.Replicas != nil && *p.Replicas < 0 {
		v.icErr(path+".replicas", msgInvalid(p.Replicas, "number of replicas must not be negative"))
	}
	switch p.Hyperthreading {
	case "Enabled":
	case "Disabled":
		v.icWarn(path+".hyperthreading", p.Hyperthreading+" is ignored")
	default:
		v.icErr(path+".hyperthreading", msgNotSupported(p.Hyperthreading, []string{"Disabled", "Enabled"}))
	}
	if !contains(supportedArchitectures, p.Architecture) {
		v.icErr(path+".architecture", msgNotSupported(p.Architecture, supportedArchitectures))
	}
}

// twoNodeFencing is isValidTNFCluster: 2 replicas, the DualReplica gate and
// fencing credentials.
func (v *validator) twoNodeFencing() bool {
	cp := v.ic.ControlPlane
	return cp.Replicas != nil && *cp.Replicas == 2 && v.gateEnabled("DualReplica") &&
		cp.Fencing != nil && len(cp.Fencing.Credentials) > 0
}

// gateEnabled: TechPreview and DevPreview sets enable the gates nodezero
// looks at; CustomNoUpgrade enables those listed as Name=true.
func (v *validator) gateEnabled(name string) bool {
	switch v.ic.FeatureSet {
	case "TechPreviewNoUpgrade", "DevPreviewNoUpgrade":
		return true
	case "CustomNoUpgrade":
		for _, g := range v.ic.FeatureGates {
			if n, val, ok := strings.Cut(g, "="); ok && n == name {
				b, _ := strconv.ParseBool(val)
				return b
			}
		}
	}
	return false
}

// singleNode is validateSNOConfiguration.
func (v *validator) singleNode() {
	ic := v.ic
	masters, arbiters, workers := ic.ReplicaCounts()
	if masters != 1 || ic.ControlPlane.Replicas == nil {
		return
	}
	name := ic.Platform.Name()
	if workers == 0 {
		if (name == PlatformNone || name == PlatformExternal) && ic.Networking.NetworkType != "OVNKubernetes" {
			v.icErr("networking.networkType", msgInvalid(ic.Networking.NetworkType,
				"Only OVNKubernetes network type is allowed for Single Node OpenShift (SNO) cluster"))
		}
		if name != PlatformNone && name != PlatformExternal {
			v.icErr("platform", msgInvalid(name, "Only platform none and external supports 1 ControlPlane and 0 Compute nodes"))
		}
	} else {
		path := "compute"
		for i, c := range ic.Compute {
			if c.Replicas != nil && *c.Replicas != 0 {
				path = report.Index("compute", i) + ".replicas"
				break
			}
		}
		v.icErr(path, msgForbidden(fmt.Sprintf(
			"Total number of compute replicas must be 0 when controlPlane.replicas is 1 for platform none or external. Found %d", workers)))
	}
	if arbiters > 0 {
		v.icErr("arbiter.replicas", msgForbidden(fmt.Sprintf(
			"Total number of arbiter replicas must be 0 when controlPlane.replicas is 1 for Single Node Openshift (SNO) cluster. Found %d", arbiters)))
	}
}

func (v *validator) mirrors() {
	ic := v.ic
	if len(ic.ImageContentSources) > 0 {
		v.icWarn("imageContentSources", "imageContentSources is deprecated, please use imageDigestSources")
		if len(ic.ImageDigestSources) > 0 {
			v.icErr("imageContentSources", msgForbidden("cannot set imageContentSources and imageDigestSources at the same time"))
		}
	}
	check := func(path, source string, mirrors []string) {
		if err := checkRepository(source); err != nil {
			v.icErr(path+".source", msgInvalid(source, err.Error()))
		}
		for j, m := range mirrors {
			if err := checkRepository(m); err != nil {
				v.icErr(report.Index(path+".mirrors", j), msgInvalid(m, err.Error()))
			}
		}
	}
	for i, s := range ic.ImageContentSources {
		check(report.Index("imageContentSources", i), s.Source, s.Mirrors)
	}
	for i, s := range ic.ImageDigestSources {
		path := report.Index("imageDigestSources", i)
		check(path, s.Source, s.Mirrors)
		switch s.SourcePolicy {
		case "", "AllowContactingSource", "NeverContactSource":
		default:
			v.icErr(path+".sourcePolicy", msgNotSupported(s.SourcePolicy, []string{"AllowContactingSource", "NeverContactSource"}))
		}
	}
}
