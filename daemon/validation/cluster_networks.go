package validation

import (
	"net"

	"github.com/nodezero/nodezero/wire"
)

// Network configuration validations of a cluster (assisted
// internal/cluster/validator.go).

func clusterClusterCIDRDefined(c *clusterContext) (wire.ValidationStatus, string) {
	if len(clusterNetworkCIDRs(c.c)) > 0 {
		return wire.ValidationSuccess, "The Cluster Network CIDR is defined."
	}
	return wire.ValidationFailure, "The Cluster Network CIDR is undefined."
}

func clusterServiceCIDRDefined(c *clusterContext) (wire.ValidationStatus, string) {
	if len(serviceNetworkCIDRs(c.c)) > 0 {
		return wire.ValidationSuccess, "The Service Network CIDR is defined."
	}
	return wire.ValidationFailure, "The Service Network CIDR is undefined."
}

func clusterDNSDomainDefined(c *clusterContext) (wire.ValidationStatus, string) {
	if c.c.BaseDNSDomain != "" {
		return wire.ValidationSuccess, "The base domain is defined."
	}
	return wire.ValidationFailure, "The base domain is undefined and must be provided."
}

func clusterNoCIDRsOverlapping(c *clusterContext) (wire.ValidationStatus, string) {
	clusterNets, serviceNets := clusterNetworkCIDRs(c.c), serviceNetworkCIDRs(c.c)
	required := machineNetworkRequired(c.c)
	if len(clusterNets) == 0 || len(serviceNets) == 0 || (required && !c.machineDefined()) {
		if isUMN(c.c) {
			return wire.ValidationPending, "At least one of the CIDRs (Cluster Network, Service Network) is undefined."
		}
		return wire.ValidationPending, "At least one of the CIDRs (Machine Network, Cluster Network, Service Network) is undefined."
	}
	if len(clusterNets) != len(serviceNets) {
		return wire.ValidationError, "A mismatch between the number of Cluster and Service networks"
	}
	// The lists hold one network per family in the same order; a missing
	// machine network at an index reuses the previous one, as in assisted.
	machine := machineNetworkCIDRs(c.c)
	var m string
	for i := range clusterNets {
		if i < len(machine) {
			m = machine[i]
		}
		if p := clusterCIDRsOverlap(m, clusterNets[i], serviceNets[i], required); p != "" {
			return wire.ValidationFailure, "CIDRS Overlapping: " + p + "."
		}
	}
	return wire.ValidationSuccess, "No CIDRS are overlapping."
}

func clusterSameAddressFamilies(c *clusterContext) (wire.ValidationStatus, string) {
	clusterNets, serviceNets := clusterNetworkCIDRs(c.c), serviceNetworkCIDRs(c.c)
	required := machineNetworkRequired(c.c)
	if !required && (len(clusterNets) == 0 || len(serviceNets) == 0) {
		return wire.ValidationPending, "At least one of the CIDRs (Cluster Network, Service Network) is undefined."
	}
	if required && (!c.machineDefined() || len(clusterNets) == 0 || len(serviceNets) == 0) {
		return wire.ValidationPending, "At least one of the CIDRs (Machine Network, Cluster Network, Service Network) is undefined."
	}
	serviceFams, err := families(serviceNets)
	if err != nil {
		return wire.ValidationError, "Bad CIDR(s) appears in one of the networks"
	}
	clusterFams, err := families(clusterNets)
	if err != nil {
		return wire.ValidationError, "Bad CIDR(s) appears in one of the networks"
	}
	if !sameFamilies(serviceFams, canonFamilies(clusterFams)) {
		return wire.ValidationFailure, "Address families of networks (ServiceNetworks, ClusterNetworks) are not the same."
	}
	if required {
		machineFams, err := families(machineNetworkCIDRs(c.c))
		if err != nil {
			return wire.ValidationError, "Error getting machine address families for cluster " + c.c.ID
		}
		if !sameFamilies(serviceFams, canonFamilies(machineFams)) {
			return wire.ValidationFailure, "Address families of networks (MachineNetworks, ServiceNetworks, ClusterNetworks) are not the same."
		}
	}
	return wire.ValidationSuccess, "Same address families for all networks."
}

// Default host prefixes used to size-check a cluster network whose
// network plugin ignores hostPrefix.
const (
	defaultIPv4HostPrefix = 25
	defaultIPv6HostPrefix = 64
)

func clusterNetworkPrefixValid(c *clusterContext) (wire.ValidationStatus, string) {
	if len(clusterNetworkCIDRs(c.c)) == 0 {
		return wire.ValidationPending, "The Cluster Network CIDR is undefined."
	}
	// Only OVN-Kubernetes and OpenShiftSDN use hostPrefix.
	t := effectiveNetworkType(c.c)
	skip := t != string(wire.ClusterNetworkTypeOVNKubernetes) && t != string(wire.ClusterNetworkTypeOpenShiftSDN)
	for _, n := range c.c.ClusterNetworks {
		if n == nil || n.CIDR == "" {
			continue
		}
		prefix := int(n.HostPrefix)
		if skip {
			prefix = defaultIPv4HostPrefix
			if isIPv6(string(n.CIDR)) {
				prefix = defaultIPv6HostPrefix
			}
		} else if p := hostPrefixProblem(n.HostPrefix); p != "" {
			return wire.ValidationFailure, "Invalid Cluster Network prefix: " + p + "."
		}
		if p := clusterCIDRSizeProblem(prefix, string(n.CIDR), len(c.hosts)); p != "" {
			return wire.ValidationFailure, p
		}
	}
	return wire.ValidationSuccess, "The Cluster Network prefix is valid."
}

func clusterNetworkTypeValid(c *clusterContext) (wire.ValidationStatus, string) {
	nt := c.c.NetworkType
	if nt != nil {
		switch *nt {
		case wire.ClusterNetworkTypeOVNKubernetes, wire.ClusterNetworkTypeOpenShiftSDN, wire.ClusterNetworkTypeCilium,
			wire.ClusterNetworkTypeCalico, wire.ClusterNetworkTypeCiscoACI, wire.ClusterNetworkTypeNone:
		default:
			return wire.ValidationFailure, "The network type is not valid; the valid network types are OpenShiftSDN, OVNKubernetes, Cilium, Calico, CiscoACI, or None"
		}
	}
	sdn := nt != nil && *nt == wire.ClusterNetworkTypeOpenShiftSDN
	if sdn {
		all := append(append(clusterNetworkCIDRs(c.c), serviceNetworkCIDRs(c.c)...), machineNetworkCIDRs(c.c)...)
		for _, s := range all {
			if _, _, err := net.ParseCIDR(s); err == nil && isIPv6(s) {
				return wire.ValidationFailure, "The cluster is configured with IPv6 which is not supported by OpenShiftSDN; use OVNKubernetes instead"
			}
		}
		if c.sno {
			return wire.ValidationFailure, "Control Plane Count '1' (SNO) is not supported by OpenShiftSDN; use another network type instead"
		}
	}
	if isDHCP(c.c) && nt != nil && *nt == wire.ClusterNetworkTypeOVNKubernetes {
		return wire.ValidationFailure, "VIP DHCP allocation is not supported when the cluster is configured to use OVNKubernetes."
	}
	return wire.ValidationSuccess, "The cluster has a valid network type"
}
