package configimage

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/configimage/report"
)

// The input file names of an install directory, as openshift-install
// agent reads them.
const (
	InstallConfigFile = "install-config.yaml"
	AgentConfigFile   = "agent-config.yaml"
)

// Release names the OpenShift payload an install is for: openshift-install
// takes it from its own build; nodezero from flags.
type Release struct {
	Image   string // e.g. quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64
	Version string // e.g. 4.18.0
}

// LoadInputs reads dir/install-config.yaml and, when present,
// dir/agent-config.yaml, and validates them together. The report holds
// every problem with its file, line, column and field path; it has errors
// when the inputs cannot be used.
func LoadInputs(dir string) (*inputs.InstallConfig, *inputs.AgentConfig, report.Report) {
	var rep report.Report
	icData, err := os.ReadFile(filepath.Join(dir, InstallConfigFile))
	if err != nil {
		rep.Entries = append(rep.Entries, report.Entry{File: InstallConfigFile, Severity: report.Error,
			Message: fmt.Sprintf("cannot read it: %v (an install directory needs %s)", err, InstallConfigFile)})
		return nil, nil, rep
	}
	ic, r := inputs.LoadInstallConfig(InstallConfigFile, icData)
	rep.Merge(r)
	var ac *inputs.AgentConfig
	if acData, err := os.ReadFile(filepath.Join(dir, AgentConfigFile)); err == nil {
		ac, r = inputs.LoadAgentConfig(AgentConfigFile, acData)
		rep.Merge(r)
	} else if !os.IsNotExist(err) {
		rep.Entries = append(rep.Entries, report.Entry{File: AgentConfigFile, Severity: report.Error, Message: "cannot read it: " + err.Error()})
	}
	if ic != nil {
		rep.Merge(inputs.Validate(ic, ac))
	}
	return ic, ac, rep
}

// SpecFrom turns validated inputs into what the ZTP manifests are made
// from, as openshift-install's agent manifests assets do: the cluster from
// install-config, the hosts, rendezvous IP and NTP sources from
// agent-config.
func SpecFrom(ic *inputs.InstallConfig, ac *inputs.AgentConfig, rel Release) (manifests.Spec, error) {
	masters, arbiters, workers := ic.ReplicaCounts()
	s := manifests.Spec{
		ClusterName: ic.Metadata.Name, Namespace: ic.Metadata.Namespace, BaseDomain: ic.BaseDomain,
		ReleaseImage: rel.Image, Version: rel.Version,
		ControlPlaneAgents: int(masters), ArbiterAgents: int(arbiters), WorkerAgents: int(workers),
		PlatformType: ic.Platform.Name(), SSHKey: ic.SSHKey, PullSecret: ic.PullSecret,
		AdditionalTrustBundle: ic.AdditionalTrustBundle,
	}
	if ic.ControlPlane != nil {
		s.CPUArchitecture = ic.ControlPlane.Architecture
	}
	if n := ic.Networking; n != nil {
		s.NetworkType = n.NetworkType
		for _, c := range n.ClusterNetwork {
			s.ClusterNetworks = append(s.ClusterNetworks, manifests.ClusterNetworkEntry{CIDR: c.CIDR, HostPrefix: c.HostPrefix})
		}
		s.ServiceNetworks = append(s.ServiceNetworks, n.ServiceNetwork...)
		for _, m := range n.MachineNetwork {
			s.MachineNetworks = append(s.MachineNetworks, m.CIDR)
		}
	}
	s.APIVIPs, s.IngressVIPs = ic.Platform.VIPs()
	switch {
	case ic.Platform.External != nil:
		s.ExternalPlatformName = ic.Platform.External.PlatformName
		s.CloudControllerManager = ic.Platform.External.CloudControllerManager
	case ic.Platform.BareMetal != nil && ic.Platform.BareMetal.LoadBalancer != nil:
		s.LoadBalancerType = ic.Platform.BareMetal.LoadBalancer.Type
	}
	if p := ic.Proxy; p != nil {
		s.Proxy = &manifests.Proxy{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
	}
	if ac != nil {
		s.RendezvousIP = ac.RendezvousIP
		s.AdditionalNTPSources = append(s.AdditionalNTPSources, ac.AdditionalNTPSources...)
		for i, h := range ac.Hosts {
			mh := manifests.Host{Hostname: h.Hostname, Role: h.Role}
			for _, itf := range h.Interfaces {
				mh.Interfaces = append(mh.Interfaces, manifests.Interface{Name: itf.Name, MACAddress: strings.ToLower(itf.MacAddress)})
			}
			nc, err := h.NetworkConfigYAML()
			if err != nil {
				return manifests.Spec{}, fmt.Errorf("%s: hosts[%d].networkConfig: %w", AgentConfigFile, i, err)
			}
			mh.NetworkConfig = string(nc)
			s.Hosts = append(s.Hosts, mh)
		}
	}
	return s, nil
}

// ExtraManifests reads dir/openshift/*.yaml and *.yml, sorted by name: the
// user's additional manifests.
func ExtraManifests(dir string) ([]manifests.ExtraManifest, error) {
	var out []manifests.ExtraManifest
	for _, pat := range []string{"*.yaml", "*.yml"} {
		names, err := filepath.Glob(filepath.Join(dir, manifests.ExtraManifestsDir, pat))
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return nil, fmt.Errorf("extra manifest: %w", err)
			}
			out = append(out, manifests.ExtraManifest{Name: filepath.Base(n), Data: b})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
