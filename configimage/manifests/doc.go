// Package manifests holds the ZTP manifests of the agent-based installer:
// ClusterDeployment, AgentClusterInstall, ClusterImageSet, InfraEnv,
// NMStateConfig and the pull-secret Secret, plus the user's extra
// manifests. Generate builds them from a Spec the way openshift-install
// agent create cluster-manifests does; Write renders them with the
// installer's file names and YAML layout (keys sorted, as sigs.k8s.io/yaml
// writes them); Load reads them back, as node zero does before registering
// the cluster, and reports every problem with its file, line and field
// (report.Entry, placed by report.Walk's tree).
//
// The package is a leaf: the standard library, gopkg.in/yaml.v3 and, of
// this module, configimage/report and internal/atomicfile.
package manifests
