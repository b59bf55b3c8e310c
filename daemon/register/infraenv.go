package register

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// RegisterInfraEnv returns the service's infra-env, registering it from the
// manifests when there is none yet (agent-installer-client
// registerInfraEnv). clusterID binds it to the cluster; "" registers it
// unbound (late binding), as the client does when there is no cluster.
func RegisterInfraEnv(ctx context.Context, c *wire.Client, set *manifests.Set, clusterID string) (*wire.InfraEnv, error) {
	return registerInfraEnv(ctx, c, func() (*wire.InfraEnvCreateParams, error) { return InfraEnvParams(set, clusterID) })
}

// registerInfraEnv returns the service's one infra-env, registering it
// with params when there is none yet.
func registerInfraEnv(ctx context.Context, c *wire.Client, params func() (*wire.InfraEnvCreateParams, error)) (*wire.InfraEnv, error) {
	list, err := c.ListInfraEnvs(ctx, "")
	if err != nil {
		return nil, err
	}
	switch len(list) {
	case 0:
	case 1:
		return list[0], nil
	default:
		return nil, fmt.Errorf("register infra-env: found %d infra-envs: %w", len(list), ErrMultiple)
	}
	p, err := params()
	if err != nil {
		return nil, err
	}
	return c.RegisterInfraEnv(ctx, *p)
}

// InfraEnvParams maps the manifests to the create request as
// assisted-service's CreateInfraEnvParams does
// (internal/controller/controllers/infraenv_controller.go), with the
// NMStateConfigs as static network configuration (register.go
// processNMStateConfig) and the full ISO image type (IMAGE_TYPE_ISO's
// default).
//
// Each host's static_network_config carries its nmstate YAML and the map
// from its MACs to the interface names the YAML uses.
func InfraEnvParams(set *manifests.Set, clusterID string) (*wire.InfraEnvCreateParams, error) {
	if err := complete(set); err != nil {
		return nil, err
	}
	return infraEnvParams(set, clusterID)
}

// infraEnvParams is InfraEnvParams for a set known to hold an InfraEnv
// and a pull secret.
func infraEnvParams(set *manifests.Set, clusterID string) (*wire.InfraEnvCreateParams, error) {
	ie := set.InfraEnv
	sp := ie.Spec
	p := &wire.InfraEnvCreateParams{
		Name:                         ie.Metadata.Name,
		ImageType:                    wire.ImageTypeFullISO,
		IgnitionConfigOverride:       sp.IgnitionConfigOverride,
		PullSecret:                   set.PullSecret.PullSecret(),
		SSHAuthorizedKey:             &sp.SSHAuthorizedKey,
		CPUArchitecture:              wire.InfraEnvCreateParamsCPUArchitecture(sp.CPUArchitecture),
		AdditionalTrustBundle:        sp.AdditionalTrustBundle,
		NetworkDiscoveryDelaySeconds: sp.NetworkDiscoveryDelaySeconds,
	}
	if clusterID != "" {
		p.ClusterID = &clusterID
	}
	if pr := sp.Proxy; pr != nil {
		p.Proxy = &wire.Proxy{HTTPProxy: ptr(pr.HTTPProxy), HTTPSProxy: ptr(pr.HTTPSProxy), NoProxy: ptr(pr.NoProxy)}
	}
	if len(sp.AdditionalNTPSources) > 0 {
		p.AdditionalNTPSources = ptr(strings.Join(sp.AdditionalNTPSources, ","))
	}
	if len(sp.NTPSources) > 0 {
		p.NTPSources = ptr(strings.Join(sp.NTPSources, ","))
	}
	for _, k := range sp.KernelArguments {
		p.KernelArguments = append(p.KernelArguments, &wire.KernelArgument{Operation: wire.KernelArgumentOperation(k.Operation), Value: k.Value})
	}
	for _, nm := range set.NMStateConfigs {
		if err := labelsMatch(nm, ie); err != nil {
			return nil, err
		}
		hc := &wire.HostStaticNetworkConfig{NetworkYaml: string(nm.Spec.Config)}
		for _, itf := range nm.Spec.Interfaces {
			hc.MACInterfaceMap = append(hc.MACInterfaceMap, &wire.MACInterfaceMapItem{MACAddress: itf.MACAddress, LogicalNicName: itf.Name})
		}
		p.StaticNetworkConfig = append(p.StaticNetworkConfig, hc)
	}
	return p, nil
}

// labelsMatch is validateNMStateConfigAndInfraEnv: an NMStateConfig's
// labels must equal the InfraEnv's selector exactly.
func labelsMatch(nm *manifests.NMStateConfig, ie *manifests.InfraEnv) error {
	sel := ie.Spec.NMStateConfigLabelSelector.MatchLabels
	switch {
	case len(nm.Metadata.Labels) == 0:
		return fmt.Errorf("%w: nmstateconfig %s should have at least one label set matching the infra-env label selector", ErrManifests, nm.Metadata.Name)
	case len(sel) == 0:
		return fmt.Errorf("%w: infraenv does not have any labels set with NMStateConfigLabelSelector.MatchLabels", ErrManifests)
	case !maps.Equal(sel, nm.Metadata.Labels):
		return fmt.Errorf("%w: infraenv and nmstateconfig %s labels do not match", ErrManifests, nm.Metadata.Name)
	}
	return nil
}
