package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/controllers/bootstrap"
	"github.com/nodezero/nodezero/capi/internal/controllers/controlplane"
	"github.com/nodezero/nodezero/capi/internal/testenv"
	"github.com/nodezero/nodezero/capi/test/infra"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

func TestMain(m *testing.M) {
	// What a sandbox's node zero is told, for the hub service that plays
	// it (servicetest's child inherits the environment): loopback hosts
	// have no link layer to arping free addresses on. Their disks are on a
	// tmpfs, so the default disk-speed threshold holds.
	os.Setenv("DISABLED_STEPS", "free-network-addresses")
	// One management cluster for the package: each scenario has its own
	// namespace and world; the infrastructure provider finds a
	// namespace's hosts in worlds.
	os.Exit(testenv.Main(m, testenv.Options{Setup: func(ctx context.Context, env *testenv.Env) error {
		c := env.Manager.GetClient()
		if err := (&bootstrap.Reconciler{Client: c, WaitInterval: 2 * time.Second, PollInterval: time.Second}).SetupWithManager(ctx, env.Manager); err != nil {
			return err
		}
		if err := (&controlplane.Reconciler{Client: c, WaitInterval: 2 * time.Second, PollInterval: time.Second}).SetupWithManager(ctx, env.Manager); err != nil {
			return err
		}
		if err := (&infra.ClusterReconciler{Client: c}).SetupWithManager(ctx, env.Manager); err != nil {
			return err
		}
		return (&infra.MachineReconciler{Client: c, HostsFor: worlds.hosts}).SetupWithManager(ctx, env.Manager)
	}}))
}

// worlds maps each scenario's namespace to its hosts.
var worlds = &hostsByNamespace{m: map[string]*infra.Hosts{}}

type hostsByNamespace struct {
	mu sync.Mutex
	m  map[string]*infra.Hosts
}

func (w *hostsByNamespace) hosts(ns string) *infra.Hosts {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.m[ns]
}

func (w *hostsByNamespace) set(ns string, h *infra.Hosts) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if h == nil {
		delete(w.m, ns)
		return
	}
	w.m[ns] = h
}

// scenario is one end-to-end run's shape and events.
type scenario struct {
	t        *testing.T
	w        *world
	env      *testenv.Env
	c        client.Client
	ns, name string
	start    time.Time
}

// say logs with the time since the scenario started.
func (s *scenario) say(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("%6.1fs "+format, append([]any{time.Since(s.start).Seconds()}, args...)...)
}

// newScenario starts the world and a management cluster running CAPI core,
// both providers and the test infrastructure provider.
func newScenario(t *testing.T, name string, hostArgs ...string) *scenario {
	s := &scenario{t: t, name: name, start: time.Now()}
	s.w = newWorld(t, name, hostArgs...)
	s.say("world up: hosts on %s, API VIP %s, service %s", s.w.prefix, s.w.vip, s.w.svc.URL)
	s.env = testenv.Shared(t)
	s.c = s.env.Client
	s.ns = s.env.Namespace(t)
	worlds.set(s.ns, s.w.hosts)
	t.Cleanup(func() { worlds.set(s.ns, nil) })
	s.say("management API up in %s", s.env.Started.Round(time.Millisecond))
	return s
}

// create makes the Cluster, its infrastructure, the control plane of
// masters replicas and a worker MachineDeployment of workers replicas.
func (s *scenario) create(ctx context.Context, masters, workers int32) {
	t, w, ns, name := s.t, s.w, s.ns, s.name
	t.Helper()
	must := func(o client.Object) {
		t.Helper()
		if err := s.c.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	om := func(n string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: n} }
	must(w.svc.TokenSecret(ns, "nodezero-service"))
	must(&corev1.Secret{ObjectMeta: om("pull-secret"), Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(w.pull)}})
	must(&infrav1.NodezeroHostCluster{ObjectMeta: om(name), Spec: infrav1.NodezeroHostClusterSpec{
		ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: w.vip.String(), Port: 6443}}})
	must(&infrav1.NodezeroHostMachineTemplate{ObjectMeta: om(name + "-cp"), Spec: infrav1.NodezeroHostMachineTemplateSpec{
		Template: infrav1.NodezeroHostMachineTemplateResource{Spec: infrav1.NodezeroHostMachineSpec{Hardware: "master"}}}})
	must(&infrav1.NodezeroHostMachineTemplate{ObjectMeta: om(name + "-worker"), Spec: infrav1.NodezeroHostMachineTemplateSpec{
		Template: infrav1.NodezeroHostMachineTemplateResource{Spec: infrav1.NodezeroHostMachineSpec{Hardware: "worker"}}}})
	configSpec := bootstrapv1.NodezeroConfigSpec{AdditionalNTPSources: []string{w.ntp.String()}}
	must(&bootstrapv1.NodezeroConfigTemplate{ObjectMeta: om(name + "-worker"), Spec: bootstrapv1.NodezeroConfigTemplateSpec{
		Template: bootstrapv1.NodezeroConfigTemplateResource{Spec: configSpec}}})
	inputs := cpv1.ClusterInputs{BaseDomain: baseDomain, ClusterName: name, PullSecretRef: cpv1.SecretRef{Name: "pull-secret"},
		MachineNetworks: []string{w.prefix.String()}}
	if masters > 1 {
		inputs.APIVIPs, inputs.IngressVIPs = []string{w.vip.String()}, []string{w.ingress.String()}
	}
	must(&cpv1.NodezeroControlPlane{ObjectMeta: om(name), Spec: cpv1.NodezeroControlPlaneSpec{
		Replicas: &masters, Version: k8sVersion, DistributionVersion: openshiftVersion,
		MachineTemplate: cpv1.NodezeroControlPlaneMachineTemplate{Spec: cpv1.NodezeroControlPlaneMachineTemplateSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "NodezeroHostMachineTemplate", Name: name + "-cp"}}},
		NodezeroConfigSpec: configSpec,
		Cluster:            inputs,
		ServiceRef:         cpv1.ServiceRef{URL: w.svc.URL, TokenSecretRef: cpv1.SecretRef{Name: "nodezero-service"}},
	}})
	must(&clusterv1.Cluster{ObjectMeta: om(name), Spec: clusterv1.ClusterSpec{
		ClusterNetwork: clusterv1.ClusterNetwork{
			Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
			Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
		},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "NodezeroHostCluster", Name: name},
		ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: cpv1.GroupVersion.Group, Kind: "NodezeroControlPlane", Name: name},
	}})
	if workers > 0 {
		s.createWorkers(ctx, workers)
	}
}

// createWorkers makes the worker MachineDeployment.
func (s *scenario) createWorkers(ctx context.Context, workers int32) {
	s.t.Helper()
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name + "-workers"},
		Spec: clusterv1.MachineDeploymentSpec{ClusterName: s.name, Replicas: &workers,
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: s.name, Version: k8sVersion,
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "NodezeroConfigTemplate", Name: s.name + "-worker"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "NodezeroHostMachineTemplate", Name: s.name + "-worker"},
			}}}}
	testenv.CompleteMachineDeployment(md)
	if err := s.c.Create(ctx, md); err != nil {
		s.t.Fatalf("create MachineDeployment: %v", err)
	}
}

// eventually polls cond every half second until it returns "" (done) or
// the deadline passes; then the test fails with cond's last word and the
// scenario's state.
func (s *scenario) eventually(ctx context.Context, what string, timeout time.Duration, cond func() string) time.Duration {
	s.t.Helper()
	began := time.Now()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		if last = cond(); last == "" {
			d := time.Since(began)
			s.say("%s (%.1f s)", what, d.Seconds())
			return d
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.dump(ctx)
			s.t.Fatalf("%s: not within %s: %s", what, timeout, last)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// machines lists the cluster's Machines.
func (s *scenario) machines(ctx context.Context) []clusterv1.Machine {
	var l clusterv1.MachineList
	if err := s.c.List(ctx, &l, client.InNamespace(s.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: s.name}); err != nil {
		s.t.Logf("list machines: %v", err)
		return nil
	}
	return l.Items
}

// running says what keeps n Machines from being Running with a nodeRef
// ("" when they are).
func (s *scenario) running(ctx context.Context, n int) string {
	ms := s.machines(ctx)
	var not []string
	for _, m := range ms {
		if m.Status.Phase != string(clusterv1.MachinePhaseRunning) || !m.Status.NodeRef.IsDefined() {
			not = append(not, fmt.Sprintf("%s %s node %q", m.Name, m.Status.Phase, m.Status.NodeRef.Name))
		}
	}
	if len(ms) != n || len(not) > 0 {
		return fmt.Sprintf("%d Machines (want %d Running): not yet %s", len(ms), n, strings.Join(not, ", "))
	}
	return ""
}

func (s *scenario) controlPlane(ctx context.Context) *cpv1.NodezeroControlPlane {
	cp := &cpv1.NodezeroControlPlane{}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, cp); err != nil {
		return nil
	}
	return cp
}

// dump logs what the scenario's objects and the service say (a failure's
// context).
func (s *scenario) dump(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	for _, m := range s.machines(ctx) {
		s.t.Logf("Machine %s: phase %s, node %q, bootstrap %v, conditions %s", m.Name, m.Status.Phase, m.Status.NodeRef.Name,
			m.Spec.Bootstrap.DataSecretName != nil, conds(m.Status.Conditions))
	}
	var cfgs bootstrapv1.NodezeroConfigList
	if err := s.c.List(ctx, &cfgs, client.InNamespace(s.ns)); err == nil {
		for _, c := range cfgs.Items {
			s.t.Logf("NodezeroConfig %s: infra-env %s host %s, conditions %s", c.Name, c.Status.InfraEnvID, c.Status.HostID, conds(c.Status.Conditions))
		}
	}
	if cp := s.controlPlane(ctx); cp != nil {
		s.t.Logf("NodezeroControlPlane: cluster %s, day-2 %s, installState %q, conditions %s", cp.Status.ClusterID, cp.Status.Day2ClusterID, cp.Status.InstallState, conds(cp.Status.Conditions))
	}
	if cls, err := s.w.svc.Client().ListClusters(ctx); err == nil {
		for _, cl := range cls {
			s.t.Logf("v2 cluster %s %s (%s): %s: %s", cl.ID, cl.Name, cl.Kind, cl.Status, cl.StatusInfo)
			hosts, _ := s.w.svc.Client().ListClusterHosts(ctx, cl.ID)
			for _, h := range hosts {
				s.t.Logf("  host %s %s (%s): %s: %s", h.ID, h.RequestedHostname, h.Role, h.Status, h.StatusInfo)
			}
		}
	}
	for _, k := range s.w.hosts.Keys() {
		if h := s.w.hosts.Get(k); h != nil {
			s.t.Logf("host %s: %s boots %d, err %v, log %s", k, h.Addr, h.Boots(), h.Err(), h.Log)
		}
	}
	s.t.Logf("service log: %s/service.log; manager log: %s/manager.log", s.w.svc.Dir, s.env.Dir)
}

func conds(cs []metav1.Condition) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}

// installed waits for the day-1 install of masters+workers Machines: every
// Machine Running with a Node, the v2 cluster installed, the kubeconfig
// secret opening the workload API, the Cluster's ControlPlaneAvailable.
func (s *scenario) installed(ctx context.Context, machines int) {
	s.t.Helper()
	s.eventually(ctx, fmt.Sprintf("%d Machines Running with Nodes", machines), 10*time.Minute, func() string { return s.running(ctx, machines) })
	s.eventually(ctx, "installState installed", 3*time.Minute, func() string {
		cp := s.controlPlane(ctx)
		if cp == nil || cp.Status.InstallState != string(wire.ClusterStatusInstalled) {
			return "control plane not installed yet"
		}
		return ""
	})
	s.eventually(ctx, "the kubeconfig secret opens the workload apiserver", time.Minute, func() string {
		sec := &corev1.Secret{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name + "-kubeconfig"}, sec); err != nil {
			return err.Error()
		}
		cfg, err := kube.ParseKubeconfig(sec.Data["value"], "kubeconfig secret")
		if err != nil {
			return err.Error()
		}
		c, err := kube.NewClient(cfg, kube.WithTimeout(10*time.Second))
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		nodes, err := c.ListNodes(ctx, "")
		if err != nil {
			return "list Nodes through the kubeconfig secret: " + err.Error()
		}
		if len(nodes) < machines {
			return fmt.Sprintf("%d Nodes through the kubeconfig secret, want %d", len(nodes), machines)
		}
		return ""
	})
	s.eventually(ctx, "Cluster ControlPlaneAvailable", time.Minute, func() string {
		cl := &clusterv1.Cluster{}
		if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name}, cl); err != nil {
			return err.Error()
		}
		if !meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition) {
			return "ControlPlaneAvailable: " + conds(cl.Status.Conditions)
		}
		return ""
	})
	// One v2 cluster of the day-1 kind, one data secret per Machine.
	s.oneEach(ctx, machines)
}

// oneEach checks the service holds one day-1 v2 cluster and the namespace
// one bootstrap data secret per Machine.
func (s *scenario) oneEach(ctx context.Context, machines int) {
	s.t.Helper()
	cls, err := s.w.svc.Client().ListClusters(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	day1 := 0
	for _, cl := range cls {
		if cl.Kind != wire.ClusterKindAddHostsCluster {
			day1++
		}
	}
	if day1 != 1 {
		s.t.Errorf("%d day-1 v2 clusters in the service, want 1", day1)
	}
	var secrets corev1.SecretList
	if err := s.c.List(ctx, &secrets, client.InNamespace(s.ns)); err != nil {
		s.t.Fatal(err)
	}
	data := map[string]int{}
	for _, sec := range secrets.Items {
		for _, o := range sec.OwnerReferences {
			if o.Kind == "NodezeroConfig" {
				data[o.Name]++
			}
		}
	}
	if len(data) != machines {
		s.t.Errorf("data secrets for %d NodezeroConfigs, want %d: %v", len(data), machines, data)
	}
	for n, c := range data {
		if c != 1 {
			s.t.Errorf("NodezeroConfig %s owns %d data secrets, want 1", n, c)
		}
	}
}

// deleteCluster deletes the Cluster and waits until every Machine, config,
// secret it made, infra-env and v2 cluster is gone.
func (s *scenario) deleteCluster(ctx context.Context) {
	s.t.Helper()
	cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name}}
	if err := s.c.Delete(ctx, cl); err != nil {
		s.t.Fatal(err)
	}
	s.eventually(ctx, "Cluster deleted: Machines, configs, secrets, infra-envs, v2 clusters gone", 5*time.Minute, func() string {
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(cl), &clusterv1.Cluster{}); !apierrors.IsNotFound(err) {
			return fmt.Sprintf("Cluster still there (%v)", err)
		}
		if ms := s.machines(ctx); len(ms) > 0 {
			return fmt.Sprintf("%d Machines left", len(ms))
		}
		var cfgs bootstrapv1.NodezeroConfigList
		if err := s.c.List(ctx, &cfgs, client.InNamespace(s.ns)); err != nil || len(cfgs.Items) > 0 {
			return fmt.Sprintf("%d NodezeroConfigs left (%v)", len(cfgs.Items), err)
		}
		var hms infrav1.NodezeroHostMachineList
		if err := s.c.List(ctx, &hms, client.InNamespace(s.ns)); err != nil || len(hms.Items) > 0 {
			return fmt.Sprintf("%d NodezeroHostMachines left (%v)", len(hms.Items), err)
		}
		var secrets corev1.SecretList
		if err := s.c.List(ctx, &secrets, client.InNamespace(s.ns), client.MatchingLabels{clusterv1.ClusterNameLabel: s.name}); err != nil || len(secrets.Items) > 0 {
			var names []string
			for _, x := range secrets.Items {
				names = append(names, x.Name)
			}
			return fmt.Sprintf("secrets left: %v (%v)", names, err)
		}
		if s.controlPlane(ctx) != nil {
			return "NodezeroControlPlane still there"
		}
		cls, err := s.w.svc.Client().ListClusters(ctx)
		if err != nil || len(cls) > 0 {
			return fmt.Sprintf("%d v2 clusters left (%v)", len(cls), err)
		}
		ies, err := s.w.svc.Client().ListInfraEnvs(ctx, "")
		if err != nil || len(ies) > 0 {
			return fmt.Sprintf("%d infra-envs left (%v)", len(ies), err)
		}
		if keys := s.w.hosts.Keys(); len(keys) > 0 {
			return fmt.Sprintf("host processes left: %v", keys)
		}
		return ""
	})
}

// rss is the test process's resident set (VmRSS), in MiB: the manager
// runs in it, beside the test's own clients.
func rss() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

// TestClusterLifecycle is the must-show: a Cluster with a 3-replica
// NodezeroControlPlane and a 2-replica worker MachineDeployment installs
// (five Machines Running with Nodes, installed, the kubeconfig secret
// opens the workload API, ControlPlaneAvailable); a third worker joins as
// a day-2 host; scaling back to two deregisters its host; deleting the
// Cluster leaves nothing behind.
func TestClusterLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	base := rss()
	s := newScenario(t, "e2e")
	approved := s.w.approveCSRs(ctx, t)
	s.create(ctx, 3, 2)
	s.installed(ctx, 5)
	s.say("day 1 done; test process RSS %.0f MiB (%.0f MiB before the scenario)", rss(), base)
	s.latencies(ctx)

	s.scaleWorkers(ctx, 3)
	s.eventually(ctx, "the third worker Running with its Node (day 2)", 5*time.Minute, func() string { return s.running(ctx, 6) })
	s.day2Added(ctx)

	before := s.boundHosts(ctx)
	s.scaleWorkers(ctx, 2)
	s.eventually(ctx, "scaled down to two workers", 3*time.Minute, func() string { return s.running(ctx, 5) })
	after := s.boundHosts(ctx)
	var gone []string
	for cfg, host := range before {
		if _, ok := after[cfg]; !ok {
			gone = append(gone, host)
		}
	}
	if len(gone) != 1 {
		t.Fatalf("scale down removed the configs of %d hosts, want 1 (before %v, after %v)", len(gone), before, after)
	}
	s.eventually(ctx, "the removed Machine's host deregistered", 2*time.Minute, func() string {
		if s.hostRegistered(ctx, gone[0]) {
			return "host " + gone[0] + " still registered"
		}
		return ""
	})

	s.deleteCluster(ctx)
	cancel()
	s.say("scenario done: %d CSRs approved; test process RSS %.0f MiB", <-approved, rss())
}

// TestSingleNode is a single-node cluster (1 control-plane replica, no
// workers) to installed, then deleted.
func TestSingleNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	s := newScenario(t, "sno")
	s.create(ctx, 1, 0)
	s.installed(ctx, 1)
	s.deleteCluster(ctx)
}

// scaleWorkers sets the worker MachineDeployment's replicas.
func (s *scenario) scaleWorkers(ctx context.Context, n int32) {
	s.t.Helper()
	md := &clusterv1.MachineDeployment{}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: s.name + "-workers"}, md); err != nil {
		s.t.Fatal(err)
	}
	p := client.MergeFrom(md.DeepCopy())
	md.Spec.Replicas = &n
	if err := s.c.Patch(ctx, md, p); err != nil {
		s.t.Fatal(err)
	}
	s.say("workers scaled to %d", n)
}

// boundHosts maps each NodezeroConfig to its bound host.
func (s *scenario) boundHosts(ctx context.Context) map[string]string {
	var cfgs bootstrapv1.NodezeroConfigList
	if err := s.c.List(ctx, &cfgs, client.InNamespace(s.ns)); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range cfgs.Items {
		if c.Status.HostID != "" {
			out[c.Name] = c.Status.HostID
		}
	}
	return out
}

// hostRegistered says whether any infra-env of the service holds host id.
func (s *scenario) hostRegistered(ctx context.Context, id string) bool {
	ies, err := s.w.svc.Client().ListInfraEnvs(ctx, "")
	if err != nil {
		return true // unknown: not gone yet
	}
	for _, ie := range ies {
		hosts, err := s.w.svc.Client().ListHosts(ctx, ie.ID)
		if err != nil {
			return true
		}
		if slices.ContainsFunc(hosts, func(h *wire.Host) bool { return h.ID == id }) {
			return true
		}
	}
	return false
}

// day2Added checks the day-2 cluster holds a host added to the existing
// cluster.
func (s *scenario) day2Added(ctx context.Context) {
	s.t.Helper()
	s.eventually(ctx, "a day-2 host added-to-existing-cluster", 2*time.Minute, func() string {
		cp := s.controlPlane(ctx)
		if cp == nil || cp.Status.Day2ClusterID == "" {
			return "no day-2 cluster in the control plane's status"
		}
		hosts, err := s.w.svc.Client().ListClusterHosts(ctx, cp.Status.Day2ClusterID)
		if err != nil {
			return err.Error()
		}
		for _, h := range hosts {
			if h.Status == wire.HostStatusAddedToExistingCluster {
				return ""
			}
		}
		return fmt.Sprintf("%d hosts in the day-2 cluster, none added-to-existing-cluster", len(hosts))
	})
}

// latencies logs, per Machine, how long after its creation its bootstrap
// config, its infrastructure and its Node were ready (the conditions'
// transition times: second resolution), the providers' reconcile
// latencies as CAPI sees them (they include the waits the design asks
// for: the v2 cluster, the install).
func (s *scenario) latencies(ctx context.Context) {
	s.t.Helper()
	for _, m := range s.machines(ctx) {
		at := func(cond string) string {
			c := meta.FindStatusCondition(m.Status.Conditions, cond)
			if c == nil || c.Status != metav1.ConditionTrue {
				return "-"
			}
			return fmt.Sprintf("%.0fs", c.LastTransitionTime.Sub(m.CreationTimestamp.Time).Seconds())
		}
		s.say("latency: Machine %s: created → bootstrap data %s, infrastructure provisioned %s, Node ready %s", m.Name,
			at(clusterv1.MachineBootstrapConfigReadyCondition), at(clusterv1.MachineInfrastructureReadyCondition), at(clusterv1.MachineNodeReadyCondition))
	}
}

// TestServiceKilledMidInstall: the hub service is killed with SIGKILL while
// the cluster installs and started again (same folder and port): the
// install completes with one v2 cluster and one data secret per Machine. A
// worker added while the install runs is held (WaitingForInstallComplete)
// and then joins as a day-2 host.
func TestServiceKilledMidInstall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	// The hosts stay 3 s in Configuring, in Joined and (the bootstrap
	// host) in finalizing, as real ones stay minutes: the install runs
	// long enough for a loaded machine to add the worker and kill the
	// service inside it.
	s := newScenario(t, "kill", "--settle", "3s")
	approved := s.w.approveCSRs(ctx, t)
	s.create(ctx, 3, 1)
	s.eventually(ctx, "the install runs", 10*time.Minute, func() string {
		cp := s.controlPlane(ctx)
		if cp == nil {
			return "no control plane"
		}
		switch wire.ClusterStatus(cp.Status.InstallState) {
		case wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling:
			return ""
		}
		return "installState " + cp.Status.InstallState
	})
	s.scaleWorkers(ctx, 2)
	s.eventually(ctx, "the worker added mid-install held: WaitingForInstallComplete", 2*time.Minute, func() string {
		var cfgs bootstrapv1.NodezeroConfigList
		if err := s.c.List(ctx, &cfgs, client.InNamespace(s.ns)); err != nil {
			return err.Error()
		}
		for _, c := range cfgs.Items {
			if cond := meta.FindStatusCondition(c.Status.Conditions, bootstrapv1.DataSecretAvailableCondition); cond != nil &&
				cond.Status == metav1.ConditionFalse && cond.Reason == bootstrapv1.WaitingForInstallCompleteReason {
				return ""
			}
		}
		return fmt.Sprintf("no config WaitingForInstallComplete among %d", len(cfgs.Items))
	})
	state := ""
	if cp := s.controlPlane(ctx); cp != nil {
		state = cp.Status.InstallState
	}
	if st := wire.ClusterStatus(state); st != wire.ClusterStatusPreparingForInstallation && st != wire.ClusterStatusInstalling && st != wire.ClusterStatusInstallingPendingUserAction && st != wire.ClusterStatusFinalizing {
		t.Fatalf("the cluster is %s when the service is to be killed: not mid-install", state)
	}
	s.w.svc.Kill()
	s.say("service killed (SIGKILL); the control plane last saw the cluster %s", state)
	s.w.svc.Restart()
	s.say("service started again at %s", s.w.svc.URL)
	s.installed(ctx, 5)
	s.day2Added(ctx)
	s.latencies(ctx)
	s.deleteCluster(ctx)
	cancel()
	s.say("scenario done: %d CSRs approved", <-approved)
}
