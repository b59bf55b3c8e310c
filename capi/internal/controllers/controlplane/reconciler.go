package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/wire"
)

// Defaults of the Reconciler's intervals.
const (
	DefaultWaitInterval = 20 * time.Second // waiting for the Cluster's infrastructure, Machines to go
	DefaultPollInterval = 15 * time.Second // following an install the service does not push
)

// Reconciler reconciles NodezeroControlPlanes.
type Reconciler struct {
	Client client.Client

	// WaitInterval is the requeue while something outside this object is
	// awaited that no watch reports (0: DefaultWaitInterval).
	WaitInterval time.Duration
	// PollInterval is how often the v2 cluster is read while hosts
	// register and the install runs (0: DefaultPollInterval).
	PollInterval time.Duration
	// Workload reaches the installed cluster's API through the kubeconfig
	// secret's bytes; nil: the main module's kube package (KubeAPI).
	Workload WorkloadAPI
}

// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=nodezerocontrolplanes,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=nodezerocontrolplanes/status;nodezerocontrolplanes/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=nodezeroconfigs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machinedeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;create;delete;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/status,verbs=get;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=*,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete

// SetupWithManager registers the reconciler: its objects, the Machines it
// controls, and the Cluster, NodezeroConfigs and MachineDeployments of
// its cluster (the expected hosts and the bound ones).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	toCP := handler.EnqueueRequestsFromMapFunc(r.clusterLabelToControlPlane)
	return ctrl.NewControllerManagedBy(mgr).
		For(&cpv1.NodezeroControlPlane{}).
		Owns(&clusterv1.Machine{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToControlPlane)).
		Watches(&bootstrapv1.NodezeroConfig{}, toCP).
		Watches(&clusterv1.MachineDeployment{}, toCP).
		Named("nodezerocontrolplane").
		Complete(r)
}

// clusterToControlPlane maps a Cluster to its control plane when that is
// a NodezeroControlPlane.
func (r *Reconciler) clusterToControlPlane(_ context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok {
		return nil
	}
	ref := c.Spec.ControlPlaneRef
	if ref.Kind != "NodezeroControlPlane" || ref.APIGroup != cpv1.GroupVersion.Group || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: ref.Name}}}
}

// clusterLabelToControlPlane maps an object labelled with its cluster's
// name to the cluster's control plane.
func (r *Reconciler) clusterLabelToControlPlane(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	var c clusterv1.Cluster
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: name}, &c); err != nil {
		return nil
	}
	return r.clusterToControlPlane(ctx, &c)
}

func (r *Reconciler) waitInterval() time.Duration {
	if r.WaitInterval > 0 {
		return r.WaitInterval
	}
	return DefaultWaitInterval
}

func (r *Reconciler) pollInterval() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return DefaultPollInterval
}

func (r *Reconciler) workload() WorkloadAPI {
	if r.Workload != nil {
		return r.Workload
	}
	return KubeAPI{}
}

// scope is one reconcile's objects.
type scope struct {
	cp      *cpv1.NodezeroControlPlane
	cluster *clusterv1.Cluster
	svc     *service.Service
}

// Reconcile brings one NodezeroControlPlane a step closer to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	cp := &cpv1.NodezeroControlPlane{}
	if err := r.Client.Get(ctx, req.NamespacedName, cp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster, err := r.ownerCluster(ctx, cp)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster == nil && cp.DeletionTimestamp.IsZero() {
		log.V(1).Info("waiting for the Cluster controller to set the owner reference")
		return ctrl.Result{}, nil // the owner reference's update brings the object back
	}

	before := cp.DeepCopy()
	defer func() {
		if !cp.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(cp, cpv1.Finalizer) {
			return // gone, or going: nothing to write
		}
		cp.Status.ObservedGeneration = cp.Generation
		if err := r.Client.Status().Patch(ctx, cp, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			retErr = errors.Join(retErr, fmt.Errorf("nodezerocontrolplane %s/%s: patch status: %w", cp.Namespace, cp.Name, err))
		}
	}()

	if !cp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, cp, cluster)
	}
	if paused(cp, cluster) {
		r.setCondition(cp, clusterv1.PausedCondition, metav1.ConditionTrue, "Paused", "the Cluster or the object is paused")
		return ctrl.Result{}, nil
	}
	r.setCondition(cp, clusterv1.PausedCondition, metav1.ConditionFalse, "NotPaused", "")
	if !controllerutil.ContainsFinalizer(cp, cpv1.Finalizer) {
		orig := cp.DeepCopy()
		controllerutil.AddFinalizer(cp, cpv1.Finalizer)
		if err := r.Client.Patch(ctx, cp, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: add finalizer: %w", cp.Namespace, cp.Name, err)
		}
	}
	return r.reconcileNormal(ctx, &scope{cp: cp, cluster: cluster})
}

// ownerCluster is the Cluster named by the object's owner reference, nil
// when there is none yet or it is gone.
func (r *Reconciler) ownerCluster(ctx context.Context, cp *cpv1.NodezeroControlPlane) (*clusterv1.Cluster, error) {
	for _, ref := range cp.OwnerReferences {
		if ref.Kind != "Cluster" {
			continue
		}
		if gv, err := schemaGroup(ref.APIVersion); err != nil || gv != clusterv1.GroupVersion.Group {
			continue
		}
		c := &clusterv1.Cluster{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: ref.Name}, c)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("nodezerocontrolplane %s/%s: owner Cluster %s: %w", cp.Namespace, cp.Name, ref.Name, err)
		}
		return c, nil
	}
	return nil, nil
}

// paused: the Cluster's spec.paused, or the paused annotation on the
// object or its Cluster.
func paused(cp *cpv1.NodezeroControlPlane, c *clusterv1.Cluster) bool {
	if _, ok := cp.Annotations[clusterv1.PausedAnnotation]; ok {
		return true
	}
	if c == nil {
		return false
	}
	if _, ok := c.Annotations[clusterv1.PausedAnnotation]; ok {
		return true
	}
	return c.Spec.Paused != nil && *c.Spec.Paused
}

func (r *Reconciler) setCondition(cp *cpv1.NodezeroControlPlane, t string, s metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&cp.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg,
		ObservedGeneration: cp.Generation})
}

// reconcileNormal: infrastructure → v2 cluster → Machines → install →
// kubeconfig → day 2.
func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	cp, cluster := s.cp, s.cluster
	ep := cluster.Spec.ControlPlaneEndpoint
	if p := cluster.Status.Initialization.InfrastructureProvisioned; p == nil || !*p || ep.Host == "" || ep.Port == 0 {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("Cluster %s: waiting for status.initialization.infrastructureProvisioned and spec.controlPlaneEndpoint", cluster.Name))
		r.setCondition(cp, cpv1.AvailableCondition, metav1.ConditionFalse, cpv1.WaitingForClusterInfrastructureReason, "")
		return ctrl.Result{RequeueAfter: r.waitInterval()}, nil
	}
	svc, err := service.Open(ctx, r.Client, cp.Namespace, cp.Spec.ServiceRef)
	if err != nil {
		r.setCondition(cp, cpv1.InstalledCondition, metav1.ConditionFalse, cpv1.ServiceUnreachableReason, err.Error())
		return ctrl.Result{}, fmt.Errorf("nodezerocontrolplane %s/%s: spec.serviceRef: %w", cp.Namespace, cp.Name, err)
	}
	s.svc = svc

	v2, res, err := r.ensureCluster(ctx, s)
	if err != nil || v2 == nil {
		return res, err
	}

	machines, err := r.controlPlaneMachines(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	scaled, refused, err := r.scale(ctx, s, v2, machines)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.updateMachineStatus(ctx, s, machines); err != nil {
		return ctrl.Result{}, err
	}
	if refused != "" {
		r.setCondition(cp, cpv1.MachinesReadyCondition, metav1.ConditionFalse, ScaleUpRefusedReason, refused)
	}
	if scaled {
		// One Machine per reconcile: the next step starts from what the
		// cache shows of this one.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}

	v2, err = r.startInstall(ctx, s, v2, machines)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.reportInstall(cp, v2)

	initialized, err := r.reconcileKubeconfig(ctx, s, v2)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.reportAvailable(cp, v2, initialized)
	if initialized && installedStatus(v2.Status) {
		if err := r.ensureDay2Cluster(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	if v2.Status == wire.ClusterStatusInstalled && initialized && cp.Status.Day2ClusterID != "" {
		return ctrl.Result{RequeueAfter: 4 * r.pollInterval()}, nil // steady: keep looking at the API now and then
	}
	return ctrl.Result{RequeueAfter: r.pollInterval()}, nil
}
