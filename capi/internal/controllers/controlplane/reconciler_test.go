package controlplane

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// Reconciles repeated, a status lost, and the service SIGKILLed and
// restarted in between: one v2 cluster, with the registration's inputs.
func TestOneV2Cluster(t *testing.T) {
	e := newEnv(t, 3, 0)
	for range 3 {
		e.reconcile()
	}
	cp := e.cp()
	if !controllerutil.ContainsFinalizer(cp, cpv1.Finalizer) {
		t.Errorf("finalizers = %v, want %s", cp.Finalizers, cpv1.Finalizer)
	}
	got := e.v2Clusters()
	if len(got) != 1 {
		t.Fatalf("%d v2 clusters after 3 reconciles, want 1", len(got))
	}
	cl := got[0]
	if cp.Status.ClusterID != cl.ID {
		t.Errorf("status.clusterID = %q, want %q", cp.Status.ClusterID, cl.ID)
	}
	if cl.Name != clusterName || cl.OpenshiftVersion != "4.20.0" || cl.BaseDNSDomain != "example.com" || cl.ControlPlaneCount != 3 ||
		cl.HighAvailabilityMode != wire.ClusterHighAvailabilityModeFull || !hasTag(cl.Tags, Tag(cp)) {
		t.Errorf("v2 cluster = name %q version %q domain %q control planes %d mode %q tags %q, want %s 4.20.0 example.com 3 Full %s",
			cl.Name, cl.OpenshiftVersion, cl.BaseDNSDomain, cl.ControlPlaneCount, cl.HighAvailabilityMode, cl.Tags, clusterName, Tag(cp))
	}
	if len(cl.ClusterNetworks) != 1 || cl.ClusterNetworks[0].CIDR != "10.128.0.0/14" || len(cl.ServiceNetworks) != 1 || cl.ServiceNetworks[0].CIDR != "172.30.0.0/16" {
		t.Errorf("v2 cluster networks = %+v / %+v, want the Cluster's 10.128.0.0/14 and 172.30.0.0/16", cl.ClusterNetworks, cl.ServiceNetworks)
	}

	// The status is lost (a restore, a move): the tag finds the cluster.
	lose := func() {
		t.Helper()
		cp := e.cp()
		orig := cp.DeepCopy()
		cp.Status.ClusterID = ""
		if err := e.c.Status().Patch(e.ctx, cp, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	lose()
	e.reconcile()
	if got := e.v2Clusters(); len(got) != 1 || e.cp().Status.ClusterID != cl.ID {
		t.Fatalf("after a lost status: %d v2 clusters, status.clusterID %q; want 1, %q", len(got), e.cp().Status.ClusterID, cl.ID)
	}

	// The service dies between reconciles: the reconcile fails and says
	// so; after the restart, one cluster still.
	e.svc.Kill()
	lose()
	if _, err := e.r.Reconcile(e.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: cpName}}); err == nil {
		t.Fatal("Reconcile with the service down = nil error, want one")
	}
	if c := condition(e.cp(), cpv1.InstalledCondition); c == nil || c.Reason != cpv1.ServiceUnreachableReason {
		t.Errorf("Installed condition with the service down = %+v, want reason %s", c, cpv1.ServiceUnreachableReason)
	}
	e.svc.Restart()
	e.reconcile()
	e.reconcile()
	if got := e.v2Clusters(); len(got) != 1 || e.cp().Status.ClusterID != cl.ID {
		t.Fatalf("after SIGKILL and restart: %d v2 clusters, status.clusterID %q; want 1, %q", len(got), e.cp().Status.ClusterID, cl.ID)
	}
}

// A single-node control plane registers high_availability_mode None and
// one control-plane node.
func TestSingleNodeCluster(t *testing.T) {
	e := newEnv(t, 1, 0)
	e.reconcile()
	cl := e.v2Cluster(e.cp().Status.ClusterID)
	if cl.HighAvailabilityMode != wire.ClusterHighAvailabilityModeNone || cl.ControlPlaneCount != 1 {
		t.Errorf("SNO v2 cluster: mode %q, control planes %d; want None, 1", cl.HighAvailabilityMode, cl.ControlPlaneCount)
	}
}

// Without provisioned infrastructure nothing is made on the service.
func TestWaitsForInfrastructure(t *testing.T) {
	e := newEnv(t, 3, 0)
	orig := e.cluster.DeepCopy()
	e.cluster.Status.Initialization.InfrastructureProvisioned = nil
	if err := e.c.Status().Patch(e.ctx, e.cluster, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	res := e.reconcile()
	if res.RequeueAfter == 0 {
		t.Error("no requeue while waiting for the infrastructure")
	}
	if n := len(e.v2Clusters()); n != 0 {
		t.Errorf("%d v2 clusters before the infrastructure is provisioned, want 0", n)
	}
	if c := condition(e.cp(), cpv1.InstalledCondition); c == nil || c.Reason != cpv1.WaitingForClusterInfrastructureReason {
		t.Errorf("Installed condition = %+v, want reason %s", c, cpv1.WaitingForClusterInfrastructureReason)
	}
}

// One Machine per reconcile up to spec.replicas, each with its config and
// infrastructure machine in the contract's shape; a scale-down removes one
// per reconcile.
func TestMachinesOnePerStep(t *testing.T) {
	e := newEnv(t, 3, 0)
	for i := 1; i <= 3; i++ {
		e.reconcile()
		if n := len(e.machines()); n != i {
			t.Fatalf("after reconcile %d: %d Machines, want %d", i, n, i)
		}
	}
	e.reconcile()
	ms := e.machines()
	if len(ms) != 3 {
		t.Fatalf("after a fourth reconcile: %d Machines, want 3", len(ms))
	}
	cp := e.cp()
	for _, m := range ms {
		if m.Labels[clusterv1.ClusterNameLabel] != clusterName || m.Labels["tier"] != "cp" || m.Labels[clusterv1.MachineControlPlaneNameLabel] != cpName {
			t.Errorf("Machine %s labels = %v", m.Name, m.Labels)
		}
		if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; !ok {
			t.Errorf("Machine %s has no %s label", m.Name, clusterv1.MachineControlPlaneLabel)
		}
		if ref := metav1.GetControllerOf(&m); ref == nil || ref.UID != cp.UID || ref.Kind != "NodezeroControlPlane" {
			t.Errorf("Machine %s controller = %+v, want the control plane", m.Name, ref)
		}
		if m.Spec.ClusterName != clusterName || m.Spec.Version != "v1.33.4" {
			t.Errorf("Machine %s spec.clusterName %q version %q", m.Name, m.Spec.ClusterName, m.Spec.Version)
		}
		want := clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "NodezeroConfig", Name: m.Name}
		if m.Spec.Bootstrap.ConfigRef != want {
			t.Errorf("Machine %s configRef = %+v, want %+v", m.Name, m.Spec.Bootstrap.ConfigRef, want)
		}
		wantInfra := clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "NodezeroHostMachine", Name: m.Name}
		if m.Spec.InfrastructureRef != wantInfra {
			t.Errorf("Machine %s infrastructureRef = %+v, want %+v", m.Name, m.Spec.InfrastructureRef, wantInfra)
		}
		if d := m.Spec.Deletion.NodeDrainTimeoutSeconds; d == nil || *d != 30 || len(m.Spec.ReadinessGates) != 1 {
			t.Errorf("Machine %s deletion %+v readinessGates %+v", m.Name, m.Spec.Deletion, m.Spec.ReadinessGates)
		}
		if c := findCondition(m.Status.Conditions, clusterv1.MachineUpToDateCondition); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("Machine %s UpToDate = %+v, want True", m.Name, c)
		}

		var cfg bootstrapv1.NodezeroConfig
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, &cfg); err != nil {
			t.Fatalf("NodezeroConfig %s: %v", m.Name, err)
		}
		if len(cfg.Spec.AdditionalNTPSources) != 1 || cfg.Labels[clusterv1.ClusterNameLabel] != clusterName {
			t.Errorf("NodezeroConfig %s spec %+v labels %v", m.Name, cfg.Spec, cfg.Labels)
		}
		if ref := metav1.GetControllerOf(&cfg); ref == nil || ref.UID != cp.UID {
			t.Errorf("NodezeroConfig %s controller = %+v", m.Name, ref)
		}

		var hm infrav1.NodezeroHostMachine
		if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, &hm); err != nil {
			t.Fatalf("NodezeroHostMachine %s: %v", m.Name, err)
		}
		if hm.Spec.Hardware != "master" || hm.Labels["from-template"] != "yes" || hm.Labels[clusterv1.ClusterNameLabel] != clusterName {
			t.Errorf("NodezeroHostMachine %s spec %+v labels %v", m.Name, hm.Spec, hm.Labels)
		}
		if hm.Annotations[clusterv1.TemplateClonedFromNameAnnotation] != "masters" ||
			hm.Annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] != "NodezeroHostMachineTemplate."+infrav1.GroupVersion.Group {
			t.Errorf("NodezeroHostMachine %s annotations = %v", m.Name, hm.Annotations)
		}
	}
	if r := cp.Status.Replicas; r == nil || *r != 3 {
		t.Errorf("status.replicas = %v, want 3", r)
	}
	if u := cp.Status.UpToDateReplicas; u == nil || *u != 3 {
		t.Errorf("status.upToDateReplicas = %v, want 3", u)
	}
	if cp.Status.Selector == "" {
		t.Error("status.selector is empty")
	}

	// Scale down to 1: one Machine per reconcile.
	orig := cp.DeepCopy()
	cp.Spec.Replicas = ptr(int32(1))
	if err := e.c.Patch(e.ctx, cp, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{2, 1, 1} {
		e.reconcile()
		if n := len(e.machines()); n != want {
			t.Fatalf("scaling down: %d Machines, want %d", n, want)
		}
	}
}

// A Machine whose version differs from the spec is shown as not up to
// date, not replaced.
func TestMachineNotUpToDate(t *testing.T) {
	e := newEnv(t, 1, 0)
	e.reconcile()
	cp := e.cp()
	orig := cp.DeepCopy()
	cp.Spec.Version = "v1.34.0"
	if err := e.c.Patch(e.ctx, cp, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	ms := e.machines()
	if len(ms) != 1 {
		t.Fatalf("%d Machines, want 1 (never replaced)", len(ms))
	}
	c := findCondition(ms[0].Status.Conditions, clusterv1.MachineUpToDateCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != NotUpToDateReason {
		t.Errorf("UpToDate = %+v, want False %s", c, NotUpToDateReason)
	}
	if u := e.cp().Status.UpToDateReplicas; u == nil || *u != 0 {
		t.Errorf("status.upToDateReplicas = %v, want 0", u)
	}
}

func findCondition(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// The install starts only once every expected host (control plane +
// MachineDeployment replicas) is bound to its Machine and known; then the
// kubeconfig secret appears in the contract's shape, pointing at the
// Cluster's endpoint, and controlPlaneInitialized waits for /readyz.
func TestInstallStartsWhenExpectedHostsBound(t *testing.T) {
	e := newEnv(t, 3, 1)
	for range 4 {
		e.reconcile()
	}
	ms := e.machines()
	if len(ms) != 3 {
		t.Fatalf("%d Machines, want 3", len(ms))
	}
	id := e.cp().Status.ClusterID
	for i, m := range ms {
		e.bindHost(m.Name, id, i, true)
	}
	// The three control-plane hosts are known and the cluster could
	// start with them, but the MachineDeployment expects a worker.
	poll(t, "three known hosts", func() (bool, error) {
		hosts, err := e.svc.Client().ListClusterHostsQuery(e.ctx, id, wire.HostsQuery{Status: wire.HostStatusKnown})
		return len(hosts) == 3, err
	})
	e.reconcile()
	if st := e.v2Cluster(id).Status; startedStatus(st) {
		t.Fatalf("install started (%s) with the worker Machine's host not bound", st)
	}
	c := condition(e.cp(), cpv1.InstalledCondition)
	if c == nil || c.Reason != cpv1.WaitingForHostsReason {
		t.Fatalf("Installed = %+v, want reason %s", c, cpv1.WaitingForHostsReason)
	}
	t.Logf("waiting: %s", c.Message)

	e.workerConfig("workers-abcde")
	e.bindHost("workers-abcde", id, 3, false)
	poll(t, "the install started", func() (bool, error) {
		e.reconcile()
		return startedStatus(e.v2Cluster(id).Status), nil
	})
	cp := e.cp()
	if c := condition(cp, cpv1.InstalledCondition); c == nil || c.Reason != cpv1.InstallingReason && c.Reason != cpv1.InstalledReason {
		t.Errorf("Installed = %+v, want reason %s", c, cpv1.InstallingReason)
	}
	if cp.Status.InstallState == "" || preInstallStatus(wire.ClusterStatus(cp.Status.InstallState)) {
		t.Errorf("status.installState = %q, want a started state", cp.Status.InstallState)
	}

	// The preparation makes the admin kubeconfig: the secret follows.
	var sec corev1.Secret
	poll(t, "the kubeconfig secret", func() (bool, error) {
		e.reconcile()
		err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: clusterName + "-kubeconfig"}, &sec)
		return err == nil, client.IgnoreNotFound(err)
	})
	if sec.Type != KubeconfigSecretType || sec.Labels[clusterv1.ClusterNameLabel] != clusterName || len(sec.Data) != 1 {
		t.Errorf("kubeconfig secret: type %q labels %v keys %d, want %s, the cluster-name label, one key", sec.Type, sec.Labels, len(sec.Data), KubeconfigSecretType)
	}
	if ref := metav1.GetControllerOf(&sec); ref == nil || ref.UID != cp.UID {
		t.Errorf("kubeconfig secret controller = %+v, want the control plane", ref)
	}
	cfg, err := kube.ParseKubeconfig(sec.Data[KubeconfigKey], "value")
	if err != nil {
		t.Fatalf("kubeconfig secret value: %v", err)
	}
	wantServer := "https://127.0.0.1:" + itoa(e.apiPort)
	if cfg.Server != wantServer || cfg.TLSServerName != "api."+clusterName+".example.com" {
		t.Errorf("kubeconfig server %q tls-server-name %q, want %s and api.%s.example.com", cfg.Server, cfg.TLSServerName, wantServer, clusterName)
	}
	// Nothing answers at the endpoint: not initialized, not available.
	e.reconcile()
	cp = e.cp()
	if i := cp.Status.Initialization.ControlPlaneInitialized; i != nil && *i {
		t.Error("controlPlaneInitialized = true while the workload API does not answer")
	}
	if c := condition(cp, cpv1.AvailableCondition); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Available = %+v, want False", c)
	}
	// Once /readyz answers through the secret, initialized.
	fw := &fakeWorkload{ready: true}
	e.r.Workload = fw
	e.reconcile()
	if i := e.cp().Status.Initialization.ControlPlaneInitialized; i == nil || !*i {
		t.Error("controlPlaneInitialized not set once /readyz answers")
	}
	if len(fw.seen) == 0 || string(fw.seen[0]) != string(sec.Data[KubeconfigKey]) {
		t.Error("/readyz was not asked through the kubeconfig secret's value")
	}
	e.stopAgents()
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}

// Deletion: the Machines go first and the v2 cluster and finalizer stay
// until they are gone; then the v2 cluster, the kubeconfig secret and
// the finalizer.
func TestDeletionOrder(t *testing.T) {
	e := newEnv(t, 3, 0)
	for range 3 {
		e.reconcile()
	}
	id := e.cp().Status.ClusterID
	// CAPI's Machine controller holds a finalizer on each Machine.
	for _, m := range e.machines() {
		orig := m.DeepCopy()
		m.Finalizers = []string{clusterv1.MachineFinalizer}
		if err := e.c.Patch(e.ctx, &m, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	// A kubeconfig secret of this control plane, as the install writes it.
	cp := e.cp()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName + "-kubeconfig",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cp, cpv1.GroupVersion.WithKind("NodezeroControlPlane"))}}}
	if err := e.c.Create(e.ctx, sec); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(e.ctx, cp); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	ms := e.machines()
	if len(ms) != 3 {
		t.Fatalf("%d Machines after the first deletion reconcile, want 3 still deleting", len(ms))
	}
	for _, m := range ms {
		if m.DeletionTimestamp.IsZero() {
			t.Errorf("Machine %s not being deleted", m.Name)
		}
	}
	e.v2Cluster(id) // still there
	if !controllerutil.ContainsFinalizer(e.cp(), cpv1.Finalizer) {
		t.Fatal("finalizer dropped while Machines remain")
	}
	e.reconcile()
	e.v2Cluster(id)

	// The Machines go.
	for _, m := range ms {
		orig := m.DeepCopy()
		m.Finalizers = nil
		if err := e.c.Patch(e.ctx, &m, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	e.reconcile()
	if _, err := e.svc.Client().GetClusterExcludingHosts(e.ctx, id); !wire.IsStatus(err, 404) {
		t.Errorf("v2 cluster after deletion: %v, want 404", err)
	}
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(sec), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("kubeconfig secret after deletion: %v, want not found", err)
	}
	err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: cpName}, &cpv1.NodezeroControlPlane{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("control plane after deletion: %v, want gone (finalizer dropped)", err)
	}
}

// The day-2 cluster: imported once from the installed cluster's facts,
// found again by openshift_cluster_id when the status is lost.
func TestDay2Import(t *testing.T) {
	e := newEnv(t, 1, 0)
	s := &scope{cp: e.cp(), cluster: e.cluster}
	var err error
	if s.svc, err = openService(e); err != nil {
		t.Fatal(err)
	}
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName + "-kubeconfig"},
		Data: map[string][]byte{KubeconfigKey: []byte("kubeconfig")}}
	if err := e.c.Create(e.ctx, kc); err != nil {
		t.Fatal(err)
	}
	ca := testCA(t)
	e.r.Workload = &fakeWorkload{info: &kube.ClusterInfo{ClusterID: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", Version: "4.20.0",
		APIDNSName: "api.ostest.example.com", ClusterName: "ostest", BaseDomain: "example.com", PlatformType: "None", UserManagedNetworking: true}}
	e.r.Workload.(*fakeWorkload).info.WorkerIgnition = workerEndpoint("https://192.0.2.10:22623/config/worker", ca)
	for range 2 {
		if err := e.r.ensureDay2Cluster(e.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	id := s.cp.Status.Day2ClusterID
	s.cp.Status.Day2ClusterID = ""
	if err := e.r.ensureDay2Cluster(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	if s.cp.Status.Day2ClusterID != id {
		t.Errorf("after a lost status day2ClusterID = %q, want %q", s.cp.Status.Day2ClusterID, id)
	}
	list, err := e.svc.Client().ListClusters(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range list {
		if c.Kind == wire.ClusterKindAddHostsCluster {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d day-2 clusters, want 1", n)
	}
	cl := e.v2Cluster(id)
	if cl.OpenshiftClusterID != "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9" || cl.IgnitionEndpoint == nil ||
		deref(cl.IgnitionEndpoint.URL) != "https://192.0.2.10:22623/config/worker" || deref(cl.IgnitionEndpoint.CACertificate) != ca {
		t.Errorf("day-2 cluster: openshift_cluster_id %q ignition_endpoint %+v", cl.OpenshiftClusterID, cl.IgnitionEndpoint)
	}
}

// The paused annotation stops the reconcile before anything is made.
func TestPaused(t *testing.T) {
	e := newEnv(t, 3, 0)
	cp := e.cp()
	orig := cp.DeepCopy()
	cp.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	if err := e.c.Patch(e.ctx, cp, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	if n := len(e.machines()); n != 0 {
		t.Errorf("%d Machines while paused, want 0", n)
	}
	if n := len(e.v2Clusters()); n != 0 {
		t.Errorf("%d v2 clusters while paused, want 0", n)
	}
	if c := condition(e.cp(), clusterv1.PausedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Paused = %+v, want True", c)
	}
}

// Once the install has started a missing control-plane Machine is not
// made again (its host would join a cluster that installs no more hosts):
// MachinesReady says so. Before it, it is.
func TestNoControlPlaneScaleUpAfterInstallStart(t *testing.T) {
	e := newEnv(t, 3, 0)
	for range 3 {
		e.reconcile()
	}
	ms := e.machines()
	if err := e.c.Delete(e.ctx, &ms[0]); err != nil {
		t.Fatal(err)
	}
	s := &scope{cp: e.cp(), cluster: e.cluster}
	left, err := e.r.controlPlaneMachines(e.ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []wire.ClusterStatus{wire.ClusterStatusInstalling, wire.ClusterStatusInstalled, wire.ClusterStatusError} {
		scaled, refused, err := e.r.scale(e.ctx, s, &wire.Cluster{Status: st}, left)
		if err != nil || scaled || refused == "" {
			t.Errorf("scale with the cluster %s = scaled %v, refused %q, err %v; want refused", st, scaled, refused, err)
		}
	}
	if n := len(e.machines()); n != 2 {
		t.Fatalf("%d Machines after refused scale-ups, want 2", n)
	}
	scaled, refused, err := e.r.scale(e.ctx, s, &wire.Cluster{Status: wire.ClusterStatusInsufficient}, left)
	if err != nil || !scaled || refused != "" {
		t.Errorf("scale before the install = scaled %v, refused %q, err %v; want a Machine made", scaled, refused, err)
	}
	if n := len(e.machines()); n != 3 {
		t.Errorf("%d Machines, want 3", n)
	}
}
