package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/wire"
)

// UpToDate reasons of the Machines this reconciler owns.
const (
	UpToDateReason    = "UpToDate"
	NotUpToDateReason = "NotUpToDate"
)

// machineLabels are the labels of a control-plane Machine, its config and
// its infrastructure machine: the template's, the cluster name, the
// control-plane label and the control plane's name.
func machineLabels(cp *cpv1.NodezeroControlPlane, cluster *clusterv1.Cluster) map[string]string {
	l := map[string]string{}
	for k, v := range cp.Spec.MachineTemplate.ObjectMeta.Labels {
		l[k] = v
	}
	l[clusterv1.ClusterNameLabel] = cluster.Name
	l[clusterv1.MachineControlPlaneLabel] = ""
	l[clusterv1.MachineControlPlaneNameLabel] = cp.Name
	return l
}

// Selector is the control-plane Machines' label selector (status.selector).
func Selector(cp *cpv1.NodezeroControlPlane, cluster *clusterv1.Cluster) labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		clusterv1.ClusterNameLabel:             cluster.Name,
		clusterv1.MachineControlPlaneNameLabel: cp.Name,
	}).Add(mustRequirement(clusterv1.MachineControlPlaneLabel))
}

func mustRequirement(key string) labels.Requirement {
	r, err := labels.NewRequirement(key, "exists", nil)
	if err != nil {
		panic(err) // a constant, valid key
	}
	return *r
}

// controlPlaneMachines are the cluster's Machines this object controls,
// oldest first.
func (r *Reconciler) controlPlaneMachines(ctx context.Context, s *scope) ([]clusterv1.Machine, error) {
	var list clusterv1.MachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(s.cp.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: s.cluster.Name}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: list Machines: %w", s.cp.Namespace, s.cp.Name, err)
	}
	var out []clusterv1.Machine
	for _, m := range list.Items {
		if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID == s.cp.UID {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b clusterv1.Machine) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// ScaleUpRefusedReason: control-plane Machines are not added once the
// install has started (shown on MachinesReady).
const ScaleUpRefusedReason = "ScaleUpRefused"

// scale makes or deletes one Machine when their number differs from
// spec.replicas, and says whether it did. Nothing is done while a Machine
// is being deleted: each step starts from a settled set. Once the day-1
// install has started no control-plane Machine is added (its host would
// register with a cluster that installs no more hosts): refused says why.
func (r *Reconciler) scale(ctx context.Context, s *scope, v2 *wire.Cluster, machines []clusterv1.Machine) (scaled bool, refused string, err error) {
	want := int(replicasOf(s.cp))
	for _, m := range machines {
		if !m.DeletionTimestamp.IsZero() {
			return false, "", nil
		}
	}
	switch {
	case len(machines) < want && startedStatus(v2.Status):
		return false, fmt.Sprintf("%d of %d control-plane Machines: none is added once the install has started (the cluster is %s)",
			len(machines), want, v2.Status), nil
	case len(machines) < want:
		return true, "", r.createMachine(ctx, s)
	case len(machines) > want:
		m := scaleDownVictim(machines)
		ctrl.LoggerFrom(ctx).Info("scaling down: deleting a control-plane Machine", "machine", m.Name)
		if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
			return false, "", fmt.Errorf("nodezerocontrolplane %s/%s: delete Machine %s: %w", s.cp.Namespace, s.cp.Name, m.Name, err)
		}
		return true, "", r.waitForCache(ctx, m, false)
	}
	return false, "", nil
}

// scaleDownVictim is the Machine a scale-down removes: one marked with
// the delete-machine annotation, else the newest (the one least likely
// to hold an installed host, never the first, which bootstraps).
func scaleDownVictim(machines []clusterv1.Machine) *clusterv1.Machine {
	for i := range machines {
		if _, ok := machines[i].Annotations[clusterv1.DeleteMachineAnnotation]; ok {
			return &machines[i]
		}
	}
	return &machines[len(machines)-1]
}

// createMachine makes one control-plane Machine: the infrastructure
// machine cloned from the template, a NodezeroConfig of the same name,
// then the Machine; what was made is removed again when a later step
// fails, so that a failed attempt leaves nothing behind.
func (r *Reconciler) createMachine(ctx context.Context, s *scope) (retErr error) {
	cp, cluster := s.cp, s.cluster
	name := cp.Name + "-" + utilrand.String(5)
	owner := *metav1.NewControllerRef(cp, cpv1.GroupVersion.WithKind("NodezeroControlPlane"))
	lbls := machineLabels(cp, cluster)
	var made []client.Object
	defer func() {
		if retErr == nil {
			return
		}
		for _, o := range made {
			if err := r.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				retErr = errors.Join(retErr, fmt.Errorf("clean up %s: %w", o.GetName(), err))
			}
		}
	}()

	infra, err := r.cloneInfrastructure(ctx, s, name, owner, lbls)
	if err != nil {
		return err
	}
	made = append(made, infra)

	cfg := &bootstrapv1.NodezeroConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: cp.Namespace, Name: name, Labels: lbls,
			Annotations: copyMap(cp.Spec.MachineTemplate.ObjectMeta.Annotations), OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: *cp.Spec.NodezeroConfigSpec.DeepCopy(),
	}
	if err := r.Client.Create(ctx, cfg); err != nil {
		return fmt.Errorf("nodezerocontrolplane %s/%s: create NodezeroConfig %s: %w", cp.Namespace, cp.Name, name, err)
	}
	made = append(made, cfg)

	tmpl := cp.Spec.MachineTemplate.Spec
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: cp.Namespace, Name: name, Labels: lbls,
			Annotations: copyMap(cp.Spec.MachineTemplate.ObjectMeta.Annotations), OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Version:     cp.Spec.Version,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "NodezeroConfig", Name: name}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infra.GroupVersionKind().Group, Kind: infra.GetKind(), Name: name},
			ReadinessGates: slices.Clone(tmpl.ReadinessGates),
			Deletion:       machineDeletion(tmpl.Deletion),
		},
	}
	if err := r.Client.Create(ctx, m); err != nil {
		return fmt.Errorf("nodezerocontrolplane %s/%s: create Machine %s: %w", cp.Namespace, cp.Name, name, err)
	}
	ctrl.LoggerFrom(ctx).Info("control-plane Machine created", "machine", name)
	return r.waitForCache(ctx, m, true)
}

// cacheTimeout bounds the wait for the manager's cache to show a Machine
// this reconcile made or deleted.
const cacheTimeout = 10 * time.Second

// waitForCache returns once the client (the manager's cache) shows m
// made (made) or gone or going (!made): the next reconcile counts
// Machines from the cache, and a stale count would make or delete a
// second Machine in one step.
func (r *Reconciler) waitForCache(ctx context.Context, m *clusterv1.Machine, made bool) error {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var have clusterv1.Machine
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(m), &have)
		switch {
		case made && err == nil:
			return nil
		case !made && (apierrors.IsNotFound(err) || (err == nil && !have.DeletionTimestamp.IsZero())):
			return nil
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("machine %s: %w", m.Name, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("machine %s: the cache did not show the change within %s", m.Name, cacheTimeout)
		case <-tick.C:
		}
	}
}

func machineDeletion(d cpv1.MachineDeletionSpec) clusterv1.MachineDeletionSpec {
	return clusterv1.MachineDeletionSpec{
		NodeDrainTimeoutSeconds:        d.NodeDrainTimeoutSeconds,
		NodeVolumeDetachTimeoutSeconds: d.NodeVolumeDetachTimeoutSeconds,
		NodeDeletionTimeoutSeconds:     d.NodeDeletionTimeoutSeconds,
	}
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// cloneInfrastructure makes the infrastructure machine from the template
// spec.machineTemplate.spec.infrastructureRef names: an object of the
// template's kind minus "Template", in the template's group at the version
// the API serves, with the template's spec.template.spec, its labels and
// annotations, and the cloned-from annotations CAPI's own clones carry.
func (r *Reconciler) cloneInfrastructure(ctx context.Context, s *scope, name string, owner metav1.OwnerReference, lbls map[string]string) (*unstructured.Unstructured, error) {
	cp := s.cp
	ref := cp.Spec.MachineTemplate.Spec.InfrastructureRef
	field := "spec.machineTemplate.spec.infrastructureRef"
	if !strings.HasSuffix(ref.Kind, "Template") {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: %s.kind %q is not a template kind (…Template)", cp.Namespace, cp.Name, field, ref.Kind)
	}
	gk := schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind}
	mapping, err := r.Client.RESTMapper().RESTMapping(gk)
	if err != nil {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: %s: %s: %w", cp.Namespace, cp.Name, field, gk, err)
	}
	tmpl := &unstructured.Unstructured{}
	tmpl.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cp.Namespace, Name: ref.Name}, tmpl); err != nil {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: %s: %s %s: %w", cp.Namespace, cp.Name, field, ref.Kind, ref.Name, err)
	}
	spec, _, err := unstructured.NestedMap(tmpl.Object, "spec", "template", "spec")
	if err != nil {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: %s %s: spec.template.spec: %w", cp.Namespace, cp.Name, ref.Kind, ref.Name, err)
	}
	tl, _, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "metadata", "labels")
	ta, _, _ := unstructured.NestedStringMap(tmpl.Object, "spec", "template", "metadata", "annotations")

	obj := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		obj.Object["spec"] = spec
	}
	gvk := mapping.GroupVersionKind
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "Template")
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(cp.Namespace)
	obj.SetName(name)
	l := copyMap(tl)
	if l == nil {
		l = map[string]string{}
	}
	for k, v := range lbls {
		l[k] = v
	}
	obj.SetLabels(l)
	a := copyMap(ta)
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range cp.Spec.MachineTemplate.ObjectMeta.Annotations {
		a[k] = v
	}
	a[clusterv1.TemplateClonedFromNameAnnotation] = ref.Name
	a[clusterv1.TemplateClonedFromGroupKindAnnotation] = gk.String()
	obj.SetAnnotations(a)
	obj.SetOwnerReferences([]metav1.OwnerReference{owner})
	if err := r.Client.Create(ctx, obj); err != nil {
		return nil, fmt.Errorf("nodezerocontrolplane %s/%s: create %s %s: %w", cp.Namespace, cp.Name, gvk.Kind, name, err)
	}
	return obj, nil
}

// upToDate says whether a Machine matches the spec it would be made from
// now: version, deletion timeouts, readiness gates. A Machine that does
// not is shown (UpToDate=False), never replaced: nodezero installs, it
// does not roll control planes.
func upToDate(cp *cpv1.NodezeroControlPlane, m *clusterv1.Machine) (bool, string) {
	var diffs []string
	if m.Spec.Version != cp.Spec.Version {
		diffs = append(diffs, fmt.Sprintf("version %s, want %s", m.Spec.Version, cp.Spec.Version))
	}
	if !equality.Semantic.DeepEqual(m.Spec.Deletion, machineDeletion(cp.Spec.MachineTemplate.Spec.Deletion)) {
		diffs = append(diffs, "deletion timeouts differ from spec.machineTemplate.spec.deletion")
	}
	if !equality.Semantic.DeepEqual(m.Spec.ReadinessGates, cp.Spec.MachineTemplate.Spec.ReadinessGates) &&
		len(m.Spec.ReadinessGates)+len(cp.Spec.MachineTemplate.Spec.ReadinessGates) > 0 {
		diffs = append(diffs, "readiness gates differ from spec.machineTemplate.spec.readinessGates")
	}
	if len(diffs) == 0 {
		return true, ""
	}
	return false, strings.Join(diffs, "; ")
}

// updateMachineStatus writes each Machine's UpToDate condition and the
// object's replica counts, selector and MachinesReady.
func (r *Reconciler) updateMachineStatus(ctx context.Context, s *scope, machines []clusterv1.Machine) error {
	cp := s.cp
	var ready, available, current int32
	for i := range machines {
		m := &machines[i]
		ok, why := upToDate(cp, m)
		if ok {
			current++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) {
			ready++
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineAvailableCondition) {
			available++
		}
		c := metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionTrue, Reason: UpToDateReason,
			ObservedGeneration: m.Generation}
		if !ok {
			c.Status, c.Reason, c.Message = metav1.ConditionFalse, NotUpToDateReason, why
		}
		if have := meta.FindStatusCondition(m.Status.Conditions, c.Type); have != nil && have.Status == c.Status &&
			have.Reason == c.Reason && have.Message == c.Message && have.ObservedGeneration == c.ObservedGeneration {
			continue
		}
		orig := m.DeepCopy()
		meta.SetStatusCondition(&m.Status.Conditions, c)
		// The Machine controller writes the other conditions: the
		// optimistic lock makes a concurrent write fail, not vanish.
		err := r.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
		switch {
		case apierrors.IsConflict(err):
			// The Machine controller wrote first: the next reconcile
			// (the Machine's update brings one) sets it on the new
			// version.
			ctrl.LoggerFrom(ctx).V(1).Info("Machine changed meanwhile; UpToDate set on the next reconcile", "machine", m.Name)
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("nodezerocontrolplane %s/%s: Machine %s: set UpToDate: %w", cp.Namespace, cp.Name, m.Name, err)
		}
	}
	n := int32(len(machines))
	cp.Status.Replicas, cp.Status.ReadyReplicas, cp.Status.AvailableReplicas, cp.Status.UpToDateReplicas = &n, &ready, &available, &current
	cp.Status.Selector = Selector(cp, s.cluster).String()
	want := replicasOf(cp)
	msg := fmt.Sprintf("%d of %d control-plane Machines are ready", ready, want)
	if ready >= want && n == want {
		r.setCondition(cp, cpv1.MachinesReadyCondition, metav1.ConditionTrue, "Ready", msg)
	} else {
		r.setCondition(cp, cpv1.MachinesReadyCondition, metav1.ConditionFalse, "NotReady", msg)
	}
	return nil
}
