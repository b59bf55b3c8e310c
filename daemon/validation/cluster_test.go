package validation

import (
	"testing"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// clusterScene is testCluster with testHosts: 3 masters and 2 workers, all
// known, all inside the machine network.
type clusterScene struct {
	v  *Validator
	in ClusterInput
}

func newClusterScene() *clusterScene {
	return &clusterScene{v: &Validator{}, in: ClusterInput{Cluster: testCluster(), Hosts: testHosts()}}
}

func autoAssign(hosts []HostEntry) {
	for _, h := range hosts {
		h.Host.Role = wire.HostRoleAutoAssign
	}
}

func TestClusterValidations(t *testing.T) {
	tests := []struct {
		name   string
		id     wire.ClusterValidationID
		setup  func(s *clusterScene)
		status wire.ValidationStatus
		msg    string
	}{
		// machine-cidr-defined
		{"machine-cidr-defined/defined", wire.ClusterValidationIDMachineCIDRDefined, nil,
			wire.ValidationSuccess, "The Machine Network CIDR is defined."},
		{"machine-cidr-defined/before hosts report", wire.ClusterValidationIDMachineCIDRDefined,
			func(s *clusterScene) {
				s.in.Cluster.MachineNetworks = nil
				for _, h := range s.in.Hosts {
					h.Inventory = nil
				}
				s.in.Hosts = []HostEntry{{Host: s.in.Hosts[0].Host}}
			},
			wire.ValidationPending, "Hosts have not been discovered yet"},
		{"machine-cidr-defined/undefined", wire.ClusterValidationIDMachineCIDRDefined,
			func(s *clusterScene) { s.in.Cluster.MachineNetworks = nil },
			wire.ValidationFailure, "The Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs."},
		{"machine-cidr-defined/undefined for SNO", wire.ClusterValidationIDMachineCIDRDefined,
			func(s *clusterScene) { s.in.Cluster.MachineNetworks, s.in.Cluster.ControlPlaneCount = nil, 1 },
			wire.ValidationFailure, "The Machine Network CIDR is undefined; Setting Machine Network CIDR is required for single node cluster"},
		{"machine-cidr-defined/multi-node UMN", wire.ClusterValidationIDMachineCIDRDefined,
			func(s *clusterScene) {
				s.in.Cluster.MachineNetworks, s.in.Cluster.UserManagedNetworking = nil, ptr(true)
			},
			wire.ValidationSuccess, "No Machine Network CIDR needed: User Managed Networking"},
		// cluster-cidr-defined, service-cidr-defined
		{"cluster-cidr-defined/defined", wire.ClusterValidationIDClusterCIDRDefined, nil,
			wire.ValidationSuccess, "The Cluster Network CIDR is defined."},
		{"cluster-cidr-defined/undefined", wire.ClusterValidationIDClusterCIDRDefined,
			func(s *clusterScene) { s.in.Cluster.ClusterNetworks = nil },
			wire.ValidationFailure, "The Cluster Network CIDR is undefined."},
		{"service-cidr-defined/defined", wire.ClusterValidationIDServiceCIDRDefined, nil,
			wire.ValidationSuccess, "The Service Network CIDR is defined."},
		{"service-cidr-defined/undefined", wire.ClusterValidationIDServiceCIDRDefined,
			func(s *clusterScene) { s.in.Cluster.ServiceNetworks = nil },
			wire.ValidationFailure, "The Service Network CIDR is undefined."},
		// no-cidrs-overlapping
		{"no-cidrs-overlapping/disjoint", wire.ClusterValidationIDNoCidrsOverlapping, nil,
			wire.ValidationSuccess, "No CIDRS are overlapping."},
		{"no-cidrs-overlapping/service inside machine", wire.ClusterValidationIDNoCidrsOverlapping,
			func(s *clusterScene) { s.in.Cluster.ServiceNetworks[0].CIDR = "192.168.111.128/25" },
			wire.ValidationFailure, "CIDRS Overlapping: MachineNetworkCIDR and ServiceNetworkCIDR: CIDRS 192.168.111.0/24 and 192.168.111.128/25 overlap."},
		{"no-cidrs-overlapping/service inside cluster network", wire.ClusterValidationIDNoCidrsOverlapping,
			func(s *clusterScene) { s.in.Cluster.ServiceNetworks[0].CIDR = "10.130.0.0/16" },
			wire.ValidationFailure, "CIDRS Overlapping: ServiceNetworkCidr and ClusterNetworkCidr: CIDRS 10.130.0.0/16 and 10.128.0.0/14 overlap."},
		{"no-cidrs-overlapping/machine network missing", wire.ClusterValidationIDNoCidrsOverlapping,
			func(s *clusterScene) { s.in.Cluster.MachineNetworks = nil },
			wire.ValidationPending, "At least one of the CIDRs (Machine Network, Cluster Network, Service Network) is undefined."},
		// networks-same-address-families
		{"networks-same-address-families/all IPv4", wire.ClusterValidationIDNetworksSameAddressFamilies, nil,
			wire.ValidationSuccess, "Same address families for all networks."},
		{"networks-same-address-families/IPv6 service network", wire.ClusterValidationIDNetworksSameAddressFamilies,
			func(s *clusterScene) { s.in.Cluster.ServiceNetworks[0].CIDR = "fd02::/112" },
			wire.ValidationFailure, "Address families of networks (ServiceNetworks, ClusterNetworks) are not the same."},
		{"networks-same-address-families/IPv6 machine network", wire.ClusterValidationIDNetworksSameAddressFamilies,
			func(s *clusterScene) { s.in.Cluster.MachineNetworks[0].CIDR = "fd00::/64" },
			wire.ValidationFailure, "Address families of networks (MachineNetworks, ServiceNetworks, ClusterNetworks) are not the same."},
		{"networks-same-address-families/pending", wire.ClusterValidationIDNetworksSameAddressFamilies,
			func(s *clusterScene) { s.in.Cluster.ClusterNetworks = nil },
			wire.ValidationPending, "At least one of the CIDRs (Machine Network, Cluster Network, Service Network) is undefined."},
		// network-prefix-valid
		{"network-prefix-valid/valid", wire.ClusterValidationIDNetworkPrefixValid, nil,
			wire.ValidationSuccess, "The Cluster Network prefix is valid."},
		{"network-prefix-valid/host prefix 0", wire.ClusterValidationIDNetworkPrefixValid,
			func(s *clusterScene) { s.in.Cluster.ClusterNetworks[0].HostPrefix = 0 },
			wire.ValidationFailure, "Invalid Cluster Network prefix: Host prefix, now 0, must be a positive integer."},
		{"network-prefix-valid/host prefix too long", wire.ClusterValidationIDNetworkPrefixValid,
			func(s *clusterScene) { s.in.Cluster.ClusterNetworks[0].HostPrefix = 26 },
			wire.ValidationFailure, "Host prefix, now 26, must be less than or equal to 25 to allow at least 128 addresses"},
		{"network-prefix-valid/too few subnets for the hosts", wire.ClusterValidationIDNetworkPrefixValid,
			func(s *clusterScene) {
				s.in.Cluster.ClusterNetworks[0] = &wire.ClusterNetwork{CIDR: "10.128.0.0/22", HostPrefix: 23}
			},
			wire.ValidationFailure, "Cluster network CIDR prefix 22 does not contain enough addresses for 5 hosts each one with 23 prefix (512 addresses)"},
		{"network-prefix-valid/pending", wire.ClusterValidationIDNetworkPrefixValid,
			func(s *clusterScene) { s.in.Cluster.ClusterNetworks = nil },
			wire.ValidationPending, "The Cluster Network CIDR is undefined."},
		// api-vips-defined, ingress-vips-defined
		{"api-vips-defined/defined", wire.ClusterValidationIDAPIVIPsDefined, nil,
			wire.ValidationSuccess, "API virtual IPs are defined."},
		{"api-vips-defined/undefined", wire.ClusterValidationIDAPIVIPsDefined,
			func(s *clusterScene) { s.in.Cluster.APIVIPs = nil },
			wire.ValidationFailure, "API virtual IPs are undefined and must be provided."},
		{"api-vips-defined/SNO", wire.ClusterValidationIDAPIVIPsDefined,
			func(s *clusterScene) { s.in.Cluster.APIVIPs, s.in.Cluster.ControlPlaneCount = nil, 1 },
			wire.ValidationSuccess, "API virtual IPs are not required: SNO"},
		{"ingress-vips-defined/DHCP waiting for the machine network", wire.ClusterValidationIDIngressVIPsDefined,
			func(s *clusterScene) {
				s.in.Cluster.IngressVIPs, s.in.Cluster.MachineNetworks = nil, nil
				s.in.Cluster.VIPDHCPAllocation = ptr(true)
			},
			wire.ValidationPending, "The Machine Network CIDR is undefined"},
		{"ingress-vips-defined/DHCP lease", wire.ClusterValidationIDIngressVIPsDefined,
			func(s *clusterScene) {
				s.in.Cluster.IngressVIPs = nil
				s.in.Cluster.VIPDHCPAllocation = ptr(true)
			},
			wire.ValidationFailure, "Ingress virtual IPs are undefined; after the Machine Network CIDR has been defined, Ingress virtual IPs are received from a DHCP lease allocation task which may take up to 2 minutes."},
		// api-vips-valid, ingress-vips-valid
		{"api-vips-valid/inside, use not reported", wire.ClusterValidationIDAPIVIPsValid, nil,
			wire.ValidationSuccess, "api vips 192.168.111.5 belongs to the Machine CIDR; whether it is in use is not verified yet."},
		{"api-vips-valid/inside and free", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) {
				s.in.VIPUse = &VIPUse{Free: map[string]map[string]bool{"192.168.111.0/24": {"192.168.111.5": true, "192.168.111.4": true}}}
			},
			wire.ValidationSuccess, "api vips 192.168.111.5 belongs to the Machine CIDR and is not in use."},
		{"api-vips-valid/in use", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) {
				s.in.VIPUse = &VIPUse{Free: map[string]map[string]bool{"192.168.111.0/24": {"192.168.111.4": true}}}
			},
			wire.ValidationFailure, "api vips <192.168.111.5> is already in use in cidr 192.168.111.0/24"},
		{"api-vips-valid/verify-vips said failed", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) { s.in.Cluster.APIVIPs[0].Verification = wire.VIPVerificationFailed },
			wire.ValidationFailure, "api vips <192.168.111.5> is already in use in cidr 192.168.111.0/24"},
		{"api-vips-valid/use data without this network", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) { s.in.VIPUse = &VIPUse{Free: map[string]map[string]bool{}} },
			wire.ValidationFailure, "api vips <192.168.111.5> are not verified yet."},
		{"api-vips-valid/outside the machine network", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) { s.in.Cluster.APIVIPs[0].IP = "10.0.0.5" },
			wire.ValidationFailure, "api vips <10.0.0.5> does not belong to machine-network-cidr <192.168.111.0/24>"},
		{"api-vips-valid/broadcast address", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) { s.in.Cluster.APIVIPs[0].IP = "192.168.111.255" },
			wire.ValidationFailure, "api vips <192.168.111.255> is the broadcast address of machine-network-cidr <192.168.111.0/24>"},
		{"api-vips-valid/network address", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) { s.in.Cluster.APIVIPs[0].IP = "192.168.111.0" },
			wire.ValidationFailure, "api vips <192.168.111.0> is the network address of machine-network-cidr <192.168.111.0/24>"},
		{"api-vips-valid/same as ingress", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) { s.in.Cluster.IngressVIPs[0].IP = "192.168.111.5" },
			wire.ValidationFailure, `The IP address "192.168.111.5" appears both in apiVIPs and ingressVIPs`},
		{"api-vips-valid/pending before hosts report", wire.ClusterValidationIDAPIVIPsValid,
			func(s *clusterScene) {
				for i := range s.in.Hosts {
					s.in.Hosts[i].Inventory = nil
				}
			},
			wire.ValidationPending, "Hosts have not been discovered yet"},
		{"ingress-vips-valid/user-managed load balancer", wire.ClusterValidationIDIngressVIPsValid,
			func(s *clusterScene) {
				s.in.Cluster.LoadBalancer = &wire.LoadBalancer{Type: wire.LoadBalancerTypeUserManaged}
				s.in.Cluster.IngressVIPs[0].IP = "192.168.111.5" // may equal the API VIP
			},
			wire.ValidationSuccess, "ingress vip 192.168.111.5 is valid"},
		{"ingress-vips-valid/user-managed load balancer outside", wire.ClusterValidationIDIngressVIPsValid,
			func(s *clusterScene) {
				s.in.Cluster.LoadBalancer = &wire.LoadBalancer{Type: wire.LoadBalancerTypeUserManaged}
				s.in.Cluster.IngressVIPs[0].IP = "10.0.0.4"
			},
			wire.ValidationFailure, "ingress vip '10.0.0.4' failed verification: none of the machine networks is satisfying the requirements, description: machine network CIDR <192.168.111.0/24> verification failed: ingress vip <10.0.0.4> does not belong to machine-network-cidr <192.168.111.0/24>"},
		// machine-cidr-equals-to-calculated-cidr
		{"machine-cidr-equals-to-calculated-cidr/equal", wire.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR, nil,
			wire.ValidationSuccess, "The Cluster Machine CIDR is equivalent to the calculated CIDR."},
		{"machine-cidr-equals-to-calculated-cidr/different", wire.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR,
			func(s *clusterScene) { s.in.Cluster.MachineNetworks[0].CIDR = "192.168.0.0/16" },
			wire.ValidationFailure, "1 error occurred:\n\t* The Cluster Machine CIDR 192.168.0.0/16 is different than the calculated CIDR 192.168.111.0/24.\n\n"},
		{"machine-cidr-equals-to-calculated-cidr/no host in the VIP subnet", wire.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR,
			func(s *clusterScene) { s.in.Cluster.APIVIPs[0].IP = "10.9.9.9" },
			wire.ValidationFailure, "1 error occurred:\n\t* No suitable matching CIDR found for VIP 10.9.9.9\n\n"},
		// all-hosts-are-ready-to-install
		{"all-hosts-are-ready-to-install/all known", wire.ClusterValidationIDAllHostsAreReadyToInstall, nil,
			wire.ValidationSuccess, "All hosts in the cluster are ready to install."},
		{"all-hosts-are-ready-to-install/one insufficient", wire.ClusterValidationIDAllHostsAreReadyToInstall,
			func(s *clusterScene) { s.in.Hosts[4].Host.Status = wire.HostStatusInsufficient },
			wire.ValidationFailure, "The cluster has hosts that are not ready to install."},
		// sufficient-masters-count
		{"sufficient-masters-count/three masters", wire.ClusterValidationIDSufficientMastersCount, nil,
			wire.ValidationSuccess, "The cluster has the exact amount of dedicated control plane nodes."},
		{"sufficient-masters-count/two masters", wire.ClusterValidationIDSufficientMastersCount,
			func(s *clusterScene) { s.in.Hosts[2].Host.Role = wire.HostRoleWorker },
			wire.ValidationFailure, "The cluster must have exactly 3 dedicated control plane nodes. Add or remove hosts, or change their roles configurations to meet the requirement."},
		{"sufficient-masters-count/auto-assign candidates count", wire.ClusterValidationIDSufficientMastersCount,
			func(s *clusterScene) { autoAssign(s.in.Hosts) },
			wire.ValidationSuccess, "The cluster has the exact amount of dedicated control plane nodes."},
		{"sufficient-masters-count/auto-assign workers are no candidates", wire.ClusterValidationIDSufficientMastersCount,
			func(s *clusterScene) {
				autoAssign(s.in.Hosts)
				s.in.Hosts = append(s.in.Hosts[:1], s.in.Hosts[3:]...)
			},
			wire.ValidationFailure, "The cluster must have exactly 3 dedicated control plane nodes. Add or remove hosts, or change their roles configurations to meet the requirement."},
		{"sufficient-masters-count/two nodes without arbiter", wire.ClusterValidationIDSufficientMastersCount,
			func(s *clusterScene) {
				s.in.Cluster.ControlPlaneCount = 2
				s.in.Hosts = s.in.Hosts[:2]
			},
			wire.ValidationFailure, "The cluster must have exactly 2 dedicated control plane nodes and at least 1 arbiter node or the control plane nodes must have fencing credentials. Add or remove hosts, or change their roles configurations to meet the requirement."},
		{"sufficient-masters-count/two nodes with fencing", wire.ClusterValidationIDSufficientMastersCount,
			func(s *clusterScene) {
				s.in.Cluster.ControlPlaneCount = 2
				s.in.Hosts = s.in.Hosts[:2]
				for _, h := range s.in.Hosts {
					h.Host.FencingCredentials = `{"address":"redfish://bmc"}`
				}
			},
			wire.ValidationSuccess, "The cluster has the exact amount of dedicated control plane nodes."},
		{"sufficient-masters-count/SNO with a worker", wire.ClusterValidationIDSufficientMastersCount,
			func(s *clusterScene) {
				s.in.Cluster.ControlPlaneCount = 1
				s.in.Hosts = []HostEntry{s.in.Hosts[0], s.in.Hosts[3]}
				s.in.Hosts[0].Inventory.CPU.Count = 16
			},
			wire.ValidationFailure, "Single-node clusters must have a single control plane node and no workers."},
		// dns-domain-defined, pull-secret-set
		{"dns-domain-defined/defined", wire.ClusterValidationIDDNSDomainDefined, nil,
			wire.ValidationSuccess, "The base domain is defined."},
		{"dns-domain-defined/undefined", wire.ClusterValidationIDDNSDomainDefined,
			func(s *clusterScene) { s.in.Cluster.BaseDNSDomain = "" },
			wire.ValidationFailure, "The base domain is undefined and must be provided."},
		{"pull-secret-set/set", wire.ClusterValidationIDPullSecretSet, nil,
			wire.ValidationSuccess, "The pull secret is set."},
		{"pull-secret-set/not set", wire.ClusterValidationIDPullSecretSet,
			func(s *clusterScene) { s.in.Cluster.PullSecretSet = false },
			wire.ValidationFailure, "The pull secret is not set."},
		// ntp-server-configured
		{"ntp-server-configured/clocks agree", wire.ClusterValidationIDNTPServerConfigured, nil,
			wire.ValidationSuccess, "No ntp problems found"},
		{"ntp-server-configured/5 minutes apart", wire.ClusterValidationIDNTPServerConfigured,
			func(s *clusterScene) { s.in.Hosts[1].Host.Timestamp += 5 * 60 },
			wire.ValidationFailure, "Hosts' clocks are not synchronized (there's more than a 4 minutes gap between clocks), please configure an NTP server via DHCP or set clocks manually."},
		{"ntp-server-configured/disconnected host does not count", wire.ClusterValidationIDNTPServerConfigured,
			func(s *clusterScene) {
				s.in.Hosts[1].Host.Timestamp += 5 * 60
				s.in.Hosts[1].Host.Status = wire.HostStatusDisconnected
			},
			wire.ValidationSuccess, "No ntp problems found"},
		// network-type-valid
		{"network-type-valid/OVN", wire.ClusterValidationIDNetworkTypeValid, nil,
			wire.ValidationSuccess, "The cluster has a valid network type"},
		{"network-type-valid/unknown", wire.ClusterValidationIDNetworkTypeValid,
			func(s *clusterScene) { s.in.Cluster.NetworkType = ptr(wire.ClusterNetworkType("Flannel")) },
			wire.ValidationFailure, "The network type is not valid; the valid network types are OpenShiftSDN, OVNKubernetes, Cilium, Calico, CiscoACI, or None"},
		{"network-type-valid/SDN with IPv6", wire.ClusterValidationIDNetworkTypeValid,
			func(s *clusterScene) {
				s.in.Cluster.NetworkType = ptr(wire.ClusterNetworkTypeOpenShiftSDN)
				s.in.Cluster.ServiceNetworks[0].CIDR = "fd02::/112"
			},
			wire.ValidationFailure, "The cluster is configured with IPv6 which is not supported by OpenShiftSDN; use OVNKubernetes instead"},
		{"network-type-valid/OVN with VIP DHCP", wire.ClusterValidationIDNetworkTypeValid,
			func(s *clusterScene) { s.in.Cluster.VIPDHCPAllocation = ptr(true) },
			wire.ValidationFailure, "VIP DHCP allocation is not supported when the cluster is configured to use OVNKubernetes."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newClusterScene()
			if tc.setup != nil {
				tc.setup(s)
			}
			rep := s.v.ValidateCluster(s.in)
			got := findResult(t, rep, string(tc.id))
			if got.Status != tc.status || got.Message != tc.msg {
				t.Errorf("%s = %s %q, want %s %q", tc.id, got.Status, got.Message, tc.status, tc.msg)
			}
			if want := tc.status == wire.ValidationSuccess; rep.Conditions[string(tc.id)] != want {
				t.Errorf("condition %s = %v, want %v", tc.id, rep.Conditions[string(tc.id)], want)
			}
		})
	}
}

func TestClusterValidationsDisabled(t *testing.T) {
	for _, id := range ClusterValidationIDs() {
		t.Run(string(id), func(t *testing.T) {
			s := newClusterScene()
			s.in.Cluster.PullSecretSet = false
			s.in.Cluster.BaseDNSDomain = ""
			s.v.DisabledCluster = NewIDSet(string(id))
			s.v.HostConfigs = []manifests.HostConfig{}
			rep := s.v.ValidateCluster(s.in)
			got := findResult(t, rep, string(id))
			if got.Status != wire.ValidationDisabled || got.Message != "Validation disabled by configuration" {
				t.Errorf("%s = %s %q, want disabled", id, got.Status, got.Message)
			}
			if !rep.Conditions[string(id)] {
				t.Errorf("condition %s = false, want true", id)
			}
		})
	}
}

func TestClusterValidationsOnlyBeforeInstall(t *testing.T) {
	s := newClusterScene()
	s.in.Cluster.Status = wire.ClusterStatusInstalling
	rep := s.v.ValidateCluster(s.in)
	if len(rep.Results) != 0 || len(rep.Conditions) != 0 {
		t.Errorf("installing cluster evaluated %d results, want none", len(rep.Results))
	}
}

func TestClusterResultsSortedByID(t *testing.T) {
	rep := newClusterScene().v.ValidateCluster(newClusterScene().in)
	for i := 1; i < len(rep.Results); i++ {
		a, b := rep.Results[i-1], rep.Results[i]
		if a.Category > b.Category || (a.Category == b.Category && a.ID > b.ID) {
			t.Errorf("result %s/%s before %s/%s", a.Category, a.ID, b.Category, b.ID)
		}
	}
	if f := rep.Failing(); len(f) != 0 {
		t.Errorf("healthy cluster fails %v", f)
	}
}
