package assisted

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"

	"github.com/nodezero/nodezero/daemon/installfiles"
	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Day-2 hosts: a host that registers into an infra-env bound to an imported
// cluster is kind AddToExistingClusterHost, a worker, and is installed on
// its own (v2InstallHost) once known. Its Ignition is a pointer to the
// cluster's machine config server; nothing is generated for it, and once
// it reports Rebooting it is added-to-existing-cluster: the service hears
// nothing more of it.

// The machine config server's ports (assisted's constants.SecureMCSPort and
// InsecureMCSPort).
const (
	secureMCSPort   = 22623
	insecureMCSPort = 22624
)

// isDay2Cluster reports whether c is an imported (AddHostsCluster) cluster.
func isDay2Cluster(c *clusterRec) bool {
	return c != nil && c.c.Kind == wire.ClusterKindAddHostsCluster
}

// InstallHost installs one day-2 host (v2InstallHost, 202): the host must
// be known, bound to a cluster and a day-2 host. Its role is settled (an
// auto-assign host takes its suggested role, worker), its pointer
// Ignition is stored, and it moves to installing, where its agent is
// handed the install step. The answer is the host.
func (s *Service) InstallHost(ctx context.Context, infraEnvID, hostID string) (*wire.Host, error) {
	err := s.update(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		c := s.clusters[h.clusterID()]
		if c == nil {
			return notFound("host %s is not bound to any cluster", hostID)
		}
		if h.h.Kind != wire.HostKindAddToExistingClusterHost {
			return conflict("method only allowed when adding hosts to an existing cluster")
		}
		if h.h.Status != wire.HostStatusKnown {
			return conflict("cannot install host in state %s", h.h.Status)
		}
		// Checked before anything changes: the role the host will have.
		role := day2Role(h)
		source, ca, err := ignitionEndpoint(c, h, role)
		if err != nil {
			return badRequest("cluster %s: ignition_endpoint: %v", c.c.ID, err)
		}
		ign, err := installfiles.PointerIgnition(source, ca, h.name())
		if err != nil {
			return internal(err, "build the host's pointer ignition")
		}
		if h.h.Role != role {
			h.h.Role = role
			t.hostEvent(h, evHostRole, sevInfo, fmt.Sprintf("Host %s: role set to %s", h.name(), role))
		}
		if err := t.fireHost(h, machine.TriggerInstallHost); err != nil {
			return err
		}
		id := c.c.ID
		t.manifestOp(func(tx *store.Tx) error { return tx.PutClusterFile(id, hostIgnitionName(hostID), ign) })
		t.hostEvent(h, evHostInstallStarted, sevInfo, fmt.Sprintf("Host %s starting installation as a %s node", h.name(), role))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out *wire.Host
	s.view(func() {
		if h := s.hosts[hostKey{infraEnvID, hostID}]; h != nil {
			out = s.hostView(h, s.clusters[h.clusterID()])
		}
	})
	if out == nil {
		return nil, notFound("host %s not found in infra-env %s", hostID, infraEnvID)
	}
	return out, nil
}

// day2Role is the role a day-2 host installs as: the role set on it, else
// its suggested role, else worker (assisted's AutoAssignRole; a day-2 host
// is always suggested worker).
func day2Role(h *hostRec) wire.HostRole {
	if h.h.Role != wire.HostRoleAutoAssign && h.h.Role != "" {
		return h.h.Role
	}
	if r := validation.EffectiveRole(&h.h); r != wire.HostRoleAutoAssign && r != "" {
		return r
	}
	return wire.HostRoleWorker
}

// ignitionEndpoint is where a day-2 host's pointer Ignition sends it, and
// the CA it trusts there (base64 PEM, "" for none), as assisted's
// GetIgnitionEndpointAndCert makes them. The pool is the host's machine
// config pool, else its role. With the cluster's ignition_endpoint URL the
// pool is appended to its path, unless the path already ends in it (the
// node-joiner gives the whole .../config/worker URL; the machine config
// server serves the path's last element either way, and the URL stays the
// one the cluster's worker-user-data-managed names). Without one: the API
// name on the machine config server's port, https on 22623 at api-int
// when a CA is set, else http on 22624.
func ignitionEndpoint(c *clusterRec, h *hostRec, role wire.HostRole) (string, string, error) {
	pool := string(role)
	if pool == string(wire.HostRoleAutoAssign) || pool == "" {
		pool = string(wire.HostRoleWorker)
	}
	if h.h.MachineConfigPoolName != "" {
		pool = h.h.MachineConfigPoolName
	}
	ep := c.c.IgnitionEndpoint
	ca := ""
	if ep != nil && ep.CACertificate != nil && strings.TrimSpace(*ep.CACertificate) != "" {
		if _, err := base64.StdEncoding.DecodeString(*ep.CACertificate); err != nil {
			return "", "", fmt.Errorf("ca_certificate is not base64: %w", err)
		}
		ca = *ep.CACertificate
	}
	if ep != nil && ep.URL != nil && *ep.URL != "" {
		u, err := url.Parse(*ep.URL)
		if err != nil {
			return "", "", fmt.Errorf("url %q: %w", *ep.URL, err)
		}
		if path.Base(u.Path) != pool {
			u.Path = path.Join(u.Path, pool)
		}
		return u.String(), ca, nil
	}
	host := deref(c.c.APIVIPDNSName)
	if host == "" {
		return "", "", fmt.Errorf("the cluster has neither an ignition endpoint URL nor an api_vip_dns_name")
	}
	scheme, port := "http", insecureMCSPort
	if ca != "" {
		scheme, port = "https", secureMCSPort
		// The machine config server's certificate names api-int only.
		if strings.HasPrefix(host, "api.") {
			host = "api-int." + strings.TrimPrefix(host, "api.")
		}
	}
	return fmt.Sprintf("%s://%s/config/%s", scheme, net.JoinHostPort(host, fmt.Sprint(port)), pool), ca, nil
}
