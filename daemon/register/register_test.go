package register

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// clusterView is what registration must carry from the manifests into the
// service's cluster.
type clusterView struct {
	Name, BaseDomain, Version, ReleaseImage, CPUArch, SSHKey string
	ControlPlane                                             int64
	HA, Platform, NetworkType                                string
	UserManaged                                              bool
	APIVIPs, IngressVIPs                                     []string
	ClusterNets, ServiceNets, MachineNets                    []string
	HTTPProxy, NoProxy                                       string
}

func viewCluster(c *wire.Cluster) clusterView {
	v := clusterView{
		Name: c.Name, BaseDomain: c.BaseDNSDomain, Version: c.OpenshiftVersion, ReleaseImage: c.OCPReleaseImage,
		CPUArch: string(c.CPUArchitecture), SSHKey: c.SSHPublicKey, ControlPlane: c.ControlPlaneCount,
		HA: string(c.HighAvailabilityMode), HTTPProxy: c.HTTPProxy, NoProxy: c.NoProxy,
	}
	if c.Platform != nil {
		v.Platform = string(c.Platform.Type)
	}
	if c.NetworkType != nil {
		v.NetworkType = string(*c.NetworkType)
	}
	v.UserManaged = c.UserManagedNetworking != nil && *c.UserManagedNetworking
	for _, x := range c.APIVIPs {
		v.APIVIPs = append(v.APIVIPs, string(x.IP))
	}
	for _, x := range c.IngressVIPs {
		v.IngressVIPs = append(v.IngressVIPs, string(x.IP))
	}
	for _, x := range c.ClusterNetworks {
		v.ClusterNets = append(v.ClusterNets, string(x.CIDR)+"/"+itoa(x.HostPrefix))
	}
	for _, x := range c.ServiceNetworks {
		v.ServiceNets = append(v.ServiceNets, string(x.CIDR))
	}
	for _, x := range c.MachineNetworks {
		v.MachineNets = append(v.MachineNets, string(x.CIDR))
	}
	return v
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wantCluster reads the expected values from the manifests themselves.
func wantCluster(set *manifests.Set, platform, ha string, umn bool) clusterView {
	aci := set.AgentClusterInstall.Spec
	v := clusterView{
		Name: set.ClusterDeployment.Spec.ClusterName, BaseDomain: set.ClusterDeployment.Spec.BaseDomain,
		Version: "4.18.0", ReleaseImage: set.ClusterImageSet.Spec.ReleaseImage, CPUArch: "x86_64",
		SSHKey: aci.SSHPublicKey, ControlPlane: int64(aci.ProvisionRequirements.ControlPlaneAgents),
		HA: ha, Platform: platform, NetworkType: aci.Networking.NetworkType, UserManaged: umn,
		APIVIPs: aci.APIVIPs, IngressVIPs: aci.IngressVIPs, ServiceNets: aci.Networking.ServiceNetwork,
	}
	for _, n := range aci.Networking.ClusterNetwork {
		v.ClusterNets = append(v.ClusterNets, n.CIDR+"/"+itoa(int64(n.HostPrefix)))
	}
	for _, n := range aci.Networking.MachineNetwork {
		v.MachineNets = append(v.MachineNets, n.CIDR)
	}
	if aci.Proxy != nil {
		v.HTTPProxy, v.NoProxy = aci.Proxy.HTTPProxy, aci.Proxy.NoProxy
	}
	return v
}

type infraEnvView struct {
	Name, ClusterID, SSHKey, CPUArch, ImageType, NTP string
	HTTPProxy, NoProxy                               string
	NetworkYAML                                      []string
	MACs                                             []string // mac=name per host config
}

func viewInfraEnv(t *testing.T, ie *wire.InfraEnv) infraEnvView {
	t.Helper()
	v := infraEnvView{Name: ie.Name, ClusterID: ie.ClusterID, SSHKey: ie.SSHAuthorizedKey, CPUArch: string(ie.CPUArchitecture),
		ImageType: string(ie.Type), NTP: ie.AdditionalNTPSources}
	if ie.Proxy != nil {
		v.HTTPProxy, v.NoProxy = deref(ie.Proxy.HTTPProxy), deref(ie.Proxy.NoProxy)
	}
	if ie.StaticNetworkConfig != "" {
		var snc []wire.HostStaticNetworkConfig
		if err := json.Unmarshal([]byte(ie.StaticNetworkConfig), &snc); err != nil {
			t.Fatalf("static_network_config %q: %v", ie.StaticNetworkConfig, err)
		}
		for _, c := range snc {
			v.NetworkYAML = append(v.NetworkYAML, c.NetworkYaml)
			for _, m := range c.MACInterfaceMap {
				v.MACs = append(v.MACs, m.MACAddress+"="+m.LogicalNicName)
			}
		}
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func wantInfraEnv(set *manifests.Set, clusterID string) infraEnvView {
	sp := set.InfraEnv.Spec
	v := infraEnvView{Name: set.InfraEnv.Metadata.Name, ClusterID: clusterID, SSHKey: sp.SSHAuthorizedKey, CPUArch: "x86_64",
		ImageType: "full-iso", NTP: strings.Join(sp.AdditionalNTPSources, ",")}
	if sp.Proxy != nil {
		v.HTTPProxy, v.NoProxy = sp.Proxy.HTTPProxy, sp.Proxy.NoProxy
	}
	for _, nm := range set.NMStateConfigs {
		v.NetworkYAML = append(v.NetworkYAML, string(nm.Spec.Config))
		for _, itf := range nm.Spec.Interfaces {
			v.MACs = append(v.MACs, itf.MACAddress+"="+itf.Name)
		}
	}
	return v
}

func TestRegisterTwiceGivesOneClusterAndInfraEnv(t *testing.T) {
	tests := []struct {
		name     string
		spec     manifests.Spec
		platform string
		ha       string
		umn      bool
		// The service derives a single-stack cluster's machine network
		// from its VIPs and hosts, as assisted-service does; with no host
		// yet it holds none.
		derivedMachineNet bool
	}{
		{"compact", compactSpec(), "baremetal", "Full", false, true},
		{"sno", snoSpec(), "none", "None", true, false},
		{"ipv6", ipv6Spec(), "baremetal", "Full", false, true},
		{"dual-stack", dualStackSpec(), "baremetal", "Full", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newService(t)
			ctx := context.Background()
			set := manifestSet(t, tt.spec)

			first, err := RegisterCluster(ctx, s.user, set)
			if err != nil {
				t.Fatalf("RegisterCluster: %v", err)
			}
			second, err := RegisterCluster(ctx, s.user, set)
			if err != nil {
				t.Fatalf("RegisterCluster again: %v", err)
			}
			if second.ID != first.ID {
				t.Errorf("second RegisterCluster: got cluster %s, want the first one %s", second.ID, first.ID)
			}
			clusters, err := s.user.ListClusters(ctx)
			if err != nil || len(clusters) != 1 {
				t.Fatalf("ListClusters: got %d clusters, err %v; want 1", len(clusters), err)
			}
			want := wantCluster(set, tt.platform, tt.ha, tt.umn)
			if tt.derivedMachineNet {
				p, err := ClusterParams(set)
				if err != nil || len(p.MachineNetworks) != 1 || string(p.MachineNetworks[0].CIDR) != want.MachineNets[0] {
					t.Errorf("ClusterParams machine networks: got %s, %v; want %v", jsonText(p.MachineNetworks), err, want.MachineNets)
				}
				want.MachineNets = nil
			}
			if diff := cmp.Diff(want, viewCluster(clusters[0])); diff != "" {
				t.Errorf("cluster differs from the manifests (-want +got):\n%s", diff)
			}

			ie1, err := RegisterInfraEnv(ctx, s.user, set, first.ID)
			if err != nil {
				t.Fatalf("RegisterInfraEnv: %v", err)
			}
			ie2, err := RegisterInfraEnv(ctx, s.user, set, first.ID)
			if err != nil {
				t.Fatalf("RegisterInfraEnv again: %v", err)
			}
			if ie2.ID != ie1.ID {
				t.Errorf("second RegisterInfraEnv: got %s, want the first one %s", ie2.ID, ie1.ID)
			}
			ies, err := s.user.ListInfraEnvs(ctx, "")
			if err != nil || len(ies) != 1 {
				t.Fatalf("ListInfraEnvs: got %d, err %v; want 1", len(ies), err)
			}
			if diff := cmp.Diff(wantInfraEnv(set, first.ID), viewInfraEnv(t, ies[0])); diff != "" {
				t.Errorf("infra-env differs from the manifests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegisterClusterRefusesSeveral(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	for _, name := range []string{"one", "two"} {
		if _, err := s.user.RegisterCluster(ctx, wire.ClusterCreateParams{Name: name, OpenshiftVersion: "4.18", PullSecret: testPullSecret}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := RegisterCluster(ctx, s.user, manifestSet(t, snoSpec()))
	if !errors.Is(err, ErrMultiple) {
		t.Fatalf("RegisterCluster with two clusters registered: got %v, want ErrMultiple", err)
	}
}

func TestRegisterInfraEnvLabelMismatch(t *testing.T) {
	s := newService(t)
	ctx := context.Background()
	set := manifestSet(t, compactSpec())
	set.NMStateConfigs[1].Metadata.Labels = map[string]string{manifests.NMStateLabel: "other"}
	_, err := RegisterInfraEnv(ctx, s.user, set, "")
	if !errors.Is(err, ErrManifests) || !strings.Contains(err.Error(), "infraenv and nmstateconfig ostest-1 labels do not match") {
		t.Fatalf("RegisterInfraEnv: got %v, want the label mismatch", err)
	}
	if ies, _ := s.user.ListInfraEnvs(ctx, ""); len(ies) != 0 {
		t.Errorf("got %d infra-envs registered, want none", len(ies))
	}
}

func TestClusterParamsMapping(t *testing.T) {
	set := manifestSet(t, compactSpec())
	aci := &set.AgentClusterInstall.Spec
	aci.APIVIPs, aci.APIVIP = nil, "192.168.111.5" // singular only: folded into the list
	aci.NTPSources = []string{"a.example.com", "b.example.com"}
	aci.ControlPlane = &manifests.AgentMachinePool{Name: "master", Hyperthreading: "Enabled"}
	aci.Compute = []manifests.AgentMachinePool{{Name: "worker", Hyperthreading: "Disabled"}}
	aci.LoadBalancer = &manifests.LoadBalancer{Type: "UserManaged"}
	aci.DiskEncryption = &manifests.DiskEncryption{Mode: "tang", TangServers: `[{"url":"http://tang"}]`}
	set.AgentClusterInstall.Metadata.Labels = map[string]string{manifests.ClusterConsumerLabel: "fleet-a"}
	p, err := ClusterParams(set)
	if err != nil {
		t.Fatalf("ClusterParams: %v", err)
	}
	got := map[string]any{
		"api_vips": jsonText(p.APIVIPs), "ntp_sources": deref(p.NTPSources), "hyperthreading": string(p.Hyperthreading),
		"load_balancer": string(p.LoadBalancer.Type), "disk_encryption": jsonText(p.DiskEncryption), "tags": deref(p.Tags),
		"vip_dhcp_allocation": *p.VIPDHCPAllocation, "pull_secret": p.PullSecret != "",
	}
	want := map[string]any{
		"api_vips": `[{"ip":"192.168.111.5"}]`, "ntp_sources": "a.example.com,b.example.com", "hyperthreading": "masters",
		"load_balancer": "user-managed", "disk_encryption": `{"enable_on":"none","mode":"tang","tang_servers":"[{\"url\":\"http://tang\"}]"}`,
		"tags": "fleet-a", "vip_dhcp_allocation": false, "pull_secret": true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ClusterParams (-want +got):\n%s", diff)
	}

	aci.APIVIPs, aci.APIVIP = []string{"192.168.111.5"}, "192.168.111.6"
	if _, err := ClusterParams(set); !errors.Is(err, ErrManifests) || !strings.Contains(err.Error(), "apiVIP must be the same as the first element of apiVIPs") {
		t.Errorf("ClusterParams with apiVIP not first of apiVIPs: got %v", err)
	}
}

func TestReleaseInfo(t *testing.T) {
	tests := []struct {
		name, setName, image, ieArch string
		version, arch                string
		err                          bool
	}{
		{"from image set name", "openshift-4.18.3", "quay.io/openshift-release-dev/ocp-release:4.18.3-aarch64", "", "4.18.3", "aarch64", false},
		{"from tag", "release", "quay.io/openshift-release-dev/ocp-release:4.17.0-multi", "", "4.17.0", "multi", false},
		{"registry port, arch from infra-env", "openshift-4.16.1", "registry.local:5000/ocp/release@sha256:abcd", "arm64", "4.16.1", "aarch64", false},
		{"nothing to go by", "openshift-was not built correctly", "registry.local:5000/ocp/release", "", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := &manifests.Set{ClusterImageSet: &manifests.ClusterImageSet{}, InfraEnv: &manifests.InfraEnv{}}
			set.ClusterImageSet.Metadata.Name, set.ClusterImageSet.Spec.ReleaseImage = tt.setName, tt.image
			set.InfraEnv.Spec.CPUArchitecture = tt.ieArch
			v, a, err := ReleaseInfo(set)
			if (err != nil) != tt.err || v != tt.version || a != tt.arch {
				t.Errorf("ReleaseInfo = %q, %q, %v; want %q, %q, error %v", v, a, err, tt.version, tt.arch, tt.err)
			}
		})
	}
}
