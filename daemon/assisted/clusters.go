package assisted

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Defaults assisted-service applies to a new cluster.
const (
	defaultClusterNetwork   = "10.128.0.0/14"
	defaultHostPrefix       = 23
	defaultServiceNetwork   = "172.30.0.0/16"
	defaultNetworkType      = wire.ClusterNetworkTypeOVNKubernetes
	defaultCPUArchitecture  = "x86_64"
	defaultControlPlaneSize = 3
)

const apiBase = wire.APIBasePath

var clusterNameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// RegisterCluster creates a cluster (v2RegisterCluster).
func (s *Service) RegisterCluster(ctx context.Context, p *wire.ClusterCreateParams) (*wire.Cluster, error) {
	c, err := s.newCluster(p)
	if err != nil {
		return nil, err
	}
	return s.addCluster(ctx, c)
}

// addCluster stores a new cluster, registered or imported, with its
// registration event, and answers it.
func (s *Service) addCluster(ctx context.Context, c *clusterRec) (*wire.Cluster, error) {
	err := s.update(ctx, func(t *txn) error {
		s.clusters[c.c.ID] = c
		t.putCluster(c)
		t.clusterEvent(c, evClusterRegistered, sevInfo, "Successfully registered cluster")
		t.touchCluster(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.GetCluster(c.c.ID)
}

func (s *Service) newCluster(p *wire.ClusterCreateParams) (*clusterRec, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	var probs []string
	if p.Name == "" || len(p.Name) > 54 || !clusterNameRE.MatchString(p.Name) {
		probs = append(probs, fmt.Sprintf("name: %q must be 1 to 54 lowercase letters, digits and '-', starting with a letter", p.Name))
	}
	if p.OpenshiftVersion == "" {
		probs = append(probs, "openshift_version: required")
	}
	probs = append(probs, checkPullSecret("pull_secret", p.PullSecret)...)
	if p.BaseDNSDomain != "" {
		probs = append(probs, checkDomain("base_dns_domain", p.BaseDNSDomain)...)
	}
	probs = append(probs, checkIgnitionEndpoint(p.IgnitionEndpoint)...)
	now := s.cfg.Now().UTC()
	id := uuid.NewString()
	c := wire.Cluster{
		Kind: wire.ClusterKindCluster, ID: id, Href: apiBase + "/clusters/" + id,
		Name: p.Name, OpenshiftVersion: p.OpenshiftVersion, OCPReleaseImage: p.OCPReleaseImage,
		BaseDNSDomain: p.BaseDNSDomain, SSHPublicKey: p.SSHPublicKey,
		ImageInfo: &wire.ImageInfo{CreatedAt: now}, Status: wire.ClusterStatusInsufficient,
		StatusInfo: "Cluster is not ready for install", StatusUpdatedAt: wire.DateTime(now),
		CreatedAt: now, UpdatedAt: now, PullSecretSet: true, SchedulableMasters: p.SchedulableMasters,
		CPUArchitecture: wire.ClusterCPUArchitecture(orDefault(string(p.CPUArchitecture), defaultCPUArchitecture)),
		Hyperthreading:  wire.ClusterHyperthreading(orDefault(string(p.Hyperthreading), "all")),
		HTTPProxy:       deref(p.HTTPProxy), HTTPSProxy: deref(p.HTTPSProxy), NoProxy: deref(p.NoProxy),
		AdditionalNTPSource: deref(p.AdditionalNTPSource), NTPSources: deref(p.NTPSources),
		Tags: deref(p.Tags), DiskEncryption: p.DiskEncryption, IgnitionEndpoint: p.IgnitionEndpoint,
		LoadBalancer: p.LoadBalancer, OperatorBundles: p.OperatorBundles,
		EnabledHostCount: 0, Progress: &wire.ClusterProgressInfo{},
	}
	// Control plane size: control_plane_count wins over the legacy HA mode.
	cp := int64(defaultControlPlaneSize)
	if p.HighAvailabilityMode == wire.ClusterHighAvailabilityModeNone {
		cp = 1
	}
	if p.ControlPlaneCount != nil {
		cp = *p.ControlPlaneCount
	}
	if cp != 1 && (cp < 3 || cp > 5) {
		probs = append(probs, fmt.Sprintf("control_plane_count: %d is not allowed: use 1 (single node) or 3 to 5", cp))
	}
	c.ControlPlaneCount = cp
	c.HighAvailabilityMode = wire.ClusterHighAvailabilityModeFull
	if cp == 1 {
		c.HighAvailabilityMode = wire.ClusterHighAvailabilityModeNone
	}
	switch c.CPUArchitecture {
	case "x86_64", "aarch64", "arm64", "ppc64le", "s390x", "multi":
	default:
		probs = append(probs, fmt.Sprintf("cpu_architecture: %q is not one of x86_64, aarch64, arm64, ppc64le, s390x, multi", c.CPUArchitecture))
	}
	// Networks: the list forms win over the legacy single-CIDR fields.
	c.ClusterNetworks = p.ClusterNetworks
	if len(c.ClusterNetworks) == 0 {
		cidr, prefix := orDefault(string(p.ClusterNetworkCIDR), defaultClusterNetwork), p.ClusterNetworkHostPrefix
		if prefix == 0 {
			prefix = defaultHostPrefix
		}
		c.ClusterNetworks = []*wire.ClusterNetwork{{CIDR: wire.Subnet(cidr), HostPrefix: prefix}}
	}
	c.ServiceNetworks = p.ServiceNetworks
	if len(c.ServiceNetworks) == 0 {
		c.ServiceNetworks = []*wire.ServiceNetwork{{CIDR: wire.Subnet(orDefault(string(p.ServiceNetworkCIDR), defaultServiceNetwork))}}
	}
	c.MachineNetworks = p.MachineNetworks
	probs = append(probs, nullElements("cluster_networks", c.ClusterNetworks)...)
	probs = append(probs, nullElements("service_networks", c.ServiceNetworks)...)
	probs = append(probs, nullElements("machine_networks", c.MachineNetworks)...)
	for i, n := range c.ClusterNetworks {
		if n == nil {
			continue // reported by nullElements
		}
		n.ClusterID = id
		probs = append(probs, checkCIDR(fmt.Sprintf("cluster_networks[%d].cidr", i), string(n.CIDR))...)
		if n.HostPrefix < 1 || n.HostPrefix > 128 {
			probs = append(probs, fmt.Sprintf("cluster_networks[%d].host_prefix: %d is not between 1 and 128", i, n.HostPrefix))
		}
	}
	for i, n := range c.ServiceNetworks {
		if n == nil {
			continue // reported by nullElements
		}
		n.ClusterID = id
		probs = append(probs, checkCIDR(fmt.Sprintf("service_networks[%d].cidr", i), string(n.CIDR))...)
	}
	for i, n := range c.MachineNetworks {
		if n == nil {
			continue // reported by nullElements
		}
		n.ClusterID = id
		probs = append(probs, checkCIDR(fmt.Sprintf("machine_networks[%d].cidr", i), string(n.CIDR))...)
	}
	c.APIVIPs, c.IngressVIPs = p.APIVIPs, p.IngressVIPs
	probs = append(probs, checkVIPs(id, c.APIVIPs, c.IngressVIPs)...)
	umn := p.UserManagedNetworking != nil && *p.UserManagedNetworking
	platform := p.Platform
	if platform == nil {
		pt := wire.PlatformTypeBaremetal
		if umn || cp == 1 {
			pt = wire.PlatformTypeNone
		}
		platform = &wire.Platform{Type: pt}
	}
	switch platform.Type {
	case wire.PlatformTypeBaremetal, wire.PlatformTypeNone, wire.PlatformTypeExternal, wire.PlatformTypeVsphere, wire.PlatformTypeNutanix:
	default:
		probs = append(probs, fmt.Sprintf("platform.type: %q is not one of baremetal, none, external, vsphere, nutanix", platform.Type))
	}
	if platform.Type == wire.PlatformTypeNone || platform.Type == wire.PlatformTypeExternal || cp == 1 {
		umn = true
	}
	c.Platform, c.UserManagedNetworking = platform, &umn
	dhcp := p.VIPDHCPAllocation != nil && *p.VIPDHCPAllocation
	c.VIPDHCPAllocation = &dhcp
	nt := defaultNetworkType
	if p.NetworkType != nil {
		nt = *p.NetworkType
	}
	c.NetworkType = &nt
	if len(probs) > 0 {
		return nil, badRequest("invalid cluster: %s", strings.Join(probs, "; "))
	}
	return &clusterRec{c: c, pullSecret: p.PullSecret, hosts: map[hostKey]*hostRec{}}, nil
}

// GetCluster returns a cluster with its hosts (v2GetCluster), which carry
// their inventories and connectivity reports as in assisted-service.
func (s *Service) GetCluster(id string) (*wire.Cluster, error) {
	var out *wire.Cluster
	var err error
	s.view(func() {
		var c *clusterRec
		if c, err = s.clusterByID(id); err == nil {
			out = s.clusterView(c, true)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := s.withConnectivity(out.Hosts, store.HostFilter{ClusterID: id}); err != nil {
		return nil, internal(err, "read the hosts' connectivity reports")
	}
	return out, nil
}

// GetClusterExcludingHosts returns a cluster without its hosts (but with
// their counts): v2GetCluster?exclude_hosts=true, which assisted-installer's
// waits use.
func (s *Service) GetClusterExcludingHosts(id string) (*wire.Cluster, error) {
	var out *wire.Cluster
	var err error
	s.view(func() {
		var c *clusterRec
		if c, err = s.clusterByID(id); err == nil {
			out = s.clusterView(c, false)
		}
	})
	return out, err
}

// ListClusters returns every cluster (v2ListClusters), without hosts.
func (s *Service) ListClusters() []*wire.Cluster {
	out := []*wire.Cluster{} // none: [], never null
	s.view(func() {
		for _, c := range s.clusters {
			out = append(out, s.clusterView(c, false))
		}
	})
	sortBy(out, func(c *wire.Cluster) string { return c.CreatedAt.Format("20060102150405.000000000") + c.ID })
	return out
}

func (s *Service) clusterByID(id string) (*clusterRec, error) {
	if err := checkUUID("cluster_id", id); err != nil {
		return nil, err
	}
	c := s.clusters[id]
	if c == nil {
		return nil, notFound("cluster %s not found", id)
	}
	return c, nil
}

// clusterView copies c for a client, with hosts when asked and the host
// counts assisted-service computes on read.
func (s *Service) clusterView(c *clusterRec, withHosts bool) *wire.Cluster {
	out := c.view()
	out.TotalHostCount = int64(len(c.hosts))
	out.EnabledHostCount = out.TotalHostCount
	out.Hosts = []*wire.Host{}
	for _, h := range c.sorted() {
		if h.h.Status == wire.HostStatusKnown {
			out.ReadyHostCount++
		}
		if withHosts {
			out.Hosts = append(out.Hosts, s.hostView(h, c))
		}
	}
	return out
}

// UpdateCluster applies a v2-cluster-update-params patch (V2UpdateCluster).
func (s *Service) UpdateCluster(ctx context.Context, id string, p *wire.V2ClusterUpdateParams) (*wire.Cluster, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	err := s.update(ctx, func(t *txn) error {
		c, err := s.clusterByID(id)
		if err != nil {
			return err
		}
		if !acceptsChanges(c.c.Status) {
			return conflict("cluster %s is %s: it can be updated only while insufficient, ready, pending-for-input or adding-hosts", id, c.c.Status)
		}
		next, secret, err := applyClusterUpdate(c, p)
		if err != nil {
			return err
		}
		c.c, c.pullSecret = next, secret
		t.putCluster(c)
		t.touchCluster(c)
		for _, h := range c.hosts {
			t.touchHost(h)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.GetCluster(id)
}

// UpdateInstallConfig sets the cluster's install-config overrides
// (v2UpdateClusterInstallConfig): a JSON object, kept as the text given,
// that the installer merges into the install-config it generates; ""
// removes them. assisted-service decodes the overrides into its
// install-config type and validates the result; without an installer here,
// the overrides need only be a JSON object. Unlike assisted-service, which
// takes them in any status, they are refused once the installation has
// started (409, as the service's other status-bound requests): the
// install-config is generated then, and a later change would be silently
// ignored.
func (s *Service) UpdateInstallConfig(ctx context.Context, id, overrides string) error {
	var err error
	s.view(func() { _, err = s.modifiableCluster(id, "the install config overrides") })
	if err != nil {
		return err
	}
	if err := checkInstallConfigOverrides(overrides); err != nil {
		return err
	}
	return s.update(ctx, func(t *txn) error {
		c, err := s.modifiableCluster(id, "the install config overrides")
		if err != nil {
			return err
		}
		c.c.InstallConfigOverrides = overrides
		t.putCluster(c)
		t.clusterEvent(c, evInstallConfigApplied, sevInfo, "Custom install config was applied to the cluster")
		return nil
	})
}

func checkInstallConfigOverrides(o string) error {
	if o == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(o), &v); err != nil {
		return badRequest("install config overrides: not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return badRequest("install config overrides: must be a JSON object, not %s", jsonKind(v))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// acceptsChanges is assisted's AcceptRegistration set: the statuses in which
// hosts may register and the cluster may be updated.
func acceptsChanges(st wire.ClusterStatus) bool {
	switch st {
	case wire.ClusterStatusInsufficient, wire.ClusterStatusReady, wire.ClusterStatusPendingForInput, wire.ClusterStatusAddingHosts:
		return true
	}
	return false
}

// DeregisterCluster deletes a cluster and its hosts (v2DeregisterCluster).
func (s *Service) DeregisterCluster(ctx context.Context, id string) error {
	return s.update(ctx, func(t *txn) error {
		c, err := s.clusterByID(id)
		if err != nil {
			return err
		}
		switch c.c.Status {
		case wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling, wire.ClusterStatusInstallingPendingUserAction, wire.ClusterStatusFinalizing:
			return conflict("cluster %s is %s: cancel the installation before deleting it", id, c.c.Status)
		}
		for k, h := range c.hosts {
			t.deleteHost(h)
			delete(s.hosts, k)
		}
		for _, ie := range s.infraEnvs {
			if ie.ie.ClusterID == id {
				ie.ie.ClusterID = ""
				t.putInfraEnv(ie)
			}
		}
		t.deleteCluster(c)
		delete(s.clusters, id)
		t.clusterEvent(c, evClusterDeregistered, sevInfo, "Deregistered cluster")
		return nil
	})
}

func cloneJSON[T any](v *T) *T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("clone %T: %v", v, err)) // our own types always marshal
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("clone %T: %v", v, err))
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}
