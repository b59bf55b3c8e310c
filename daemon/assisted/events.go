package assisted

import (
	"context"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Event names and message templates as assisted-service's docs/events.yaml
// spells them.
const (
	evClusterRegistered    = "cluster_registration_succeeded"
	evClusterDeregistered  = "cluster_deregistered"
	evClusterStatus        = "cluster_status_updated"
	evClusterValFailed     = "cluster_validation_failed"
	evClusterValFixed      = "cluster_validation_fixed"
	evClusterPrepare       = "cluster_prepare_installation_started"
	evClusterCanceled      = "cluster_installation_canceled"
	evClusterReset         = "cluster_installation_reset"
	evInstallConfigApplied = "install_config_applied"
	evInfraEnvRegistered   = "infra_env_registered"
	evInfraEnvDeregistered = "infra_env_deregistered"
	evHostRegistered       = "host_registration_succeeded"
	evHostDeregistered     = "host_deregistered"
	evHostStatus           = "host_status_updated"
	evHostValFailed        = "host_validation_failed"
	evHostValFixed         = "host_validation_fixed"
	evHostProgress         = "host_install_progress_updated"
	evHostBootstrap        = "host_bootstrap_set"
	evHostRole             = "host_role_updated"
	evHostImageStatus      = "image_status_updated"
	evHostDiskSpeed        = "disk_speed_slower_than_supported"
	evHostValidationReset  = "host_validation_reset"
	evHostInstallStarted   = "host_installation_started"
)

// Severities.
const (
	sevInfo    = "info"
	sevWarning = "warning"
	sevError   = "error"
)

func (t *txn) event(name, severity, msg, clusterID, infraEnvID, hostID string) {
	t.evs = append(t.evs, store.Event{
		Time: t.s.cfg.Now(), Name: name, Severity: severity, Category: "user",
		Message: msg, ClusterID: clusterID, InfraEnvID: infraEnvID, HostID: hostID,
	})
}

func (t *txn) clusterEvent(c *clusterRec, name, severity, msg string) {
	t.event(name, severity, msg, c.c.ID, "", "")
}

func (t *txn) hostEvent(h *hostRec, name, severity, msg string) {
	t.event(name, severity, msg, h.clusterID(), h.h.InfraEnvID, h.h.ID)
}

// hostStatusSeverity is assisted's GetEventSeverityFromHostStatus.
func hostStatusSeverity(s wire.HostStatus) string {
	switch s {
	case wire.HostStatusDisconnected, wire.HostStatusInstallingPendingUserAction, wire.HostStatusInsufficient:
		return sevWarning
	case wire.HostStatusError:
		return sevError
	}
	return sevInfo
}

func clusterStatusSeverity(s wire.ClusterStatus) string {
	if s == wire.ClusterStatusError {
		return sevError
	}
	return sevInfo
}

// EventsQuery filters ListEvents; it mirrors v2ListEvents' query.
type EventsQuery struct {
	ClusterID    string
	HostIDs      []string
	InfraEnvID   string
	Severities   []string
	Categories   []string
	Message      string
	ClusterLevel bool
	Limit        int
	Offset       int
	Descending   bool
}

// EventList is a page of events and the counts assisted-service reports in
// its response headers.
type EventList struct {
	Events     []*wire.Event
	Total      int
	BySeverity map[string]int
}

// ListEvents reads events from the store.
func (s *Service) ListEvents(ctx context.Context, q EventsQuery) (*EventList, error) {
	for _, sev := range q.Severities {
		switch sev {
		case sevInfo, sevWarning, sevError, "critical":
		default:
			return nil, badRequest("severities: %q is not one of info, warning, error, critical", sev)
		}
	}
	if q.Limit < 0 || q.Offset < 0 {
		return nil, badRequest("limit and offset must not be negative")
	}
	if q.ClusterID != "" {
		if _, err := s.clusterByID(q.ClusterID); err != nil {
			return nil, err
		}
	}
	f := store.EventFilter{
		ClusterID: q.ClusterID, InfraEnvID: q.InfraEnvID, HostIDs: q.HostIDs,
		Severities: q.Severities, Categories: q.Categories, ClusterLevel: q.ClusterLevel,
		Message: q.Message, Limit: q.Limit, Offset: q.Offset, Descending: q.Descending,
	}
	out := &EventList{}
	err := s.store.View(ctx, func(tx *store.Tx) error {
		evs, err := tx.Events(f)
		if err != nil {
			return err
		}
		out.BySeverity, out.Total, err = tx.EventCounts(f)
		if err != nil {
			return err
		}
		out.Events = make([]*wire.Event, 0, len(evs))
		for _, e := range evs {
			out.Events = append(out.Events, toV2Event(e))
		}
		return nil
	})
	if err != nil {
		return nil, internal(err, "list events")
	}
	return out, nil
}

func toV2Event(e store.Event) *wire.Event {
	ev := &wire.Event{
		Name: e.Name, Severity: wire.EventSeverity(e.Severity), Category: wire.EventCategory(e.Category),
		Message: e.Message, EventTime: wire.DateTime(e.Time), Props: string(e.Props),
		RequestID: e.RequestID,
	}
	ev.ClusterID = optional(e.ClusterID)
	ev.HostID = optional(e.HostID)
	ev.InfraEnvID = optional(e.InfraEnvID)
	return ev
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
