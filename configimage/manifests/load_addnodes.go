package manifests

import (
	"os"

	"github.com/nodezero/nodezero/configimage/report"
)

// LoadAddNodes reads the ZTP manifests of a node config image (day 2,
// docs/reference/abi-on-host.md §1.1): the cluster is installed, so there is
// no cluster-deployment.yaml nor agent-cluster-install.yaml (the Set's
// ClusterDeployment and AgentClusterInstall stay nil) and no extra
// manifests; infraenv.yaml, pull-secret.yaml and cluster-image-set.yaml are
// required, nmstateconfig.yaml optional, with Load's checks and problems.
func LoadAddNodes(manifestsDir string) (*Set, error) {
	l := &loader{mfs: os.DirFS(manifestsDir), mdir: manifestsDir}
	s := &Set{ClusterImageSet: new(ClusterImageSet), InfraEnv: new(InfraEnv), PullSecret: new(Secret)}
	cis := l.single(ClusterImageSetFile, s.ClusterImageSet, TypeMeta{HiveAPIVersion, KindClusterImageSet})
	ie := l.single(InfraEnvFile, s.InfraEnv, TypeMeta{AgentAPIVersion, KindInfraEnv})
	ps := l.single(PullSecretFile, s.PullSecret, TypeMeta{SecretAPIVersion, KindSecret})
	if cis != nil && s.ClusterImageSet.Spec.ReleaseImage == "" {
		cis.fail("spec.releaseImage", "required")
	}
	if ie != nil {
		l.checkInfraEnv(ie, s.InfraEnv)
	}
	if ps != nil {
		l.checkPullSecret(ps, s.PullSecret)
	}
	s.NMStateConfigs = l.nmStateConfigs(NMStateConfigFile)
	if len(l.errs) > 0 {
		return nil, &report.Invalid{Title: invalidTitle, Entries: l.errs}
	}
	s.Warnings = l.warns
	return s, nil
}
