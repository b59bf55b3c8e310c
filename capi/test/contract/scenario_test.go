package contract

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/test/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/capi/internal/testenv"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/wire"
)

// A scenario's Cluster: c1 in its own namespace, infrastructure from the
// Generic* kinds, a NodezeroControlPlane cp on a `nodezero service` of
// its own.
const (
	clusterName = "c1"
	cpName      = "cp"
	pullSecret  = `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`
	// Deadlines of the polls: generous (a loaded 2-core machine, a shared
	// apiserver); each poll ends as soon as its state is reached.
	short = 90 * time.Second
	long  = 5 * time.Minute
)

type scenario struct {
	t   *testing.T
	env *testenv.Env
	ctx context.Context
	ns  string
	svc *servicetest.Service
	c   client.Client // the apiserver, uncached
}

// newScenario starts a service with extra flags and creates the
// namespace's secrets and Generic infrastructure templates.
func newScenario(t *testing.T, serviceFlags ...string) *scenario {
	t.Helper()
	env := testenv.Shared(t)
	s := &scenario{t: t, env: env, ctx: context.Background(), ns: env.Namespace(t), c: env.Client}
	s.svc = servicetest.Start(t, serviceFlags...)
	s.create(s.svc.TokenSecret(s.ns, "nodezero-tokens"))
	s.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "pull-secret"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(pullSecret)},
	})
	for _, name := range []string{"cp", "workers"} {
		tmpl := generic(builder.GenericInfrastructureMachineTemplateKind, s.ns, name)
		if err := unstructured.SetNestedMap(tmpl.Object, map[string]any{"spec": map[string]any{}}, "spec", "template"); err != nil {
			t.Fatal(err)
		}
		s.create(tmpl)
	}
	return s
}

func generic(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(builder.InfrastructureGroupVersion.WithKind(kind))
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func (s *scenario) create(o client.Object) {
	s.t.Helper()
	if err := s.c.Create(s.ctx, o); err != nil {
		s.t.Fatalf("create %T %s: %v", o, o.GetName(), err)
	}
}

func (s *scenario) get(o client.Object, name string) error {
	return s.c.Get(s.ctx, client.ObjectKey{Namespace: s.ns, Name: name}, o)
}

// controlPlane is the scenario's NodezeroControlPlane with replicas, the
// simulated hosts' network as machine network and its VIPs.
func (s *scenario) controlPlane(replicas int32) *cpv1.NodezeroControlPlane {
	api, ingress, err := simagent.VIPs(simagent.DefaultNetwork)
	if err != nil {
		s.t.Fatal(err)
	}
	cp := validControlPlane(s.ns, cpName)
	cp.Spec.Replicas = &replicas
	cp.Spec.MachineTemplate.Spec.InfrastructureRef.Name = "cp"
	cp.Spec.Cluster.BaseDomain = "nodezero.test"
	cp.Spec.Cluster.PullSecretRef.Name = "pull-secret"
	cp.Spec.Cluster.APIVIPs, cp.Spec.Cluster.IngressVIPs = []string{api.String()}, []string{ingress.String()}
	cp.Spec.Cluster.MachineNetworks = []string{simagent.DefaultNetwork.String()}
	cp.Spec.ServiceRef = cpv1.ServiceRef{URL: s.svc.URL, TokenSecretRef: cpv1.SecretRef{Name: "nodezero-tokens"}}
	return cp
}

// cluster creates the Generic infrastructure cluster, the Cluster and the
// control plane, then marks the infrastructure provisioned with endpoint
// as its control-plane endpoint (what an infrastructure provider does).
func (s *scenario) cluster(cp *cpv1.NodezeroControlPlane, endpoint clusterv1.APIEndpoint) {
	s.t.Helper()
	infra := generic(builder.GenericInfrastructureClusterKind, s.ns, clusterName)
	s.create(infra)
	s.create(cp)
	s.create(&clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: clusterName},
		Spec: clusterv1.ClusterSpec{
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: builder.InfrastructureGroupVersion.Group, Kind: builder.GenericInfrastructureClusterKind, Name: clusterName},
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: cpv1.GroupVersion.Group, Kind: "NodezeroControlPlane", Name: cp.Name},
		},
	})
	if err := unstructured.SetNestedField(infra.Object, map[string]any{"host": endpoint.Host, "port": int64(endpoint.Port)}, "spec", "controlPlaneEndpoint"); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Update(s.ctx, infra); err != nil {
		s.t.Fatal(err)
	}
	if err := unstructured.SetNestedField(infra.Object, true, "status", "initialization", "provisioned"); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Status().Update(s.ctx, infra); err != nil {
		s.t.Fatal(err)
	}
}

// workers creates a worker MachineDeployment of replicas Machines made
// from a NodezeroConfigTemplate and the Generic workers template.
func (s *scenario) workers(name string, replicas int32) *clusterv1.MachineDeployment {
	s.t.Helper()
	return s.workersWith(name, replicas, bootstrapv1.NodezeroConfigSpec{})
}

// workersWith is workers whose template has spec.
func (s *scenario) workersWith(name string, replicas int32, spec bootstrapv1.NodezeroConfigSpec) *clusterv1.MachineDeployment {
	s.t.Helper()
	s.create(&bootstrapv1.NodezeroConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: bootstrapv1.NodezeroConfigTemplateSpec{Template: bootstrapv1.NodezeroConfigTemplateResource{Spec: spec}}})
	md := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: clusterName,
			Replicas:    &replicas,
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				Version: "v1.31.0",
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "NodezeroConfigTemplate", Name: name}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: builder.InfrastructureGroupVersion.Group, Kind: builder.GenericInfrastructureMachineTemplateKind, Name: "workers"},
			}},
		},
	}
	testenv.CompleteMachineDeployment(md)
	s.create(md)
	return md
}

// poll is testenv.Poll with the scenario's test.
func (s *scenario) poll(what string, timeout time.Duration, cond func() (bool, string)) time.Duration {
	s.t.Helper()
	d := testenv.Poll(s.t, what, timeout, cond)
	s.t.Logf("%s: %s", what, d.Round(time.Millisecond))
	return d
}

// cp reads the control plane.
func (s *scenario) cp() *cpv1.NodezeroControlPlane {
	s.t.Helper()
	cp := &cpv1.NodezeroControlPlane{}
	if err := s.get(cp, cpName); err != nil {
		s.t.Fatal(err)
	}
	return cp
}

// machines are the namespace's Machines matching the label selector
// (everything when nil).
func (s *scenario) machines(opts ...client.ListOption) []clusterv1.Machine {
	s.t.Helper()
	var list clusterv1.MachineList
	if err := s.c.List(s.ctx, &list, append(opts, client.InNamespace(s.ns))...); err != nil {
		s.t.Fatal(err)
	}
	return list.Items
}

func controlPlaneMachines() client.ListOption {
	return client.HasLabels{clusterv1.MachineControlPlaneLabel}
}

func workerMachines() client.ListOption {
	return client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: "workers"}
}

// config reads the Machine's NodezeroConfig.
func (s *scenario) config(m *clusterv1.Machine) (*bootstrapv1.NodezeroConfig, error) {
	cfg := &bootstrapv1.NodezeroConfig{}
	if m.Spec.Bootstrap.ConfigRef.Kind != "NodezeroConfig" {
		return nil, fmt.Errorf("Machine %s: bootstrap configRef %+v is not a NodezeroConfig", m.Name, m.Spec.Bootstrap.ConfigRef)
	}
	return cfg, s.get(cfg, m.Spec.Bootstrap.ConfigRef.Name)
}

func condition(conds []metav1.Condition, typ string) string {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return typ + " unset"
	}
	return fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message)
}

func isTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// hosts are simulated agents, one per Machine infra-env, started with
// start and stopped with the test.
type hosts struct {
	s      *scenario
	client *wire.Client
	dir    string
	next   int
	cancel context.CancelFunc
	ctx    context.Context
	done   []chan error
}

func (s *scenario) hosts(c *wire.Client) *hosts {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hosts{s: s, client: c, dir: s.t.TempDir(), ctx: ctx, cancel: cancel}
	s.t.Cleanup(func() {
		cancel()
		for _, d := range h.done {
			<-d
		}
	})
	return h
}

// start runs one master-class simulated host registering into
// infraEnvID.
func (h *hosts) start(infraEnvID string, class simagent.Class) simagent.Host {
	h.s.t.Helper()
	host, err := simagent.NewHost(h.next, simagent.DefaultNetwork, class)
	if err != nil {
		h.s.t.Fatal(err)
	}
	h.next++
	api, ingress, err := simagent.VIPs(simagent.DefaultNetwork)
	if err != nil {
		h.s.t.Fatal(err)
	}
	a, err := simagent.New(simagent.Config{
		Client: h.client, AgentVersion: simagent.DefaultAgentVersion, InfraEnvID: infraEnvID, Host: host,
		Wait: 5 * time.Second, APIVIP: api, IngressVIP: ingress, RetryInterval: time.Second,
		Install: simagent.InstallConfig{Dir: h.dir, WriteTime: 200 * time.Millisecond, RebootDelay: 100 * time.Millisecond, Poll: 500 * time.Millisecond},
	})
	if err != nil {
		h.s.t.Fatal(err)
	}
	done := make(chan error, 1)
	h.done = append(h.done, done)
	go func() { done <- a.Run(h.ctx) }()
	return host
}

// gone reports whether the object no longer exists.
func (s *scenario) gone(o client.Object, name string) (bool, string) {
	err := s.get(o, name)
	if apierrors.IsNotFound(err) {
		return true, ""
	}
	if err != nil {
		return false, err.Error()
	}
	return false, fmt.Sprintf("%T %s still there (deletionTimestamp %v, finalizers %v)", o, name, o.GetDeletionTimestamp(), o.GetFinalizers())
}

// serviceEmpty reports whether the service holds no cluster and no
// infra-env any more.
func (s *scenario) serviceEmpty() (bool, string) {
	uc := s.svc.Client()
	cls, err := uc.ListClusters(s.ctx)
	if err != nil {
		return false, err.Error()
	}
	ies, err := uc.ListInfraEnvs(s.ctx, "")
	if err != nil {
		return false, err.Error()
	}
	if len(cls) == 0 && len(ies) == 0 {
		return true, ""
	}
	var names []string
	for _, c := range cls {
		names = append(names, "cluster "+c.Name+" "+c.ID+" "+string(c.Status))
	}
	for _, ie := range ies {
		names = append(names, "infra-env "+ie.Name+" "+ie.ID)
	}
	return false, "the service still holds " + strings.Join(names, ", ")
}

// endpoint is a control-plane endpoint on loopback nothing listens on.
func unusedEndpoint() clusterv1.APIEndpoint {
	return clusterv1.APIEndpoint{Host: netip.MustParseAddr("127.0.0.1").String(), Port: 1}
}
