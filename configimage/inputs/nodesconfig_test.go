package inputs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// baseNC is a valid nodes-config.yaml adding two workers, one with a
// static network; table cases edit it. Line numbers matter: hosts[1]
// starts at line 20, cpuArchitecture is line 24, sshKey 25.
const baseNC = `hosts:
- hostname: extra-worker-0
  role: worker
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:01:01
  rootDeviceHints:
    deviceName: /dev/vda
  networkConfig:
    interfaces:
    - name: enp1s0
      type: ethernet
      state: up
      mac-address: 52:54:00:00:01:01
      ipv4:
        enabled: true
        address:
        - ip: 192.168.111.90
          prefix-length: 24
- hostname: extra-worker-1
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:01:02
cpuArchitecture: x86_64
sshKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL2DjTikTFUrp3OYn0YPxjrZODSNNrQ1NDD+ldxYmO4h core@nodezero.test
`

func loadNodes(t *testing.T, text string) []string {
	t.Helper()
	nc, rep := LoadNodesConfig(NodesConfigFile, []byte(text))
	if nc != nil {
		rep.Merge(ValidateNodesConfig(nc))
	}
	return rep.Lines()
}

func TestLoadNodesConfig(t *testing.T) {
	nc, rep := LoadNodesConfig("", []byte(baseNC))
	rep.Merge(ValidateNodesConfig(nc))
	if len(rep.Entries) != 0 {
		t.Fatalf("baseNC: got report\n%s\nwant none", rep.String())
	}
	if got, want := nc.File(), NodesConfigFile; got != want {
		t.Errorf("File() = %q, want %q", got, want)
	}
	type host struct{ name, role, mac, disk string }
	var got []host
	for _, h := range nc.Hosts {
		got = append(got, host{h.Hostname, h.Role, h.Interfaces[0].MacAddress, h.RootDeviceHints.DeviceName})
	}
	want := []host{{"extra-worker-0", "worker", "52:54:00:00:01:01", "/dev/vda"}, {"extra-worker-1", "", "52:54:00:00:01:02", ""}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(host{})); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
	if nc.CPUArchitecture != "x86_64" || GoArch(nc.CPUArchitecture) != "amd64" {
		t.Errorf("cpuArchitecture = %q (GoArch %q), want x86_64 (amd64)", nc.CPUArchitecture, GoArch(nc.CPUArchitecture))
	}
	if nc.Hosts[0].NetworkConfig == nil || nc.Hosts[1].NetworkConfig != nil {
		t.Errorf("networkConfig kept for host 0 only: got %v, %v", nc.Hosts[0].NetworkConfig != nil, nc.Hosts[1].NetworkConfig != nil)
	}
}

// nodesConfigCases are edits of baseNC with the exact report lines they
// must produce: the invalid-input table of nodes-config.yaml.
var nodesConfigCases = []struct {
	name  string
	edits []edit
	want  []string
}{
	{name: "no-hosts", edits: []edit{sub(baseNC, "cpuArchitecture: amd64\n")},
		want: []string{`nodes-config.yaml:1:1: hosts: Required value: at least one host must be defined`}},
	{name: "empty-hosts", edits: []edit{sub(baseNC, "hosts: []\n")},
		want: []string{`nodes-config.yaml:1:8: hosts: Required value: at least one host must be defined`}},
	{name: "empty-file", edits: []edit{sub(baseNC, "")},
		want: []string{`nodes-config.yaml: Required value: the file is empty; expected a YAML mapping`}},
	{name: "not-a-mapping", edits: []edit{sub(baseNC, "- hostname: a\n")},
		want: []string{`nodes-config.yaml:1:1: the document must be a YAML mapping of field: value pairs, found a list`}},
	{name: "bad-yaml", edits: []edit{sub("  role: worker\n", "  role: worker\n bad: indent\n")},
		want: []string{`nodes-config.yaml:4: cannot parse YAML: did not find expected key (in the block that starts at line 3)`}},
	{name: "unknown-top-key", edits: []edit{add("sshKeys: x\n")},
		want: []string{`nodes-config.yaml:26:1: sshKeys: unknown field "sshKeys"; did you mean "sshKey"?`}},
	{name: "unknown-host-key-typo", edits: []edit{sub("  rootDeviceHints:\n", "  rootDeviceHint:\n")},
		want: []string{`nodes-config.yaml:7:3: hosts[0].rootDeviceHint: unknown field "rootDeviceHint"; did you mean "rootDeviceHints"?`}},
	{name: "duplicate-key", edits: []edit{add("cpuArchitecture: arm64\n")},
		want: []string{`nodes-config.yaml:26:1: cpuArchitecture: duplicate key "cpuArchitecture"; it is already defined at line 24`}},
	{name: "role-master", edits: []edit{sub("  role: worker\n", "  role: master\n")},
		want: []string{`nodes-config.yaml:3:9: hosts[0].role: Unsupported value: "master": supported values: "worker"`}},
	{name: "duplicate-hostname", edits: []edit{sub("- hostname: extra-worker-1\n", "- hostname: extra-worker-0\n")},
		want: []string{`nodes-config.yaml:20:13: hosts[1].hostname: Duplicate value: "extra-worker-0"`}},
	{name: "duplicate-mac", edits: []edit{sub("    macAddress: 52:54:00:00:01:02\n", "    macAddress: 52:54:00:00:01:01\n")},
		want: []string{`nodes-config.yaml:23:17: hosts[1].interfaces[0].macAddress: Invalid value: "52:54:00:00:01:01": duplicate MAC address found`}},
	{name: "bad-mac", edits: []edit{sub("    macAddress: 52:54:00:00:01:02\n", "    macAddress: 52:54:00:00:01\n")},
		want: []string{`nodes-config.yaml:23:17: hosts[1].interfaces[0].macAddress: Invalid value: "52:54:00:00:01": address 52:54:00:00:01: invalid MAC address`}},
	{name: "no-interfaces", edits: []edit{sub("  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:01:02\n", "")},
		want: []string{`nodes-config.yaml:20:3: hosts[1].interfaces: Required value: at least one interface must be defined for each node`}},
	{name: "bad-hostname", edits: []edit{sub("- hostname: extra-worker-1\n", "- hostname: Extra_Worker\n")},
		want: []string{`nodes-config.yaml:20:13: hosts[1].hostname: Invalid value: "Extra_Worker": must be a lowercase RFC 1123 name: letters a-z, digits, '-' and '.', starting and ending with a letter or digit, at most 63 characters`}},
	{name: "root-device-hint-not-dev", edits: []edit{sub("    deviceName: /dev/vda\n", "    deviceName: vda\n")},
		want: []string{`nodes-config.yaml:8:17: hosts[0].rootDeviceHints.deviceName: Invalid value: "vda": Device Name of root device hint must be a /dev/ path`}},
	{name: "nmstate-bad-prefix", edits: []edit{sub("          prefix-length: 24\n", "          prefix-length: 33\n")},
		want: []string{`nodes-config.yaml:19:26: hosts[0].networkConfig.interfaces[0].ipv4.address[0].prefix-length: Invalid IPv4 network prefix length '33', should be in the range of 0 to 32`}},
	{name: "duplicate-static-address", edits: []edit{sub("- hostname: extra-worker-1\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:01:02\n",
		"- hostname: extra-worker-1\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:01:02\n  networkConfig:\n    interfaces:\n    - name: enp1s0\n      type: ethernet\n      state: up\n      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.90\n          prefix-length: 24\n")},
		want: []string{`nodes-config.yaml:32:15: hosts[1].networkConfig.interfaces[0].ipv4.address[0].ip: Duplicate value: "192.168.111.90": hosts extra-worker-0 and extra-worker-1 both have this static address (extra-worker-0's at nodes-config.yaml:18:15); each host needs its own`}},
	{name: "arch-unknown", edits: []edit{sub("cpuArchitecture: x86_64\n", "cpuArchitecture: i386\n")},
		want: []string{`nodes-config.yaml:24:18: cpuArchitecture: Unsupported value: "i386": supported values: "aarch64", "amd64", "arm64", "ppc64le", "s390x", "x86_64"`}},
	{name: "ssh-key-bad", edits: []edit{sub("sshKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL2DjTikTFUrp3OYn0YPxjrZODSNNrQ1NDD+ldxYmO4h core@nodezero.test\n", "sshKey: not-a-key\n")},
		want: []string{`nodes-config.yaml:25:9: sshKey: Invalid value: "not-a-key": ssh: no key found`}},
	{name: "boot-artifacts-ftp", edits: []edit{add("bootArtifactsBaseURL: ftp://example.com/\n")},
		want: []string{`nodes-config.yaml:26:23: bootArtifactsBaseURL: Unsupported value: "ftp": supported values: "http", "https"`}},
	{name: "hosts-not-a-list", edits: []edit{sub(baseNC, "hosts:\n  hostname: a\n")},
		want: []string{`nodes-config.yaml:2:3: hosts: must be a list, found a mapping`}},
	{name: "type-meta-accepted", edits: []edit{add("apiVersion: v1alpha1\nkind: NodesConfig\nmetadata:\n  name: extra\nbootArtifactsBaseURL: http://192.168.111.1:8080/\n")}},
	{name: "role-empty-is-worker", edits: []edit{sub("  role: worker\n", "  role: \"\"\n")}},
}

func TestNodesConfigInvalid(t *testing.T) {
	for _, tc := range nodesConfigCases {
		t.Run(tc.name, func(t *testing.T) {
			got := loadNodes(t, apply(t, baseNC, tc.edits))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzNodesConfig checks that no nodes-config.yaml makes loading or
// validation panic, that every entry names the file and a line inside it,
// and that an accepted file has at least one host, each with a worker (or
// empty) role and an interface, and the cluster's architecture. Run it with
//
//	go test ./configimage/inputs -fuzz FuzzNodesConfig -fuzztime 30s
func FuzzNodesConfig(f *testing.F) {
	f.Add([]byte(baseNC))
	for _, tc := range nodesConfigCases {
		f.Add([]byte(applyNoT(baseNC, tc.edits)))
	}
	f.Add([]byte("hosts:\n- networkConfig: &a {x: [*a]}\n"))
	f.Add([]byte("hosts:\n- interfaces: [{macAddress: 52:54:00:00:00:01}]\n  role: worker\n- interfaces: [{macAddress: 52:54:00:00:00:01}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nc, rep := LoadNodesConfig(NodesConfigFile, data)
		if nc == nil {
			if !rep.HasErrors() {
				t.Fatalf("nil config with a report without errors:\n%s", rep.String())
			}
			checkEntries(t, rep, NodesConfigFile, data)
			return
		}
		rep.Merge(ValidateNodesConfig(nc))
		arch, r := nc.CheckArchitecture("amd64")
		rep.Merge(r)
		checkEntries(t, rep, NodesConfigFile, data)
		if rep.HasErrors() {
			return
		}
		if arch != "amd64" {
			t.Fatalf("accepted architecture %q for an amd64 cluster", arch)
		}
		if len(nc.Hosts) == 0 {
			t.Fatalf("accepted a nodes-config.yaml without hosts:\n%s", data)
		}
		for i, h := range nc.Hosts {
			if h.Role != "" && h.Role != "worker" {
				t.Fatalf("accepted hosts[%d].role %q", i, h.Role)
			}
			if len(h.Interfaces) == 0 {
				t.Fatalf("accepted hosts[%d] without interfaces", i)
			}
			if _, err := h.NetworkConfigYAML(); err != nil {
				t.Fatalf("NetworkConfigYAML: %v", err)
			}
		}
	})
}

// applyNoT is apply for a fuzz seed: an edit that does not match panics.
func applyNoT(base string, edits []edit) string {
	s := base
	for _, e := range edits {
		if e.old == "" {
			s += e.new
			continue
		}
		if strings.Count(s, e.old) != 1 {
			panic("edit does not match once: " + e.old)
		}
		s = strings.Replace(s, e.old, e.new, 1)
	}
	return s
}

func TestNodesConfigCheckArchitecture(t *testing.T) {
	for _, tc := range []struct {
		name, own, cluster, want string
		report                   []string
	}{
		{name: "both the same, RPM name", own: "x86_64", cluster: "amd64", want: "amd64"},
		{name: "cluster's only", own: "", cluster: "arm64", want: "arm64"},
		{name: "nodes-config's only", own: "aarch64", cluster: "", want: "arm64"},
		{name: "differ", own: "arm64", cluster: "amd64", want: "arm64",
			report: []string{`nodes-config.yaml:24:18: cpuArchitecture: Invalid value: "arm64": the cluster's control-plane Nodes are amd64 (status.nodeInfo.architecture); hosts added to it must be amd64 too`}},
		{name: "neither", own: "", cluster: "", want: "",
			report: []string{`nodes-config.yaml:1:1: cpuArchitecture: Required value: the cluster's architecture is unknown (no control-plane Node, labelled node-role.kubernetes.io/master, reports status.nodeInfo.architecture); name it here`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := baseNC
			if tc.own != "x86_64" {
				repl := ""
				if tc.own != "" {
					repl = "cpuArchitecture: " + tc.own + "\n"
				}
				text = strings.Replace(text, "cpuArchitecture: x86_64\n", repl, 1)
			}
			nc, rep := LoadNodesConfig(NodesConfigFile, []byte(text))
			if rep.HasErrors() {
				t.Fatal(rep.String())
			}
			got, rep := nc.CheckArchitecture(tc.cluster)
			if got != tc.want {
				t.Errorf("CheckArchitecture(%q) = %q, want %q", tc.cluster, got, tc.want)
			}
			if diff := cmp.Diff(tc.report, rep.Lines()); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
}
