package inputs

import (
	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// AgentConfigFile is the name openshift-install gives the file.
const AgentConfigFile = "agent-config.yaml"

// AgentConfigVersion is the apiVersion written by current installers;
// v1alpha1 is read too, as the installer upconverts it.
const AgentConfigVersion = "v1beta1"

// AgentConfig is agent-config.yaml (pkg/types/agent/agent_config_type.go).
type AgentConfig struct {
	APIVersion           string     `yaml:"apiVersion"`
	Kind                 string     `yaml:"kind"`
	Metadata             ObjectMeta `yaml:"metadata"`
	RendezvousIP         string     `yaml:"rendezvousIP"`
	BootArtifactsBaseURL string     `yaml:"bootArtifactsBaseURL"`
	AdditionalNTPSources []string   `yaml:"additionalNTPSources"`
	MinimalISO           bool       `yaml:"minimalISO"`
	Hosts                []Host     `yaml:"hosts"`

	tree *report.Tree
}

// Host is one entry of agent-config hosts[].
type Host struct {
	Hostname        string          `yaml:"hostname"`
	Role            string          `yaml:"role"`
	RootDeviceHints RootDeviceHints `yaml:"rootDeviceHints"`
	Interfaces      []Interface     `yaml:"interfaces"`
	// NetworkConfig is the host's nmstate YAML, kept as parsed: its nodes
	// carry their line and column in agent-config.yaml, so an nmstate parser
	// can report positions in the user's file. Nil when absent.
	NetworkConfig *yaml.Node `yaml:"networkConfig"`
	BMC           BMC        `yaml:"bmc"`
}

// Interface names one NIC of a host by MAC address.
type Interface struct {
	Name       string `yaml:"name"`
	MacAddress string `yaml:"macAddress"`
}

// RootDeviceHints select the installation disk (metal3 semantics:
// deviceName, hctl, serialNumber and wwn exact; model and vendor substrings;
// minSizeGigabytes a lower bound; rotational a drive type).
type RootDeviceHints struct {
	DeviceName         string `yaml:"deviceName"`
	HCTL               string `yaml:"hctl"`
	Model              string `yaml:"model"`
	Vendor             string `yaml:"vendor"`
	SerialNumber       string `yaml:"serialNumber"`
	MinSizeGigabytes   int    `yaml:"minSizeGigabytes"`
	WWN                string `yaml:"wwn"`
	WWNWithExtension   string `yaml:"wwnWithExtension"`
	WWNVendorExtension string `yaml:"wwnVendorExtension"`
	Rotational         *bool  `yaml:"rotational"`
}

// IsZero reports whether no hint is set.
func (h RootDeviceHints) IsZero() bool { return h == RootDeviceHints{} }

// LoadAgentConfig decodes agent-config.yaml. name is the file name used in
// report entries. The config is nil when the file cannot be parsed at all.
//
// Unknown keys are errors, with a "did you mean" hint: openshift-install
// reads the file with sigs.k8s.io/yaml's UnmarshalStrict and stops at the
// first unknown key (AgentConfig.Load in openshift/installer
// pkg/asset/agent/agentconfig/agent_config.go), so rootDeviceHint: for
// rootDeviceHints: fails there instead of installing to the default disk.
// Keys inside networkConfig are nmstate's, checked by the nmstate rules.
func LoadAgentConfig(name string, data []byte) (*AgentConfig, report.Report) {
	if name == "" {
		name = AgentConfigFile
	}
	ac := &AgentConfig{}
	tree, rep, ok := load(name, data, ac, strict)
	if !ok {
		return nil, rep
	}
	ac.tree = tree
	return ac, rep
}

// File is the file name the config was loaded from.
func (ac *AgentConfig) File() string {
	if ac.tree == nil {
		return AgentConfigFile
	}
	return ac.tree.File
}

// NetworkConfigYAML returns the host's networkConfig as YAML text (nil when
// the host has none), for consumers that want bytes rather than nodes.
func (h Host) NetworkConfigYAML() ([]byte, error) {
	if h.NetworkConfig == nil {
		return nil, nil
	}
	return yaml.Marshal(h.NetworkConfig)
}
