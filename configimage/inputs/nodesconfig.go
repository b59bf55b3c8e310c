package inputs

import (
	"fmt"
	"net/url"

	"github.com/nodezero/nodezero/configimage/report"
)

// NodesConfigFile is the file oc adm node-image create reads the hosts to
// add to an installed cluster from.
const NodesConfigFile = "nodes-config.yaml"

// NodesConfig is nodes-config.yaml, the input of day 2 (openshift/installer
// pkg/asset/agent/joiner/addnodesconfig.go, Config): the hosts to add, with
// agent-config.yaml's host schema, and what overrides the cluster's own
// values. apiVersion, kind and metadata are accepted and not checked: the
// installer's Config inlines them (TypeMeta, ObjectMeta) without a rule.
type NodesConfig struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   ObjectMeta `yaml:"metadata"`
	// CPUArchitecture is the added hosts' architecture; "" takes the
	// cluster's (a control-plane Node's).
	CPUArchitecture string `yaml:"cpuArchitecture"`
	// SSHKey replaces the cluster's key for the added hosts' discovery
	// environment.
	SSHKey string `yaml:"sshKey"`
	// BootArtifactsBaseURL is accepted and checked as a URL, and unused:
	// it only matters to PXE artifacts, which nodezero does not make for
	// day 2 (a node config image needs none).
	BootArtifactsBaseURL string `yaml:"bootArtifactsBaseURL"`
	Hosts                []Host `yaml:"hosts"`

	tree *report.Tree
}

// NodeRoles are the roles a day-2 host may have: assisted adds hosts to an
// installed cluster as workers only (AddToExistingClusterHost); empty means
// worker.
var NodeRoles = []string{"worker"}

// nodeArchitectures are the architectures nodes-config.yaml may name: Go's
// names, as Nodes report them and the installer's types spell them, and
// the RPM names of x86_64 and aarch64, which assisted and the InfraEnv use.
var nodeArchitectures = []string{"aarch64", "amd64", "arm64", "ppc64le", "s390x", "x86_64"}

// GoArch turns an architecture as nodes-config.yaml or a Node spells it
// into Go's name (x86_64 → amd64, aarch64 → arm64); others pass through.
func GoArch(arch string) string {
	switch arch {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	}
	return arch
}

// LoadNodesConfig decodes nodes-config.yaml. name is the file name used in
// report entries. The config is nil when the file cannot be parsed at all.
//
// It is read as strictly as agent-config.yaml, whose hosts it holds:
// unknown keys are errors with a "did you mean" hint. (The installer
// reads this file with sigs.k8s.io/yaml's lenient Unmarshal, which drops
// a misspelt rootDeviceHint: and installs on the default disk; the hosts
// it lists are agent-config hosts, and agent-config.yaml refuses it.)
func LoadNodesConfig(name string, data []byte) (*NodesConfig, report.Report) {
	if name == "" {
		name = NodesConfigFile
	}
	nc := &NodesConfig{}
	tree, rep, ok := load(name, data, nc, strict)
	if !ok {
		return nil, rep
	}
	nc.tree = tree
	return nc, rep
}

// File is the file name the config was loaded from.
func (nc *NodesConfig) File() string {
	if nc.tree == nil {
		return NodesConfigFile
	}
	return nc.tree.File
}

// ValidateNodesConfig applies the rules of nodes-config.yaml: at least one
// host (AddNodesConfig.validateHosts), a valid sshKey (validateSSHKey),
// and every agent-config host rule with the same messages (MACs,
// hostnames, duplicates, root device hints, nmstate), roles limited to
// NodeRoles. Problems carry nodes-config.yaml's positions.
func ValidateNodesConfig(nc *NodesConfig) report.Report {
	v := &validator{nc: nc}
	v.nodesConfig()
	v.hosts()
	return v.rep
}

func (v *validator) ncErr(path, msg string) {
	v.rep.Entries = append(v.rep.Entries, entryAt(v.nc.tree, NodesConfigFile, path, report.Error, msg))
}

func (v *validator) ncAt(path string, line, col int, sev report.Severity, msg string) {
	v.rep.Entries = append(v.rep.Entries, at(entryAt(v.nc.tree, NodesConfigFile, path, sev, msg), line, col))
}

// nodesConfig checks nodes-config.yaml's own fields.
func (v *validator) nodesConfig() {
	nc := v.nc
	if len(nc.Hosts) == 0 {
		v.ncErr("hosts", msgRequired("at least one host must be defined"))
	}
	if nc.SSHKey != "" {
		if _, err := parseSSHKey(nc.SSHKey); err != nil {
			v.ncErr("sshKey", msgInvalid(truncate(nc.SSHKey), err.Error()))
		}
	}
	if a := nc.CPUArchitecture; a != "" && !contains(nodeArchitectures, a) {
		v.ncErr("cpuArchitecture", msgNotSupported(a, nodeArchitectures))
	}
	if u := nc.BootArtifactsBaseURL; u != "" {
		if err := checkURI(u); err != nil {
			v.ncErr("bootArtifactsBaseURL", msgInvalid(u, err.Error()))
		} else if p, _ := url.Parse(u); p.Scheme != "http" && p.Scheme != "https" {
			v.ncErr("bootArtifactsBaseURL", msgNotSupported(p.Scheme, []string{"http", "https"}))
		}
	}
}

// CheckArchitecture compares cpuArchitecture with the installed cluster's
// (a control-plane Node's status.nodeInfo.architecture, Go's name) and
// returns the architecture the added hosts have. nodezero adds hosts of the
// cluster's own architecture only: the hosts install the release the
// cluster runs, and a factory image carries one architecture's payload.
// (oc adm node-image create lets cpuArchitecture override the cluster's, for
// multi-architecture clusters.) Either may be empty; both empty is an
// error, as the installer's "unable to determine target cluster
// architecture".
func (nc *NodesConfig) CheckArchitecture(cluster string) (string, report.Report) {
	v := &validator{nc: nc}
	own := GoArch(nc.CPUArchitecture)
	switch {
	case own == "" && cluster == "":
		v.ncErr("cpuArchitecture", msgRequired("the cluster's architecture is unknown (no control-plane Node, labelled node-role.kubernetes.io/master, reports status.nodeInfo.architecture); name it here"))
	case own == "":
		return GoArch(cluster), v.rep
	case cluster != "" && own != GoArch(cluster):
		v.ncErr("cpuArchitecture", msgInvalid(nc.CPUArchitecture, fmt.Sprintf(
			"the cluster's control-plane Nodes are %s (status.nodeInfo.architecture); hosts added to it must be %s too", GoArch(cluster), GoArch(cluster))))
	}
	return own, v.rep
}
