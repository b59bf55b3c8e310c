package contract

import (
	"bytes"
	"fmt"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/test/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
)

// TestDay1Contract: a Cluster with a three-replica NodezeroControlPlane
// and a worker MachineDeployment, before any host registers, with CAPI
// core reading the providers' objects:
//   - the control plane makes one v2 cluster, its Machines (control-plane
//     label, controller reference, a NodezeroConfig and a cloned
//     infrastructure machine each) and reports replicas and a selector
//     that selects them; the scale subresource reads it and scales it
//     up and down (the Machine scaled away takes its infra-env along);
//   - every Machine's NodezeroConfig gets its data secret in the
//     contract's shape (name = status.dataSecretName, type
//     cluster.x-k8s.io/secret, cluster-name label, controller reference,
//     key value = a config image, format), dataSecretCreated and Ready,
//     and CAPI copies them to the Machine (spec.bootstrap.dataSecretName,
//     bootstrapDataSecretCreated, BootstrapConfigReady); a worker before
//     the install is a day-1 host and gets its data too;
//   - a deleted data secret comes back with the same bytes;
//   - deleting the Cluster deletes every Machine while the control plane
//     waits behind its finalizer (a Machine held by the test keeps it and
//     its v2 cluster), then the v2 cluster and infra-envs, then the
//     control plane and the Cluster; no secret is left.
func TestDay1Contract(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	cp := s.controlPlane(3)
	s.cluster(cp, unusedEndpoint())
	s.workers("workers", 1)

	// The control plane: owner reference from CAPI, finalizer, v2 cluster.
	s.poll("control plane: finalizer and v2 cluster", short, func() (bool, string) {
		cp = s.cp()
		return cp.Status.ClusterID != "" && len(cp.Finalizers) > 0,
			fmt.Sprintf("finalizers %v, clusterID %q, conditions %v", cp.Finalizers, cp.Status.ClusterID, cp.Status.Conditions)
	})
	if !ownedByCluster(cp.OwnerReferences) {
		t.Errorf("control plane's owner references %+v: none to the Cluster %s (set by CAPI)", cp.OwnerReferences, clusterName)
	}
	v2, err := s.svc.Client().GetClusterExcludingHosts(s.ctx, cp.Status.ClusterID)
	if err != nil {
		t.Fatalf("v2 cluster %s: %v", cp.Status.ClusterID, err)
	}
	if v2.Name != clusterName || v2.OpenshiftVersion == "" || v2.BaseDNSDomain != "nodezero.test" {
		t.Errorf("v2 cluster: name %q, openshift_version %q, base_dns_domain %q; want %s, set, nodezero.test", v2.Name, v2.OpenshiftVersion, v2.BaseDNSDomain, clusterName)
	}

	// Three control-plane Machines and one worker, each with its data.
	s.poll("three control-plane Machines and a worker with bootstrap data", long, func() (bool, string) {
		cps, ws := s.machines(controlPlaneMachines()), s.machines(workerMachines())
		if len(cps) != 3 || len(ws) != 1 {
			return false, fmt.Sprintf("%d control-plane Machines, %d workers", len(cps), len(ws))
		}
		for _, m := range append(cps, ws...) {
			if m.Spec.Bootstrap.DataSecretName == nil || !ptrTrue(m.Status.Initialization.BootstrapDataSecretCreated) ||
				!isTrue(m.Status.Conditions, clusterv1.MachineBootstrapConfigReadyCondition) {
				cfg, _ := s.config(&m)
				return false, fmt.Sprintf("Machine %s: dataSecretName %v, %s; config %+v", m.Name, m.Spec.Bootstrap.DataSecretName,
					condition(m.Status.Conditions, clusterv1.MachineBootstrapConfigReadyCondition), cfg.Status)
			}
		}
		return true, ""
	})
	cp = s.cp()
	for _, m := range s.machines(controlPlaneMachines()) {
		checkControlPlaneMachine(t, cp, &m)
	}
	values := map[string][]byte{}
	for _, m := range append(s.machines(controlPlaneMachines()), s.machines(workerMachines())...) {
		values[m.Name] = checkBootstrapData(t, s, &m)
	}

	// Replicas, selector, scale subresource.
	s.poll("control plane status.replicas 3", short, func() (bool, string) {
		cp = s.cp()
		return cp.Status.Replicas != nil && *cp.Status.Replicas == 3, fmt.Sprintf("status %+v", cp.Status)
	})
	if cp.Status.UpToDateReplicas == nil || *cp.Status.UpToDateReplicas != 3 || cp.Status.ReadyReplicas == nil || *cp.Status.ReadyReplicas != 0 {
		t.Errorf("status upToDateReplicas %v, readyReplicas %v; want 3 (made from the spec) and 0 (no host, no Node)", cp.Status.UpToDateReplicas, cp.Status.ReadyReplicas)
	}
	sel, err := labels.Parse(cp.Status.Selector)
	if err != nil {
		t.Fatalf("status.selector %q: %v", cp.Status.Selector, err)
	}
	if got := s.machines(client.MatchingLabelsSelector{Selector: sel}); len(got) != 3 {
		t.Errorf("status.selector %q selects %d Machines, want the 3 control-plane ones", cp.Status.Selector, len(got))
	}
	scale := &autoscalingv1.Scale{}
	if err := s.c.SubResource("scale").Get(s.ctx, cp, scale); err != nil {
		t.Fatalf("GET scale: %v", err)
	}
	if scale.Spec.Replicas != 3 || scale.Status.Replicas != 3 || scale.Status.Selector != cp.Status.Selector {
		t.Errorf("scale = spec %d, status %d, selector %q; want 3, 3, %q", scale.Spec.Replicas, scale.Status.Replicas, scale.Status.Selector, cp.Status.Selector)
	}
	scale.Spec.Replicas = 4
	if err := s.c.SubResource("scale").Update(s.ctx, cp, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scale to 4: %v", err)
	}
	s.poll("scaled through the scale subresource: 4 control-plane Machines, status.replicas 4", long, func() (bool, string) {
		cp = s.cp()
		n := len(s.machines(controlPlaneMachines()))
		return n == 4 && cp.Status.Replicas != nil && *cp.Status.Replicas == 4 && *cp.Spec.Replicas == 4,
			fmt.Sprintf("%d Machines, spec.replicas %v, status.replicas %v", n, *cp.Spec.Replicas, cp.Status.Replicas)
	})

	// Scale down through the subresource: one Machine goes, with its
	// config's infra-env in the service.
	if err := s.c.SubResource("scale").Get(s.ctx, cp, scale); err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	if err := s.c.SubResource("scale").Update(s.ctx, cp, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scale to 3: %v", err)
	}
	s.poll("scaled down to 3: a Machine and its infra-env gone", long, func() (bool, string) {
		cp = s.cp()
		n := len(s.machines(controlPlaneMachines()))
		ies, err := s.svc.Client().ListInfraEnvs(s.ctx, "")
		if err != nil {
			return false, err.Error()
		}
		return n == 3 && cp.Status.Replicas != nil && *cp.Status.Replicas == 3 && len(ies) == 4,
			fmt.Sprintf("%d Machines, status.replicas %v, %d infra-envs in the service (want 3 control plane + 1 worker)", n, cp.Status.Replicas, len(ies))
	})

	// A data secret deleted is made again, byte for byte.
	m := s.machines(workerMachines())[0]
	sec := &corev1.Secret{}
	if err := s.get(sec, *m.Spec.Bootstrap.DataSecretName); err != nil {
		t.Fatal(err)
	}
	oldUID := sec.UID
	if err := s.c.Delete(s.ctx, sec); err != nil {
		t.Fatal(err)
	}
	s.poll("deleted data secret made again", short, func() (bool, string) {
		err := s.get(sec, *m.Spec.Bootstrap.DataSecretName)
		return err == nil && sec.UID != oldUID, fmt.Sprintf("%v", err)
	})
	if !bytes.Equal(sec.Data["value"], values[m.Name]) {
		t.Errorf("data secret %s made again holds other bytes (%d, was %d): the config image is not deterministic", sec.Name, len(sec.Data["value"]), len(values[m.Name]))
	}

	// Deletion: Machines first, the control plane's finalizer last. One
	// control-plane Machine is held by a finalizer of the test's: while
	// it exists the control plane must stay, finalizer and v2 cluster.
	clusterID := cp.Status.ClusterID
	held := s.machines(controlPlaneMachines())[0]
	orig := held.DeepCopy()
	held.Finalizers = append(held.Finalizers, holdFinalizer)
	if err := s.c.Patch(s.ctx, &held, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	cl := &clusterv1.Cluster{}
	if err := s.get(cl, clusterName); err != nil {
		t.Fatal(err)
	}
	if err := s.c.Delete(s.ctx, cl); err != nil {
		t.Fatal(err)
	}
	s.poll("held Machine deleted by the control plane and done with by CAPI (only the test's finalizer left)", long, func() (bool, string) {
		m := &clusterv1.Machine{}
		if err := s.get(m, held.Name); err != nil {
			return false, err.Error()
		}
		return m.DeletionTimestamp != nil && len(m.Finalizers) == 1 && m.Finalizers[0] == holdFinalizer,
			fmt.Sprintf("deletionTimestamp %v, finalizers %v", m.DeletionTimestamp, m.Finalizers)
	})
	cp = s.cp()
	if cp.DeletionTimestamp == nil || len(cp.Finalizers) == 0 {
		t.Errorf("control plane while one of its Machines exists: deletionTimestamp %v, finalizers %v; want deleting, held by its finalizer", cp.DeletionTimestamp, cp.Finalizers)
	}
	if _, err := s.svc.Client().GetClusterExcludingHosts(s.ctx, clusterID); err != nil {
		t.Errorf("v2 cluster %s while a control-plane Machine exists: %v; want it kept until the Machines are gone", clusterID, err)
	}
	hm := &clusterv1.Machine{}
	if err := s.get(hm, held.Name); err != nil {
		t.Fatal(err)
	}
	orig = hm.DeepCopy()
	hm.Finalizers = nil
	if err := s.c.Patch(s.ctx, hm, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	s.poll("Cluster deleted: Machines, configs, data secrets, infrastructure machines, control plane, Cluster gone", long, func() (bool, string) {
		if n := len(s.machines()); n > 0 {
			return false, fmt.Sprintf("%d Machines left", n)
		}
		var cfgs bootstrapv1.NodezeroConfigList
		if err := s.c.List(s.ctx, &cfgs, client.InNamespace(s.ns)); err != nil || len(cfgs.Items) > 0 {
			return false, fmt.Sprintf("%d NodezeroConfigs left (%v)", len(cfgs.Items), err)
		}
		infra := &unstructured.UnstructuredList{}
		infra.SetGroupVersionKind(builder.InfrastructureGroupVersion.WithKind(builder.GenericInfrastructureMachineKind + "List"))
		if err := s.c.List(s.ctx, infra, client.InNamespace(s.ns)); err != nil || len(infra.Items) > 0 {
			return false, fmt.Sprintf("%d infrastructure machines left (%v)", len(infra.Items), err)
		}
		for _, o := range []struct {
			obj  client.Object
			name string
		}{{&cpv1.NodezeroControlPlane{}, cpName}, {&clusterv1.Cluster{}, clusterName}} {
			if ok, msg := s.gone(o.obj, o.name); !ok {
				return false, msg
			}
		}
		return true, ""
	})
	s.poll("service: v2 cluster "+clusterID+" and every infra-env deleted", short, s.serviceEmpty)
	var secrets corev1.SecretList
	if err := s.c.List(s.ctx, &secrets, client.InNamespace(s.ns), client.HasLabels{clusterv1.ClusterNameLabel}); err != nil {
		t.Fatal(err)
	}
	// There is no garbage collector here: each secret must have been
	// deleted by its provider (the "every secret gone").
	for _, sec := range secrets.Items {
		t.Errorf("secret %s with the cluster-name label left after the Cluster's deletion (owners %v)", sec.Name, sec.OwnerReferences)
	}
}

// holdFinalizer is the test's own, holding a Machine.
const holdFinalizer = "contract.nodezero.test/hold"

// checkControlPlaneMachine: the control-plane contract's Machine.
func checkControlPlaneMachine(t *testing.T, cp *cpv1.NodezeroControlPlane, m *clusterv1.Machine) {
	t.Helper()
	if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; !ok {
		t.Errorf("Machine %s: no %s label", m.Name, clusterv1.MachineControlPlaneLabel)
	}
	if m.Labels[clusterv1.ClusterNameLabel] != clusterName {
		t.Errorf("Machine %s: label %s = %q, want %s", m.Name, clusterv1.ClusterNameLabel, m.Labels[clusterv1.ClusterNameLabel], clusterName)
	}
	if ref := metav1.GetControllerOf(m); ref == nil || ref.Kind != "NodezeroControlPlane" || ref.UID != cp.UID {
		t.Errorf("Machine %s: controller reference %+v, want the control plane", m.Name, ref)
	}
	if m.Spec.Version != cp.Spec.Version {
		t.Errorf("Machine %s: spec.version %q, want the control plane's %q", m.Name, m.Spec.Version, cp.Spec.Version)
	}
	if ir := m.Spec.InfrastructureRef; ir.Kind != builder.GenericInfrastructureMachineKind || ir.Name == "" {
		t.Errorf("Machine %s: infrastructureRef %+v, want a %s cloned from the template", m.Name, ir, builder.GenericInfrastructureMachineKind)
	}
	if c := m.Status.Conditions; !hasCondition(c, clusterv1.MachineUpToDateCondition) {
		t.Errorf("Machine %s: no %s condition (the control plane owns it)", m.Name, clusterv1.MachineUpToDateCondition)
	}
}

func ownedByCluster(refs []metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.Kind == "Cluster" && r.Name == clusterName {
			return true
		}
	}
	return false
}

func hasCondition(conds []metav1.Condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return true
		}
	}
	return false
}

// checkBootstrapData: the bootstrap contract's data secret of the
// Machine's NodezeroConfig, and what CAPI copied to the Machine. It
// returns the secret's value.
func checkBootstrapData(t *testing.T, s *scenario, m *clusterv1.Machine) []byte {
	t.Helper()
	cfg, err := s.config(m)
	if err != nil {
		t.Fatalf("Machine %s: %v", m.Name, err)
	}
	if !ptrTrue(cfg.Status.Initialization.DataSecretCreated) || cfg.Status.DataSecretName == "" {
		t.Errorf("NodezeroConfig %s: dataSecretCreated %v, dataSecretName %q", cfg.Name, cfg.Status.Initialization.DataSecretCreated, cfg.Status.DataSecretName)
	}
	if !isTrue(cfg.Status.Conditions, bootstrapv1.ReadyCondition) || !isTrue(cfg.Status.Conditions, bootstrapv1.DataSecretAvailableCondition) {
		t.Errorf("NodezeroConfig %s: %s, %s", cfg.Name, condition(cfg.Status.Conditions, bootstrapv1.ReadyCondition), condition(cfg.Status.Conditions, bootstrapv1.DataSecretAvailableCondition))
	}
	if cfg.Status.InfraEnvID == "" {
		t.Errorf("NodezeroConfig %s: no status.infraEnvID", cfg.Name)
	}
	if got := *m.Spec.Bootstrap.DataSecretName; got != cfg.Status.DataSecretName || got != cfg.Name {
		t.Errorf("Machine %s: spec.bootstrap.dataSecretName %q; config's status.dataSecretName %q; want both the config's name %q", m.Name, got, cfg.Status.DataSecretName, cfg.Name)
	}
	sec := &corev1.Secret{}
	if err := s.get(sec, cfg.Status.DataSecretName); err != nil {
		t.Fatalf("data secret %s: %v", cfg.Status.DataSecretName, err)
	}
	if sec.Type != clusterv1.ClusterSecretType {
		t.Errorf("data secret %s: type %q, want %q", sec.Name, sec.Type, clusterv1.ClusterSecretType)
	}
	if sec.Labels[clusterv1.ClusterNameLabel] != clusterName {
		t.Errorf("data secret %s: label %s = %q, want %s", sec.Name, clusterv1.ClusterNameLabel, sec.Labels[clusterv1.ClusterNameLabel], clusterName)
	}
	if ref := metav1.GetControllerOf(sec); ref == nil || ref.Kind != "NodezeroConfig" || ref.UID != cfg.UID {
		t.Errorf("data secret %s: controller reference %+v, want the NodezeroConfig %s", sec.Name, ref, cfg.Name)
	}
	v := sec.Data["value"]
	// An ISO 9660 image: the primary volume descriptor at 32 KiB.
	if len(v) < 0x8006 || string(v[0x8001:0x8006]) != "CD001" {
		t.Errorf("data secret %s: value (%d bytes) is not an ISO 9660 config image", sec.Name, len(v))
	}
	if f := string(sec.Data["format"]); f != bootstrapv1.DataSecretFormatConfigImage {
		t.Errorf("data secret %s: format %q, want %q", sec.Name, f, bootstrapv1.DataSecretFormatConfigImage)
	}
	return v
}
