package installfiles

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

func TestInstallConfig(t *testing.T) {
	ptr := func(b bool) *bool { return &b }
	tests := []struct {
		name  string
		edit  func(in *Input)
		check func(t *testing.T, ic map[string]any)
	}{
		{
			name: "baremetal 3+2",
			check: func(t *testing.T, ic map[string]any) {
				want := map[string]any{
					"apiVersion": "v1",
					"baseDomain": "example.com",
					"metadata":   map[string]any{"name": "edge"},
					"networking": map[string]any{
						"networkType":    "OVNKubernetes",
						"clusterNetwork": []any{map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": 23}},
						"serviceNetwork": []any{"172.30.0.0/16"},
						"machineNetwork": []any{map[string]any{"cidr": "192.168.111.0/24"}},
					},
					"controlPlane": map[string]any{"name": "master", "replicas": 3},
					"compute":      []any{map[string]any{"name": "worker", "replicas": 2}},
					"platform": map[string]any{"baremetal": map[string]any{
						"apiVIPs":             []any{"192.168.111.5"},
						"ingressVIPs":         []any{"192.168.111.4"},
						"provisioningNetwork": "Disabled",
						"hosts": []any{
							bmh("node-0", "master", "52:54:00:00:00:00"),
							bmh("node-1", "master", "52:54:00:00:00:01"),
							bmh("node-2", "master", "52:54:00:00:00:02"),
							bmh("node-3", "worker", "52:54:00:00:00:03"),
							bmh("node-4", "worker", "52:54:00:00:00:04"),
						},
					}},
					"pullSecret": testPullSecret,
					"sshKey":     testSSHKey,
				}
				if d := cmp.Diff(want, ic); d != "" {
					t.Errorf("install-config (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "user-managed networking is platform none",
			edit: func(in *Input) { in.Cluster.UserManagedNetworking = ptr(true) },
			check: func(t *testing.T, ic map[string]any) {
				if d := cmp.Diff(map[string]any{"none": map[string]any{}}, ic["platform"]); d != "" {
					t.Errorf("platform (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "platform none ignores the VIPs",
			edit: func(in *Input) { in.Cluster.Platform.Type = wire.PlatformTypeNone },
			check: func(t *testing.T, ic map[string]any) {
				if d := cmp.Diff(map[string]any{"none": map[string]any{}}, ic["platform"]); d != "" {
					t.Errorf("platform (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "external",
			edit: func(in *Input) {
				name, ccm := "oci", wire.PlatformExternalCloudControllerManager("External")
				in.Cluster.Platform = &wire.Platform{Type: wire.PlatformTypeExternal, External: &wire.PlatformExternal{PlatformName: &name, CloudControllerManager: &ccm}}
			},
			check: func(t *testing.T, ic map[string]any) {
				want := map[string]any{"external": map[string]any{"platformName": "oci", "cloudControllerManager": "External"}}
				if d := cmp.Diff(want, ic["platform"]); d != "" {
					t.Errorf("platform (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "overrides merge objects and replace the rest",
			edit: func(in *Input) {
				in.Cluster.InstallConfigOverrides = `{"networking":{"networkType":"OpenShiftSDN"},"fips":true,` +
					`"compute":[{"name":"worker","replicas":5,"hyperthreading":"Disabled"}],` +
					`"platform":{"baremetal":{"provisioningNetwork":"Managed","hosts":null}},"sshKey":null,"capabilities":{"baselineCapabilitySet":"None"}}`
			},
			check: func(t *testing.T, ic map[string]any) {
				net := ic["networking"].(map[string]any)
				if net["networkType"] != "OpenShiftSDN" || net["serviceNetwork"] == nil || net["clusterNetwork"] == nil {
					t.Errorf("networking = %v, want networkType replaced and the networks kept", net)
				}
				if ic["fips"] != true {
					t.Errorf("fips = %v, want true", ic["fips"])
				}
				want := []any{map[string]any{"name": "worker", "replicas": 5, "hyperthreading": "Disabled"}}
				if d := cmp.Diff(want, ic["compute"]); d != "" {
					t.Errorf("compute (-want +got):\n%s", d)
				}
				bm := ic["platform"].(map[string]any)["baremetal"].(map[string]any)
				if bm["provisioningNetwork"] != "Managed" || bm["apiVIPs"] == nil || bm["hosts"] != nil {
					t.Errorf("baremetal = %v, want provisioningNetwork replaced, VIPs kept, hosts removed", bm)
				}
				if _, ok := ic["sshKey"]; ok {
					t.Errorf("sshKey = %v, want removed by null", ic["sshKey"])
				}
				if d := cmp.Diff(map[string]any{"baselineCapabilitySet": "None"}, ic["capabilities"]); d != "" {
					t.Errorf("capabilities (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "overrides supply a missing base domain",
			edit: func(in *Input) {
				in.Cluster.BaseDNSDomain = ""
				in.Cluster.InstallConfigOverrides = `{"baseDomain":"other.example"}`
			},
			check: func(t *testing.T, ic map[string]any) {
				if ic["baseDomain"] != "other.example" {
					t.Errorf("baseDomain = %v, want other.example", ic["baseDomain"])
				}
			},
		},
		{
			name: "proxy with the cluster's own networks in noProxy",
			edit: func(in *Input) {
				in.Cluster.HTTPProxy = "http://proxy.example:3128"
				in.Cluster.NoProxy = "internal.example, 10.0.0.0/8"
			},
			check: func(t *testing.T, ic map[string]any) {
				want := map[string]any{
					"httpProxy": "http://proxy.example:3128",
					"noProxy":   "internal.example,10.0.0.0/8,.edge.example.com,10.128.0.0/14,172.30.0.0/16,192.168.111.0/24",
				}
				if d := cmp.Diff(want, ic["proxy"]); d != "" {
					t.Errorf("proxy (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "trust bundles of overrides and infra env are joined",
			edit: func(in *Input) {
				in.AdditionalTrustBundle = testBundle
				in.Cluster.InstallConfigOverrides = `{"additionalTrustBundle":"-----BEGIN CERTIFICATE-----\nMIIBover\n-----END CERTIFICATE-----"}`
			},
			check: func(t *testing.T, ic map[string]any) {
				want := "-----BEGIN CERTIFICATE-----\nMIIBover\n-----END CERTIFICATE-----\n" + testBundle
				if ic["additionalTrustBundle"] != want {
					t.Errorf("additionalTrustBundle = %q, want %q", ic["additionalTrustBundle"], want)
				}
			},
		},
		{
			name: "legacy single CIDR fields and hyperthreading",
			edit: func(in *Input) {
				c := in.Cluster
				c.ClusterNetworks, c.ServiceNetworks, c.MachineNetworks = nil, nil, nil
				c.ClusterNetworkCIDR, c.ClusterNetworkHostPrefix = "10.132.0.0/14", 24
				c.ServiceNetworkCIDR, c.MachineNetworkCIDR = "172.31.0.0/16", "192.168.111.0/24"
				c.Hyperthreading = wire.ClusterHyperthreadingMasters
			},
			check: func(t *testing.T, ic map[string]any) {
				net := ic["networking"].(map[string]any)
				if d := cmp.Diff([]any{map[string]any{"cidr": "10.132.0.0/14", "hostPrefix": 24}}, net["clusterNetwork"]); d != "" {
					t.Errorf("clusterNetwork (-want +got):\n%s", d)
				}
				if got := ic["controlPlane"].(map[string]any)["hyperthreading"]; got != "Enabled" {
					t.Errorf("controlPlane.hyperthreading = %v, want Enabled", got)
				}
				if got := ic["compute"].([]any)[0].(map[string]any)["hyperthreading"]; got != "Disabled" {
					t.Errorf("compute[0].hyperthreading = %v, want Disabled", got)
				}
			},
		},
		{
			name: "arbiter pool",
			edit: func(in *Input) { in.Hosts = append(testHosts(2, 0), testHost(2, wire.HostRoleArbiter)) },
			check: func(t *testing.T, ic map[string]any) {
				if d := cmp.Diff(map[string]any{"name": "arbiter", "replicas": 1}, ic["arbiter"]); d != "" {
					t.Errorf("arbiter (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "auto-assign takes the suggested role",
			edit: func(in *Input) {
				in.Hosts[4].Role, in.Hosts[4].SuggestedRole = wire.HostRoleAutoAssign, wire.HostRoleMaster
			},
			check: func(t *testing.T, ic map[string]any) {
				if got := ic["controlPlane"].(map[string]any)["replicas"]; got != 4 {
					t.Errorf("controlPlane.replicas = %v, want 4", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput(3, 2)
			if tt.edit != nil {
				tt.edit(&in)
			}
			b, err := InstallConfig(in)
			if err != nil {
				t.Fatalf("InstallConfig: %v", err)
			}
			if !bytes.HasPrefix(b, []byte("apiVersion: v1\nbaseDomain: ")) {
				t.Errorf("install-config does not start with apiVersion, baseDomain:\n%s", b)
			}
			tt.check(t, parseYAML(t, b))
		})
	}
}

func bmh(name, role, mac string) map[string]any {
	return map[string]any{"name": name, "role": role, "bootMACAddress": mac, "bootMode": "UEFI"}
}

func TestInstallConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(in *Input)
		want []string
	}{
		{
			name: "nothing named",
			edit: func(in *Input) {
				in.Cluster.Name, in.Cluster.BaseDNSDomain, in.PullSecret = "", "", ""
			},
			want: []string{"metadata.name", "baseDomain", "pullSecret"},
		},
		{
			name: "baremetal without VIPs or machine network",
			edit: func(in *Input) {
				in.Cluster.APIVIPs, in.Cluster.IngressVIPs, in.Cluster.MachineNetworks = nil, nil, nil
			},
			want: []string{"platform.baremetal.apiVIPs", "platform.baremetal.ingressVIPs", "networking.machineNetwork"},
		},
		{
			name: "no networks",
			edit: func(in *Input) { in.Cluster.ClusterNetworks, in.Cluster.ServiceNetworks = nil, nil },
			want: []string{"networking.clusterNetwork", "networking.serviceNetwork"},
		},
		{
			name: "no masters",
			edit: func(in *Input) { in.Hosts = testHosts(0, 2) },
			want: []string{"controlPlane.replicas"},
		},
		{
			name: "overrides not an object",
			edit: func(in *Input) { in.Cluster.InstallConfigOverrides = `["fips"]` },
			want: []string{"install_config_overrides"},
		},
		{
			name: "overrides with trailing data",
			edit: func(in *Input) { in.Cluster.InstallConfigOverrides = `{"fips":true} {}` },
			want: []string{"install_config_overrides"},
		},
		{
			name: "overrides remove a required field",
			edit: func(in *Input) { in.Cluster.InstallConfigOverrides = `{"pullSecret":null}` },
			want: []string{"pullSecret"},
		},
		{
			name: "pull secret not JSON",
			edit: func(in *Input) { in.PullSecret = "{auths" },
			want: []string{"pullSecret"},
		},
		{
			name: "unsupported platform",
			edit: func(in *Input) { in.Cluster.Platform.Type = wire.PlatformTypeVsphere },
			want: []string{"platform"},
		},
		{
			name: "host without a name or a NIC in the machine network",
			edit: func(in *Input) {
				in.Hosts[1].RequestedHostname = ""
				in.Hosts[1].Inventory = `{"interfaces":[{"mac_address":"52:54:00:00:00:01","ipv4_addresses":["10.0.0.2/24"]}]}`
			},
			want: []string{"hosts[00000000-0000-0000-0000-000000000001].hostname", "platform.baremetal.hosts[00000000-0000-0000-0000-000000000001]"},
		},
		{
			name: "bad roles and ids",
			edit: func(in *Input) {
				in.Hosts[0].Role, in.Hosts[0].SuggestedRole = wire.HostRoleAutoAssign, ""
				in.Hosts[1].ID = ""
				in.Hosts[2].ID = in.Hosts[3].ID
			},
			want: []string{"hosts[00000000-0000-0000-0000-000000000000].role", "hosts[1].id", "hosts[00000000-0000-0000-0000-000000000003]"},
		},
		{
			name: "bad trust bundle",
			edit: func(in *Input) { in.AdditionalTrustBundle = "not a certificate" },
			want: []string{"additionalTrustBundle"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := testInput(3, 2)
			tt.edit(&in)
			_, err := InstallConfig(in)
			if err == nil {
				t.Fatal("InstallConfig succeeded, want an error")
			}
			got := inputFields(err)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("fields of %q (-want +got):\n%s", err, d)
			}
			for _, f := range tt.want {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not name %s", err, f)
				}
			}
		})
	}
}

func TestInstallConfigControlPlaneCountWithoutHosts(t *testing.T) {
	in := testInput(0, 0)
	in.Cluster.ControlPlaneCount = 3
	b, err := InstallConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseYAML(t, b)["controlPlane"].(map[string]any)["replicas"]; got != 3 {
		t.Errorf("controlPlane.replicas = %v, want 3 from control_plane_count", got)
	}
}
