package bootstrap

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/wire"
)

// reconcileNormal: the gates (infrastructure, control plane), the
// infra-env, the data secret, then the Machine's host.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	cfg := s.cfg
	if p := s.cluster.Status.Initialization.InfrastructureProvisioned; p == nil || !*p {
		dataWaiting(cfg, bootstrapv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("Cluster %s: status.initialization.infrastructureProvisioned is not true yet", s.cluster.Name))
		return ctrl.Result{RequeueAfter: r.waitInterval()}, nil
	}
	cp, err := r.controlPlane(ctx, s.cluster)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cp == nil || cp.Status.ClusterID == "" {
		dataWaiting(cfg, bootstrapv1.WaitingForControlPlaneReason,
			fmt.Sprintf("Cluster %s's NodezeroControlPlane %q has no v2 cluster yet (status.clusterID)", s.cluster.Name, s.cluster.Spec.ControlPlaneRef.Name))
		return ctrl.Result{RequeueAfter: r.waitInterval()}, nil
	}
	s.cp = cp
	if s.svc, err = service.Open(ctx, r.Client, cp.Namespace, cp.Spec.ServiceRef); err != nil {
		dataWaiting(cfg, bootstrapv1.ServiceUnreachableReason, err.Error())
		return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	ie, waiting, err := r.infraEnv(ctx, s)
	if err != nil {
		dataWaiting(cfg, bootstrapv1.ServiceUnreachableReason, err.Error())
		return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	if waiting {
		return ctrl.Result{RequeueAfter: r.waitInterval()}, nil
	}
	cfg.Status.InfraEnvID = ie.ID
	if err := r.dataSecret(ctx, s, ie); err != nil {
		dataWaiting(cfg, bootstrapv1.DataSecretFailedReason, err.Error())
		return ctrl.Result{}, err
	}
	return r.reconcileHost(ctx, s, ie)
}

// infraEnvName is the Machine's infra-env's name in the service, unique
// per management-cluster object: the lookup that keeps a lost status from
// making a second one.
func infraEnvName(cfg *bootstrapv1.NodezeroConfig) string {
	return cfg.Namespace + "-" + cfg.Name
}

// infraEnv finds the Machine's infra-env (status.infraEnvID, else by
// name) or, through the gate, makes it; waiting is true (with the
// conditions set) when the gate holds the Machine back.
func (r *Reconciler) infraEnv(ctx context.Context, s *scope) (ie *wire.InfraEnv, waiting bool, err error) {
	cfg, user, name := s.cfg, s.svc.User, infraEnvName(s.cfg)
	if id := cfg.Status.InfraEnvID; id != "" {
		ie, err := user.GetInfraEnv(ctx, id)
		switch {
		case err == nil && ie.Name == name:
			return ie, false, nil
		case err != nil && !wire.IsStatus(err, http.StatusNotFound):
			return nil, false, fmt.Errorf("infra-env %s: %w", id, err)
		}
	}
	ies, err := user.ListInfraEnvs(ctx, "")
	if err != nil {
		return nil, false, err
	}
	for _, ie := range ies {
		if ie != nil && ie.Name == name {
			return ie, false, nil
		}
	}

	day1, err := user.GetClusterExcludingHosts(ctx, s.cp.Status.ClusterID)
	if wire.IsStatus(err, http.StatusNotFound) {
		dataWaiting(cfg, bootstrapv1.WaitingForControlPlaneReason, fmt.Sprintf("the control plane's v2 cluster %s is not in the service", s.cp.Status.ClusterID))
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	clusterID, reason := gate(s.controlPlaneMachine(), day1.Status, s.cp.Status.ClusterID, s.cp.Status.Day2ClusterID)
	switch reason {
	case bootstrapv1.WaitingForInstallCompleteReason:
		dataWaiting(cfg, reason, fmt.Sprintf("v2 cluster %s is %s: worker Machine %s joins as a day-2 host once it is installed", day1.ID, day1.Status, s.machine.Name))
		return nil, true, nil
	case bootstrapv1.WaitingForControlPlaneReason:
		dataWaiting(cfg, reason, fmt.Sprintf("v2 cluster %s is %s: waiting for the control plane's day-2 cluster (status.day2ClusterID)", day1.ID, day1.Status))
		return nil, true, nil
	}
	pull, err := r.pullSecret(ctx, s)
	if err != nil {
		return nil, false, err
	}
	params := wire.InfraEnvCreateParams{Name: name, ClusterID: &clusterID, PullSecret: pull, OpenshiftVersion: s.cp.Spec.DistributionVersion}
	if k := s.cp.Spec.Cluster.SSHAuthorizedKey; k != "" {
		params.SSHAuthorizedKey = &k
	}
	if len(cfg.Spec.AdditionalNTPSources) > 0 {
		ntp := strings.Join(cfg.Spec.AdditionalNTPSources, ",")
		params.AdditionalNTPSources = &ntp
	}
	ie, err = user.RegisterInfraEnv(ctx, params)
	if err != nil {
		return nil, false, fmt.Errorf("infra-env %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).Info("made the Machine's infra-env", "infraEnv", ie.ID, "cluster", clusterID, "machine", s.machine.Name)
	return ie, false, nil
}

// pullSecret is the control plane's spec.cluster.pullSecretRef's
// .dockerconfigjson.
func (r *Reconciler) pullSecret(ctx context.Context, s *scope) (string, error) {
	name := s.cp.Spec.Cluster.PullSecretRef.Name
	b, err := service.SecretValue(ctx, r.Client, s.cp.Namespace, name, corev1.DockerConfigJsonKey)
	if err != nil {
		return "", fmt.Errorf("nodezerocontrolplane %s/%s: spec.cluster.pullSecretRef: %w", s.cp.Namespace, s.cp.Name, err)
	}
	return string(b), nil
}
