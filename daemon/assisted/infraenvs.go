package assisted

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/wire"
)

// RegisterInfraEnv creates an infra-env (RegisterInfraEnv).
func (s *Service) RegisterInfraEnv(ctx context.Context, p *wire.InfraEnvCreateParams) (*wire.InfraEnv, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	var probs []string
	if strings.TrimSpace(p.Name) == "" {
		probs = append(probs, "name: required")
	}
	probs = append(probs, checkPullSecret("pull_secret", p.PullSecret)...)
	now := s.cfg.Now().UTC()
	id := uuid.NewString()
	ie := wire.InfraEnv{
		Kind: wire.InfraEnvKindInfraEnv, ID: id, Href: apiBase + "/infra-envs/" + id, Name: p.Name,
		OpenshiftVersion: p.OpenshiftVersion, Proxy: p.Proxy, PullSecretSet: true,
		AdditionalNTPSources: deref(p.AdditionalNTPSources), NTPSources: deref(p.NTPSources),
		SSHAuthorizedKey: deref(p.SSHAuthorizedKey), RendezvousIP: p.RendezvousIP,
		Type: p.ImageType, IgnitionConfigOverride: p.IgnitionConfigOverride,
		CPUArchitecture:       wire.InfraEnvCPUArchitecture(orDefault(string(p.CPUArchitecture), defaultCPUArchitecture)),
		AdditionalTrustBundle: p.AdditionalTrustBundle, NetworkDiscoveryDelaySeconds: p.NetworkDiscoveryDelaySeconds,
		CreatedAt: now, UpdatedAt: now,
	}
	if ie.Type == "" {
		ie.Type = wire.ImageTypeFullISO
	}
	if len(p.StaticNetworkConfig) > 0 {
		b, err := json.Marshal(p.StaticNetworkConfig)
		if err != nil {
			return nil, badRequest("static_network_config: %v", err)
		}
		ie.StaticNetworkConfig = string(b)
	}
	if len(p.KernelArguments) > 0 {
		b, _ := json.Marshal(p.KernelArguments)
		ka := string(b)
		ie.KernelArguments = &ka
	}
	if p.ClusterID != nil && *p.ClusterID != "" {
		if err := checkUUID("cluster_id", *p.ClusterID); err != nil {
			return nil, err
		}
		ie.ClusterID = *p.ClusterID
	}
	if len(probs) > 0 {
		return nil, badRequest("invalid infra-env: %s", strings.Join(probs, "; "))
	}
	rec := &infraEnvRec{ie: ie, pullSecret: p.PullSecret}
	err := s.update(ctx, func(t *txn) error {
		if ie.ClusterID != "" {
			c, err := s.clusterByID(ie.ClusterID)
			if err != nil {
				return err
			}
			if ie.OpenshiftVersion == "" {
				rec.ie.OpenshiftVersion = c.c.OpenshiftVersion
			}
		}
		s.infraEnvs[id] = rec
		t.putInfraEnv(rec)
		t.event(evInfraEnvRegistered, sevInfo, "Registered infra env", ie.ClusterID, id, "")
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.GetInfraEnv(id)
}

// GetInfraEnv returns an infra-env (GetInfraEnv).
func (s *Service) GetInfraEnv(id string) (*wire.InfraEnv, error) {
	var out *wire.InfraEnv
	var err error
	s.view(func() {
		var ie *infraEnvRec
		if ie, err = s.infraEnvByID(id); err == nil {
			out = cloneJSON(&ie.ie)
		}
	})
	return out, err
}

// ListInfraEnvs returns every infra-env, optionally of one cluster.
func (s *Service) ListInfraEnvs(clusterID string) []*wire.InfraEnv {
	out := []*wire.InfraEnv{} // none: [], never null
	s.view(func() {
		for _, ie := range s.infraEnvs {
			if clusterID == "" || ie.ie.ClusterID == clusterID {
				out = append(out, cloneJSON(&ie.ie))
			}
		}
	})
	sortBy(out, func(ie *wire.InfraEnv) string { return ie.CreatedAt.Format("20060102150405.000000000") + ie.ID })
	return out
}

func (s *Service) infraEnvByID(id string) (*infraEnvRec, error) {
	if err := checkUUID("infra_env_id", id); err != nil {
		return nil, err
	}
	ie := s.infraEnvs[id]
	if ie == nil {
		return nil, notFound("infra-env %s not found", id)
	}
	return ie, nil
}

// UpdateInfraEnv applies infra-env-update-params (UpdateInfraEnv).
func (s *Service) UpdateInfraEnv(ctx context.Context, id string, p *wire.InfraEnvUpdateParams) (*wire.InfraEnv, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	err := s.update(ctx, func(t *txn) error {
		ie, err := s.infraEnvByID(id)
		if err != nil {
			return err
		}
		next := *cloneJSON(&ie.ie)
		secret := ie.pullSecret
		if p.PullSecret != "" {
			if probs := checkPullSecret("pull_secret", p.PullSecret); len(probs) > 0 {
				return badRequest("invalid infra-env update: %s", strings.Join(probs, "; "))
			}
			secret = p.PullSecret
		}
		if p.Proxy != nil {
			next.Proxy = p.Proxy
		}
		if p.AdditionalNTPSources != nil {
			next.AdditionalNTPSources = *p.AdditionalNTPSources
		}
		if p.SSHAuthorizedKey != nil {
			next.SSHAuthorizedKey = *p.SSHAuthorizedKey
		}
		if p.IgnitionConfigOverride != "" {
			next.IgnitionConfigOverride = p.IgnitionConfigOverride
		}
		if p.ImageType != "" {
			next.Type = p.ImageType
		}
		if p.StaticNetworkConfig != nil {
			b, err := json.Marshal(p.StaticNetworkConfig)
			if err != nil {
				return badRequest("static_network_config: %v", err)
			}
			next.StaticNetworkConfig = string(b)
		}
		ie.ie, ie.pullSecret = next, secret
		t.putInfraEnv(ie)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.GetInfraEnv(id)
}

// DeregisterInfraEnv deletes an infra-env without hosts (DeregisterInfraEnv).
func (s *Service) DeregisterInfraEnv(ctx context.Context, id string) error {
	return s.update(ctx, func(t *txn) error {
		ie, err := s.infraEnvByID(id)
		if err != nil {
			return err
		}
		n := 0
		for k := range s.hosts {
			if k.infraEnvID == id {
				n++
			}
		}
		if n > 0 {
			return conflict("infra-env %s still has %d host(s): deregister them first", id, n)
		}
		t.deleteInfraEnv(ie)
		delete(s.infraEnvs, id)
		t.event(evInfraEnvDeregistered, sevInfo, "Deregistered infra env", ie.ie.ClusterID, id, "")
		return nil
	})
}
