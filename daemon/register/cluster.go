package register

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// ErrMultiple is returned when the service holds more than one cluster or
// infra-env: node zero registers exactly one of each, so more means the
// service is not the one this node set up.
var ErrMultiple = errors.New("more than one registered")

// ErrManifests is wrapped by errors about the manifests' content.
var ErrManifests = errors.New("manifests cannot be registered")

// RegisterCluster returns the service's cluster, registering it from the
// manifests when there is none yet (agent-installer-client
// registerCluster). It is idempotent: a second call, or a call after a
// restart, finds the cluster the first one made.
func RegisterCluster(ctx context.Context, c *wire.Client, set *manifests.Set) (*wire.Cluster, error) {
	existing, err := existingCluster(ctx, c)
	if err != nil || existing != nil {
		return existing, err
	}
	p, err := ClusterParams(set)
	if err != nil {
		return nil, err
	}
	cl, err := c.RegisterCluster(ctx, *p)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// existingCluster returns the one cluster, nil when there is none.
func existingCluster(ctx context.Context, c *wire.Client) (*wire.Cluster, error) {
	list, err := c.ListClusters(ctx)
	if err != nil {
		return nil, err
	}
	switch len(list) {
	case 0:
		return nil, nil
	case 1:
		return list[0], nil
	}
	return nil, fmt.Errorf("register cluster: found %d clusters: %w", len(list), ErrMultiple)
}

// ClusterParams maps the manifests to the create request as
// assisted-service's CreateClusterParams does
// (internal/controller/controllers/clusterdeployments_controller.go, and
// cmd/agentbasedinstaller/register.go for the VIPs and network type).
func ClusterParams(set *manifests.Set) (*wire.ClusterCreateParams, error) {
	if err := complete(set); err != nil {
		return nil, err
	}
	cd, aci := set.ClusterDeployment.Spec, set.AgentClusterInstall.Spec
	version, arch, err := ReleaseInfo(set)
	if err != nil {
		return nil, err
	}
	apiVIPs, err := foldVIPs("apiVIP", aci.APIVIP, aci.APIVIPs)
	if err != nil {
		return nil, err
	}
	ingressVIPs, err := foldVIPs("ingressVIP", aci.IngressVIP, aci.IngressVIPs)
	if err != nil {
		return nil, err
	}
	platform, err := platformParam(aci)
	if err != nil {
		return nil, err
	}
	req := aci.ProvisionRequirements
	sno := req.ControlPlaneAgents == 1 && req.WorkerAgents == 0
	umn := (aci.Networking.UserManagedNetworking != nil && *aci.Networking.UserManagedNetworking) || sno
	cp := int64(req.ControlPlaneAgents)
	p := &wire.ClusterCreateParams{
		Name:                  cd.ClusterName,
		BaseDNSDomain:         cd.BaseDomain,
		OpenshiftVersion:      version,
		OCPReleaseImage:       set.ClusterImageSet.Spec.ReleaseImage,
		CPUArchitecture:       wire.ClusterCPUArchitecture(arch),
		PullSecret:            set.PullSecret.PullSecret(),
		VIPDHCPAllocation:     ptr(false),
		SSHPublicKey:          aci.SSHPublicKey,
		UserManagedNetworking: &umn,
		Platform:              platform,
		SchedulableMasters:    aci.MastersSchedulable,
		ControlPlaneCount:     &cp,
	}
	for _, v := range apiVIPs {
		p.APIVIPs = append(p.APIVIPs, &wire.APIVIP{IP: wire.IP(v)})
	}
	for _, v := range ingressVIPs {
		p.IngressVIPs = append(p.IngressVIPs, &wire.IngressVIP{IP: wire.IP(v)})
	}
	for _, n := range aci.Networking.ClusterNetwork {
		p.ClusterNetworks = append(p.ClusterNetworks, &wire.ClusterNetwork{CIDR: wire.Subnet(n.CIDR), HostPrefix: int64(n.HostPrefix)})
	}
	for _, n := range aci.Networking.ServiceNetwork {
		p.ServiceNetworks = append(p.ServiceNetworks, &wire.ServiceNetwork{CIDR: wire.Subnet(n)})
	}
	for _, n := range aci.Networking.MachineNetwork {
		p.MachineNetworks = append(p.MachineNetworks, &wire.MachineNetwork{CIDR: wire.Subnet(n.CIDR)})
	}
	if sno {
		p.HighAvailabilityMode = wire.ClusterHighAvailabilityModeNone
	}
	if len(aci.NTPSources) > 0 {
		p.NTPSources = ptr(strings.Join(aci.NTPSources, ","))
	}
	if ht, ok := hyperthreading(aci); ok {
		p.Hyperthreading = ht
	}
	p.DiskEncryption = diskEncryption(aci.DiskEncryption)
	if pr := aci.Proxy; pr != nil {
		p.HTTPProxy, p.HTTPSProxy, p.NoProxy = nonEmpty(pr.HTTPProxy), nonEmpty(pr.HTTPSProxy), nonEmpty(pr.NoProxy)
	}
	if lb := aci.LoadBalancer; lb != nil {
		switch lb.Type {
		case "ClusterManaged":
			p.LoadBalancer = &wire.LoadBalancer{Type: wire.LoadBalancerTypeClusterManaged}
		case "UserManaged":
			p.LoadBalancer = &wire.LoadBalancer{Type: wire.LoadBalancerTypeUserManaged}
		}
	}
	if tag := set.AgentClusterInstall.Metadata.Labels[manifests.ClusterConsumerLabel]; tag != "" {
		p.Tags = &tag
	}
	if nt := aci.Networking.NetworkType; nt != "" {
		t := wire.ClusterNetworkType(nt)
		p.NetworkType = &t
	}
	return p, nil
}

// complete checks that the set has what registration reads.
func complete(set *manifests.Set) error {
	switch {
	case set == nil:
		return fmt.Errorf("%w: no manifests", ErrManifests)
	case set.ClusterDeployment == nil:
		return fmt.Errorf("%w: no ClusterDeployment", ErrManifests)
	case set.AgentClusterInstall == nil:
		return fmt.Errorf("%w: no AgentClusterInstall", ErrManifests)
	case set.ClusterImageSet == nil:
		return fmt.Errorf("%w: no ClusterImageSet", ErrManifests)
	case set.InfraEnv == nil:
		return fmt.Errorf("%w: no InfraEnv", ErrManifests)
	case set.PullSecret.PullSecret() == "":
		return fmt.Errorf("%w: no pull secret", ErrManifests)
	}
	return nil
}

// foldVIPs folds the singular VIP field into the list: alone it becomes
// the list; with a list it must equal the list's first entry
// (validations.HandleApiVipBackwardsCompatibility).
func foldVIPs(field, one string, list []string) ([]string, error) {
	if one == "" {
		return list, nil
	}
	if len(list) == 0 {
		return []string{one}, nil
	}
	a, errA := netip.ParseAddr(one)
	b, errB := netip.ParseAddr(list[0])
	if one != list[0] && (errA != nil || errB != nil || a != b) {
		return nil, fmt.Errorf("%w: %s must be the same as the first element of %ss", ErrManifests, field, field)
	}
	return list, nil
}

// platformParam is getPlatform: AgentClusterInstall's platform type in the
// service's spelling; "" lets the service choose.
func platformParam(aci manifests.AgentClusterInstallSpec) (*wire.Platform, error) {
	switch aci.PlatformType {
	case manifests.PlatformBareMetal:
		return &wire.Platform{Type: wire.PlatformTypeBaremetal}, nil
	case manifests.PlatformNone:
		return &wire.Platform{Type: wire.PlatformTypeNone}, nil
	case manifests.PlatformVSphere:
		return &wire.Platform{Type: wire.PlatformTypeVsphere}, nil
	case manifests.PlatformNutanix:
		return &wire.Platform{Type: wire.PlatformTypeNutanix}, nil
	case manifests.PlatformExternal:
		if aci.External == nil {
			return nil, fmt.Errorf("%w: for external platform, the external platform spec must be set", ErrManifests)
		}
		name := aci.External.PlatformName
		ccm := wire.PlatformExternalCloudControllerManager(aci.External.CloudControllerManager)
		return &wire.Platform{Type: wire.PlatformTypeExternal, External: &wire.PlatformExternal{PlatformName: &name, CloudControllerManager: &ccm}}, nil
	}
	return nil, nil
}

// hyperthreading is getHyperthreading: set only when a pool says so; the
// pools with hyperthreading Enabled, in masters, arbiters, workers order.
func hyperthreading(aci manifests.AgentClusterInstallSpec) (wire.ClusterHyperthreading, bool) {
	var worker *manifests.AgentMachinePool
	for i := range aci.Compute {
		if aci.Compute[i].Name == "worker" {
			worker = &aci.Compute[i]
			break
		}
	}
	if aci.ControlPlane == nil && aci.Arbiter == nil && worker == nil {
		return "", false
	}
	var pools []string
	for _, p := range []struct {
		pool *manifests.AgentMachinePool
		name string
	}{{aci.ControlPlane, "masters"}, {aci.Arbiter, "arbiters"}, {worker, "workers"}} {
		if p.pool != nil && p.pool.Hyperthreading == "Enabled" {
			pools = append(pools, p.name)
		}
	}
	if len(pools) == 0 {
		return wire.ClusterHyperthreadingNone, true
	}
	return wire.ClusterHyperthreading(strings.Join(pools, ",")), true
}

// diskEncryption is sent only when it asks for something beyond the
// disabled default, with defaults none and tpmv2 filled in
// (common.RequestsDiskEncryptionConfiguration, DiskEncryptionFieldDefaults).
func diskEncryption(d *manifests.DiskEncryption) *wire.DiskEncryption {
	if d == nil || ((d.EnableOn == "" || d.EnableOn == "none") && d.Mode != "tang" && d.TangServers == "") {
		return nil
	}
	out := &wire.DiskEncryption{EnableOn: wire.DiskEncryptionEnableOn(d.EnableOn), Mode: wire.DiskEncryptionMode(d.Mode), TangServers: d.TangServers}
	if out.EnableOn == "" {
		out.EnableOn = wire.DiskEncryptionEnableOnNone
	}
	if out.Mode == "" {
		out.Mode = wire.DiskEncryptionModeTpmv2
	}
	return out
}

// releaseArchs are the architecture suffixes of release image tags
// (quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64).
var releaseArchs = []string{"x86_64", "aarch64", "ppc64le", "s390x", "multi"}

// ReleaseInfo returns the OpenShift version and CPU architecture of the
// set's release. agent-installer-client asks `oc adm release info`; node
// zero has no oc and no registry, so it reads the version the installer put
// in the ClusterImageSet's name (openshift-<version>), else the release
// image's tag, and the architecture from the tag's suffix, else the
// InfraEnv's cpuArchitecture, else x86_64.
func ReleaseInfo(set *manifests.Set) (version, arch string, err error) {
	image := set.ClusterImageSet.Spec.ReleaseImage
	tag := ""
	if i := strings.LastIndexByte(image, ':'); i >= 0 && !strings.Contains(image, "@") && !strings.Contains(image[i:], "/") {
		tag = image[i+1:]
	}
	for _, a := range releaseArchs {
		if t, ok := strings.CutSuffix(tag, "-"+a); ok {
			tag, arch = t, a
			break
		}
	}
	if arch == "" {
		arch = manifests.RPMArch(set.InfraEnv.Spec.CPUArchitecture)
	}
	if arch == "" {
		arch = "x86_64"
	}
	version, _ = strings.CutPrefix(set.ClusterImageSet.Metadata.Name, "openshift-")
	if !startsWithDigit(version) {
		version = tag
	}
	if !startsWithDigit(version) {
		return "", "", fmt.Errorf("%w: cannot tell the OpenShift version of release %q: name the ClusterImageSet openshift-<version> or tag the image <version>-<arch>", ErrManifests, image)
	}
	return version, arch, nil
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
