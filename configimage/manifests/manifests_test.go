package manifests

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const testPullSecret = `{"auths": {"quay.io": {"auth": "c3VwZXItc2VjcmV0Cg=="}}}`

const testSSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx5rJmS7r9Vw1q0J9l2o4xS9p0x user@example"

func nmstate(mac, addr string, prefix int, gw string) string {
	return `interfaces:
- name: eth0
  type: ethernet
  state: up
  mac-address: ` + mac + `
  ipv4:
    enabled: true
    dhcp: false
    address:
    - ip: ` + addr + `
      prefix-length: ` + itoa(prefix) + `
dns-resolver:
  config:
    server:
    - 192.168.111.1
routes:
  config:
  - destination: 0.0.0.0/0
    next-hop-address: ` + gw + `
    next-hop-interface: eth0
    table-id: 254
`
}

func itoa(n int) string { return strconv.Itoa(n) }

// compactSpec is three control-plane hosts and two workers on baremetal
// with a proxy, static networking for every host, install-config
// overrides and one extra manifest.
func compactSpec() Spec {
	s := Spec{
		ClusterName: "ostest", BaseDomain: "test.metalkube.org",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 3, WorkerAgents: 2,
		PlatformType: "baremetal", APIVIPs: []string{"192.168.111.5"}, IngressVIPs: []string{"192.168.111.4"},
		ClusterNetworks: []ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks: []string{"172.30.0.0/16"},
		MachineNetworks: []string{"192.168.111.0/24"},
		NetworkType:     "OVNKubernetes",
		SSHKey:          testSSHKey + "\n",
		PullSecret:      testPullSecret,
		Proxy: &Proxy{
			HTTPProxy: "http://192.168.111.1:8215", HTTPSProxy: "http://192.168.111.1:8215",
			NoProxy: "172.22.0.0/24,virthost.ostest.test.metalkube.org",
		},
		RendezvousIP:           "192.168.111.80",
		AdditionalNTPSources:   []string{"0.rhel.pool.ntp.org", "192.168.111.1"},
		CPUArchitecture:        "amd64",
		InstallConfigOverrides: `{"fips":true,"networking":{"networkType":"OVNKubernetes"}}`,
		ExtraManifests: []ExtraManifest{{Name: "99-chrony.yaml", Data: []byte(
			"apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata:\n  name: 99-chrony\n")}},
	}
	for i, name := range []string{"master-0", "master-1", "master-2", "worker-0", "worker-1"} {
		role := "master"
		if i >= 3 {
			role = "worker"
		}
		mac := "52:54:00:aa:bb:0" + string(rune('1'+i))
		s.Hosts = append(s.Hosts, Host{
			Hostname: name, Role: role,
			Interfaces:    []Interface{{Name: "eth0", MACAddress: mac}},
			NetworkConfig: nmstate(mac, "192.168.111."+itoa(80+i), 24, "192.168.111.1"),
		})
	}
	return s
}

// snoSpec is a single node on platform none, without static networking.
func snoSpec() Spec {
	return Spec{
		ClusterName: "sno", BaseDomain: "example.com",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 1, PlatformType: "none",
		ClusterNetworks: []ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks: []string{"172.30.0.0/16"}, MachineNetworks: []string{"192.168.111.0/24"},
		SSHKey: testSSHKey, PullSecret: testPullSecret,
	}
}

// ipv6Spec is a compact IPv6-only cluster.
func ipv6Spec() Spec {
	return Spec{
		ClusterName: "v6", BaseDomain: "example.com",
		ReleaseImage: "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", Version: "4.18.0",
		ControlPlaneAgents: 3, PlatformType: "BareMetal",
		APIVIPs: []string{"fd2e:6f44:5dd8:c956::5"}, IngressVIPs: []string{"fd2e:6f44:5dd8:c956::4"},
		ClusterNetworks: []ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}},
		ServiceNetworks: []string{"fd02::/112"}, MachineNetworks: []string{"fd2e:6f44:5dd8:c956::/120"},
		SSHKey: testSSHKey, PullSecret: testPullSecret,
		Hosts: []Host{{Hostname: "master-0", Interfaces: []Interface{{Name: "eth0", MACAddress: "52:54:00:cc:dd:01"}},
			NetworkConfig: "interfaces:\n- name: eth0\n  type: ethernet\n  state: up\n  ipv6:\n    enabled: true\n    address:\n    - ip: fd2e:6f44:5dd8:c956::50\n      prefix-length: 120\n"}},
	}
}

// dualStackSpec is a compact dual-stack cluster, IPv4 first.
func dualStackSpec() Spec {
	s := ipv6Spec()
	s.ClusterName = "dual"
	s.APIVIPs = []string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}
	s.IngressVIPs = []string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"}
	s.ClusterNetworks = []ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}, {CIDR: "fd01::/48", HostPrefix: 64}}
	s.ServiceNetworks = []string{"172.30.0.0/16", "fd02::/112"}
	s.MachineNetworks = []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/120"}
	return s
}

func specs() map[string]Spec {
	return map[string]Spec{"compact": compactSpec(), "sno": snoSpec(), "ipv6": ipv6Spec(), "dual-stack": dualStackSpec()}
}

func generate(t *testing.T, s Spec) *Set {
	t.Helper()
	set, err := Generate(s)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return set
}

func TestGolden(t *testing.T) {
	set := generate(t, compactSpec())
	files, err := set.Files()
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	golden := filepath.Join("testdata", "golden-compact")
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		path := filepath.Join(golden, filepath.FromSlash(f.Name))
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read golden (run with -update to create): %v", err)
		}
		if diff := cmp.Diff(string(want), string(f.Data)); diff != "" {
			t.Errorf("%s differs from %s (-want +got):\n%s", f.Name, path, diff)
		}
	}
	wantNames := []string{
		"cluster-manifests/agent-cluster-install.yaml", "cluster-manifests/cluster-deployment.yaml",
		"cluster-manifests/cluster-image-set.yaml", "cluster-manifests/infraenv.yaml",
		"cluster-manifests/pull-secret.yaml", "cluster-manifests/nmstateconfig.yaml", "openshift/99-chrony.yaml",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("file names (-want +got):\n%s", diff)
	}
}

// TestInstallerLayout renders the installer's own single-node example and
// compares byte for byte with what the installer writes.
func TestInstallerLayout(t *testing.T) {
	key := "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQDK6UTEydcEKzuNdPaofn8Z2DwgHqdcionLZBiPf/zIRNco++etLsat7Avv7yt04DINQd5zjxIFgG8jblaUB5E5C9ClUcMwb52GO0ay2Y9v1uBv1a4WhI3peKktAzYNk0EBMQlJtXPjRMrC9ylBPh+DsBHMu+KmDnfk7PIwyN4efC8k5kSRuPWoNdme1rz2+umU8FSmaWTHIajrbspf4GQbsntA5kuKEtDbfoNCU97o2KrRnUbeg3a8hwSjfh3u6MhlnGcg5K2Ij+zivEsWGCLKYUtE1ErqwfIzwWmJ6jnV66XCQGHf4Q1iIxqF7s2a1q24cgG2Z/iDXfqXrCIfy4P7b/Ztak3bdT9jfAdVZtdO5/r7I+O5hYhF86ayFlDWzZWP/ByiSb+q4CQbfVgK3BMmiAv2MqLHdhesmD/SmIcoOWUF6rFmRKZVFFpKpt5ATNTgUJ3JRowoXrrDruVXClUGRiCS6Zabd1rZ3VmTchaPJwtzQMdfIWISXj+Ig+C4UK0="
	set := generate(t, Spec{
		ClusterName: "ostest", BaseDomain: "test.metalkube.org",
		ReleaseImage: "$RELEASE_IMAGE", Version: "was not built correctly",
		ControlPlaneAgents: 1, PlatformType: "none",
		ClusterNetworks: []ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks: []string{"172.30.0.0/16"}, MachineNetworks: []string{"192.168.111.0/24"},
		NetworkType: "OVNKubernetes", SSHKey: key, CPUArchitecture: "amd64",
		PullSecret: `{"auths": {"quay.io": {"auth": "c3VwZXItc2VjcmV0Cg=="}}}`,
	})
	files, err := set.Files()
	if err != nil {
		t.Fatalf("Files: %v", err)
	}
	if len(files) != 5 {
		t.Fatalf("got %d files, want 5", len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(filepath.Join("testdata", "installer-sno", filepath.Base(f.Name)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(f.Data)); diff != "" {
			t.Errorf("%s (-installer +ours):\n%s", f.Name, diff)
		}
	}
}

func TestWriteLoadRoundTrip(t *testing.T) {
	for name, spec := range specs() {
		t.Run(name, func(t *testing.T) {
			want := generate(t, spec)
			dir := t.TempDir()
			if err := Write(dir, want); err != nil {
				t.Fatalf("Write: %v", err)
			}
			got, err := Load(dir)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load(Write(set)) differs (-want +got):\n%s", diff)
			}
			// Writing what was loaded gives the same bytes.
			dir2 := t.TempDir()
			if err := Write(dir2, got); err != nil {
				t.Fatalf("Write again: %v", err)
			}
			compareDirs(t, dir, dir2)
		})
	}
}

func compareDirs(t *testing.T, a, b string) {
	t.Helper()
	err := filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Errorf("%s: missing in second write: %v", rel, err)
			return nil
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s: second write differs:\n%s", rel, cmp.Diff(string(x), string(y)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGenerateMapping(t *testing.T) {
	set := generate(t, compactSpec())
	aci := set.AgentClusterInstall.Spec
	if aci.APIVIP != "192.168.111.5" || aci.IngressVIP != "192.168.111.4" {
		t.Errorf("singular VIPs: got %q %q, want the first plural values", aci.APIVIP, aci.IngressVIP)
	}
	if got, want := aci.Proxy.NoProxy, "172.22.0.0/24,virthost.ostest.test.metalkube.org,192.168.111.0/24"; got != want {
		t.Errorf("noProxy: got %q, want %q (rendezvous machine network appended)", got, want)
	}
	if got := set.InfraEnv.Spec.CPUArchitecture; got != "x86_64" {
		t.Errorf("cpuArchitecture: got %q, want x86_64", got)
	}
	if got := aci.SSHPublicKey; got != testSSHKey {
		t.Errorf("sshPublicKey: got %q, want the key without its newline", got)
	}
	if aci.Networking.UserManagedNetworking != nil {
		t.Errorf("baremetal userManagedNetworking: got %v, want unset", *aci.Networking.UserManagedNetworking)
	}
	if got, want := len(set.NMStateConfigs), 5; got != want {
		t.Fatalf("NMStateConfigs: got %d, want %d", got, want)
	}
	nm := set.NMStateConfigs[3]
	if nm.Metadata.Name != "ostest-3" || nm.Metadata.Labels[NMStateLabel] != "ostest" {
		t.Errorf("NMStateConfig 3 metadata: got %+v", nm.Metadata)
	}
	if !strings.HasPrefix(string(nm.Spec.Config), "dns-resolver:\n") {
		t.Errorf("nmstate config not in canonical (sorted) form:\n%s", nm.Spec.Config)
	}
	sno := generate(t, snoSpec()).AgentClusterInstall.Spec
	if sno.PlatformType != PlatformNone || sno.Networking.UserManagedNetworking == nil || !*sno.Networking.UserManagedNetworking {
		t.Errorf("SNO: got platform %q umn %v, want None and true", sno.PlatformType, sno.Networking.UserManagedNetworking)
	}
}

func TestGenerateErrors(t *testing.T) {
	_, err := Generate(Spec{PlatformType: "openstack", PullSecret: "{", InstallConfigOverrides: "{"})
	if !errors.Is(err, ErrSpec) {
		t.Fatalf("Generate(bad spec): got %v, want ErrSpec", err)
	}
	for _, want := range []string{"cluster name is required", "base domain is required", "release image is required",
		"version is required", "control plane agents must be at least 1", `platform type "openstack"`,
		"install-config overrides are not valid JSON", "pull secret:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Generate error %q: missing %q", err, want)
		}
	}
}

// TestNetConfigRefusesWhatJSONCannotHold: repeated and non-scalar keys, at
// any depth, are refused with their line, as the CRD's JSON form cannot
// hold them.
func TestNetConfigRefusesWhatJSONCannotHold(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"interfaces:\n- name: eth0\n  name: eth1\n", `line 3: nmstate config: duplicate key "name"; it is already defined at line 2`},
		{"interfaces:\n- {[a]: b}\n", "line 2: nmstate config: mapping keys must be strings, found a list"},
	} {
		if got, err := NetConfig(tc.doc).Canonical(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Canonical(%q) = %q, %v; want an error with %q", tc.doc, got, err, tc.want)
		}
	}
	if got, err := NetConfig("b: 1\na: {<<: {x: 1}}\n").Canonical(); err != nil || !strings.HasPrefix(string(got), "a:") {
		t.Errorf("Canonical(merge key) = %q, %v; want it kept, keys sorted", got, err)
	}
}
