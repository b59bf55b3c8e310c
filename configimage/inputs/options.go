package inputs

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
)

// proxy is validateProxy.
func (v *validator) proxy() {
	p := v.ic.Proxy
	if p == nil {
		return
	}
	if p.HTTPProxy == "" && p.HTTPSProxy == "" {
		v.icErr("proxy", msgRequired("must include httpProxy or httpsProxy"))
	}
	nets := v.parsedNets()
	check := func(field, value string, schemes []string) {
		if value == "" {
			return
		}
		path := "proxy." + field
		u, err := url.ParseRequestURI(value)
		if err != nil {
			v.icErr(path, msgInvalid(value, err.Error()))
			return
		}
		if !contains(schemes, u.Scheme) {
			v.icErr(path, msgNotSupported(u.Scheme, schemes))
			return
		}
		if a, ok := parseAddr(u.Hostname()); ok {
			if inAny(a, nets.cluster) {
				v.icErr(path, msgInvalid(value, "proxy value is part of the cluster networks"))
			}
			if inAny(a, nets.service) {
				v.icErr(path, msgInvalid(value, "proxy value is part of the service networks"))
			}
		}
	}
	check("httpProxy", p.HTTPProxy, []string{"http"})
	check("httpsProxy", p.HTTPSProxy, []string{"http", "https"})
	if p.NoProxy == "" || p.NoProxy == "*" {
		return
	}
	if strings.Contains(p.NoProxy, " ") {
		v.icErr("proxy.noProxy", msgInvalid(p.NoProxy, "noProxy must not have spaces"))
	}
	for i, e := range strings.Split(p.NoProxy, ",") {
		e = strings.TrimSpace(e)
		_, _, cidrErr := net.ParseCIDR(e)
		if checkSubdomain(strings.TrimPrefix(e, ".")) != nil && cidrErr != nil && net.ParseIP(e) == nil {
			v.icErr("proxy.noProxy", msgInvalid(p.NoProxy, fmt.Sprintf(
				"each element of noProxy must be a IP, CIDR or domain without wildcard characters, which is violated by element %d %q", i, e)))
		}
	}
}

// Capability names and baseline sets known to OpenShift 4.11–4.20.
var (
	capabilitySets = []string{"None", "v4.11", "v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "vCurrent"}
	capabilities   = []string{"Build", "CSISnapshot", "CloudControllerManager", "CloudCredential", "Console", "DeploymentConfig",
		"ImageRegistry", "Ingress", "Insights", "MachineAPI", "NodeTuning", "OperatorLifecycleManager",
		"OperatorLifecycleManagerV1", "Storage", "baremetal", "marketplace", "openshift-samples"}
	featureSets = []string{"CustomNoUpgrade", "Default", "DevPreviewNoUpgrade", "TechPreviewNoUpgrade"}
)

// misc checks publish, capabilities, feature sets and CPU partitioning.
func (v *validator) misc() {
	ic := v.ic
	switch ic.Publish {
	case "External":
	case "Internal", "Mixed":
		v.icErr("publish", msgInvalid(ic.Publish, fmt.Sprintf("%s publish strategy is not supported on %q platform", ic.Publish, ic.Platform.Name())))
	default:
		v.icErr("publish", msgNotSupported(ic.Publish, []string{"External", "Internal", "Mixed"}))
	}
	if c := ic.Capabilities; c != nil {
		set := c.BaselineCapabilitySet
		if set != "" && !contains(capabilitySets, set) {
			v.icErr("capabilities.baselineCapabilitySet", msgNotSupported(set, capabilitySets))
		}
		for i, name := range c.AdditionalEnabledCapabilities {
			if !contains(capabilities, name) {
				v.icErr(report.Index("capabilities.additionalEnabledCapabilities", i), msgNotSupported(name, capabilities))
			}
		}
		if set == "None" {
			added := c.AdditionalEnabledCapabilities
			if contains(added, "marketplace") && !contains(added, "OperatorLifecycleManager") {
				v.icErr("capabilities.additionalEnabledCapabilities", msgInvalid(added, "the marketplace capability requires the OperatorLifecycleManager capability"))
			}
			if ic.Platform.BareMetal != nil && !contains(added, "baremetal") {
				v.icErr("capabilities.additionalEnabledCapabilities", msgInvalid(added, "platform baremetal requires the baremetal capability"))
			}
			if !contains(added, "Ingress") {
				v.icErr("capabilities", msgInvalid(bare("baselineCapabilitySet None"), "the Ingress capability is required"))
			}
		}
	}
	if ic.FeatureSet != "" && !contains(featureSets, ic.FeatureSet) {
		v.icErr("featureSet", msgNotSupported(ic.FeatureSet, featureSets))
	}
	if len(ic.FeatureGates) > 0 && ic.FeatureSet != "CustomNoUpgrade" {
		v.icErr("featureGates", msgForbidden("featureGates can only be used with the CustomNoUpgrade feature set"))
	}
	for i, g := range ic.FeatureGates {
		parts := strings.Split(g, "=")
		if len(parts) != 2 {
			v.icErr(report.Index("featureGates", i), msgInvalid(g, "must match the format <feature-name>=<bool>"))
			continue
		}
		if _, err := strconv.ParseBool(parts[1]); err != nil {
			v.icErr(report.Index("featureGates", i), msgInvalid(g, "must match the format <feature-name>=<bool>, could not parse boolean value"))
		}
	}
	switch ic.CPUPartitioningMode {
	case "", "None", "AllNodes":
	default:
		v.icErr("cpuPartitioningMode", msgNotSupported(ic.CPUPartitioningMode, []string{"None", "AllNodes"}))
	}
}
