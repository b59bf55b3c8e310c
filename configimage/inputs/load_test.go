package inputs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// TestValidSets loads every testdata/<set> pair and expects no entry at all.
func TestValidSets(t *testing.T) {
	want := map[string]struct {
		platform           string
		masters, workers   int64
		hosts, staticHosts int
	}{
		"compact":   {PlatformBareMetal, 3, 0, 3, 0},
		"static":    {PlatformBareMetal, 3, 2, 5, 5},
		"sno":       {PlatformNone, 1, 0, 1, 1},
		"ipv6":      {PlatformBareMetal, 3, 0, 3, 3},
		"dualstack": {PlatformBareMetal, 3, 2, 5, 5},
	}
	for _, dir := range testdataSets(t) {
		set := filepath.Base(dir)
		t.Run(set, func(t *testing.T) {
			w, ok := want[set]
			if !ok {
				t.Fatalf("testdata set %q has no expectation here; add one", set)
			}
			got := loadAndValidate(t, string(readFile(t, filepath.Join(dir, InstallConfigFile))),
				string(readFile(t, filepath.Join(dir, AgentConfigFile))), true)
			if len(got) != 0 {
				t.Fatalf("report:\n%s\nwant no entries", strings.Join(got, "\n"))
			}
			ic, _ := LoadInstallConfig("", readFile(t, filepath.Join(dir, InstallConfigFile)))
			ac, _ := LoadAgentConfig("", readFile(t, filepath.Join(dir, AgentConfigFile)))
			m, _, wk := ic.ReplicaCounts()
			static := 0
			for _, h := range ac.Hosts {
				if h.NetworkConfig != nil {
					static++
				}
			}
			if ic.Platform.Name() != w.platform || m != w.masters || wk != w.workers || len(ac.Hosts) != w.hosts || static != w.staticHosts {
				t.Errorf("got platform %q, %d masters, %d workers, %d hosts (%d static); want %+v",
					ic.Platform.Name(), m, wk, len(ac.Hosts), static, w)
			}
		})
	}
}

func TestLoadKeepsNetworkConfigNodes(t *testing.T) {
	ac, rep := LoadAgentConfig("agent-config.yaml", []byte(baseAC))
	if rep.HasErrors() {
		t.Fatalf("LoadAgentConfig: %v", rep.String())
	}
	nc := ac.Hosts[0].NetworkConfig
	if nc == nil || nc.Kind != yaml.MappingNode {
		t.Fatalf("hosts[0].networkConfig = %v, want a mapping node", nc)
	}
	// The node keeps its position in agent-config.yaml for a later parser.
	if nc.Line != 13 || nc.Column != 5 {
		t.Errorf("networkConfig at %d:%d, want 13:5", nc.Line, nc.Column)
	}
	b, err := ac.Hosts[0].NetworkConfigYAML()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Interfaces []struct {
			Name string `yaml:"name"`
			MAC  string `yaml:"mac-address"`
		} `yaml:"interfaces"`
	}
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatalf("NetworkConfigYAML gave unparsable YAML: %v\n%s", err, b)
	}
	if len(back.Interfaces) != 1 || back.Interfaces[0].MAC != "52:54:00:00:00:01" {
		t.Errorf("NetworkConfigYAML round trip = %+v, want enp1s0 52:54:00:00:00:01", back)
	}
	if b, _ := ac.Hosts[1].NetworkConfigYAML(); b != nil {
		t.Errorf("NetworkConfigYAML without networkConfig = %q, want nil", b)
	}
}

func TestLoadInstallConfigDefaults(t *testing.T) {
	ic, rep := LoadInstallConfig("", []byte("apiVersion: v1\nmetadata:\n  name: x\nplatform:\n  none: {}\n"))
	if rep.HasErrors() {
		t.Fatalf("LoadInstallConfig: %v", rep.String())
	}
	m, a, w := ic.ReplicaCounts()
	got := []any{ic.Networking.NetworkType, ic.Networking.MachineNetwork[0].CIDR, ic.Networking.ClusterNetwork[0],
		ic.Networking.ServiceNetwork, m, a, w, ic.ControlPlane.Name, ic.ControlPlane.Architecture, ic.Compute[0].Hyperthreading, ic.File()}
	want := []any{"OVNKubernetes", "10.0.0.0/16", ClusterNetworkEntry{CIDR: "10.128.0.0/14", HostPrefix: 23},
		[]string{"172.30.0.0/16"}, int64(3), int64(0), int64(3), "master", "amd64", "Enabled", InstallConfigFile}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestLegacyVIPsFolded(t *testing.T) {
	text := apply(t, baseIC, []edit{sub("    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n",
		"    apiVIP: 192.168.111.5\n    ingressVIP: 192.168.111.4\n")})
	ic, rep := LoadInstallConfig("", []byte(text))
	api, ingress := ic.Platform.VIPs()
	if !cmp.Equal(api, []string{"192.168.111.5"}) || !cmp.Equal(ingress, []string{"192.168.111.4"}) {
		t.Errorf("VIPs() = %v, %v; want [192.168.111.5], [192.168.111.4]", api, ingress)
	}
	if rep.HasErrors() || len(rep.Warnings()) != 2 {
		t.Errorf("report:\n%s\nwant two deprecation warnings", rep.String())
	}
}

// TestUnknownKeysFollowTheInstaller: openshift-install reads
// agent-config.yaml strictly (an unknown key is an error) and
// install-config.yaml leniently (a warning; the key is ignored); both are
// placed at the key, with the field path and the nearest known key.
func TestUnknownKeysFollowTheInstaller(t *testing.T) {
	cases := []struct {
		name       string
		load       func(string, []byte) report.Report
		text       string
		want       []report.Entry
		wantBlocks bool
	}{
		{
			name: "agent-config unknown keys are errors",
			load: func(n string, b []byte) report.Report { _, r := LoadAgentConfig(n, b); return r },
			text: apply(t, baseAC, []edit{sub("  role: master\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:00:02\n",
				"  role: master\n  color: blue\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:00:02\n    speed: 10G\n"),
				sub("    deviceName: /dev/sda\n", "    devicename: /dev/sda\n    minSizeGigabyte: 100\n")}),
			want: []report.Entry{
				{File: "agent-config.yaml", Line: 25, Column: 3, Path: "hosts[1].color", Severity: report.Error,
					Message: `unknown field "color"; known fields: bmc, hostname, interfaces, networkConfig, role, rootDeviceHints`},
				{File: "agent-config.yaml", Line: 29, Column: 5, Path: "hosts[1].interfaces[0].speed", Severity: report.Error,
					Message: `unknown field "speed"; known fields: macAddress, name`},
				{File: "agent-config.yaml", Line: 42, Column: 5, Path: "hosts[3].rootDeviceHints.minSizeGigabyte", Severity: report.Error,
					Message: `unknown field "minSizeGigabyte"; did you mean "minSizeGigabytes"?`},
			},
			wantBlocks: true,
		},
		{
			name: "agent-config metadata takes every ObjectMeta key",
			load: func(n string, b []byte) report.Report { _, r := LoadAgentConfig(n, b); return r },
			text: apply(t, baseAC, []edit{sub("  name: ocp\n", "  name: ocp\n  namespace: cluster0\n  creationTimestamp: null\n  labels:\n    a: b\n")}),
		},
		{
			name: "install-config unknown keys are warnings",
			load: func(n string, b []byte) report.Report { _, r := LoadInstallConfig(n, b); return r },
			text: apply(t, baseIC, []edit{sub("  name: master\n", "  name: master\n  replica: 3\n"), add("additionalNTPServers: [pool.ntp.org]\n")}),
			want: []report.Entry{
				{File: "install-config.yaml", Line: 10, Column: 3, Path: "controlPlane.replica", Severity: report.Warning,
					Message: `unknown field, ignored; did you mean "replicas"?`},
				{File: "install-config.yaml", Line: 29, Column: 1, Path: "additionalNTPServers", Severity: report.Warning,
					Message: "unknown field, ignored; known fields: additionalTrustBundle, additionalTrustBundlePolicy, apiVersion, arbiter, " +
						"baseDomain, bootstrapInPlace, capabilities, compute, controlPlane, cpuPartitioningMode, credentialsMode, featureGates, " +
						"featureSet, fips, imageContentSources, imageDigestSources, kind, metadata, networking, operatorPublishingStrategy, " +
						"platform, proxy, publish, pullSecret, sshKey"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep := tc.load("", []byte(tc.text))
			if diff := cmp.Diff(tc.want, rep.Sorted(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if got := rep.Err() != nil; got != tc.wantBlocks {
				t.Errorf("Err() = %v, want an error: %v", rep.Err(), tc.wantBlocks)
			}
		})
	}
}

func TestClosestKey(t *testing.T) {
	known := []string{"additionalNTPSources", "hosts", "interfaces", "macAddress", "networkConfig", "rootDeviceHints",
		"provisioningBridge", "provisioningDHCPRange", "kind"}
	for _, tc := range []struct{ key, want string }{
		{"rootDeviceHint", "rootDeviceHints"},
		{"RootDeviceHints", "rootDeviceHints"},
		{"additionalNTPServers", "additionalNTPSources"},
		{"networkConfiguration", "networkConfig"},
		{"macAddr", "macAddress"},
		{"host", "hosts"},
		{"provisioningHostIP", ""},
		{"x", ""},
		{"color", ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if got := closest(tc.key, known); got != tc.want {
				t.Errorf("closest(%q) = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

func TestSSHKeyFormats(t *testing.T) {
	const rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDRLGMLtD3S17xzzxQdeZyURmhn2UtO9V8PKvDIuoKCJVootr7OKQUb91CmHhVvgd8axq31miK9QMAKJLeSDAbDCC6ZS3Eai06rl0Z9kzugfGpGBdWpMm8ou5x2cRUMyELk0oLpSurTVNHM9tT8WYfT3uMRWm+USB+RNB+yjTSm3w== core@nodezero.test"
	const ecdsa = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBN/a4BEx2Um3iAFOCGz4GCd/RjeJavuAdvL8QrkJMDKkoLMUPszsBkHtfg/YDhbnepIkwfZ/yD+S8XfvbyioAx8= core@nodezero.test"
	const ed = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL2DjTikTFUrp3OYn0YPxjrZODSNNrQ1NDD+ldxYmO4h core@nodezero.test"
	for _, tc := range []struct {
		name, key, want string
		ok              bool
	}{
		{"rsa", rsa, "ssh-rsa", true},
		{"ecdsa", ecdsa, "ecdsa-sha2-nistp256", true},
		{"ed25519", ed, "ssh-ed25519", true},
		{"with-options", `no-pty,from="10.0.0.0/8" ` + ed, "ssh-ed25519", true},
		{"comment-then-key", "# mine\n\n" + rsa + "\n", "ssh-rsa", true},
		{"type-mismatch", "ssh-rsa " + strings.Fields(ed)[1], "", false},
		{"bad-base64", "ssh-ed25519 !!!", "", false},
		{"truncated", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL2D", "", false},
		{"private-key", "-----BEGIN OPENSSH PRIVATE KEY-----", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSSHKey(tc.key)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("parseSSHKey(%q) = %q, %v; want %q, ok=%v", tc.key, got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestCABundle(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mirror CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err := checkCABundle(cert + "\n" + cert); err != nil {
		t.Errorf("checkCABundle(two certs) = %v, want nil", err)
	}
	if err := checkCABundle(strings.Replace(cert, "CERTIFICATE", "PRIVATE KEY", 2)); err == nil {
		t.Errorf("checkCABundle(private key block) = nil, want an error")
	}
	// A valid bundle in install-config loads and validates clean.
	text := baseIC + "additionalTrustBundle: |\n  " + strings.ReplaceAll(strings.TrimSpace(cert), "\n", "\n  ") + "\n"
	if got := loadAndValidate(t, text, baseAC, true); len(got) != 0 {
		t.Errorf("report:\n%s\nwant none", strings.Join(got, "\n"))
	}
}

// TestAliasBomb: a billion-laughs document ends with an error, quickly.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1beta1\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	// Typed fields stop at the first level; kept-verbatim nodes
	// (networkConfig) are walked, so that is where the bomb goes.
	b.WriteString("hosts:\n- networkConfig: {interfaces: *a9}\n")
	ac, rep := LoadAgentConfig("", []byte(b.String()))
	if ac != nil || !rep.HasErrors() || !strings.Contains(rep.String(), "document too large") {
		t.Fatalf("LoadAgentConfig(alias bomb) = %v, %q; want nil and a too-large error", ac, rep.String())
	}
}

// TestValidVariants: configurations the rules must accept.
func TestValidVariants(t *testing.T) {
	noVIPs := "  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n"
	for _, tc := range []struct {
		name   string
		ic, ac []edit
	}{
		{name: "two-nodes-with-arbiter",
			ic: []edit{sub("  replicas: 2\n", "  replicas: 0\n"), sub("  replicas: 3\n", "  replicas: 2\n"), add("arbiter:\n  name: arbiter\n  replicas: 1\n")},
			ac: []edit{sub("- hostname: master-2\n  role: master\n", "- hostname: arbiter-0\n  role: arbiter\n"),
				sub(baseAC[strings.Index(baseAC, "- hostname: worker-0"):], "")}},
		{name: "two-nodes-with-fencing",
			ic: []edit{sub("  replicas: 2\n", "  replicas: 0\n"), sub("  replicas: 3\n", "  replicas: 2\n  fencing:\n    credentials:\n    - hostname: master-0\n      address: redfish+https://192.168.111.10/redfish/v1/Systems/1\n      username: admin\n      password: secret\n"),
				add("featureSet: TechPreviewNoUpgrade\n")},
			ac: []edit{sub(baseAC[strings.Index(baseAC, "- hostname: master-2"):], "")}},
		{name: "user-managed-load-balancer-outside-machine-network",
			ic: []edit{sub("    - 192.168.111.5\n", "    - 10.9.0.5\n"), sub("    - 192.168.111.4\n", "    - 10.9.0.5\n    loadBalancer:\n      type: UserManaged\n")}},
		{name: "external-sno",
			ic: []edit{sub("  replicas: 3\n", "  replicas: 1\n"), sub("  replicas: 2\n", "  replicas: 0\n"), sub(noVIPs, "  external:\n    platformName: oci\n    cloudControllerManager: External\n")},
			ac: []edit{sub(baseAC[strings.Index(baseAC, "- hostname: master-1"):], "")}},
		{name: "vsphere-keeps-other-settings",
			ic: []edit{sub("  baremetal:\n", "  vsphere:\n    vcenters:\n    - server: vcenter.example.com\n      datacenters: [dc1]\n")}},
		{name: "hosts-from-install-config",
			ic: []edit{sub("    ingressVIPs:\n", "    hosts:\n    - name: master-0\n      role: master\n      bootMACAddress: 52:54:00:00:00:01\n      rootDeviceHints:\n        deviceName: /dev/sda\n"+
				"    - name: master-1\n      bootMACAddress: 52:54:00:00:00:02\n    - name: master-2\n      bootMACAddress: 52:54:00:00:00:03\n"+
				"    - name: worker-0\n      role: worker\n      bootMACAddress: 52:54:00:00:00:04\n    - name: worker-1\n      role: worker\n      bootMACAddress: 52:54:00:00:00:05\n    ingressVIPs:\n")},
			ac: []edit{sub(baseAC[strings.Index(baseAC, "hosts:"):], "")}},
		{name: "mixed-case-mac-and-keys",
			ac: []edit{sub("52:54:00:00:00:05", "52-54-00-00-00-0F"), sub("    macAddress: 52:54:00:00:00:04", "    MacAddress: 52:54:00:00:00:04")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := loadAndValidate(t, apply(t, baseIC, tc.ic), apply(t, baseAC, tc.ac), true)
			if len(got) != 0 {
				t.Errorf("report:\n%s\nwant no entries", strings.Join(got, "\n"))
			}
		})
	}
}
