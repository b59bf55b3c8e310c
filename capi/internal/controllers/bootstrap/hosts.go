package bootstrap

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

// editable are the host statuses in which the service takes a role or a
// hostname (before the install).
var editable = []wire.HostStatus{
	wire.HostStatusDiscovering, wire.HostStatusKnown, wire.HostStatusInsufficient,
	wire.HostStatusPendingForInput, wire.HostStatusDisconnected,
}

// settled are the statuses after which the host needs nothing more from
// this reconciler: it installs, or is installed, on its own.
var settled = []wire.HostStatus{
	wire.HostStatusInstalled, wire.HostStatusAddedToExistingCluster,
}

// pickBound is the host bound to the Machine: the one recorded in the
// status while it is registered, else the first to have registered
// (then the lowest id); nil when none is.
func pickBound(hosts wire.HostList, recorded string) *wire.Host {
	var bound *wire.Host
	for _, h := range hosts {
		switch {
		case h == nil:
		case h.ID == recorded:
			return h
		case bound == nil, h.CreatedAt.Before(bound.CreatedAt),
			h.CreatedAt.Equal(bound.CreatedAt) && h.ID < bound.ID:
			bound = h
		}
	}
	return bound
}

// reconcileHost binds the one host registered into the Machine's
// infra-env, refuses any other (deregistered, shown as HostBound False
// SecondHost), gives the bound one its role, hostname and installation
// disk, and starts a day-2 host's install once it is known.
func (r *Reconciler) reconcileHost(ctx context.Context, s *scope, ie *wire.InfraEnv) (ctrl.Result, error) {
	cfg, user, log := s.cfg, s.svc.User, ctrl.LoggerFrom(ctx)
	hosts, err := user.ListHosts(ctx, ie.ID)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: hosts of infra-env %s: %w", cfg.Namespace, cfg.Name, ie.ID, err)
	}
	bound := pickBound(hosts, cfg.Status.HostID)
	if bound == nil {
		cfg.Status.HostID = ""
		setCondition(cfg, bootstrapv1.HostBoundCondition, metav1.ConditionFalse, bootstrapv1.WaitingForHostReason,
			fmt.Sprintf("no host registered into infra-env %s yet", ie.ID))
		return ctrl.Result{RequeueAfter: r.pollInterval()}, nil
	}
	if cfg.Status.HostID != bound.ID {
		log.Info("bound the Machine's host", "host", bound.ID, "machine", s.machine.Name)
	}
	cfg.Status.HostID = bound.ID
	var refused []string
	for _, h := range hosts {
		if h == nil || h.ID == bound.ID {
			continue
		}
		if err := user.DeregisterHost(ctx, ie.ID, h.ID); err != nil && !wire.IsStatus(err, http.StatusNotFound) {
			return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: refuse second host %s: %w", cfg.Namespace, cfg.Name, h.ID, err)
		}
		log.Info("refused a second host for the Machine: deregistered", "host", h.ID, "bound", bound.ID, "machine", s.machine.Name)
		refused = append(refused, hostName(h))
	}
	problem := ""
	if slices.Contains(editable, bound.Status) {
		if problem, err = r.hostUpdate(ctx, s, ie, bound); err != nil {
			return ctrl.Result{}, err
		}
	}
	switch prev := meta.FindStatusCondition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition); {
	case len(refused) > 0:
		setCondition(cfg, bootstrapv1.HostBoundCondition, metav1.ConditionFalse, bootstrapv1.SecondHostReason,
			fmt.Sprintf("host %s holds Machine %s; %s registered into infra-env %s as well and was deregistered", hostName(bound), s.machine.Name, strings.Join(refused, ", "), ie.ID))
	case prev != nil && prev.Reason == bootstrapv1.SecondHostReason && strings.HasPrefix(prev.Message, "host "+hostName(bound)+" "):
		// The refusal stays shown while the same host holds the Machine: the
		// refused host's agent may register again at any moment.
	default:
		msg := fmt.Sprintf("host %s is %s", hostName(bound), bound.Status)
		if problem != "" {
			msg += "; " + problem
		}
		setCondition(cfg, bootstrapv1.HostBoundCondition, metav1.ConditionTrue, bootstrapv1.HostBoundReason, msg)
	}

	if slices.Contains(settled, bound.Status) {
		return ctrl.Result{}, nil
	}
	day2 := s.cp.Status.Day2ClusterID != "" && ie.ClusterID == s.cp.Status.Day2ClusterID
	if day2 && bound.Status == wire.HostStatusKnown {
		if _, err := user.InstallHost(ctx, ie.ID, bound.ID); err != nil && !wire.IsStatus(err, http.StatusConflict) {
			return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: install day-2 host %s: %w", cfg.Namespace, cfg.Name, bound.ID, err)
		}
		log.Info("started the day-2 host's install", "host", bound.ID, "machine", s.machine.Name)
	}
	return ctrl.Result{RequeueAfter: r.pollInterval()}, nil
}

// hostUpdate gives the bound host what the Machine asks of it, in one
// update when anything differs: its role (master for a control-plane
// Machine, else worker), the Machine's name as its hostname, and, once
// its inventory is in, the installation disk its root device hints choose
// (the current one when they accept it, as agent-installer-client does:
// the hub service does not read the config image's host configs). It
// returns what stays wrong for the HostBound message ("" when nothing).
func (r *Reconciler) hostUpdate(ctx context.Context, s *scope, ie *wire.InfraEnv, h *wire.Host) (string, error) {
	role, want := wire.HostUpdateParamsHostRoleWorker, wire.HostRoleWorker
	if s.controlPlaneMachine() {
		role, want = wire.HostUpdateParamsHostRoleMaster, wire.HostRoleMaster
	}
	var p wire.HostUpdateParams
	if h.Role != want && !(want == wire.HostRoleMaster && h.Role == wire.HostRoleBootstrap) {
		p.HostRole = &role
	}
	if h.RequestedHostname != s.machine.Name {
		name := s.machine.Name
		p.HostName = &name
	}
	problem := ""
	if hints := manifestHints(s.cfg.Spec.RootDeviceHints); hints != nil && h.Inventory != "" {
		var inv wire.Inventory
		if err := json.Unmarshal([]byte(h.Inventory), &inv); err != nil {
			return "", fmt.Errorf("nodezeroconfig %s/%s: host %s: inventory: %w", s.cfg.Namespace, s.cfg.Name, h.ID, err)
		}
		acceptable := validation.AcceptableDisks(inv.Disks, hints)
		keep := false
		for _, d := range acceptable {
			keep = keep || (h.InstallationDiskID != "" && (validation.DiskID(d) == h.InstallationDiskID || d.Path == h.InstallationDiskID))
		}
		switch {
		case len(acceptable) == 0:
			problem = validation.NoDiskMatchesHints(hints, &inv)
		case !keep:
			p.DisksSelectedConfig = []*wire.DiskConfigParams{{ID: validation.DiskID(acceptable[0]), Role: wire.DiskRoleInstall}}
		}
	}
	if p.HostRole == nil && p.HostName == nil && p.DisksSelectedConfig == nil {
		return problem, nil
	}
	if _, err := s.svc.User.UpdateHost(ctx, ie.ID, h.ID, p); err != nil {
		if wire.IsStatus(err, http.StatusConflict) || wire.IsStatus(err, http.StatusBadRequest) {
			// The service refused it in the host's present state: say why and
			// try again next time.
			return strings.TrimSpace(problem + " update refused: " + err.Error()), nil
		}
		return "", fmt.Errorf("nodezeroconfig %s/%s: host %s: set role %s, hostname %s: %w", s.cfg.Namespace, s.cfg.Name, h.ID, want, s.machine.Name, err)
	}
	return problem, nil
}

// manifestHints are the config's hints in the main module's shape; nil
// when none is given.
func manifestHints(h *bootstrapv1.RootDeviceHints) *manifests.RootDeviceHints {
	if h == nil {
		return nil
	}
	out := &manifests.RootDeviceHints{DeviceName: h.DeviceName, HCTL: h.HCTL, Model: h.Model, Vendor: h.Vendor,
		SerialNumber: h.SerialNumber, MinSizeGigabytes: int(h.MinSizeGigabytes), WWN: h.WWN, Rotational: h.Rotational}
	if out.Empty() {
		return nil
	}
	return out
}

// hostName names a host in messages: its id, and its hostname when known.
func hostName(h *wire.Host) string {
	if h.RequestedHostname != "" {
		return fmt.Sprintf("%s (%s)", h.ID, h.RequestedHostname)
	}
	return h.ID
}
