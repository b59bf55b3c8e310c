package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
)

// DeletingReason: the object is deleted; its Machines go first.
const DeletingReason = "Deleting"

func schemaGroup(apiVersion string) (string, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return gv.Group, err
}

// reconcileDelete removes, in order, the control-plane Machines (and
// waits until they are gone: a Machine whose Cluster is gone can never be
// deleted), the day-2 and day-1 v2 clusters, the kubeconfig secret, then
// the finalizer.
func (r *Reconciler) reconcileDelete(ctx context.Context, cp *cpv1.NodezeroControlPlane, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(cp, cpv1.Finalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	machines, err := r.ownedMachines(ctx, cp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(machines) > 0 {
		for i := range machines {
			m := &machines[i]
			if m.DeletionTimestamp.IsZero() {
				if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
					return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: delete Machine %s: %w", cp.Namespace, cp.Name, m.Name, err)
				}
			}
		}
		r.setCondition(cp, cpv1.AvailableCondition, metav1.ConditionFalse, DeletingReason,
			fmt.Sprintf("waiting for %d control-plane Machines to be deleted", len(machines)))
		return ctrl.Result{RequeueAfter: r.waitInterval()}, nil // the Machines' deletion brings the object back sooner
	}

	svc, err := service.Open(ctx, r.Client, cp.Namespace, cp.Spec.ServiceRef)
	switch {
	case apierrors.IsNotFound(err):
		// The service's secrets are gone: nothing can reach its clusters
		// any more, and waiting would hold the Cluster forever.
		log.Info("the service's token secret is gone; leaving its v2 clusters", "err", err)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: spec.serviceRef: %w", cp.Namespace, cp.Name, err)
	default:
		if err := r.deleteV2Clusters(ctx, &scope{cp: cp, cluster: cluster, svc: svc}); err != nil {
			r.setCondition(cp, cpv1.AvailableCondition, metav1.ConditionFalse, DeletingReason, err.Error())
			return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: delete v2 clusters: %w", cp.Namespace, cp.Name, err)
		}
	}

	if cluster != nil {
		// The management cluster's garbage collector would remove it too;
		// a cluster without one (envtest) keeps it otherwise.
		sec := &corev1.Secret{}
		key := client.ObjectKey{Namespace: cp.Namespace, Name: KubeconfigSecretName(cluster)}
		if err := r.Client.Get(ctx, key, sec); err == nil {
			if ref := metav1.GetControllerOf(sec); ref != nil && ref.UID == cp.UID {
				if err := r.Client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
					return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: delete secret %s: %w", cp.Namespace, cp.Name, key.Name, err)
				}
			}
		} else if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}

	orig := cp.DeepCopy()
	controllerutil.RemoveFinalizer(cp, cpv1.Finalizer)
	if err := r.Client.Patch(ctx, cp, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: remove finalizer: %w", cp.Namespace, cp.Name, err)
	}
	log.Info("control plane deleted")
	return ctrl.Result{}, nil
}

// ownedMachines are every Machine whose controller is the object, found
// by the control-plane-name label (the Cluster may be gone already).
func (r *Reconciler) ownedMachines(ctx context.Context, cp *cpv1.NodezeroControlPlane) ([]clusterv1.Machine, error) {
	var list clusterv1.MachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(cp.Namespace),
		client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: cp.Name}); err != nil {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: list Machines: %w", cp.Namespace, cp.Name, err)
	}
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID == cp.UID {
			out = append(out, m)
		}
	}
	return out, nil
}
