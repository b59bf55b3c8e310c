package assisted

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/wire"
)

// Input checks shared by the request handlers. Each returns the problems it
// found as "field: what is wrong" lines, so one request reports them all.

func checkUUID(field, s string) error {
	if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
		return badRequest("%s: %q is not a UUID", field, s)
	}
	return nil
}

// checkPullSecret wants what openshift-install wants: JSON with an "auths"
// object whose entries carry an "auth" or a "username"+"password".
func checkPullSecret(field, ps string) []string {
	if ps == "" {
		return []string{field + ": required"}
	}
	var v struct {
		Auths map[string]map[string]any `json:"auths"`
	}
	if err := json.Unmarshal([]byte(ps), &v); err != nil {
		return []string{fmt.Sprintf("%s: not valid JSON: %v", field, err)}
	}
	if len(v.Auths) == 0 {
		return []string{field + ": has no \"auths\" entries"}
	}
	var probs []string
	for reg, e := range v.Auths {
		if _, ok := e["auth"]; !ok {
			if _, ok := e["username"]; !ok {
				probs = append(probs, fmt.Sprintf("%s: auths[%q] has neither \"auth\" nor \"username\"", field, reg))
			}
		}
	}
	sort.Strings(probs)
	return probs
}

var domainLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func checkDomain(field, d string) []string {
	if len(d) > 253 {
		return []string{fmt.Sprintf("%s: %q is longer than 253 characters", field, d)}
	}
	for _, l := range strings.Split(strings.TrimSuffix(d, "."), ".") {
		if !domainLabelRE.MatchString(l) {
			return []string{fmt.Sprintf("%s: %q is not a valid DNS domain (label %q)", field, d, l)}
		}
	}
	return nil
}

func checkCIDR(field, s string) []string {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return []string{fmt.Sprintf("%s: %q is not a CIDR", field, s)}
	}
	if p.Masked() != p {
		return []string{fmt.Sprintf("%s: %q has host bits set (network is %s)", field, s, p.Masked())}
	}
	return nil
}

func checkVIPs(clusterID string, api []*wire.APIVIP, ingress []*wire.IngressVIP) []string {
	var probs []string
	for i, v := range api {
		if v == nil {
			probs = append(probs, fmt.Sprintf("api_vips[%d]: null", i))
			continue
		}
		v.ClusterID = clusterID
		if _, err := netip.ParseAddr(string(v.IP)); err != nil {
			probs = append(probs, fmt.Sprintf("api_vips[%d].ip: %q is not an IP address", i, v.IP))
		}
	}
	for i, v := range ingress {
		if v == nil {
			probs = append(probs, fmt.Sprintf("ingress_vips[%d]: null", i))
			continue
		}
		v.ClusterID = clusterID
		if _, err := netip.ParseAddr(string(v.IP)); err != nil {
			probs = append(probs, fmt.Sprintf("ingress_vips[%d].ip: %q is not an IP address", i, v.IP))
		}
	}
	if len(api) > 2 || len(ingress) > 2 {
		probs = append(probs, "api_vips, ingress_vips: at most two each (one per address family)")
	}
	return probs
}

// applyClusterUpdate returns the cluster with p applied, or every problem.
// It does not change c.
func applyClusterUpdate(c *clusterRec, p *wire.V2ClusterUpdateParams) (wire.Cluster, string, error) {
	next := *cloneJSON(&c.c)
	secret := c.pullSecret
	var probs []string
	if p.Name != nil {
		if *p.Name == "" || len(*p.Name) > 54 || !clusterNameRE.MatchString(*p.Name) {
			probs = append(probs, fmt.Sprintf("name: %q must be 1 to 54 lowercase letters, digits and '-', starting with a letter", *p.Name))
		}
		next.Name = *p.Name
	}
	if p.BaseDNSDomain != nil {
		probs = append(probs, checkDomain("base_dns_domain", *p.BaseDNSDomain)...)
		next.BaseDNSDomain = *p.BaseDNSDomain
	}
	if p.PullSecret != nil {
		probs = append(probs, checkPullSecret("pull_secret", *p.PullSecret)...)
		secret = *p.PullSecret
	}
	if p.SSHPublicKey != nil {
		next.SSHPublicKey = *p.SSHPublicKey
	}
	probs = append(probs, nullElements("cluster_networks", p.ClusterNetworks)...)
	probs = append(probs, nullElements("service_networks", p.ServiceNetworks)...)
	probs = append(probs, nullElements("machine_networks", p.MachineNetworks)...)
	if p.ClusterNetworks != nil {
		next.ClusterNetworks = p.ClusterNetworks
		for i, n := range next.ClusterNetworks {
			if n == nil {
				continue // reported by nullElements
			}
			n.ClusterID = next.ID
			probs = append(probs, checkCIDR(fmt.Sprintf("cluster_networks[%d].cidr", i), string(n.CIDR))...)
		}
	}
	if p.ServiceNetworks != nil {
		next.ServiceNetworks = p.ServiceNetworks
		for i, n := range next.ServiceNetworks {
			if n == nil {
				continue // reported by nullElements
			}
			n.ClusterID = next.ID
			probs = append(probs, checkCIDR(fmt.Sprintf("service_networks[%d].cidr", i), string(n.CIDR))...)
		}
	}
	umn := next.UserManagedNetworking != nil && *next.UserManagedNetworking
	if p.UserManagedNetworking != nil {
		umn = *p.UserManagedNetworking
		next.UserManagedNetworking = &umn
	}
	dhcp := next.VIPDHCPAllocation != nil && *next.VIPDHCPAllocation
	if p.VIPDHCPAllocation != nil {
		dhcp = *p.VIPDHCPAllocation
		next.VIPDHCPAllocation = &dhcp
	}
	userLB := next.LoadBalancer != nil && next.LoadBalancer.Type == wire.LoadBalancerTypeUserManaged
	if p.LoadBalancer != nil {
		next.LoadBalancer = p.LoadBalancer
		userLB = p.LoadBalancer.Type == wire.LoadBalancerTypeUserManaged
	}
	if p.MachineNetworks != nil {
		// assisted-service derives the machine network for multi-node,
		// cluster-managed, non-DHCP clusters and refuses a user value.
		if !umn && !dhcp && !userLB && next.ControlPlaneCount != 1 {
			probs = append(probs, "machine_networks: Setting the Machine Network CIDR is forbidden when the cluster is neither in VIP DHCP allocation mode nor using a user-managed load balancer")
		}
		next.MachineNetworks = p.MachineNetworks
		for i, n := range next.MachineNetworks {
			if n == nil {
				continue // reported by nullElements
			}
			n.ClusterID = next.ID
			probs = append(probs, checkCIDR(fmt.Sprintf("machine_networks[%d].cidr", i), string(n.CIDR))...)
		}
	}
	if p.APIVIPs != nil {
		next.APIVIPs = p.APIVIPs
	}
	if p.IngressVIPs != nil {
		next.IngressVIPs = p.IngressVIPs
	}
	probs = append(probs, checkVIPs(next.ID, next.APIVIPs, next.IngressVIPs)...)
	if p.APIVIPDNSName != nil {
		next.APIVIPDNSName = p.APIVIPDNSName
	}
	if p.HTTPProxy != nil {
		next.HTTPProxy = *p.HTTPProxy
	}
	if p.HTTPSProxy != nil {
		next.HTTPSProxy = *p.HTTPSProxy
	}
	if p.NoProxy != nil {
		next.NoProxy = *p.NoProxy
	}
	if p.AdditionalNTPSource != nil {
		next.AdditionalNTPSource = *p.AdditionalNTPSource
	}
	if p.NTPSources != nil {
		next.NTPSources = *p.NTPSources
	}
	if p.NetworkType != nil {
		next.NetworkType = p.NetworkType
	}
	if p.Hyperthreading != nil {
		next.Hyperthreading = *p.Hyperthreading
	}
	if p.SchedulableMasters {
		next.SchedulableMasters = true
	}
	if p.Platform != nil {
		next.Platform = p.Platform
	}
	if p.ControlPlaneCount != nil {
		cp := *p.ControlPlaneCount
		if cp != 1 && (cp < 3 || cp > 5) {
			probs = append(probs, fmt.Sprintf("control_plane_count: %d is not allowed: use 1 (single node) or 3 to 5", cp))
		}
		next.ControlPlaneCount = cp
	}
	if p.Tags != nil {
		next.Tags = *p.Tags
	}
	if p.DiskEncryption != nil {
		next.DiskEncryption = p.DiskEncryption
	}
	if p.IgnitionEndpoint != nil {
		probs = append(probs, checkIgnitionEndpoint(p.IgnitionEndpoint)...)
		next.IgnitionEndpoint = mergeIgnitionEndpoint(next.IgnitionEndpoint, p.IgnitionEndpoint)
	}
	if len(probs) > 0 {
		return wire.Cluster{}, "", badRequest("invalid cluster update: %s", strings.Join(probs, "; "))
	}
	return next, secret, nil
}

func sortBy[T any](s []T, key func(T) string) {
	sort.SliceStable(s, func(i, j int) bool { return key(s[i]) < key(s[j]) })
}

// sortedHosts orders hosts by registration time, then id: a stable order
// for lists and for the rules that walk hosts.
func sortedHosts(m map[hostKey]*hostRec) []*hostRec {
	out := make([]*hostRec, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return hostLess(out[i], out[j]) })
	return out
}

func hostLess(a, b *hostRec) bool {
	if !a.h.CreatedAt.Equal(b.h.CreatedAt) {
		return a.h.CreatedAt.Before(b.h.CreatedAt)
	}
	return a.h.ID < b.h.ID
}

// nullElements names the null entries of a JSON array of objects.
func nullElements[T any](field string, list []*T) []string {
	var probs []string
	for i, e := range list {
		if e == nil {
			probs = append(probs, fmt.Sprintf("%s[%d]: null, an object was expected", field, i))
		}
	}
	return probs
}

// checkInventory refuses an inventory the validations cannot read: null
// entries in its lists.
func checkInventory(inv *wire.Inventory) error {
	var probs []string
	probs = append(probs, nullElements("disks", inv.Disks)...)
	probs = append(probs, nullElements("interfaces", inv.Interfaces)...)
	probs = append(probs, nullElements("routes", inv.Routes)...)
	probs = append(probs, nullElements("gpus", inv.GPUs)...)
	if len(probs) > 0 {
		return badRequest("output: inventory: %s", strings.Join(probs, "; "))
	}
	return nil
}
