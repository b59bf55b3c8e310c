package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
)

// Defaults of the Reconciler's intervals.
const (
	// DefaultWaitInterval: waiting for the Cluster's infrastructure, the
	// control plane's v2 cluster, or an install to end.
	DefaultWaitInterval = 20 * time.Second
	// DefaultPollInterval: following the Machine's host, whose
	// registration and status the service does not push.
	DefaultPollInterval = 10 * time.Second
)

// Reconciler reconciles NodezeroConfigs.
type Reconciler struct {
	Client client.Client

	// WaitInterval is the requeue while something no watch reports is
	// awaited (0: DefaultWaitInterval).
	WaitInterval time.Duration
	// PollInterval is how often the Machine's host is read until it is
	// bound and, on day 2, installing (0: DefaultPollInterval).
	PollInterval time.Duration
}

// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=nodezeroconfigs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=nodezeroconfigs/status;nodezeroconfigs/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=nodezerocontrolplanes,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;delete

// SetupWithManager registers the reconciler: its objects, the data
// secrets it controls, their Machines, and the Clusters and control
// planes whose changes open a gate (infrastructure provisioned, a v2
// cluster made, an install over).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&bootstrapv1.NodezeroConfig{}).
		Owns(&corev1.Secret{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToConfig)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToConfigs)).
		Watches(&cpv1.NodezeroControlPlane{}, handler.EnqueueRequestsFromMapFunc(r.controlPlaneToConfigs)).
		Named("nodezeroconfig").
		Complete(r)
}

// machineToConfig maps a Machine to its bootstrap config when that is a
// NodezeroConfig.
func machineToConfig(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := m.Spec.Bootstrap.ConfigRef
	if ref.Kind != "NodezeroConfig" || ref.APIGroup != bootstrapv1.GroupVersion.Group || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}}}
}

// clusterToConfigs maps a Cluster to the configs labelled with its name.
func (r *Reconciler) clusterToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	return r.configsOf(ctx, o.GetNamespace(), o.GetName())
}

// controlPlaneToConfigs maps a control plane to the configs of its
// Cluster (its owner, or its cluster-name label).
func (r *Reconciler) controlPlaneToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	for _, ref := range o.GetOwnerReferences() {
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && ref.Kind == "Cluster" && gv.Group == clusterv1.GroupVersion.Group {
			name = ref.Name
		}
	}
	if name == "" {
		return nil
	}
	return r.configsOf(ctx, o.GetNamespace(), name)
}

func (r *Reconciler) configsOf(ctx context.Context, namespace, cluster string) []reconcile.Request {
	var list bootstrapv1.NodezeroConfigList
	if err := r.Client.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, c := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
	}
	return out
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

// scope is one reconcile's objects.
type scope struct {
	cfg     *bootstrapv1.NodezeroConfig
	machine *clusterv1.Machine
	cluster *clusterv1.Cluster
	cp      *cpv1.NodezeroControlPlane
	svc     *service.Service
}

// controlPlaneMachine reports whether the Machine is a control-plane one.
func (s *scope) controlPlaneMachine() bool {
	_, ok := s.machine.Labels[clusterv1.MachineControlPlaneLabel]
	return ok
}

// Reconcile brings one NodezeroConfig a step closer to its Machine's
// bootstrap data and host.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	cfg := &bootstrapv1.NodezeroConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := cfg.DeepCopy()
	defer func() {
		if !cfg.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(cfg, bootstrapv1.Finalizer) {
			return // gone, or going: nothing to write
		}
		cfg.Status.ObservedGeneration = cfg.Generation
		if err := r.Client.Status().Patch(ctx, cfg, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			retErr = errors.Join(retErr, fmt.Errorf("nodezeroconfig %s/%s: patch status: %w", cfg.Namespace, cfg.Name, err))
		}
	}()

	if !cfg.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, cfg)
	}
	machine, err := r.ownerMachine(ctx, cfg)
	if err != nil || machine == nil {
		// No owner Machine (yet, or any more): nothing to do; the Machine
		// controller's owner reference brings the object back.
		return ctrl.Result{}, err
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: machine.Spec.ClusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // a Machine whose Cluster is gone is being deleted
		}
		return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: Machine %s's Cluster %q: %w", cfg.Namespace, cfg.Name, machine.Name, machine.Spec.ClusterName, err)
	}
	if paused(cfg, cluster) {
		setCondition(cfg, clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason, "the Cluster or the object is paused")
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(cfg, bootstrapv1.Finalizer) {
		orig := cfg.DeepCopy()
		controllerutil.AddFinalizer(cfg, bootstrapv1.Finalizer)
		if err := r.Client.Patch(ctx, cfg, client.MergeFrom(orig)); err != nil {
			return ctrl.Result{}, fmt.Errorf("nodezeroconfig %s/%s: add finalizer: %w", cfg.Namespace, cfg.Name, err)
		}
		// The patch answered with the stored object: the status patch's base
		// is that, less nothing this reconcile changed yet.
		before = cfg.DeepCopy()
	}
	setCondition(cfg, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")
	return r.reconcileNormal(ctx, &scope{cfg: cfg, machine: machine, cluster: cluster})
}

// ownerMachine is the Machine named by the config's owner reference, nil
// when there is none or it is gone.
func (r *Reconciler) ownerMachine(ctx context.Context, cfg *bootstrapv1.NodezeroConfig) (*clusterv1.Machine, error) {
	for _, ref := range cfg.OwnerReferences {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || ref.Kind != "Machine" || gv.Group != clusterv1.GroupVersion.Group {
			continue
		}
		m := &clusterv1.Machine{}
		err = r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: ref.Name}, m)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("nodezeroconfig %s/%s: owner Machine %s: %w", cfg.Namespace, cfg.Name, ref.Name, err)
		}
		return m, nil
	}
	return nil, nil
}

// controlPlane is the Cluster's NodezeroControlPlane (spec.controlPlaneRef),
// nil when the Cluster names none or it does not exist (yet).
func (r *Reconciler) controlPlane(ctx context.Context, cluster *clusterv1.Cluster) (*cpv1.NodezeroControlPlane, error) {
	ref := cluster.Spec.ControlPlaneRef
	if ref.Kind != "NodezeroControlPlane" || ref.APIGroup != cpv1.GroupVersion.Group || ref.Name == "" {
		return nil, nil
	}
	cp := &cpv1.NodezeroControlPlane{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, cp)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s/%s: spec.controlPlaneRef %s: %w", cluster.Namespace, cluster.Name, ref.Name, err)
	}
	return cp, nil
}

// paused: the Cluster's spec.paused, or the paused annotation on the
// config.
func paused(cfg *bootstrapv1.NodezeroConfig, cluster *clusterv1.Cluster) bool {
	if cluster != nil && cluster.Spec.Paused != nil && *cluster.Spec.Paused {
		return true
	}
	_, ok := cfg.Annotations[clusterv1.PausedAnnotation]
	return ok
}

// setCondition sets one condition at the object's generation.
func setCondition(cfg *bootstrapv1.NodezeroConfig, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&cfg.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: cfg.Generation,
	})
}

// dataWaiting records that the data secret is not there (yet) for
// reason: DataSecretAvailable and Ready False. A config whose secret was
// made keeps them: its data never goes away.
func dataWaiting(cfg *bootstrapv1.NodezeroConfig, reason, msg string) {
	if cfg.Status.Initialization.DataSecretCreated != nil && *cfg.Status.Initialization.DataSecretCreated {
		return
	}
	setCondition(cfg, bootstrapv1.DataSecretAvailableCondition, metav1.ConditionFalse, reason, msg)
	setCondition(cfg, bootstrapv1.ReadyCondition, metav1.ConditionFalse, reason, msg)
}
