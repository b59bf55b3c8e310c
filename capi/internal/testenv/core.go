package testenv

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/reconcilers/cluster"
	"sigs.k8s.io/cluster-api/core/reconcilers/machine"
	"sigs.k8s.io/cluster-api/core/reconcilers/machinedeployment"
	"sigs.k8s.io/cluster-api/core/reconcilers/machineset"
	"sigs.k8s.io/cluster-api/core/setup"
	"sigs.k8s.io/cluster-api/util/index"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// managerClientOptions are CAPI core's (core/setup): Secrets and
// ConfigMaps are read from the apiserver, never from the cache, so a
// reconciler reading a token or pull secret sees it at once; unstructured
// reads (the contract's provider objects) go through the cache.
func managerClientOptions() client.Options {
	return setup.ManagerClientOptions()
}

// setupCore adds CAPI core as its manager (core/main.go) sets it up: the
// default field indexes, the ClusterCache of workload connections, and the
// Cluster, Machine, MachineSet and MachineDeployment reconcilers. No
// ClusterClass/topology, MachinePool, MachineHealthCheck or
// ClusterResourceSet reconcilers: nodezero's providers do not use them.
func (env *Env) setupCore(ctx context.Context) error {
	mgr := env.Manager
	if err := index.AddDefaultIndexes(ctx, mgr); err != nil {
		return fmt.Errorf("capi indexes: %w", err)
	}
	secrets, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		return fmt.Errorf("capi secret client: %w", err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secrets,
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions("nodezero-testenv", 20, 30),
	}, controller.Options{MaxConcurrentReconciles: 5})
	if err != nil {
		return fmt.Errorf("capi cluster cache: %w", err)
	}
	// A failed workload connection is retried every 30 s by default: the
	// first nodeRef took 26 s in the probe; CAPI's own tests retry every
	// 1–2 s.
	if s, ok := cc.(interface{ SetConnectionCreationRetryInterval(time.Duration) }); ok {
		s.SetConnectionCreationRetryInterval(time.Second)
	}
	env.ClusterCache = cc

	opts := controller.Options{MaxConcurrentReconciles: 5}
	if err := (&cluster.Reconciler{
		Client:                      mgr.GetClient(),
		APIReader:                   mgr.GetAPIReader(),
		ClusterCache:                cc,
		RemoteConnectionGracePeriod: 50 * time.Second,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("capi cluster reconciler: %w", err)
	}
	if err := (&machine.Reconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		ClusterCache: cc,
		// CAPI's minimum (the cache must drop a dead connection first).
		RemoteConditionsGracePeriod: 5 * time.Minute,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("capi machine reconciler: %w", err)
	}
	if err := (&machineset.Reconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		ClusterCache: cc,
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("capi machineset reconciler: %w", err)
	}
	if err := (&machinedeployment.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
	}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("capi machinedeployment reconciler: %w", err)
	}
	return nil
}

// CompleteMachineDeployment fills in what CAPI's defaulting webhook (not
// run here) would: the cluster-name label on the object, its selector and
// its template; replicas 1 when unset; a RollingUpdate strategy (surge 1,
// unavailable 0); deletion order Random. Without the strategy the
// MachineDeployment reconciler fails with "unexpected deployment strategy
// type".
func CompleteMachineDeployment(md *clusterv1.MachineDeployment) {
	name := md.Spec.ClusterName
	setLabel := func(m *map[string]string, k, v string) {
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
	}
	setLabel(&md.Labels, clusterv1.ClusterNameLabel, name)
	if md.Spec.Replicas == nil {
		one := int32(1)
		md.Spec.Replicas = &one
	}
	if md.Spec.Selector.MatchLabels == nil && len(md.Spec.Selector.MatchExpressions) == 0 {
		setLabel(&md.Spec.Selector.MatchLabels, clusterv1.MachineDeploymentNameLabel, md.Name)
		setLabel(&md.Spec.Template.Labels, clusterv1.MachineDeploymentNameLabel, md.Name)
	}
	setLabel(&md.Spec.Selector.MatchLabels, clusterv1.ClusterNameLabel, name)
	setLabel(&md.Spec.Template.Labels, clusterv1.ClusterNameLabel, name)
	md.Spec.Template.Spec.ClusterName = name
	s := &md.Spec.Rollout.Strategy
	if s.Type == "" {
		s.Type = clusterv1.RollingUpdateMachineDeploymentStrategyType
	}
	if s.Type == clusterv1.RollingUpdateMachineDeploymentStrategyType {
		if s.RollingUpdate.MaxSurge == nil {
			v := intstr.FromInt32(1)
			s.RollingUpdate.MaxSurge = &v
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			v := intstr.FromInt32(0)
			s.RollingUpdate.MaxUnavailable = &v
		}
	}
	if md.Spec.Deletion.Order == "" {
		md.Spec.Deletion.Order = clusterv1.RandomMachineSetDeletionOrder
	}
}

// KubeconfigSecret is a `<cluster>-kubeconfig` secret in the contract's
// shape (type cluster.x-k8s.io/secret, cluster-name label, key value)
// holding kubeconfig, for tests in which the test plays the control plane.
func KubeconfigSecret(namespace, clusterName string, kubeconfig []byte) *corev1.Secret {
	s := &corev1.Secret{
		Type: clusterv1.ClusterSecretType,
		Data: map[string][]byte{"value": kubeconfig},
	}
	s.Namespace, s.Name = namespace, clusterName+"-kubeconfig"
	s.Labels = map[string]string{clusterv1.ClusterNameLabel: clusterName}
	return s
}
