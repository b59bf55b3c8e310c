package assisted

import (
	"context"
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// Log collection of failed and cancelled hosts (docs/reference/assisted-service.md
// §2.4, §7.1; docs/reference/agent-and-installer.md §2.12). A host entering error or
// cancelled is handed logs-gather once, with stop-installation; the agent
// reports its progress (requested → collecting → completed) and uploads a
// bundle, which the API stores. A host whose collection stalls gets
// logs_info "timeout" from the machine's rule. The files themselves are
// the API's business: the service keeps the timestamps and names.

// evHostLogsUploaded is assisted's event for an uploaded host bundle.
const evHostLogsUploaded = "host_logs_uploaded"

// ruleLogsTimedOut is the name of the host machine's rule whose writer
// sets logs_info to timeout (daemon/machine host_refresh.go).
const ruleLogsTimedOut = "Log collection timed out stays"

// handedOut reports whether a step of type st was handed to h since it
// entered its status: logs-gather and stop-installation go out once per
// error or cancelled status, to long-polling and plain agents alike
// (assisted repeats them at every plain poll; a second gather of the same
// failure only repeats the first). Callers hold the model lock.
func handedOut(h *hostRec, st wire.StepType) bool {
	_, given := h.agent.issued[st]
	return given && h.agent.issuedFor == h.h.Status
}

// logsGatherArgs builds logs-gather's single arg, assisted's
// LogsGatherCmdRequest: the bootstrap host also gets the other masters'
// addresses, for the installer's gather over SSH. A host whose logs were
// collected, or whose collection timed out, is not asked again, and a host
// without a cluster has no logs to send. Callers hold the model lock.
func (s *Service) logsGatherArgs(h *hostRec) ([]string, bool) {
	c := s.clusters[h.clusterID()]
	if c == nil || handedOut(h, wire.StepTypeLogsGather) {
		return nil, false
	}
	switch h.h.LogsInfo {
	case wire.LogsStateCompleted, wire.LogsStateTimeout:
		return nil, false
	}
	req := wire.LogsGatherCmdRequest{
		ClusterID: c.c.ID, InfraEnvID: h.h.InfraEnvID, HostID: h.h.ID,
		Bootstrap: h.h.Bootstrap, InstallerGather: true,
	}
	if h.h.Bootstrap {
		req.MasterIps = masterIPs(c, h)
	}
	return oneArg(req)
}

// masterIPs are the addresses of the cluster's masters other than self, in
// host order: each one's first IPv4 address in the cluster's machine
// networks, or, without machine networks (user-managed networking), every
// address it reported, as assisted's logs command does.
func masterIPs(c *clusterRec, self *hostRec) []string {
	var nets []netip.Prefix
	for _, mn := range c.c.MachineNetworks {
		if mn == nil {
			continue
		}
		if p, err := netip.ParsePrefix(string(mn.CIDR)); err == nil {
			nets = append(nets, p)
		}
	}
	var out []string
	for _, h := range c.sorted() {
		if h == self || h.h.Bootstrap || h.inv == nil || validation.EffectiveRole(&h.h) != wire.HostRoleMaster {
			continue
		}
		out = append(out, hostAddresses(h.inv, nets)...)
	}
	return out
}

// hostAddresses: the first address of inv inside nets, or all of them
// when nets is empty.
func hostAddresses(inv *wire.Inventory, nets []netip.Prefix) []string {
	var all []string
	for _, iface := range inv.Interfaces {
		if iface == nil {
			continue
		}
		for _, a := range append(append([]string(nil), iface.IPv4Addresses...), iface.IPv6Addresses...) {
			p, err := netip.ParsePrefix(a)
			if err != nil {
				continue
			}
			if len(nets) == 0 {
				all = append(all, p.Addr().String())
				continue
			}
			for _, n := range nets {
				if n.Contains(p.Addr()) {
					return []string{p.Addr().String()}
				}
			}
		}
	}
	return all
}

// UpdateHostLogsProgress records an agent's log collection state
// (v2UpdateHostLogsProgress). requested stamps logs_started_at, as assisted
// does. collecting and completed stamp logs_collected_at: assisted stamps it
// only when a bundle arrives, because its agent reports collecting only
// after a partial upload; nodezero's agent reports collecting before it
// builds the bundle, and the machine's timeout rule counts a collecting
// host's time from logs_collected_at (a zero time would time it out at
// once). timeout is the service's own verdict, not an agent's report.
func (s *Service) UpdateHostLogsProgress(ctx context.Context, infraEnvID, hostID string, p *wire.LogsProgressParams) error {
	if p == nil {
		return badRequest("missing request body")
	}
	switch p.LogsState {
	case wire.LogsStateRequested, wire.LogsStateCollecting, wire.LogsStateCompleted:
	default:
		return badRequest("logs_state: %q is not one of requested, collecting, completed", p.LogsState)
	}
	return s.updateAgent(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		now := wire.DateTime(s.cfg.Now().UTC())
		switch p.LogsState {
		case wire.LogsStateRequested:
			h.h.LogsStartedAt = now
		default:
			h.h.LogsCollectedAt = now
		}
		h.h.LogsInfo = p.LogsState
		t.putHost(h)
		t.touchHost(h)
		return nil
	})
}

// LogsHost names a host's log bundle.
type LogsHost struct {
	ID, InfraEnvID string
	Hostname       string
	Role           wire.HostRole // the effective role
}

// ClusterLogs is what the API needs to store and name a cluster's logs.
type ClusterLogs struct {
	ClusterID, Name string
	Hosts           []LogsHost // by id
}

// Host returns the host of the cluster with this id (and infra-env, when
// infraEnvID is not "").
func (cl *ClusterLogs) Host(infraEnvID, hostID string) (LogsHost, bool) {
	for _, h := range cl.Hosts {
		if h.ID == hostID && (infraEnvID == "" || h.InfraEnvID == infraEnvID) {
			return h, true
		}
	}
	return LogsHost{}, false
}

// LogsOf returns the cluster's name and hosts for its log files. An id
// that is not a UUID is a bad request, an unknown cluster not found.
func (s *Service) LogsOf(clusterID string) (*ClusterLogs, error) {
	var out *ClusterLogs
	var err error
	s.view(func() {
		var c *clusterRec
		if c, err = s.clusterByID(clusterID); err != nil {
			return
		}
		out = &ClusterLogs{ClusterID: c.c.ID, Name: c.c.Name}
		for _, h := range c.sorted() {
			out.Hosts = append(out.Hosts, LogsHost{ID: h.h.ID, InfraEnvID: h.h.InfraEnvID, Hostname: h.name(), Role: validation.EffectiveRole(&h.h)})
		}
	})
	if out != nil {
		sort.Slice(out.Hosts, func(i, j int) bool { return out.Hosts[i].ID < out.Hosts[j].ID })
	}
	return out, err
}

// CheckHostLogs checks that infraEnvID and hostID name a host of the
// cluster, before its logs are received.
func (s *Service) CheckHostLogs(clusterID, infraEnvID, hostID string) error {
	var err error
	s.view(func() { _, err = s.clusterHost(clusterID, infraEnvID, hostID) })
	return err
}

// clusterHost finds a host of a cluster. Callers hold the model lock.
func (s *Service) clusterHost(clusterID, infraEnvID, hostID string) (*hostRec, error) {
	c, err := s.clusterByID(clusterID)
	if err != nil {
		return nil, err
	}
	h, err := s.hostByID(infraEnvID, hostID)
	if err != nil {
		return nil, err
	}
	if h.clusterID() != c.c.ID {
		return nil, notFound("host %s of infra-env %s is not a host of cluster %s", hostID, infraEnvID, clusterID)
	}
	return h, nil
}

// HostLogsUploaded records that a host's bundle was stored (assisted's
// SetUploadLogsAt): logs_collected_at is stamped and an event says so.
func (s *Service) HostLogsUploaded(ctx context.Context, clusterID, infraEnvID, hostID string) error {
	return s.updateAgent(ctx, func(t *txn) error {
		h, err := s.clusterHost(clusterID, infraEnvID, hostID)
		if err != nil {
			return err
		}
		h.h.LogsCollectedAt = wire.DateTime(s.cfg.Now().UTC())
		t.hostEvent(h, evHostLogsUploaded, sevInfo, fmt.Sprintf("Uploaded logs for host %s cluster %s", h.name(), clusterID))
		t.putHost(h)
		t.touchHost(h)
		return nil
	})
}

// ControllerLogsUploaded records that the cluster's controller bundle was
// stored: controller_logs_collected_at is stamped.
func (s *Service) ControllerLogsUploaded(ctx context.Context, clusterID string) error {
	return s.update(ctx, func(t *txn) error {
		c, err := s.clusterByID(clusterID)
		if err != nil {
			return err
		}
		c.c.ControllerLogsCollectedAt = wire.DateTime(s.cfg.Now().UTC())
		t.putCluster(c)
		return nil
	})
}

// applyLogsTimeout is the writer's part of the machine's log collection
// timeout: the host stays in its status and its logs_info becomes
// timeout. It reports whether anything changed.
func (t *txn) applyLogsTimeout(h *hostRec, tr machine.Transition[wire.HostStatus]) bool {
	if tr.Rule != ruleLogsTimedOut || h.h.LogsInfo == wire.LogsStateTimeout {
		return false
	}
	h.h.LogsInfo = wire.LogsStateTimeout
	t.s.log.Info("log collection timed out", "host", h.h.ID, "status", h.h.Status)
	return true
}

// logsFacts is what the host machine's log timeout reads.
func logsFacts(h *wire.Host) machine.Logs {
	return machine.Logs{State: h.LogsInfo, StartedAt: h.LogsStartedAt.Time(), CollectedAt: h.LogsCollectedAt.Time()}
}

// sanitizeName makes a cluster or host name safe as part of a file name.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// FileName is the name of the host's bundle in downloads:
// <hostname>_<role>_<id>.tar.gz, as assisted names them in a cluster's
// tarball.
func (h LogsHost) FileName() string {
	return fmt.Sprintf("%s_%s_%s.tar.gz", sanitizeName(h.Hostname), h.Role, h.ID)
}

// FileName is the name of the cluster's tarball of all its logs:
// <name>_<id>.tar.
func (cl *ClusterLogs) FileName() string {
	return fmt.Sprintf("%s_%s.tar", sanitizeName(cl.Name), cl.ClusterID)
}
