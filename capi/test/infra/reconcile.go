package infra

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
)

// Condition types and reasons the reconcilers set.
const (
	ReadyCondition = "Ready"
	// ReasonEndpointMissing: the cluster's spec.controlPlaneEndpoint is not
	// given yet.
	ReasonEndpointMissing = "ControlPlaneEndpointMissing"
	// ReasonWaitingForBootstrapData: the Machine has no
	// spec.bootstrap.dataSecretName yet.
	ReasonWaitingForBootstrapData = "WaitingForBootstrapData"
	// ReasonHostRunning: the host's process runs.
	ReasonHostRunning = "HostRunning"
	// ReasonHostFailed: the host's process ended for good.
	ReasonHostFailed  = "HostFailed"
	ReasonProvisioned = "Provisioned"
)

// ClusterReconciler makes a NodezeroHostCluster provisioned once its
// spec.controlPlaneEndpoint (the test's workload API: VIP:6443) is given.
type ClusterReconciler struct {
	Client client.Client
}

// SetupWithManager registers the reconciler.
func (r *ClusterReconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	return ctrl.NewControllerManagedBy(mgr).For(&infrav1.NodezeroHostCluster{}).Named("nodezerohostcluster").Complete(r)
}

// Reconcile is one look at a NodezeroHostCluster.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	c := &infrav1.NodezeroHostCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !c.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // nothing of its own to release
	}
	h, err := patch.NewHelper(c, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	ep := c.Spec.ControlPlaneEndpoint
	if ep.Host == "" || ep.Port == 0 {
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionFalse,
			Reason: ReasonEndpointMissing, Message: "spec.controlPlaneEndpoint is not set", ObservedGeneration: c.Generation})
	} else {
		yes := true
		c.Status.Initialization.Provisioned = &yes
		meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionTrue,
			Reason: ReasonProvisioned, Message: fmt.Sprintf("the workload API is %s:%d", ep.Host, ep.Port), ObservedGeneration: c.Generation})
	}
	return ctrl.Result{}, h.Patch(ctx, c)
}

// MachineReconciler runs a NodezeroHostMachine's host: once its Machine
// has bootstrap data, a `nodezero run` process (Hosts) booted with the
// data secret's value as its config image; it sets spec.providerID
// nodezero://<namespace>/<machine>, status.initialization.provisioned and
// status.addresses. Its finalizer stops the process and removes its
// folder.
type MachineReconciler struct {
	Client client.Client
	// Hosts runs the hosts; HostsFor, when set, chooses them per
	// namespace instead (tests sharing one manager, each with its own
	// world); nil from it: the namespace's machines are not this
	// provider's.
	Hosts    *Hosts
	HostsFor func(namespace string) *Hosts
	// Started, when set, is called with the machine's key each time a
	// host is started (the e2e's reconcile latencies).
	Started func(key string, at time.Time)
}

// SetupWithManager registers the reconciler: its objects and their
// Machines.
func (r *MachineReconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.NodezeroHostMachine{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(
			util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind("NodezeroHostMachine")))).
		Named("nodezerohostmachine").
		Complete(r)
}

// hostFailedRetry is how often a failed host is looked at again.
const hostFailedRetry = 30 * time.Second

// Reconcile is one look at a NodezeroHostMachine.
func (r *MachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	m := &infrav1.NodezeroHostMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	key := req.Namespace + "/" + req.Name
	hosts := r.Hosts
	if r.HostsFor != nil {
		hosts = r.HostsFor(req.Namespace)
	}
	if hosts == nil {
		return ctrl.Result{}, nil
	}
	if !m.DeletionTimestamp.IsZero() {
		if _, err := hosts.Stop(key); err != nil {
			return ctrl.Result{}, fmt.Errorf("nodezerohostmachine %s: remove the host's folder: %w", key, err)
		}
		if controllerutil.RemoveFinalizer(m, infrav1.MachineFinalizer) {
			return ctrl.Result{}, r.Client.Update(ctx, m)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(m, infrav1.MachineFinalizer) {
		if err := r.Client.Update(ctx, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, m.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if machine == nil {
		return ctrl.Result{}, nil // CAPI sets the owner; the watch brings us back
	}
	h, err := patch.NewHelper(m, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		if perr := h.Patch(ctx, m); perr != nil && err == nil {
			err = perr
		}
	}()
	if machine.Spec.Bootstrap.DataSecretName == nil {
		meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionFalse,
			Reason: ReasonWaitingForBootstrapData, Message: "Machine " + machine.Name + " has no spec.bootstrap.dataSecretName yet", ObservedGeneration: m.Generation})
		return ctrl.Result{}, nil
	}
	host := hosts.Get(key)
	if host == nil {
		s := &corev1.Secret{}
		name := *machine.Spec.Bootstrap.DataSecretName
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: name}, s); err != nil {
			return ctrl.Result{}, fmt.Errorf("nodezerohostmachine %s: bootstrap data secret %s: %w", key, name, err)
		}
		iso := s.Data["value"]
		if len(iso) == 0 {
			return ctrl.Result{}, fmt.Errorf("nodezerohostmachine %s: bootstrap data secret %s has no value", key, name)
		}
		class := m.Spec.Hardware
		if class == "" {
			class = "master"
		}
		if host, err = hosts.Ensure(key, class, iso); err != nil {
			return ctrl.Result{}, err
		}
		if r.Started != nil {
			r.Started(key, time.Now())
		}
	}
	m.Spec.ProviderID = infrav1.ProviderIDPrefix + m.Namespace + "/" + machine.Name
	m.Status.Addresses = []clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: host.Addr.String()},
		{Type: clusterv1.MachineHostName, Address: machine.Name},
	}
	if herr := host.Err(); herr != nil {
		meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionFalse,
			Reason: ReasonHostFailed, Message: fmt.Sprintf("the host's process ended: %v (log %s)", herr, host.Log), ObservedGeneration: m.Generation})
		return ctrl.Result{RequeueAfter: hostFailedRetry}, nil
	}
	yes := true
	m.Status.Initialization.Provisioned = &yes
	meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: metav1.ConditionTrue,
		Reason: ReasonHostRunning, Message: fmt.Sprintf("host %s on %s (hardware %s)", machine.Name, host.Addr, host.Tree), ObservedGeneration: m.Generation})
	return ctrl.Result{}, nil
}
