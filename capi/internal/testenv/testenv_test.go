package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/test/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestMain(m *testing.M) { os.Exit(Main(m, Options{})) }

// TestCRDsInstalled: CAPI core's, nodezero's and the Generic* CRDs are
// served.
func TestCRDsInstalled(t *testing.T) {
	env := Shared(t)
	ctx := context.Background()
	for _, name := range []string{
		"clusters.cluster.x-k8s.io",
		"machinedeployments.cluster.x-k8s.io",
		"nodezeroconfigs.bootstrap.cluster.x-k8s.io",
		"nodezeroconfigtemplates.bootstrap.cluster.x-k8s.io",
		"nodezerocontrolplanes.controlplane.cluster.x-k8s.io",
		"nodezerohostmachines.infrastructure.cluster.x-k8s.io",
		"genericinfrastructureclusters.infrastructure.cluster.x-k8s.io",
		"genericinfrastructuremachinetemplates.infrastructure.cluster.x-k8s.io",
	} {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
		}
	}
}

// TestCoreReconcilesCluster: CAPI core's Cluster reconciler runs in the
// manager: an infrastructure cluster marked provisioned is mirrored to the
// Cluster's status.
func TestCoreReconcilesCluster(t *testing.T) {
	env := Shared(t)
	ctx := context.Background()
	ns := env.Namespace(t)

	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(builder.InfrastructureGroupVersion.WithKind(builder.GenericInfrastructureClusterKind))
	infra.SetNamespace(ns)
	infra.SetName("infra")
	if err := env.Client.Create(ctx, infra); err != nil {
		t.Fatal(err)
	}
	cl := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: builder.InfrastructureGroupVersion.Group,
				Kind:     builder.GenericInfrastructureClusterKind,
				Name:     "infra",
			},
		},
	}
	if err := env.Client.Create(ctx, cl); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(infra.Object, map[string]any{"host": "127.0.0.1", "port": int64(6443)}, "spec", "controlPlaneEndpoint"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, infra); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(infra.Object, true, "status", "initialization", "provisioned"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Status().Update(ctx, infra); err != nil {
		t.Fatal(err)
	}
	took := Poll(t, "Cluster infrastructureProvisioned", time.Minute, func() (bool, string) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
			return false, err.Error()
		}
		p := cl.Status.Initialization.InfrastructureProvisioned
		return p != nil && *p, fmt.Sprintf("Cluster %s/%s status %+v", ns, cl.Name, cl.Status)
	})
	t.Logf("infrastructure provisioned → Cluster infrastructureProvisioned in %s", took.Round(time.Millisecond))
	if got, want := cl.Spec.ControlPlaneEndpoint.Host, "127.0.0.1"; got != want {
		t.Errorf("Cluster spec.controlPlaneEndpoint.host = %q, want %q (copied from the infrastructure cluster)", got, want)
	}
}

// TestCompleteMachineDeployment: the webhook's defaults, as the
// MachineDeployment reconciler needs them.
func TestCompleteMachineDeployment(t *testing.T) {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: clusterv1.MachineDeploymentSpec{ClusterName: "c"}}
	CompleteMachineDeployment(md)
	if md.Spec.Rollout.Strategy.Type != clusterv1.RollingUpdateMachineDeploymentStrategyType {
		t.Errorf("strategy = %q", md.Spec.Rollout.Strategy.Type)
	}
	if md.Spec.Deletion.Order != clusterv1.RandomMachineSetDeletionOrder {
		t.Errorf("deletion order = %q", md.Spec.Deletion.Order)
	}
	for _, labels := range []map[string]string{md.Labels, md.Spec.Selector.MatchLabels, md.Spec.Template.Labels} {
		if labels[clusterv1.ClusterNameLabel] != "c" {
			t.Errorf("labels %v lack %s=c", labels, clusterv1.ClusterNameLabel)
		}
	}
	if md.Spec.Selector.MatchLabels[clusterv1.MachineDeploymentNameLabel] != "w" || md.Spec.Template.Labels[clusterv1.MachineDeploymentNameLabel] != "w" {
		t.Errorf("selector %v / template labels %v lack the deployment name", md.Spec.Selector.MatchLabels, md.Spec.Template.Labels)
	}
	if md.Spec.Replicas == nil || *md.Spec.Replicas != 1 {
		t.Errorf("replicas = %v, want 1", md.Spec.Replicas)
	}
}

// TestMissingToolsIsErrNoTools: without kube-apiserver New fails with
// ErrNoTools (which Start and Shared turn into a skip, or a failure when
// CI=true), before starting anything.
func TestMissingToolsIsErrNoTools(t *testing.T) {
	t.Setenv("NODEZERO_KUBE_APISERVER", filepath.Join(t.TempDir(), "no-such-kube-apiserver"))
	env, err := New(Options{})
	if err == nil {
		env.Stop()
		t.Fatal("New started without a kube-apiserver")
	}
	if !errors.Is(err, ErrNoTools) {
		t.Errorf("New = %v, want an ErrNoTools", err)
	}
}
