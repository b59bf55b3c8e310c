package validation

import (
	"fmt"
	"net"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Domain names the agent resolves for a cluster (assisted
// internal/host/hostcommands/domain_name_resolution_cmd.go, constants).
const (
	apiSubdomain           = "api"
	apiIntSubdomain        = "api-int"
	appsProbeSubdomain     = "console-openshift-console.apps"
	wildcardProbeSubdomain = "validateNoWildcardDNS"
)

// DomainsToResolve returns the names the service asks a cluster's hosts to
// resolve (the domain-resolution step), in assisted's order:
// api.<name>.<base>, api-int.<name>.<base>,
// console-openshift-console.apps.<name>.<base>, the wildcard probe
// validateNoWildcardDNS.<name>.<base> with and then without a trailing dot,
// and, except for a day-2 cluster, the release image's registry host when
// it is a name and not an address. It returns nil while the cluster has
// no name or base domain (assisted sends no step then).
func DomainsToResolve(c *wire.Cluster, releaseImage string) []string {
	if c == nil || c.Name == "" || c.BaseDNSDomain == "" {
		return nil
	}
	wildcard := clusterDomain(c, wildcardProbeSubdomain)
	out := []string{
		clusterDomain(c, apiSubdomain),
		clusterDomain(c, apiIntSubdomain),
		clusterDomain(c, appsProbeSubdomain),
		wildcard + ".",
		wildcard,
	}
	if !isDay2(c) {
		if h := ReleaseImageHost(releaseImage); h != "" && net.ParseIP(h) == nil {
			out = append(out, h)
		}
	}
	return out
}

// ReleaseImageHost returns the registry host of an image reference,
// without its port: "quay.io" for quay.io/openshift-release-dev/ocp-release:4.18.
// A reference without a registry part gives "".
func ReleaseImageHost(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if !ok || first == "" {
		return ""
	}
	if h, _, err := net.SplitHostPort(first); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(first, "[]")
}

func clusterDomain(c *wire.Cluster, sub string) string {
	return fmt.Sprintf("%s.%s.%s", sub, c.Name, c.BaseDNSDomain)
}

// releaseImage is the image whose registry the release-domain validation
// checks: the Validator's, else the cluster's.
func (c *hostContext) releaseImage() string { return c.v.ReleaseImageOf(c.cluster) }

// ReleaseImageOf is the release image whose registry host the hosts of c
// must resolve: the validator's, else the cluster's. The service asks the
// agents to resolve the same host (DomainsToResolve).
func (v *Validator) ReleaseImageOf(c *wire.Cluster) string {
	if v.ReleaseImage != "" || c == nil {
		return v.ReleaseImage
	}
	return c.OCPReleaseImage
}

func hostAPIDomainResolved(c *hostContext) (wire.ValidationStatus, string) {
	return c.clusterDomainResolved(apiSubdomain, "", "API load balancer")
}

func hostAPIIntDomainResolved(c *hostContext) (wire.ValidationStatus, string) {
	return c.clusterDomainResolved(apiIntSubdomain, "", "internal API load balancer")
}

func hostAppsDomainResolved(c *hostContext) (wire.ValidationStatus, string) {
	return c.clusterDomainResolved(appsProbeSubdomain, "*.apps", "application ingress")
}

// clusterDomainResolved: with cluster-managed networking (VIPs served by
// keepalived and the in-cluster DNS) and for a day-1 single-node cluster
// (assisted's dnsmasq entries, ENABLE_SINGLE_NODE_DNSMASQ, on for OCP) no
// DNS record is needed; otherwise the name must resolve, and not to this
// host's own address.
func (c *hostContext) clusterDomainResolved(sub, printSub, target string) (wire.ValidationStatus, string) {
	if c.cluster == nil {
		return statusHidden, ""
	}
	if printSub == "" {
		printSub = sub
	}
	domain := clusterDomain(c.cluster, sub)
	printable := clusterDomain(c.cluster, printSub)
	if c.cluster.BaseDNSDomain == "" {
		printable = target
	}
	notRequired := fmt.Sprintf("Domain name resolution for the %s domain was successful or not required", printable)
	if !isUMN(c.cluster) || (!isDay2(c.cluster) && c.sno) {
		return wire.ValidationSuccess, notRequired
	}
	if c.cluster.BaseDNSDomain == "" {
		return wire.ValidationError, fmt.Sprintf("DNS validation for the %s domain cannot be completed because the cluster does not have base_dns_domain set. Please update the cluster with the correct base_dns_domain", target)
	}
	return c.domainResolved(domain, printable, target)
}

// domainResolved is assisted's checkDomainNameResolution. Without any
// resolution result yet it is pending (assisted reports a parse error).
func (c *hostContext) domainResolved(domain, printable, target string) (wire.ValidationStatus, string) {
	d := c.checks.Domains
	if !d.Set {
		return wire.ValidationPending, fmt.Sprintf("DNS validation for the %s domain cannot be performed yet because the host has not yet performed DNS resolution", printable)
	}
	if d.Unreadable {
		return wire.ValidationError, "Error while evaluating DNS resolution on this host"
	}
	for _, r := range d.Value.Resolutions {
		if r == nil || r.DomainName != domain || len(r.IPv4Addresses)+len(r.IPv6Addresses)+len(r.Cnames) == 0 {
			continue
		}
		if ip := c.ownAddress(r); ip != "" {
			return wire.ValidationFailure, fmt.Sprintf("Domain %s must not point at %s as it is the API address of this host. This domain must instead point at the IP address of a load balancer when using user managed networking in a multi control-plane node cluster", printable, ip)
		}
		return wire.ValidationSuccess, fmt.Sprintf("Domain name resolution for the %s domain was successful or not required", printable)
	}
	return wire.ValidationFailure, fmt.Sprintf("Couldn't resolve domain name %s on the host. To continue installation, create the necessary DNS entries to resolve this domain name to your cluster's %s IP address", printable, target)
}

// ownAddress returns the first resolved address that is one of this
// host's inventory addresses.
func (c *hostContext) ownAddress(r *wire.DomainResolutionResponseResolutionsItem) string {
	if c.inv == nil {
		return ""
	}
	mine := c.ownIPs()
	for _, a := range append(append([]string{}, r.IPv4Addresses...), r.IPv6Addresses...) {
		if ip := net.ParseIP(a); ip != nil && mine[ip.String()] {
			return a
		}
	}
	return ""
}

// hostReleaseDomainResolved is the validation assisted has switched off
// (MGMT-15213: wrong behind a mirror or proxy); nodezero shows it without
// gating on it.
func hostReleaseDomainResolved(c *hostContext) (wire.ValidationStatus, string) {
	if c.cluster == nil {
		return statusHidden, ""
	}
	if isDay2(c.cluster) && isDay2Host(c.host) {
		return wire.ValidationSuccess, "host belongs to day2 cluster"
	}
	h := ReleaseImageHost(c.releaseImage())
	if h == "" {
		return wire.ValidationPending, "The release image is not known yet"
	}
	if net.ParseIP(h) != nil {
		return wire.ValidationSuccess, fmt.Sprintf("Release host %s is an IP address", h)
	}
	return c.domainResolved(h, h, "release image host")
}

func hostDNSWildcardNotConfigured(c *hostContext) (wire.ValidationStatus, string) {
	switch {
	case c.cluster == nil:
		return statusHidden, ""
	case isDay2Host(c.host):
		return wire.ValidationSuccess, "DNS wildcard check is not required for day2"
	case !c.checks.Domains.Set:
		return wire.ValidationPending, "DNS wildcard check cannot be performed yet because the host has not yet performed DNS resolution"
	case c.checks.Domains.Unreadable:
		return wire.ValidationError, "Error while parsing DNS resolution response"
	}
	resp := &c.checks.Domains.Value
	probe := clusterDomain(c.cluster, wildcardProbeSubdomain)
	st, msg := c.unexpectedDomain(resp, probe+".", "DNS wildcard configuration was detected for domain *.%s.%s - the installation will not be able to complete while this record exists. Please remove it to proceed. The domain resolves to %s")
	if st == wire.ValidationSuccess {
		st, msg = c.unexpectedDomain(resp, probe, "Unexpected domain name resolution was detected for the relative domain name with the sub-domain *.%s.%s despite the fact that no resolution exists for a Fully Qualified Domain Name (FQDN) with same sub-domain. This is usually a sign of DHCP-provided domain-search configuration. The installation will not be able to complete with this configuration in place. Please remove it to proceed. The relative domain name resolves to %s")
	}
	return st, msg
}

func (c *hostContext) unexpectedDomain(resp *wire.DomainResolutionResponse, domain, format string) (wire.ValidationStatus, string) {
	var r *wire.DomainResolutionResponseResolutionsItem
	for _, x := range resp.Resolutions {
		if x != nil && x.DomainName == domain {
			r = x
			break
		}
	}
	if r == nil {
		return wire.ValidationError, "Internal error - DNS wildcard check cannot be performed because the DNS validation result doesn't contain the wildcard domain"
	}
	found := append(append(append([]string{}, r.IPv4Addresses...), r.IPv6Addresses...), r.Cnames...)
	if len(found) == 0 {
		return wire.ValidationSuccess, "DNS wildcard check was successful"
	}
	return wire.ValidationFailure, fmt.Sprintf(format, c.cluster.Name, c.cluster.BaseDNSDomain, strings.Join(found, ", "))
}
