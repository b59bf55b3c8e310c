package assisted

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// RegisterHost registers an agent's host, or re-registers a known one
// (v2RegisterHost). agentVersion comes from the discovery_agent_version
// header when the body lacks it.
func (s *Service) RegisterHost(ctx context.Context, infraEnvID string, p *wire.HostCreateParams, agentVersion string) (*wire.HostRegistrationResponse, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	if err := checkUUID("host_id", p.HostID); err != nil {
		return nil, err
	}
	if p.DiscoveryAgentVersion == "" {
		p.DiscoveryAgentVersion = agentVersion
	}
	var h *hostRec
	again := false
	err := s.updateAgent(ctx, func(t *txn) error {
		ie, err := s.infraEnvByID(infraEnvID)
		if err != nil {
			return err
		}
		var c *clusterRec
		if ie.ie.ClusterID != "" {
			c = s.clusters[ie.ie.ClusterID]
		}
		now := s.cfg.Now().UTC()
		h = s.hosts[hostKey{infraEnvID, p.HostID}]
		if h == nil {
			if c != nil && !acceptsChanges(c.c.Status) {
				// The agent is told 409 and stops; the event is the
				// refused host's, a warning: the cluster has no error.
				msg := fmt.Sprintf("Cannot add hosts to cluster %s in status %s", c.c.ID, c.c.Status)
				t.event("host_registration_failed", sevWarning, msg, c.c.ID, infraEnvID, p.HostID)
				return conflict("%s", msg)
			}
			h = newHost(infraEnvID, p, c, now)
			s.hosts[h.key()] = h
			if c != nil {
				c.addHost(h)
			}
			t.putHost(h)
			t.hostEvent(h, evHostRegistered, sevInfo, fmt.Sprintf("Host %s: Successfully registered", h.name()))
		} else {
			again = true
			h.h.RegisteredAt = wire.DateTime(now)
			h.h.DiscoveryAgentVersion = p.DiscoveryAgentVersion
			if err := t.fireHost(h, machine.TriggerRegisterHost); err != nil {
				return err
			}
			if h.h.Status == wire.HostStatusDiscovering {
				// Re-registration is treated as new hardware: assisted's
				// PostRegisterHost clears the inventory, progress, logs and
				// bootstrap flag, so the host stays discovering until its
				// next inventory.
				h.inv, h.docs.inventory, h.h.Bootstrap, h.h.Progress = nil, "", false, nil
				h.clearPreparation()
				h.checks.NTPSources, h.docs.ntpSources = validation.Reported[[]*wire.NTPSource]{}, ""
				h.h.LogsInfo, h.h.LogsStartedAt, h.h.LogsCollectedAt = "", wire.DateTime{}, wire.DateTime{}
			}
			t.putHost(h)
		}
		h.h.CheckedInAt = wire.DateTime(now)
		h.agent.issuedFor = "" // a fresh agent: every step is due
		t.touchHost(h)
		if c != nil {
			t.touchCluster(c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out *wire.HostRegistrationResponse
	s.view(func() {
		cmd, _ := json.Marshal(wire.NextStepCmdRequest{AgentVersion: s.runnerImage(p.DiscoveryAgentVersion), HostID: h.h.ID, InfraEnvID: h.h.InfraEnvID})
		c := s.clusters[h.clusterID()]
		view := s.hostView(h, c)
		if again {
			view = s.reregistrationView(h, c)
		}
		out = &wire.HostRegistrationResponse{
			Host:                  *view,
			NextStepRunnerCommand: &wire.HostRegistrationResponseNextStepRunnerCommand{Args: []string{string(cmd)}},
		}
	})
	return out, nil
}

// clearPreparation forgets what the last preparation measured on the host
// (the installation disk's speed test, the images pulled): a host that
// registers again is new hardware, a reset installation prepares afresh,
// and a failed measurement must not keep the host insufficient for good.
// Callers hold the model lock.
func (h *hostRec) clearPreparation() {
	h.checks.Images, h.docs.images = validation.Reported[map[string]*wire.ContainerImageAvailability]{}, ""
	h.checks.Disks, h.docs.disks = validation.Reported[map[string]validation.DiskInfo]{}, ""
}

// runnerImage is the agent image next_step_runner_command names: the
// payload's agent image when node zero has one (assisted names its
// AGENT_DOCKER_IMAGE), else the version the agent registered with, else
// assisted's default.
func (s *Service) runnerImage(registered string) string {
	switch {
	case s.cfg.Images.Agent != "":
		return s.cfg.Images.Agent
	case registered != "":
		return registered
	}
	return defaultAgentImage
}

// reregistrationView is the host as assisted-service answers a
// re-registration: the host it builds from the request (the role its
// cluster gives a new host, no inventory, no progress) with status and
// status_info unset, which the API writes as null; the stored host is
// what later reads return.
func (s *Service) reregistrationView(h *hostRec, c *clusterRec) *wire.Host {
	fresh := newHost(h.h.InfraEnvID, &wire.HostCreateParams{HostID: h.h.ID, DiscoveryAgentVersion: h.h.DiscoveryAgentVersion}, c, h.h.RegisteredAt.Time())
	fresh.h.Kind = h.h.Kind
	fresh.h.Status, fresh.h.StatusInfo, fresh.h.StatusUpdatedAt = "", "", wire.DateTime{}
	fresh.h.CheckedInAt = h.h.CheckedInAt
	out := s.hostView(fresh, c)
	out.RequestedHostname = h.name()
	return out
}

func newHost(infraEnvID string, p *wire.HostCreateParams, c *clusterRec, now time.Time) *hostRec {
	h := wire.Host{
		Kind: wire.HostKindHost, ID: p.HostID, InfraEnvID: infraEnvID,
		Href:   apiBase + "/infra-envs/" + infraEnvID + "/hosts/" + p.HostID,
		Status: wire.HostStatusDiscovering, StatusInfo: "Waiting for host to send hardware details",
		RegisteredAt: wire.DateTime(now), CheckedInAt: wire.DateTime(now), StatusUpdatedAt: wire.DateTime(now),
		DiscoveryAgentVersion: p.DiscoveryAgentVersion, UserName: "admin",
		Role: wire.HostRoleAutoAssign, SuggestedRole: wire.HostRoleAutoAssign, CreatedAt: now, UpdatedAt: now,
	}
	if c != nil {
		id := c.c.ID
		h.ClusterID = &id
		// assisted-service makes a host of an imported cluster a day-2
		// host, always a worker of the worker pool, and a single-node
		// cluster's host master and bootstrap at once, for its stricter
		// validations.
		switch {
		case isDay2Cluster(c):
			h.Kind = wire.HostKindAddToExistingClusterHost
			h.Role, h.SuggestedRole = wire.HostRoleWorker, wire.HostRoleWorker
			h.MachineConfigPoolName = string(wire.HostRoleWorker)
		case c.c.ControlPlaneCount == 1:
			h.Role, h.SuggestedRole, h.Bootstrap = wire.HostRoleMaster, wire.HostRoleMaster, true
		}
	}
	return &hostRec{h: h}
}

// GetHost returns one host (v2GetHost), with its connectivity report.
func (s *Service) GetHost(infraEnvID, hostID string) (*wire.Host, error) {
	var out *wire.Host
	var err error
	s.view(func() {
		var h *hostRec
		if h, err = s.hostByID(infraEnvID, hostID); err == nil {
			out = s.hostView(h, s.clusters[h.clusterID()])
		}
	})
	if err != nil {
		return nil, err
	}
	if err := s.withConnectivity([]*wire.Host{out}, store.HostFilter{}); err != nil {
		return nil, internal(err, "read the host's connectivity report")
	}
	return out, nil
}

// ListHosts returns the hosts of an infra-env (v2ListHosts), with their
// connectivity reports.
func (s *Service) ListHosts(infraEnvID string) ([]*wire.Host, error) {
	var out []*wire.Host
	var err error
	s.view(func() {
		if _, err = s.infraEnvByID(infraEnvID); err != nil {
			return
		}
		m := map[hostKey]*hostRec{}
		for k, h := range s.hosts {
			if k.infraEnvID == infraEnvID {
				m[k] = h
			}
		}
		out = make([]*wire.Host, 0, len(m))
		for _, h := range sortedHosts(m) {
			out = append(out, s.hostView(h, s.clusters[h.clusterID()]))
		}
	})
	if err != nil {
		return nil, err
	}
	if err := s.withConnectivity(out, store.HostFilter{InfraEnvID: infraEnvID}); err != nil {
		return nil, internal(err, "read the hosts' connectivity reports")
	}
	return out, nil
}

// ListClusterHosts returns the hosts of a cluster that q selects
// (ListClusterHosts). As in assisted-service, inventories and connectivity
// reports are left out unless q asks for them, and free_addresses always:
// every waiting installer lists the hosts every few seconds, and a
// thousand hosts' reports are 300 MB.
func (s *Service) ListClusterHosts(clusterID string, q HostQuery) ([]*wire.Host, error) {
	var out []*wire.Host
	var err error
	s.view(func() {
		var c *clusterRec
		if c, err = s.clusterByID(clusterID); err != nil {
			return
		}
		out = make([]*wire.Host, 0, len(c.hosts))
		for _, h := range c.sorted() {
			if (q.Role != "" && h.h.Role != q.Role) || (q.Status != "" && h.h.Status != q.Status) {
				continue
			}
			v := s.hostView(h, c)
			v.FreeAddresses = ""
			if !q.WithInventory {
				v.Inventory = ""
			}
			out = append(out, v)
		}
	})
	if err != nil || !q.WithConnectivity {
		return out, err
	}
	if err := s.withConnectivity(out, store.HostFilter{ClusterID: clusterID}); err != nil {
		return nil, internal(err, "read the hosts' connectivity reports")
	}
	return out, nil
}

func (s *Service) hostByID(infraEnvID, hostID string) (*hostRec, error) {
	if err := checkUUID("infra_env_id", infraEnvID); err != nil {
		return nil, err
	}
	if err := checkUUID("host_id", hostID); err != nil {
		return nil, err
	}
	if s.infraEnvs[infraEnvID] == nil {
		return nil, notFound("infra-env %s not found", infraEnvID)
	}
	h := s.hosts[hostKey{infraEnvID, hostID}]
	if h == nil {
		return nil, notFound("host %s not found in infra-env %s", hostID, infraEnvID)
	}
	return h, nil
}

// hostView copies h for a client the way assisted-service customizes it on
// the way out: requested_hostname is the name the host goes by, and
// progress_stages lists its role's stages.
func (s *Service) hostView(h *hostRec, c *clusterRec) *wire.Host {
	out := h.view()
	out.RequestedHostname = h.name()
	sno := c != nil && c.c.ControlPlaneCount == 1
	out.ProgressStages = machine.Stages(stageKey(h, sno))
	if out.ProgressStages == nil {
		out.ProgressStages = []wire.HostStage{} // a role with no stages yet: [], as assisted lists it
	}
	return out
}

// hostnameRE is assisted's hostname pattern (hostutil.HostnamePattern).
var hostnameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9\-]{0,62}(?:\.[a-z0-9][a-z0-9\-]{0,62})*$`)

// UpdateHost applies host-update-params (v2UpdateHost).
func (s *Service) UpdateHost(ctx context.Context, infraEnvID, hostID string, p *wire.HostUpdateParams) (*wire.Host, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	err := s.update(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		switch h.h.Status {
		case wire.HostStatusDiscovering, wire.HostStatusKnown, wire.HostStatusInsufficient, wire.HostStatusDisconnected, wire.HostStatusPendingForInput:
		default:
			return conflict("host %s is %s: it can be updated only before the installation starts", h.name(), h.h.Status)
		}
		var probs []string
		next := *cloneJSON(&h.h)
		if p.HostRole != nil {
			switch r := wire.HostRole(*p.HostRole); r {
			case wire.HostRoleAutoAssign, wire.HostRoleMaster, wire.HostRoleArbiter, wire.HostRoleWorker:
				next.Role = r
			default:
				probs = append(probs, fmt.Sprintf("host_role: %q is not one of auto-assign, master, arbiter, worker", *p.HostRole))
			}
		}
		if p.HostName != nil {
			n := *p.HostName
			if len(n) > 63 {
				probs = append(probs, fmt.Sprintf("host_name: hostname is too long, must be 63 characters or less. Hostname: %s has %d characters", n, len(n)))
			} else if !hostnameRE.MatchString(n) {
				probs = append(probs, fmt.Sprintf("host_name: Hostname does not pass required regex validation: %s. Hostname: %s", hostnameRE, n))
			}
			next.RequestedHostname = n
		}
		if p.DisksSelectedConfig != nil {
			for i, d := range p.DisksSelectedConfig {
				if d == nil || d.ID == "" {
					probs = append(probs, fmt.Sprintf("disks_selected_config[%d].id: required", i))
					continue
				}
				disk := findDisk(h.inv, d.ID)
				switch {
				case disk == nil:
					probs = append(probs, fmt.Sprintf("disks_selected_config[%d].id: no disk %q in the host's inventory", i, d.ID))
				case d.Role == wire.DiskRoleInstall && (disk.InstallationEligibility == nil || !disk.InstallationEligibility.Eligible):
					probs = append(probs, fmt.Sprintf("disks_selected_config[%d].id: disk %q is not eligible for installation: %s", i, d.ID, strings.Join(reasons(disk), "; ")))
				case d.Role == wire.DiskRoleInstall:
					next.InstallationDiskID, next.InstallationDiskPath = disk.ID, diskPath(disk)
				}
			}
		}
		if p.MachineConfigPoolName != nil {
			next.MachineConfigPoolName = *p.MachineConfigPoolName
		}
		if p.NodeLabels != nil {
			b, _ := json.Marshal(p.NodeLabels)
			next.NodeLabels = string(b)
		}
		if len(probs) > 0 {
			return badRequest("invalid host update: %s", strings.Join(probs, "; "))
		}
		h.h = next
		t.putHost(h)
		t.touchHost(h)
		if c := s.clusters[h.clusterID()]; c != nil {
			t.touchCluster(c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.GetHost(infraEnvID, hostID)
}

// ResetHostValidation forgets the stored result of one of the two host
// validations whose result persists, the preparation's
// (v2ResetHostValidation): sufficient-installation-disk-speed (the
// installation disk's speed test) or container-images-available (the
// images pulled). The host is evaluated again at once, and the next
// preparation measures again. Any other validation is a 400, as in
// assisted.
func (s *Service) ResetHostValidation(ctx context.Context, infraEnvID, hostID, validationID string) (*wire.Host, error) {
	err := s.update(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		c := s.clusters[h.clusterID()]
		if c == nil {
			return conflict("host %s is not bound to any cluster: it has no validation to reset", h.name())
		}
		switch wire.HostValidationID(validationID) {
		case wire.HostValidationIDSufficientInstallationDiskSpeed:
			if !h.checks.Disks.Unreadable {
				infos := map[string]validation.DiskInfo{}
				for k, v := range h.checks.Disks.Value {
					if k != validation.InstallationDiskKey(&h.h) && k != h.h.InstallationDiskPath {
						infos[k] = v
						continue
					}
					v.DiskSpeed = nil
					infos[k] = v
				}
				keepResult(&h.checks.Disks, &h.docs.disks, infos)
			} else {
				h.checks.Disks, h.docs.disks = validation.Reported[map[string]validation.DiskInfo]{}, ""
			}
		case wire.HostValidationIDContainerImagesAvailable:
			h.checks.Images, h.docs.images = validation.Reported[map[string]*wire.ContainerImageAvailability]{}, ""
		default:
			return badRequest("Validation %q cannot be reset or does not exist", validationID)
		}
		t.putHost(h)
		t.touchHost(h)
		t.touchCluster(c)
		t.hostEvent(h, evHostValidationReset, sevInfo, fmt.Sprintf("Host %s: validation %s was reset", h.name(), validationID))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.GetHost(infraEnvID, hostID)
}

// DeregisterHost removes a host (v2DeregisterHost).
func (s *Service) DeregisterHost(ctx context.Context, infraEnvID, hostID string) error {
	return s.update(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		t.deleteHost(h)
		delete(s.hosts, h.key())
		if c := s.clusters[h.clusterID()]; c != nil {
			c.removeHost(h)
			t.touchCluster(c)
			for _, o := range c.hosts {
				t.touchHost(o) // hostname uniqueness and roles may change
			}
		}
		h.wakeAgent()
		t.hostEvent(h, evHostDeregistered, sevInfo, fmt.Sprintf("Host %s deregistered", h.name()))
		return nil
	})
}

func findDisk(inv *wire.Inventory, id string) *wire.Disk {
	if inv == nil {
		return nil
	}
	for _, d := range inv.Disks {
		if d != nil && (d.ID == id || d.Path == id || d.ByID == id || d.ByPath == id) {
			return d
		}
	}
	return nil
}

func diskPath(d *wire.Disk) string {
	if d.Path != "" {
		return d.Path
	}
	return "/dev/" + d.Name
}

func reasons(d *wire.Disk) []string {
	if d.InstallationEligibility == nil {
		return []string{"eligibility unknown"}
	}
	return d.InstallationEligibility.NotEligibleReasons
}

func stageKey(h *hostRec, sno bool) machine.StageKey {
	return machine.StageKey{
		Role: validation.EffectiveRole(&h.h), Bootstrap: h.h.Bootstrap, SNO: sno,
		Day2: h.h.Kind == wire.HostKindAddToExistingClusterHost,
	}
}

// copyHost copies a host for a client under the read lock: the struct and
// what the service changes in place (progress); strings are immutable. A
// JSON round trip here cost 60 µs a host and held the lock while listing.
func copyHost(h *wire.Host) *wire.Host {
	out := *h
	if h.Progress != nil {
		p := *h.Progress
		out.Progress = &p
	}
	if h.ClusterID != nil {
		id := *h.ClusterID
		out.ClusterID = &id
	}
	if h.MediaStatus != nil {
		m := *h.MediaStatus
		out.MediaStatus = &m
	}
	out.ProgressStages = nil
	return &out
}
