package configimage

import (
	"path/filepath"
	"testing"

	"github.com/nodezero/nodezero/configimage/manifests"
)

var testRelease = Release{Image: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0"}

// TestInputSetsToManifests: every valid input set loads clean, becomes a
// spec and then manifests whose fields say what the inputs say; the
// manifests written load back equal.
func TestInputSetsToManifests(t *testing.T) {
	for _, set := range []string{"compact", "static", "sno", "ipv6", "dualstack"} {
		t.Run(set, func(t *testing.T) {
			dir := filepath.Join("inputs", "testdata", set)
			ic, ac, rep := LoadInputs(dir)
			if rep.HasErrors() {
				t.Fatalf("inputs:\n%s", rep.String())
			}
			spec, err := SpecFrom(ic, ac, testRelease)
			if err != nil {
				t.Fatal(err)
			}
			m, err := manifests.Generate(spec)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			masters, _, workers := ic.ReplicaCounts()
			pr := m.AgentClusterInstall.Spec.ProvisionRequirements
			if pr.ControlPlaneAgents != int(masters) || pr.WorkerAgents != int(workers) {
				t.Errorf("provisionRequirements = %+v, want %d masters %d workers", pr, masters, workers)
			}
			if cd := m.ClusterDeployment.Spec; cd.ClusterName != ic.Metadata.Name || cd.BaseDomain != ic.BaseDomain {
				t.Errorf("ClusterDeployment = %s.%s, want %s.%s", cd.ClusterName, cd.BaseDomain, ic.Metadata.Name, ic.BaseDomain)
			}
			if got := m.ClusterImageSet.Spec.ReleaseImage; got != testRelease.Image {
				t.Errorf("releaseImage = %q", got)
			}
			api, ingress := ic.Platform.VIPs()
			if a := m.AgentClusterInstall.Spec.APIVIPs; len(a) != len(api) || (len(a) > 0 && a[0] != api[0]) {
				t.Errorf("apiVIPs = %v, want %v", a, api)
			}
			if i := m.AgentClusterInstall.Spec.IngressVIPs; len(i) != len(ingress) {
				t.Errorf("ingressVIPs = %v, want %v", i, ingress)
			}
			withNet := 0
			for _, h := range ac.Hosts {
				if h.NetworkConfig != nil {
					withNet++
				}
			}
			if len(m.NMStateConfigs) != withNet {
				t.Errorf("%d NMStateConfigs for %d hosts with networkConfig", len(m.NMStateConfigs), withNet)
			}
			out := t.TempDir()
			if err := manifests.Write(out, m); err != nil {
				t.Fatal(err)
			}
			back, err := manifests.Load(out)
			if err != nil {
				t.Fatalf("Load(Write(manifests)): %v", err)
			}
			if back.AgentClusterInstall.Spec.ProvisionRequirements != pr {
				t.Errorf("provisionRequirements after a round trip = %+v", back.AgentClusterInstall.Spec.ProvisionRequirements)
			}
		})
	}
}

func TestLoadInputsMissingInstallConfig(t *testing.T) {
	_, _, rep := LoadInputs(t.TempDir())
	if !rep.HasErrors() {
		t.Fatal("no error for a directory without install-config.yaml")
	}
}
