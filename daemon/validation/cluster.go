package validation

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// clusterRule is one row of the cluster validation table.
type clusterRule struct {
	ID       wire.ClusterValidationID
	Category wire.ValidationCategory
	Fn       func(*clusterContext) (wire.ValidationStatus, string)
}

// clusterRules is the cluster validation table (assisted
// internal/cluster/refresh_status_preprocessor.go); results are emitted
// sorted by ID inside each category.
var clusterRules = []clusterRule{
	{wire.ClusterValidationIDMachineCIDRDefined, wire.CategoryNetwork, clusterMachineCIDRDefined},
	{wire.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR, wire.CategoryNetwork, clusterMachineCIDRCalculated},
	{wire.ClusterValidationIDAPIVIPsDefined, wire.CategoryNetwork, clusterAPIVIPsDefined},
	{wire.ClusterValidationIDAPIVIPsValid, wire.CategoryNetwork, clusterAPIVIPsValid},
	{wire.ClusterValidationIDNetworkTypeValid, wire.CategoryNetwork, clusterNetworkTypeValid},
	{wire.ClusterValidationIDIngressVIPsDefined, wire.CategoryNetwork, clusterIngressVIPsDefined},
	{wire.ClusterValidationIDIngressVIPsValid, wire.CategoryNetwork, clusterIngressVIPsValid},
	{wire.ClusterValidationIDAllHostsAreReadyToInstall, wire.CategoryHostsData, clusterAllHostsReady},
	{wire.ClusterValidationIDSufficientMastersCount, wire.CategoryHostsData, clusterSufficientMasters},
	{wire.ClusterValidationIDDNSDomainDefined, wire.CategoryNetwork, clusterDNSDomainDefined},
	{wire.ClusterValidationIDPullSecretSet, wire.CategoryConfiguration, clusterPullSecretSet},
	{wire.ClusterValidationIDClusterCIDRDefined, wire.CategoryNetwork, clusterClusterCIDRDefined},
	{wire.ClusterValidationIDServiceCIDRDefined, wire.CategoryNetwork, clusterServiceCIDRDefined},
	{wire.ClusterValidationIDNoCidrsOverlapping, wire.CategoryNetwork, clusterNoCIDRsOverlapping},
	{wire.ClusterValidationIDNetworkPrefixValid, wire.CategoryNetwork, clusterNetworkPrefixValid},
	{wire.ClusterValidationIDNTPServerConfigured, wire.CategoryNetwork, clusterNTPServerConfigured},
	{wire.ClusterValidationIDNetworksSameAddressFamilies, wire.CategoryNetwork, clusterSameAddressFamilies},
	// nodezero's own, shown only with host configs (hints.go).
	{wire.ClusterValidationIDConfiguredHostsRegistered, wire.CategoryHostsData, clusterConfiguredHostsRegistered},
}

var nonIgnorableCluster = []string{
	string(wire.ClusterValidationIDAPIVIPsDefined), string(wire.ClusterValidationIDIngressVIPsDefined),
	string(wire.ClusterValidationIDAllHostsAreReadyToInstall), string(wire.ClusterValidationIDSufficientMastersCount),
	string(wire.ClusterValidationIDPullSecretSet),
}

// ClusterValidationIDs lists the cluster validations this package
// evaluates.
func ClusterValidationIDs() []wire.ClusterValidationID {
	ids := make([]wire.ClusterValidationID, len(clusterRules))
	for i, r := range clusterRules {
		ids[i] = r.ID
	}
	return ids
}

// ClusterInput is everything a cluster's validations read.
type ClusterInput struct {
	Cluster *wire.Cluster
	Hosts   []HostEntry // every host of the cluster with its parsed inventory
	// VIPUse is the hosts' data on addresses in use (see VIPUse); nil until
	// hosts report it, and then only the address checks apply to VIPs.
	VIPUse *VIPUse
	Now    time.Time // for the time-based validations
}

type clusterContext struct {
	v              *Validator
	c              *wire.Cluster
	hosts          []HostEntry
	use            *VIPUse
	hasInventories bool
	sno            bool
	cpc            int64
	now            time.Time
}

// validatedClusterStatuses: assisted evaluates cluster validations only
// before installation; in other statuses the evaluation is empty.
var validatedClusterStatuses = map[wire.ClusterStatus]bool{
	"": true, wire.ClusterStatusInsufficient: true, wire.ClusterStatusReady: true,
	wire.ClusterStatusPendingForInput: true, wire.ClusterStatusPreparingForInstallation: true,
}

// ValidateCluster evaluates every cluster validation. A cluster past
// preparation (installing, installed...) gets an empty report, as in
// assisted.
func (v *Validator) ValidateCluster(in ClusterInput) Report {
	rep := Report{Conditions: map[string]bool{}}
	if in.Cluster == nil || !validatedClusterStatuses[in.Cluster.Status] {
		return rep
	}
	c := &clusterContext{v: v, c: in.Cluster, hosts: in.Hosts, use: in.VIPUse,
		sno: isSNO(in.Cluster), cpc: controlPlaneCount(in.Cluster), now: in.Now}
	for _, h := range in.Hosts {
		if h.Inventory != nil {
			c.hasInventories = true
			break
		}
	}
	ignore := parseIgnoreList(in.Cluster.IgnoredClusterValidations, nonIgnorableCluster)
	for _, r := range clusterRules {
		id := string(r.ID)
		var st wire.ValidationStatus
		var msg string
		if !ignore.set && v.DisabledCluster[id] {
			st, msg = wire.ValidationDisabled, messageDisabled
		} else {
			st, msg = r.Fn(c)
		}
		rep.Conditions[id] = st == wire.ValidationSuccess || st == statusHidden || st == wire.ValidationDisabled || ignore.ignores(id)
		if st == statusHidden {
			continue
		}
		rep.Results = append(rep.Results, wire.Validation{ID: id, Status: st, Message: msg, Category: r.Category})
	}
	sort.SliceStable(rep.Results, func(i, j int) bool {
		a, b := rep.Results[i], rep.Results[j]
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.ID < b.ID
	})
	return rep
}

func clusterMachineCIDRDefined(c *clusterContext) (wire.ValidationStatus, string) {
	switch {
	case isUMN(c.c) && !c.sno:
		return wire.ValidationSuccess, "No Machine Network CIDR needed: User Managed Networking"
	case len(machineNetworkCIDRs(c.c)) > 0:
		return wire.ValidationSuccess, "The Machine Network CIDR is defined."
	case !c.hasInventories:
		return wire.ValidationPending, "Hosts have not been discovered yet"
	case isDHCP(c.c):
		return wire.ValidationFailure, "The Machine Network CIDR is undefined; setting the Machine Network CIDR initiates the VIPs DHCP lease allocation."
	case c.sno:
		return wire.ValidationFailure, "The Machine Network CIDR is undefined; Setting Machine Network CIDR is required for single node cluster"
	}
	return wire.ValidationFailure, "The Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs."
}

func (c *clusterContext) machineDefined() bool {
	st, _ := clusterMachineCIDRDefined(c)
	return st == wire.ValidationSuccess
}

// multiError formats problems as hashicorp/go-multierror does, the text
// assisted puts in machine-cidr-equals-to-calculated-cidr.
func multiError(problems []string) string {
	var b strings.Builder
	if len(problems) == 1 {
		b.WriteString("1 error occurred:\n")
	} else {
		fmt.Fprintf(&b, "%d errors occurred:\n", len(problems))
	}
	for _, p := range problems {
		fmt.Fprintf(&b, "\t* %s\n", p)
	}
	b.WriteString("\n")
	return b.String()
}

func clusterMachineCIDRCalculated(c *clusterContext) (wire.ValidationStatus, string) {
	switch {
	case isUMN(c.c):
		return wire.ValidationSuccess, "The Cluster Machine CIDR is not required: User Managed Networking"
	case userManagedLB(c.c):
		return wire.ValidationSuccess, "Calculating machine network CIDR is not enabled: User Managed Load Balancer"
	case len(c.c.APIVIPs) == 0 && len(c.c.IngressVIPs) == 0:
		return wire.ValidationPending, "The Machine Network CIDR, API virtual IPs, or Ingress virtual IPs are undefined."
	case !c.hasInventories:
		return wire.ValidationPending, "Hosts have not been discovered yet"
	}
	machine := machineNetworkCIDRs(c.c)
	var problems []string
	for i := range c.c.APIVIPs {
		api, ingress := vipAt(c.c.APIVIPs, i), ingressAt(c.c.IngressVIPs, i)
		vip := api
		if vip == "" {
			vip = ingress
		}
		cidr, err := CalculateMachineNetworkCIDR(api, ingress, c.hosts, c.v.AllowVirtualInterfaces, true)
		if errors.Is(err, ErrNoMatchingCIDR) {
			problems = append(problems, "No suitable matching CIDR found for VIP "+vip)
			continue
		} else if err != nil {
			problems = append(problems, "Could not parse VIP ip "+vip)
			continue
		}
		if len(machine) == 0 {
			continue
		}
		user := ""
		if i < len(machine) {
			user = machine[i]
		}
		_, n, err := net.ParseCIDR(user)
		if err != nil {
			problems = append(problems, fmt.Sprintf("failed to normalize user machine CIDR %s: %v", user, err))
			continue
		}
		if n.String() != cidr {
			problems = append(problems, fmt.Sprintf("The Cluster Machine CIDR %s is different than the calculated CIDR %s.", user, cidr))
		}
	}
	if len(problems) > 0 {
		return wire.ValidationFailure, multiError(problems)
	}
	return wire.ValidationSuccess, "The Cluster Machine CIDR is equivalent to the calculated CIDR."
}

// vipList is the API or the ingress VIPs of a cluster.
type vipList struct {
	name  string // "API" or "Ingress"
	ips   []string
	verif []wire.VIPVerification
}

func (c *clusterContext) vips(api bool) vipList {
	if api {
		l := vipList{name: "API"}
		for _, v := range c.c.APIVIPs {
			if v != nil {
				l.ips, l.verif = append(l.ips, string(v.IP)), append(l.verif, v.Verification)
			}
		}
		return l
	}
	l := vipList{name: "Ingress"}
	for _, v := range c.c.IngressVIPs {
		if v != nil {
			l.ips, l.verif = append(l.ips, string(v.IP)), append(l.verif, v.Verification)
		}
	}
	return l
}

func (c *clusterContext) vipsDefined(l vipList) (wire.ValidationStatus, string) {
	switch {
	case isUMN(c.c):
		return wire.ValidationSuccess, fmt.Sprintf("%s virtual IPs are not required: User Managed Networking", l.name)
	case c.sno:
		return wire.ValidationSuccess, fmt.Sprintf("%s virtual IPs are not required: SNO", l.name)
	case len(l.ips) > 0:
		return wire.ValidationSuccess, fmt.Sprintf("%s virtual IPs are defined.", l.name)
	case isDHCP(c.c):
		// assisted also reports a lease timeout two minutes after the
		// machine network was set; the cluster object does not carry that
		// time, so only the waiting message is given.
		if !c.machineDefined() {
			return wire.ValidationPending, "The Machine Network CIDR is undefined"
		}
		return wire.ValidationFailure, fmt.Sprintf("%[1]s virtual IPs are undefined; after the Machine Network CIDR has been defined, %[1]s virtual IPs are received from a DHCP lease allocation task which may take up to 2 minutes.", l.name)
	}
	return wire.ValidationFailure, fmt.Sprintf("%s virtual IPs are undefined and must be provided.", l.name)
}

func clusterAPIVIPsDefined(c *clusterContext) (wire.ValidationStatus, string) {
	return c.vipsDefined(c.vips(true))
}

func clusterIngressVIPsDefined(c *clusterContext) (wire.ValidationStatus, string) {
	return c.vipsDefined(c.vips(false))
}

func clusterAPIVIPsValid(c *clusterContext) (wire.ValidationStatus, string) {
	return c.vipsValid(true)
}

func clusterIngressVIPsValid(c *clusterContext) (wire.ValidationStatus, string) {
	return c.vipsValid(false)
}

// vipsValid: each VIP lies in the machine network of the same index, is not
// its broadcast (or network) address, and — when VIP use data exists — is
// not in use; API and ingress VIPs differ unless the load balancer is
// user-managed. Without use data only the address checks apply and the
// success message says so.
func (c *clusterContext) vipsValid(api bool) (wire.ValidationStatus, string) {
	l := c.vips(api)
	switch {
	case isUMN(c.c):
		return wire.ValidationSuccess, fmt.Sprintf("%s virtual IPs are not required: User Managed Networking", l.name)
	case c.sno:
		return wire.ValidationSuccess, fmt.Sprintf("%s virtual IPs are not required: SNO", l.name)
	case len(l.ips) == 0:
		return wire.ValidationPending, fmt.Sprintf("%s virtual IPs are undefined.", l.name)
	case !c.hasInventories || !c.machineDefined():
		return wire.ValidationPending, "Hosts have not been discovered yet"
	}
	lbUser := userManagedLB(c.c)
	apiDups, ingressDups := duplicateVIPs(c.c.APIVIPs, c.c.IngressVIPs, lbUser)
	dups := ingressDups
	if api {
		dups = apiDups
	}
	if lbUser {
		return c.vipValidUserLB(l, dups)
	}
	name := strings.ToLower(l.name) + " vips"
	machine := machineNetworkCIDRs(c.c)
	failed, unchecked := false, false
	var problems []string
	for i, ip := range l.ips {
		cidr := ""
		if i < len(machine) {
			cidr = machine[i]
		}
		ver, unch, p := checkVIP(len(c.hosts), cidr, ip, name, l.verif[i], c.use, true)
		failed = failed || ver != wire.VIPVerificationSucceeded
		unchecked = unchecked || unch
		if p != "" {
			problems = append(problems, p)
		}
	}
	if len(dups) > 0 {
		failed, problems = true, append(problems, dups...)
	}
	if failed {
		return wire.ValidationFailure, strings.Join(problems, ";")
	}
	if unchecked {
		return wire.ValidationSuccess, fmt.Sprintf("%s %s belongs to the Machine CIDR; whether it is in use is not verified yet.", name, strings.Join(l.ips, ", "))
	}
	return wire.ValidationSuccess, fmt.Sprintf("%s %s belongs to the Machine CIDR and is not in use.", name, strings.Join(l.ips, ", "))
}

// vipValidUserLB: with a user-managed load balancer the first VIP must lie
// in at least one machine network; its use is not checked.
func (c *clusterContext) vipValidUserLB(l vipList, dups []string) (wire.ValidationStatus, string) {
	name := strings.ToLower(l.name) + " vip"
	vip := l.ips[0]
	machine := machineNetworkCIDRs(c.c)
	if len(machine) == 0 {
		return wire.ValidationFailure, fmt.Sprintf("no machine networks to verify VIP: %s with", vip)
	}
	var problems []string
	for _, cidr := range machine {
		ver, _, p := checkVIP(len(c.hosts), cidr, vip, name, l.verif[0], nil, false)
		if ver == wire.VIPVerificationSucceeded {
			if len(dups) > 0 {
				return wire.ValidationFailure, strings.Join(dups, ";")
			}
			return wire.ValidationSuccess, fmt.Sprintf("%s %s is valid", name, vip)
		}
		if p != "" {
			problems = append(problems, fmt.Sprintf("machine network CIDR <%s> verification failed: %s", cidr, p))
		}
	}
	if len(problems) == 0 {
		return wire.ValidationFailure, fmt.Sprintf("%s %s is invalid", name, vip)
	}
	return wire.ValidationFailure, fmt.Sprintf("%s '%s' failed verification: none of the machine networks is satisfying the requirements, description: %s",
		name, vip, strings.Join(problems, "; "))
}
