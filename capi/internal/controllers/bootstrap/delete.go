package bootstrap

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/wire"
)

// reconcileDelete removes the Machine's hosts and infra-env from the
// service and its data secret (no garbage collector is assumed), then
// drops the finalizer. Without a Cluster or control plane to find the
// service by, there is nothing left to remove from it: the control
// plane's deletion removes its v2 clusters.
func (r *Reconciler) reconcileDelete(ctx context.Context, cfg *bootstrapv1.NodezeroConfig) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cfg, bootstrapv1.Finalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	svc, err := r.serviceForDelete(ctx, cfg)
	if err != nil {
		return ctrl.Result{}, err
	}
	if svc != nil {
		if err := deregister(ctx, svc.User, cfg); err != nil {
			return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: delete: %w", cfg.Namespace, cfg.Name, err)
		}
	} else {
		log.Info("no service to remove the Machine's host from: its Cluster or control plane is gone")
	}
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Name}, sec); err == nil {
		if owner := metav1.GetControllerOf(sec); owner != nil && owner.UID == cfg.UID {
			if err := r.Client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: delete data secret: %w", cfg.Namespace, cfg.Name, err)
			}
		}
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: data secret: %w", cfg.Namespace, cfg.Name, err)
	}
	orig := cfg.DeepCopy()
	controllerutil.RemoveFinalizer(cfg, bootstrapv1.Finalizer)
	if err := r.Client.Patch(ctx, cfg, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: remove finalizer: %w", cfg.Namespace, cfg.Name, err)
	}
	return ctrl.Result{}, nil
}

// serviceForDelete opens the service through the config's Cluster (its
// cluster-name label, else its Machine's) and control plane; nil when
// either is gone or the token secret is.
func (r *Reconciler) serviceForDelete(ctx context.Context, cfg *bootstrapv1.NodezeroConfig) (*service.Service, error) {
	name := cfg.Labels[clusterv1.ClusterNameLabel]
	if name == "" {
		m, err := r.ownerMachine(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if m == nil {
			return nil, nil
		}
		name = m.Spec.ClusterName
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("nodezeroconfig %s/%s: Cluster %s: %w", cfg.Namespace, cfg.Name, name, err)
	}
	cp, err := r.controlPlane(ctx, cluster)
	if err != nil || cp == nil {
		return nil, err
	}
	svc, err := service.Open(ctx, r.Client, cp.Namespace, cp.Spec.ServiceRef)
	if apierrors.IsNotFound(err) {
		return nil, nil // the token secret is gone: nothing can reach the service
	}
	return svc, err
}

// deregister removes the config's infra-env's hosts (the bound one and
// any refused one that came back), then the infra-env.
func deregister(ctx context.Context, user *wire.Client, cfg *bootstrapv1.NodezeroConfig) error {
	id := cfg.Status.InfraEnvID
	if id == "" {
		ies, err := user.ListInfraEnvs(ctx, "")
		if err != nil {
			return err
		}
		for _, ie := range ies {
			if ie != nil && ie.Name == infraEnvName(cfg) {
				id = ie.ID
			}
		}
	}
	if id == "" {
		return nil
	}
	hosts, err := user.ListHosts(ctx, id)
	if wire.IsStatus(err, http.StatusNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, h := range hosts {
		if h == nil {
			continue
		}
		if err := user.DeregisterHost(ctx, id, h.ID); err != nil && !wire.IsStatus(err, http.StatusNotFound) {
			return err
		}
	}
	if err := user.DeregisterInfraEnv(ctx, id); err != nil && !wire.IsStatus(err, http.StatusNotFound) {
		return err
	}
	return nil
}
