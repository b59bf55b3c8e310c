package inputs

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// invalidCases are edits of baseIC/baseAC, each with the exact report lines
// it must produce (errors and warnings, sorted by file, line and column).
var invalidCases = []struct {
	name string
	ic   []edit
	ac   []edit
	noAC bool // validate install-config alone
	want []string
}{
	// install-config: decoding
	{name: "ic-api-version-wrong", ic: []edit{sub("apiVersion: v1\n", "apiVersion: v2\n")},
		want: []string{
			`install-config.yaml:1:13: apiVersion: Invalid value: "v2": install-config version must be "v1"`,
		}},
	{name: "ic-api-version-missing", ic: []edit{sub("apiVersion: v1\n", "")},
		want: []string{
			`install-config.yaml:1:1: apiVersion: Required value: install-config version required`,
		}},
	{name: "ic-replicas-not-integer", ic: []edit{sub("  replicas: 3\n", "  replicas: three\n")},
		want: []string{
			`install-config.yaml:10:13: controlPlane.replicas: Invalid value: "three": must be an integer`,
		}},
	{name: "ic-replicas-quoted", ic: []edit{sub("  replicas: 2\n", "  replicas: \"2\"\n")},
		want: []string{
			`agent-config.yaml:7:1: warning: hosts: 5 of 6 hosts are defined; the others register without host-specific settings (role, disk, network)`,
			`install-config.yaml:7:13: compute[0].replicas: Invalid value: "2": must be an integer`,
		}},
	{name: "ic-compute-not-a-list", ic: []edit{sub("- name: worker\n  replicas: 2\n", "  name: worker\n")},
		want: []string{
			`agent-config.yaml:7:1: warning: hosts: 5 of 6 hosts are defined; the others register without host-specific settings (role, disk, network)`,
			`install-config.yaml:6:3: compute: must be a list, found a mapping`,
		}},
	{name: "ic-fips-not-boolean", ic: []edit{add("fips: yes please\n")},
		want: []string{
			`install-config.yaml:28:7: fips: Invalid value: "yes please": must be a boolean (true or false)`,
		}},
	{name: "ic-unknown-key-typo", ic: []edit{add("sshKeys: foo\n")},
		want: []string{
			`install-config.yaml:28:1: warning: sshKeys: unknown field, ignored; did you mean "sshKey"?`,
		}},
	{name: "ic-unknown-nested-key", ic: []edit{sub("  baremetal:\n", "  baremetal:\n    provisioningHostIP: 10.0.0.3\n")},
		want: []string{
			`install-config.yaml:22:5: warning: platform.baremetal.provisioningHostIP: unknown field, ignored; known fields: additionalNTPServers, apiVIP, apiVIPs, bootstrapExternalStaticDNS, bootstrapExternalStaticGateway, bootstrapExternalStaticIP, bootstrapOSImage, bootstrapProvisioningIP, clusterOSImage, clusterProvisioningIP, defaultMachinePlatform, externalBridge, externalMACAddress, hosts, ingressVIP, ingressVIPs, libvirtURI, loadBalancer, provisioningBridge, provisioningDHCPRange, provisioningMACAddress, provisioningNetwork, provisioningNetworkCIDR, provisioningNetworkInterface`,
		}},
	{name: "ic-ignored-field", ic: []edit{sub("  baremetal:\n", "  baremetal:\n    externalBridge: br-ex\n")},
		want: []string{
			`install-config.yaml:22:5: warning: platform.baremetal.externalBridge: is ignored by agent-based installs`,
		}},
	{name: "ic-duplicate-key", ic: []edit{add("baseDomain: example.org\n")},
		want: []string{
			`install-config.yaml:28:1: baseDomain: duplicate key "baseDomain"; it is already defined at line 2`,
		}},
	{name: "ic-multiple-documents", ic: []edit{add("---\napiVersion: v1\n")},
		want: []string{
			`install-config.yaml:28:1: multiple YAML documents in one file; expected exactly one`,
		}},
	{name: "ic-bad-yaml", ic: []edit{sub("  name: ocp\n", "  name: ocp\n bad: indent\n")},
		want: []string{
			`install-config.yaml:5: cannot parse YAML: did not find expected key (in the block that starts at line 4)`,
		}},
	// As seen: a bad line 63 deep in the platform block of line 46 was
	// reported at line 46.
	{name: "ic-bad-yaml-deep-in-a-block", ic: []edit{
		sub("platform:\n", strings.Repeat("# padding\n", 25)+"platform:\n"),
		sub("    ingressVIPs:\n    - 192.168.111.4\n", "    provisioningNetwork: Disabled\n    hosts:\n"+hostLines(4)+"    ingressVIPs: \"192.168.111.4\n")},
		want: []string{
			`install-config.yaml:63: cannot parse YAML: did not find expected key (in the block that starts at line 46)`,
		}},
	{name: "ic-not-a-mapping", ic: []edit{sub(baseIC, "- apiVersion: v1\n")},
		want: []string{
			`install-config.yaml:1:1: the document must be a YAML mapping of field: value pairs, found a list`,
		}},
	{name: "ic-empty-file", ic: []edit{sub(baseIC, "# nothing\n")},
		want: []string{
			`install-config.yaml: Required value: the file is empty; expected a YAML mapping`,
		}},
	// install-config: replicas and topology
	{name: "cp-replicas-2", ic: []edit{sub("  replicas: 3\n", "  replicas: 2\n")}, noAC: true,
		want: []string{
			`install-config.yaml:10:13: controlPlane.replicas: Unsupported value: 2: supported values: "3", "1", "4", "5", "2 (with arbiter)"`,
		}},
	{name: "cp-replicas-6", ic: []edit{sub("  replicas: 3\n", "  replicas: 6\n")}, noAC: true,
		want: []string{
			`install-config.yaml:10:13: controlPlane.replicas: Unsupported value: 6: supported values: "3", "1", "4", "5", "2 (with arbiter)"`,
		}},
	{name: "cp-replicas-0", ic: []edit{sub("  replicas: 3\n", "  replicas: 0\n")}, noAC: true,
		want: []string{
			`install-config.yaml:10:13: controlPlane.replicas: Invalid value: 0: number of control plane replicas must be positive`,
			`install-config.yaml:10:13: controlPlane.replicas: Unsupported value: 0: supported values: "3", "1", "4", "5", "2 (with arbiter)"`,
		}},
	{name: "cp-name", ic: []edit{sub("  name: master\n", "  name: control\n")}, noAC: true,
		want: []string{
			`install-config.yaml:9:9: controlPlane.name: Unsupported value: "control": supported values: "master"`,
		}},
	{name: "compute-negative", ic: []edit{sub("  replicas: 2\n", "  replicas: -1\n")},
		want: []string{
			`agent-config.yaml:34:9: hosts[3].role: Forbidden: the number of worker hosts defined (2) exceeds the configured Compute replicas (-1)`,
			`install-config.yaml:7:13: compute[0].replicas: Invalid value: -1: number of replicas must not be negative`,
		}},
	{name: "compute-name", ic: []edit{sub("- name: worker\n", "- name: workers\n")}, noAC: true,
		want: []string{
			`install-config.yaml:6:9: compute[0].name: Unsupported value: "workers": supported values: "worker", "edge"`,
		}},
	{name: "sno-on-baremetal", ic: []edit{sub("  replicas: 3\n", "  replicas: 1\n"), sub("  replicas: 2\n", "  replicas: 0\n")}, noAC: true,
		want: []string{
			`install-config.yaml:21:3: platform: Invalid value: "baremetal": Only platform none and external supports 1 ControlPlane and 0 Compute nodes`,
		}},
	{name: "sno-with-workers", ic: []edit{sub("  replicas: 3\n", "  replicas: 1\n"), sub("  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "  none: {}\n")}, noAC: true,
		want: []string{
			`install-config.yaml:7:13: compute[0].replicas: Forbidden: Total number of compute replicas must be 0 when controlPlane.replicas is 1 for platform none or external. Found 2`,
		}},
	{name: "sno-sdn", ic: []edit{sub("  replicas: 3\n", "  replicas: 1\n"), sub("  replicas: 2\n", "  replicas: 0\n"), sub("OVNKubernetes", "OpenShiftSDN"), sub("  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "  none: {}\n")}, noAC: true,
		want: []string{
			`install-config.yaml:12:16: networking.networkType: Invalid value: "OpenShiftSDN": Only OVNKubernetes network type is allowed for Single Node OpenShift (SNO) cluster`,
			`install-config.yaml:12:16: networking.networkType: Invalid value: "OpenShiftSDN": networkType OpenShiftSDN is not supported, please use OVNKubernetes`,
		}},
	{name: "arbiter-needs-baremetal-pool-name", ic: []edit{sub("  replicas: 3\n", "  replicas: 2\n"), add("arbiter:\n  name: tiebreaker\n  replicas: 1\n")}, noAC: true,
		want: []string{
			`install-config.yaml:29:9: arbiter.name: Unsupported value: "tiebreaker": supported values: "arbiter"`,
		}},
	{name: "hyperthreading", ic: []edit{sub("  replicas: 3\n", "  replicas: 3\n  hyperthreading: On\n")}, noAC: true,
		want: []string{
			`install-config.yaml:11:19: controlPlane.hyperthreading: Unsupported value: "On": supported values: "Disabled", "Enabled"`,
		}},
	{name: "hyperthreading-disabled-warns", ic: []edit{sub("  replicas: 3\n", "  replicas: 3\n  hyperthreading: Disabled\n")}, noAC: true,
		want: []string{
			`install-config.yaml:11:19: warning: controlPlane.hyperthreading: Disabled is ignored`,
		}},
	{name: "architecture-x86_64", ic: []edit{sub("  replicas: 3\n", "  replicas: 3\n  architecture: x86_64\n")}, noAC: true,
		want: []string{
			`install-config.yaml:6:3: compute[0].architecture: Invalid value: "amd64": heteregeneous multi-arch is not supported; compute pool architecture must match control plane`,
			`install-config.yaml:11:17: controlPlane.architecture: Unsupported value: "x86_64": supported values: "amd64", "arm64", "ppc64le", "s390x"`,
		}},
	{name: "ppc64le-on-baremetal", ic: []edit{sub("  replicas: 3\n", "  replicas: 3\n  architecture: ppc64le\n"), sub("  replicas: 2\n", "  replicas: 2\n  architecture: ppc64le\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:3: platform: Invalid value: "baremetal": CPU architecture "ppc64le" only supports platform "none".`,
		}},
	// install-config: platform and VIPs
	{name: "platform-missing", ic: []edit{sub("platform:\n  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "")}, noAC: true,
		want: []string{
			`install-config.yaml:1:1: platform: Required value: must specify one of the platforms (baremetal, vsphere, none, external, nutanix)`,
		}},
	{name: "platform-aws", ic: []edit{sub("  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "  aws:\n    region: us-east-1\n")}, noAC: true,
		want: []string{
			`install-config.yaml:22:5: platform.aws: Unsupported value: "aws": supported values: "baremetal", "vsphere", "none", "external", "nutanix"`,
		}},
	{name: "platform-two", ic: []edit{sub("  baremetal:\n", "  none: {}\n  baremetal:\n")}, noAC: true,
		want: []string{
			`install-config.yaml:21:9: platform.none: Invalid value: "baremetal": must only specify a single type of platform; cannot use both "baremetal" and "none"`,
		}},
	{name: "platform-none-with-vips", ic: []edit{sub("  baremetal:\n", "  none:\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:5: platform.none.apiVIPs: Forbidden: platform none has no VIPs: the API and ingress load balancing is yours to provide; remove apiVIPs or use platform baremetal`,
			`install-config.yaml:25:5: platform.none.ingressVIPs: Forbidden: platform none has no VIPs: the API and ingress load balancing is yours to provide; remove ingressVIPs or use platform baremetal`,
		}},
	{name: "vips-missing", ic: []edit{sub("    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "    {}\n")}, noAC: true,
		want: []string{
			`install-config.yaml:22:5: platform.baremetal.apiVIPs: Required value: must specify at least one VIP for the API`,
			`install-config.yaml:22:5: platform.baremetal.ingressVIPs: Required value: must specify at least one VIP for the Ingress`,
		}},
	{name: "ingress-vip-missing", ic: []edit{sub("    ingressVIPs:\n    - 192.168.111.4\n", "")}, noAC: true,
		want: []string{
			`install-config.yaml:22:5: platform.baremetal.ingressVIPs: Required value: must specify VIP for ingress, when VIP for API is set`,
			`install-config.yaml:22:5: platform.baremetal.ingressVIPs: Required value: must specify at least one VIP for the Ingress`,
		}},
	{name: "vip-api-equals-ingress", ic: []edit{sub("    - 192.168.111.4\n", "    - 192.168.111.5\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:7: platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.5": VIP for API must not be one of the Ingress VIPs`,
		}},
	{name: "vip-outside-machine-network", ic: []edit{sub("    - 192.168.111.5\n", "    - 10.0.0.5\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:7: platform.baremetal.apiVIPs[0]: Invalid value: "10.0.0.5": IP expected to be in one of the machine networks: 192.168.111.0/24`,
		}},
	{name: "vip-not-an-ip", ic: []edit{sub("    - 192.168.111.5\n", "    - 192.168.111.500\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:7: platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.500": "192.168.111.500" is not a valid IP`,
		}},
	{name: "vip-too-many", ic: []edit{sub("    - 192.168.111.5\n", "    - 192.168.111.5\n    - 192.168.111.6\n    - 192.168.111.7\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:5: platform.baremetal.apiVIPs: Too many: 3: must have at most 2 items`,
		}},
	{name: "vip-two-ipv4", ic: []edit{sub("    - 192.168.111.5\n", "    - 192.168.111.5\n    - 192.168.111.6\n")}, noAC: true,
		want: []string{
			`install-config.yaml:23:5: platform.baremetal.apiVIPs: Invalid value: []string{"192.168.111.5", "192.168.111.6"}: If two API VIPs are given, one must be an IPv4 address, the other an IPv6`,
		}},
	{name: "vip-legacy-conflict", ic: []edit{sub("    apiVIPs:\n", "    apiVIP: 192.168.111.9\n    apiVIPs:\n")}, noAC: true,
		want: []string{
			`install-config.yaml:22:13: platform.baremetal.apiVIP: Invalid value: "192.168.111.9": apiVIP is deprecated; only apiVIPs needs to be specified`,
			`install-config.yaml:22:13: warning: platform.baremetal.apiVIP: apiVIP is deprecated; use apiVIPs`,
		}},
	{name: "vip-legacy-only-warns", ic: []edit{sub("    apiVIPs:\n    - 192.168.111.5\n", "    apiVIP: 192.168.111.5\n")}, noAC: true,
		want: []string{
			`install-config.yaml:22:13: warning: platform.baremetal.apiVIP: apiVIP is deprecated; use apiVIPs`,
		}},
	{name: "external-oci-ccm", ic: []edit{sub("  replicas: 3\n", "  replicas: 1\n"), sub("  replicas: 2\n", "  replicas: 0\n"), sub("  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "  external:\n    platformName: oci\n")}, noAC: true,
		want: []string{
			`install-config.yaml:22:5: platform.external.cloudControllerManager: Invalid value: "": When using external oci platform, platform.external.cloudControllerManager must be set to External`,
		}},
	// install-config: networks
	{name: "machine-network-bad-cidr", ic: []edit{sub("192.168.111.0/24", "192.168.111.0/33")}, noAC: true,
		want: []string{
			`install-config.yaml:17:11: networking.machineNetwork[0].cidr: Invalid value: "192.168.111.0/33": invalid CIDR address: 192.168.111.0/33`,
		}},
	{name: "machine-network-host-bits", ic: []edit{sub("192.168.111.0/24", "192.168.111.1/24")}, noAC: true,
		want: []string{
			`install-config.yaml:17:11: networking.machineNetwork[0].cidr: Invalid value: "192.168.111.1/24": invalid network address. got 192.168.111.1/24, expecting 192.168.111.0/24`,
		}},
	{name: "service-overlaps-machine", ic: []edit{sub("  - 172.30.0.0/16\n", "  - 192.168.111.0/25\n")}, noAC: true,
		want: []string{
			`install-config.yaml:19:5: networking.serviceNetwork[0]: Invalid value: "192.168.111.0/25": service network must not overlap with any of the machine networks`,
		}},
	{name: "cluster-overlaps-service", ic: []edit{sub("10.128.0.0/14", "172.28.0.0/14")}, noAC: true,
		want: []string{
			`install-config.yaml:14:11: networking.clusterNetwork[0].cidr: Invalid value: "172.28.0.0/14": cluster network must not overlap with service network 0`,
		}},
	{name: "host-prefix-too-small", ic: []edit{sub("hostPrefix: 23", "hostPrefix: 12")}, noAC: true,
		want: []string{
			`install-config.yaml:15:17: networking.clusterNetwork[0].hostPrefix: Invalid value: 12: cluster network host subnetwork prefix must not be larger size than CIDR 10.128.0.0/14`,
		}},
	{name: "host-prefix-ipv6", ic: []edit{sub("    hostPrefix: 23\n", "    hostPrefix: 23\n  - cidr: fd01::/48\n    hostPrefix: 56\n")}, noAC: true,
		want: []string{
			`install-config.yaml:17:17: networking.clusterNetwork[1].hostPrefix: Invalid value: 56: cluster network host subnetwork prefix must be 64 for IPv6 networks`,
		}},
	{name: "cluster-overlaps-ovn-join", ic: []edit{sub("10.128.0.0/14", "100.64.0.0/16")}, noAC: true,
		want: []string{
			`install-config.yaml:14:11: networking.clusterNetwork[0].cidr: Invalid value: "100.64.0.0/16": must not overlap with OVNKubernetes default internal subnet 100.64.0.0/16`,
		}},
	{name: "dual-stack-missing-ipv6", ic: []edit{sub("  - 172.30.0.0/16\n", "  - 172.30.0.0/16\n  - fd02::/112\n")}, noAC: true,
		want: []string{
			`install-config.yaml:14:3: networking.clusterNetwork: Invalid value: "10.128.0.0/14": dual-stack IPv4/IPv6 requires an IPv6 network in this list`,
			`install-config.yaml:17:3: networking.machineNetwork: Invalid value: "192.168.111.0/24": dual-stack IPv4/IPv6 requires an IPv6 network in this list`,
		}},
	{name: "dual-stack-ipv6-first-on-none", ic: []edit{
		sub("  replicas: 3\n", "  replicas: 1\n"), sub("  replicas: 2\n", "  replicas: 0\n"),
		sub("  - cidr: 192.168.111.0/24\n", "  - cidr: fd2e:6f44:5dd8::/64\n  - cidr: 192.168.111.0/24\n"),
		sub("    hostPrefix: 23\n", "    hostPrefix: 23\n  - cidr: fd01::/48\n    hostPrefix: 64\n"),
		sub("  - 172.30.0.0/16\n", "  - 172.30.0.0/16\n  - fd02::/112\n"),
		sub("  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "  none: {}\n")}, noAC: true,
		want: []string{
			`install-config.yaml:19:3: networking.machineNetwork: Invalid value: "fd2e:6f44:5dd8::/64, 192.168.111.0/24": IPv4 addresses must be listed before IPv6 addresses`,
		}},
	{name: "ipv4-two-service-networks", ic: []edit{sub("  - 172.30.0.0/16\n", "  - 172.30.0.0/16\n  - 172.31.0.0/16\n")}, noAC: true,
		want: []string{
			`install-config.yaml:19:3: networking.serviceNetwork: Invalid value: "172.30.0.0/16, 172.31.0.0/16": only one service network can be specified`,
		}},
	{name: "ipv6-service-network-too-big", ic: []edit{
		sub("  - cidr: 192.168.111.0/24\n", "  - cidr: fd2e:6f44:5dd8::/64\n"), sub("10.128.0.0/14\n    hostPrefix: 23", "fd01::/48\n    hostPrefix: 64"),
		sub("  - 172.30.0.0/16\n", "  - fd02::/64\n"), sub("    - 192.168.111.5\n", "    - fd2e:6f44:5dd8::5\n"), sub("    - 192.168.111.4\n", "    - fd2e:6f44:5dd8::4\n")}, noAC: true,
		want: []string{
			`install-config.yaml:19:5: networking.serviceNetwork[0]: Invalid value: "fd02::/64": an IPv6 service network must be /108 or smaller (/112 is usual)`,
		}},
	// install-config: secrets, names, misc
	{name: "pull-secret-not-json", ic: []edit{sub(`'{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}'`, `'{"auths":'`)}, noAC: true,
		want: []string{
			`install-config.yaml:26:13: pullSecret: Invalid value: "<redacted>": unexpected end of JSON input`,
		}},
	{name: "pull-secret-no-auths", ic: []edit{sub(`'{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}'`, `'{"auths":{}}'`)}, noAC: true,
		want: []string{
			`install-config.yaml:26:13: pullSecret: Invalid value: "<redacted>": auths required`,
		}},
	{name: "pull-secret-entry-without-auth", ic: []edit{sub(`{"auth":"ZmFrZTpmYWtl"}`, `{"email":"a@example.com"}`)}, noAC: true,
		want: []string{
			`install-config.yaml:26:13: pullSecret: Invalid value: "<redacted>": "quay.io" requires either auth or credsStore`,
		}},
	{name: "pull-secret-missing", ic: []edit{sub(`pullSecret: '{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}'`+"\n", "")}, noAC: true,
		want: []string{
			`install-config.yaml:1:1: pullSecret: Required value: the pull secret is required: the JSON with an "auths" object from console.redhat.com`,
		}},
	{name: "ssh-key-garbage", ic: []edit{sub("sshKey: ssh-ed25519 AAAAC3", "sshKey: ssh-ed25519 ZZZZC3")}, noAC: true,
		want: []string{
			`install-config.yaml:27:9: sshKey: Invalid value: "ssh-ed25519 ZZZZC3NzaC1lZDI1NTE5AAAAIL2DjTikTFUr...": ssh: no key found`,
		}},
	{name: "ssh-key-ed25519-with-fips", ic: []edit{add("fips: true\n")}, noAC: true,
		want: []string{
			`install-config.yaml:27:9: sshKey: Invalid value: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIL2DjTikTFUr...": SSH key type ssh-ed25519 unavailable when FIPS is enabled. Please use rsa or ecdsa.`,
		}},
	{name: "cluster-name-with-dot", ic: []edit{sub("  name: ocp\n", "  name: ocp.lab\n")}, noAC: true,
		want: []string{
			`install-config.yaml:4:9: metadata.name: Invalid value: "ocp.lab": cluster name must not contain '.'`,
		}},
	{name: "base-domain-invalid", ic: []edit{sub("baseDomain: example.com", "baseDomain: Example_com")}, noAC: true,
		want: []string{
			`install-config.yaml:2:13: baseDomain: Invalid value: "Example_com": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		}},
	{name: "proxy-https-scheme-for-http", ic: []edit{add("proxy:\n  httpProxy: https://proxy.example.com:3128\n  noProxy: '*.example.com'\n")}, noAC: true,
		want: []string{
			`install-config.yaml:29:14: proxy.httpProxy: Unsupported value: "https": supported values: "http"`,
			`install-config.yaml:30:12: proxy.noProxy: Invalid value: "*.example.com": each element of noProxy must be a IP, CIDR or domain without wildcard characters, which is violated by element 0 "*.example.com"`,
		}},
	{name: "mirror-with-tag", ic: []edit{add("imageDigestSources:\n- source: quay.io/openshift-release-dev/ocp-release:4.18.1\n  mirrors:\n  - registry.example.com:5000/ocp/release\n")}, noAC: true,
		want: []string{
			`install-config.yaml:29:11: imageDigestSources[0].source: Invalid value: "quay.io/openshift-release-dev/ocp-release:4.18.1": must be repository--not reference`,
		}},
	{name: "trust-bundle-garbage", ic: []edit{add("additionalTrustBundle: |\n  not a certificate\n")}, noAC: true,
		want: []string{
			`install-config.yaml:28:24: additionalTrustBundle: Invalid value: "not a certificate\n": invalid block; expected PEM-encoded X.509 certificates`,
		}},
	{name: "feature-gates-without-custom", ic: []edit{add("featureGates:\n- DualReplica=true\n")}, noAC: true,
		want: []string{
			`install-config.yaml:29:1: featureGates: Forbidden: featureGates can only be used with the CustomNoUpgrade feature set`,
		}},
	{name: "capabilities-unknown-set", ic: []edit{add("capabilities:\n  baselineCapabilitySet: v3.11\n")}, noAC: true,
		want: []string{
			`install-config.yaml:29:26: capabilities.baselineCapabilitySet: Unsupported value: "v3.11": supported values: "None", "v4.11", "v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "vCurrent"`,
		}},
	// agent-config: decoding and single-file rules
	{name: "ac-api-version", ac: []edit{sub("apiVersion: v1beta1", "apiVersion: v2")},
		want: []string{
			`agent-config.yaml:1:13: apiVersion: Invalid value: "v2": cannot upconvert from version v2`,
		}},
	{name: "ac-api-version-missing", ac: []edit{sub("apiVersion: v1beta1\n", "")},
		want: []string{
			`agent-config.yaml:1:1: apiVersion: Required value: no version was provided`,
		}},
	{name: "ac-kind", ac: []edit{sub("kind: AgentConfig", "kind: InstallConfig")},
		want: []string{
			`agent-config.yaml:2:7: warning: kind: Invalid value: "InstallConfig": kind is ignored; expected "AgentConfig"`,
		}},
	// agent-config is read strictly, as openshift-install's UnmarshalStrict
	// does: unknown keys are errors, with the nearest known key.
	{name: "ac-unknown-host-key", ac: []edit{sub("- hostname: master-1\n", "- hostnme: master-1\n")},
		want: []string{
			`agent-config.yaml:23:3: hosts[1].hostnme: unknown field "hostnme"; did you mean "hostname"?`,
		}},
	{name: "ac-unknown-root-device-hint", ac: []edit{sub("  rootDeviceHints:\n", "  rootDeviceHint:\n")},
		want: []string{
			`agent-config.yaml:38:3: hosts[3].rootDeviceHint: unknown field "rootDeviceHint"; did you mean "rootDeviceHints"?`,
		}},
	{name: "ac-unknown-ntp-key", ac: []edit{add("additionalNTPServers:\n- 192.168.111.1\n")},
		want: []string{
			`agent-config.yaml:45:1: additionalNTPServers: unknown field "additionalNTPServers"; did you mean "additionalNTPSources"?`,
		}},
	{name: "ac-hosts-not-a-list", ac: []edit{sub("hosts:\n", "hosts: 5\nx:\n")},
		want: []string{
			`agent-config.yaml:6:8: hosts: Invalid value: 5: must be a list`,
			`agent-config.yaml:7:1: x: unknown field "x"; known fields: additionalNTPSources, apiVersion, bootArtifactsBaseURL, hosts, kind, metadata, minimalISO, rendezvousIP`,
		}},
	{name: "rendezvous-not-ip", ac: []edit{sub("rendezvousIP: 192.168.111.80", "rendezvousIP: not-a-valid-ip")},
		want: []string{
			`agent-config.yaml:5:15: rendezvousIP: Invalid value: "not-a-valid-ip": "not-a-valid-ip" is not a valid IP`,
		}},
	{name: "rendezvous-outside-machine-network", ac: []edit{sub("rendezvousIP: 192.168.111.80", "rendezvousIP: 10.1.1.1")},
		want: []string{
			`agent-config.yaml:5:15: rendezvousIP: Invalid value: "10.1.1.1": IP expected to be in one of the machine networks: 192.168.111.0/24`,
			`agent-config.yaml:5:15: warning: rendezvousIP: no host's networkConfig assigns 10.1.1.1; node zero must get it from DHCP`,
		}},
	{name: "rendezvous-on-worker", ac: []edit{sub("- hostname: master-0\n  role: master\n", "- hostname: master-0\n  role: worker\n"), sub("- hostname: worker-0\n  role: worker\n", "- hostname: worker-0\n  role: master\n")},
		want: []string{
			`agent-config.yaml:21:15: hosts[0].networkConfig.interfaces[0].ipv4.address[0].ip: Forbidden: Host master-0 has role 'worker' and has the rendezvousIP assigned to it. The rendezvousIP must be assigned to a control plane host.`,
		}},
	{name: "rendezvous-not-assigned-warns", ac: []edit{sub("rendezvousIP: 192.168.111.80", "rendezvousIP: 192.168.111.81")},
		want: []string{
			`agent-config.yaml:5:15: warning: rendezvousIP: no host's networkConfig assigns 192.168.111.81; node zero must get it from DHCP`,
		}},
	{name: "boot-artifacts-no-scheme", ac: []edit{add("bootArtifactsBaseURL: not-a-valid-url\n")},
		want: []string{
			`agent-config.yaml:45:23: bootArtifactsBaseURL: Invalid value: "not-a-valid-url": invalid URI "not-a-valid-url" (no scheme)`,
		}},
	{name: "boot-artifacts-ftp", ac: []edit{add("bootArtifactsBaseURL: ftp://192.168.111.1/boot\n")},
		want: []string{
			`agent-config.yaml:45:23: bootArtifactsBaseURL: Unsupported value: "ftp": supported values: "http", "https"`,
		}},
	{name: "ntp-source-invalid", ac: []edit{add("additionalNTPSources:\n- 0.rhel.pool.ntp.org\n- invalid_pool.ntp.org\n")},
		want: []string{
			`agent-config.yaml:47:3: additionalNTPSources[1]: Invalid value: "invalid_pool.ntp.org": NTP server is not a valid IP or domain name`,
		}},
	// agent-config: hosts
	{name: "mac-invalid", ac: []edit{sub("52:54:00:00:00:02", "zz:54:00:00:00:02")},
		want: []string{
			`agent-config.yaml:27:17: hosts[1].interfaces[0].macAddress: Invalid value: "zz:54:00:00:00:02": address zz:54:00:00:00:02: invalid MAC address`,
		}},
	{name: "mac-missing", ac: []edit{sub("  - name: enp1s0\n    macAddress: 52:54:00:00:00:03\n", "  - name: enp1s0\n")},
		want: []string{
			`agent-config.yaml:31:5: hosts[2].interfaces[0].macAddress: Required value: each interface must have a MAC address defined`,
		}},
	{name: "mac-duplicate-across-hosts", ac: []edit{sub("52:54:00:00:00:05", "52:54:00:00:00:0A"), sub("52:54:00:00:00:04", "52:54:00:00:00:0a")},
		want: []string{
			`agent-config.yaml:44:17: hosts[4].interfaces[0].macAddress: Invalid value: "52:54:00:00:00:0A": duplicate MAC address found`,
		}},
	{name: "interfaces-missing", ac: []edit{sub("  role: master\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:00:02\n", "  role: master\n")},
		want: []string{
			`agent-config.yaml:23:3: hosts[1].interfaces: Required value: at least one interface must be defined for each node`,
		}},
	{name: "hostname-duplicate", ac: []edit{sub("- hostname: master-2\n", "- hostname: master-1\n")},
		want: []string{
			`agent-config.yaml:28:13: hosts[2].hostname: Duplicate value: "master-1"`,
		}},
	{name: "hostname-invalid", ac: []edit{sub("- hostname: master-2\n", "- hostname: Master_2\n")},
		want: []string{
			`agent-config.yaml:28:13: hosts[2].hostname: Invalid value: "Master_2": must be a lowercase RFC 1123 name: letters a-z, digits, '-' and '.', starting and ending with a letter or digit, at most 63 characters`,
		}},
	{name: "role-invalid", ac: []edit{sub("- hostname: worker-1\n  role: worker\n", "- hostname: worker-1\n  role: infra\n")},
		want: []string{
			`agent-config.yaml:41:9: hosts[4].role: Unsupported value: "infra": supported values: "master", "arbiter", "worker"`,
		}},
	{name: "too-many-masters", ac: []edit{sub("- hostname: worker-1\n  role: worker\n", "- hostname: worker-1\n  role: master\n")},
		want: []string{
			`agent-config.yaml:41:9: hosts[4].role: Forbidden: the number of master hosts defined (4) exceeds the configured ControlPlane replicas (3)`,
		}},
	{name: "too-many-hosts", ac: []edit{add("- hostname: spare-0\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:00:06\n")},
		want: []string{
			`agent-config.yaml:45:3: hosts[5]: Forbidden: the number of hosts defined (6) exceeds the total of configured ControlPlane, Arbiter and Compute replicas (5)`,
		}},
	{name: "arbiter-role-without-arbiter-pool", ac: []edit{sub("- hostname: worker-1\n  role: worker\n", "- hostname: worker-1\n  role: arbiter\n")},
		want: []string{
			`agent-config.yaml:41:9: hosts[4].role: Forbidden: the number of arbiter hosts defined (1) exceeds the configured Arbiter replicas (0)`,
		}},
	{name: "fewer-hosts-warns", ac: []edit{sub("- hostname: worker-1\n  role: worker\n  interfaces:\n  - name: enp1s0\n    macAddress: 52:54:00:00:00:05\n", "")},
		want: []string{
			`agent-config.yaml:7:1: warning: hosts: 4 of 5 hosts are defined; the others register without host-specific settings (role, disk, network)`,
		}},
	{name: "device-name-not-dev", ac: []edit{sub("deviceName: /dev/sda", "deviceName: sda")},
		want: []string{
			`agent-config.yaml:39:17: hosts[3].rootDeviceHints.deviceName: Invalid value: "sda": Device Name of root device hint must be a /dev/ path`,
		}},
	{name: "device-name-by-id", ac: []edit{sub("deviceName: /dev/sda", "deviceName: /dev/disk/by-id/wwn-0x600508e000000000ce506dc50ab0ad05")},
		want: []string{
			`agent-config.yaml:39:17: hosts[3].rootDeviceHints.deviceName: Invalid value: "/dev/disk/by-id/wwn-0x600508e000000000ce506dc50ab0ad05": Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/`,
		}},
	{name: "wwn-with-extension", ac: []edit{sub("    deviceName: /dev/sda\n", "    wwnWithExtension: 0x600508e000000000ce506dc50ab0ad05\n")},
		want: []string{
			`agent-config.yaml:39:23: hosts[3].rootDeviceHints.wwnWithExtension: Forbidden: WWN extensions are not supported in root device hints`,
		}},
	{name: "wwn-vendor-extension", ac: []edit{sub("    deviceName: /dev/sda\n", "    wwnVendorExtension: '0xce506dc50ab0ad05'\n")},
		want: []string{
			`agent-config.yaml:39:25: hosts[3].rootDeviceHints.wwnVendorExtension: Forbidden: WWN vendor extensions are not supported in root device hints`,
		}},
	{name: "wwn-unquoted-hex", ac: []edit{sub("    deviceName: /dev/sda\n", "    wwn: 0x5000c500a0b1c2d3\n")},
		want: []string{
			`agent-config.yaml:39:10: hosts[3].rootDeviceHints.wwn: Invalid value: 0x5000c500a0b1c2d3: must be a string; put the value in quotes`,
		}},
	{name: "min-size-negative", ac: []edit{sub("    deviceName: /dev/sda\n", "    minSizeGigabytes: -1\n")},
		want: []string{
			`agent-config.yaml:39:23: hosts[3].rootDeviceHints.minSizeGigabytes: Invalid value: -1: must be greater than or equal to 0`,
		}},
	{name: "rotational-not-bool", ac: []edit{sub("    deviceName: /dev/sda\n", "    rotational: maybe\n")},
		want: []string{
			`agent-config.yaml:39:17: hosts[3].rootDeviceHints.rotational: Invalid value: "maybe": must be a boolean (true or false)`,
		}},
	{name: "network-config-not-mapping", ac: []edit{sub("    macAddress: 52:54:00:00:00:05\n", "    macAddress: 52:54:00:00:00:05\n  networkConfig: eth0\n")},
		want: []string{
			`agent-config.yaml:45:18: hosts[4].networkConfig: must be a mapping: nmstate YAML with interfaces, dns-resolver and routes, found a scalar`,
		}},
	{name: "network-config-duplicate-key", ac: []edit{sub("      type: ethernet\n", "      type: ethernet\n      type: bond\n")},
		want: []string{
			`agent-config.yaml:16:7: hosts[0].networkConfig.interfaces[0].type: duplicate key "type"; it is already defined at line 15`,
		}},
	{name: "network-config-prefix-length", ac: []edit{sub("          prefix-length: 24\n", "          prefix-length: 33\n")},
		want: []string{
			`agent-config.yaml:22:26: hosts[0].networkConfig.interfaces[0].ipv4.address[0].prefix-length: Invalid IPv4 network prefix length '33', should be in the range of 0 to 32`,
		}},
	{name: "network-config-unknown-ipv4-key", ac: []edit{sub("        enabled: true\n", "        enabled: true\n        dhcpp: true\n")},
		want: []string{
			"agent-config.yaml:20:9: hosts[0].networkConfig.interfaces[0].ipv4.dhcpp: unknown field `dhcpp`, expected one of `enabled`, `dhcp`, `autoconf`, `dhcp-client-id`, `dhcp-duid`, `address`, `auto-dns`, `auto-gateway`, `auto-routes`, `auto-route-table-id`, `auto-route-metric`, `addr-gen-mode`, `allow-extra-address`, `token`, `dhcp-send-hostname`, `dhcp-custom-hostname`",
		}},
	{name: "network-config-vlan-id", ac: []edit{sub("          prefix-length: 24\n", "          prefix-length: 24\n    - name: enp1s0.4095\n      type: vlan\n      vlan:\n        base-iface: enp1s0\n        id: 4095\n")},
		want: []string{
			`agent-config.yaml:27:13: hosts[0].networkConfig.interfaces[1].vlan.id: VLAN id 4095 is out of range: NetworkManager refuses it (vlan.id: the vlan id must be in range 0-4094 but is 4095)`,
		}},
	// agent-config: static addresses (issue #16 item 7); rules of ours,
	// assisted-service fails these only on the hosts
	{name: "static-ip-outside-machine-network", ac: []edit{withNet(2, "192.168.112.81")},
		want: []string{
			`agent-config.yaml:37:15: hosts[1].networkConfig.interfaces[0].ipv4.address[0].ip: Invalid value: "192.168.112.81": IP expected to be in one of the machine networks: 192.168.111.0/24; host master-1 has no address in them, static or from DHCP, so it cannot join the cluster`,
		}},
	{name: "static-ip-on-two-hosts", ac: []edit{withNet(3, "192.168.111.80")},
		want: []string{
			`agent-config.yaml:42:15: hosts[2].networkConfig.interfaces[0].ipv4.address[0].ip: Duplicate value: "192.168.111.80": hosts master-0 and master-2 both have this static address (master-0's at agent-config.yaml:21:15); each host needs its own`,
		}},
	{name: "api-vip-is-host-address", ic: []edit{sub("    - 192.168.111.5\n", "    - 192.168.111.80\n")},
		want: []string{
			`install-config.yaml:23:7: platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.80": VIP for API must not be a host's address; host master-0 has it at agent-config.yaml:21:15`,
		}},
	{name: "ingress-vip-is-host-address", ic: []edit{sub("    - 192.168.111.4\n", "    - 192.168.111.84\n")}, ac: []edit{withNet(5, "192.168.111.84")},
		want: []string{
			`install-config.yaml:25:7: platform.baremetal.ingressVIPs[0]: Invalid value: "192.168.111.84": VIP for Ingress must not be a host's address; host worker-1 has it at agent-config.yaml:54:15`,
		}},
	{name: "ingress-vip-is-rendezvous-ip", ac: []edit{sub("rendezvousIP: 192.168.111.80", "rendezvousIP: 192.168.111.4")},
		want: []string{
			`agent-config.yaml:5:15: warning: rendezvousIP: no host's networkConfig assigns 192.168.111.4; node zero must get it from DHCP`,
			`install-config.yaml:25:7: platform.baremetal.ingressVIPs[0]: Invalid value: "192.168.111.4": VIP for Ingress must not be the rendezvousIP (agent-config.yaml:5:15): node zero has that address`,
		}},
	{name: "rendezvous-owned-by-no-host-all-static", ac: append(allStatic(), sub("rendezvousIP: 192.168.111.80", "rendezvousIP: 192.168.111.90")),
		want: []string{
			`agent-config.yaml:5:15: rendezvousIP: Invalid value: "192.168.111.90": no host can become node zero: no host's networkConfig assigns this address, and every host has a static networkConfig with DHCP off for all its interfaces`,
		}},
	{name: "rendezvous-owned-by-no-host-one-dhcp-warns", ac: append(allStatic(), sub("rendezvousIP: 192.168.111.80", "rendezvousIP: 192.168.111.90"),
		sub("      mac-address: 52:54:00:00:00:05\n      ipv4:\n        enabled: true\n", "      mac-address: 52:54:00:00:00:05\n      ipv4:\n        enabled: true\n        dhcp: true\n")),
		want: []string{
			`agent-config.yaml:5:15: warning: rendezvousIP: no host's networkConfig assigns 192.168.111.90; node zero must get it from DHCP`,
		}},
	{name: "address-errors-collected", ic: []edit{sub("    - 192.168.111.5\n", "    - 192.168.111.82\n")},
		ac: []edit{withNet(2, "10.9.9.9"), withNet(3, "192.168.111.82"), withNet(4, "192.168.111.82")},
		want: []string{
			`agent-config.yaml:37:15: hosts[1].networkConfig.interfaces[0].ipv4.address[0].ip: Invalid value: "10.9.9.9": IP expected to be in one of the machine networks: 192.168.111.0/24; host master-1 has no address in them, static or from DHCP, so it cannot join the cluster`,
			`agent-config.yaml:69:15: hosts[3].networkConfig.interfaces[0].ipv4.address[0].ip: Duplicate value: "192.168.111.82": hosts master-2 and worker-0 both have this static address (master-2's at agent-config.yaml:53:15); each host needs its own`,
			`install-config.yaml:23:7: platform.baremetal.apiVIPs[0]: Invalid value: "192.168.111.82": VIP for API must not be a host's address; host master-2 has it at agent-config.yaml:53:15`,
		}},
	{name: "ic-hosts-ignored-warns", ic: []edit{sub("    ingressVIPs:\n", "    hosts:\n    - name: extra\n      bootMACAddress: 52:54:00:00:00:09\n    ingressVIPs:\n")},
		want: []string{
			`install-config.yaml:25:5: warning: platform.baremetal.hosts: hosts from install-config.yaml are ignored; agent-config.yaml lists hosts`,
		}},
	{name: "ic-hosts-need-boot-mac", ic: []edit{sub("    ingressVIPs:\n", "    hosts:\n    - name: master-0\n      role: master\n    ingressVIPs:\n")}, ac: []edit{sub(baseAC[strings.Index(baseAC, "hosts:"):], "")},
		want: []string{
			`install-config.yaml:25:5: warning: platform.baremetal.hosts: 1 of 5 hosts are defined; the others register without host-specific settings (role, disk, network)`,
			`install-config.yaml:25:7: platform.baremetal.hosts[0].bootMACAddress: Required value: host bootMACAddress is required`,
		}},
}

func TestInvalidInputs(t *testing.T) {
	if len(invalidCases) < 40 {
		t.Fatalf("got %d cases, want at least 40", len(invalidCases))
	}
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			got := loadAndValidate(t, apply(t, baseIC, tc.ic), apply(t, baseAC, tc.ac), !tc.noAC)
			if os.Getenv("PRINT_CASES") != "" {
				fmt.Printf("CASE %s\n%s\nEND\n", tc.name, strings.Join(got, "\n"))
				return
			}
			if len(tc.want) == 0 {
				t.Fatalf("case has no expectation")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBaseIsValid(t *testing.T) {
	if got := loadAndValidate(t, baseIC, baseAC, true); len(got) != 0 {
		t.Fatalf("base inputs report:\n%s\nwant nothing", strings.Join(got, "\n"))
	}
}

// TestAddressRulesAllow: the address rules leave alone what is valid: a
// second address outside the machine networks (a storage network), an
// address outside them on a host that also takes one from DHCP, hosts of a
// multi-node cluster with user-managed networking, and a rendezvous IP that
// some host can still get from DHCP (a warning, not an error).
func TestAddressRulesAllow(t *testing.T) {
	storage := "      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.81\n          prefix-length: 24\n" +
		"    - name: enp2s0\n      type: ethernet\n      state: up\n      ipv4:\n        enabled: true\n        address:\n        - ip: 10.10.0.81\n          prefix-length: 24\n"
	dhcp := "      ipv4:\n        enabled: true\n        address:\n        - ip: 10.10.0.81\n          prefix-length: 24\n" +
		"    - name: enp2s0\n      type: ethernet\n      state: up\n      ipv4:\n        enabled: true\n        dhcp: true\n"
	ipv4Of81 := "      ipv4:\n        enabled: true\n        address:\n        - ip: 192.168.111.81\n          prefix-length: 24\n"
	noneVIPs := sub("  baremetal:\n    apiVIPs:\n    - 192.168.111.5\n    ingressVIPs:\n    - 192.168.111.4\n", "  none: {}\n")
	unassigned := sub("rendezvousIP: 192.168.111.80", "rendezvousIP: 192.168.111.90")
	warnUnassigned := `agent-config.yaml:5:15: warning: rendezvousIP: no host's networkConfig assigns 192.168.111.90; node zero must get it from DHCP`
	cases := []struct {
		name   string
		ic, ac []edit
		want   []string
	}{
		{name: "second address on a storage network", ac: []edit{withNet(2, "192.168.111.81"), sub(ipv4Of81, storage)}},
		{name: "outside address and DHCP on another NIC", ac: []edit{withNet(2, "192.168.111.81"), sub(ipv4Of81, dhcp)}},
		{name: "user-managed networking multi-node", ic: []edit{noneVIPs}, ac: []edit{withNet(2, "10.10.0.81")}},
		{name: "rendezvous IP with a NIC left to DHCP", ac: append(allStatic(), unassigned,
			sub("  - name: enp1s0\n    macAddress: 52:54:00:00:00:05\n", "  - name: enp1s0\n    macAddress: 52:54:00:00:00:05\n  - name: enp2s0\n    macAddress: 52:54:00:00:00:15\n")),
			want: []string{warnUnassigned}},
		{name: "rendezvous IP with a host not listed", ic: []edit{sub("  replicas: 2\n", "  replicas: 3\n")}, ac: append(allStatic(), unassigned),
			want: []string{warnUnassigned, `agent-config.yaml:7:1: warning: hosts: 5 of 6 hosts are defined; the others register without host-specific settings (role, disk, network)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := loadAndValidate(t, apply(t, baseIC, tc.ic), apply(t, baseAC, tc.ac), true)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("report mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// hostLines is n install-config hosts of three lines each.
func hostLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "    - name: master-%d\n      role: master\n      bootMACAddress: 52:54:00:00:00:0%d\n", i, i)
	}
	return b.String()
}
