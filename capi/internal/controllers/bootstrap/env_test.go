package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/wire"
)

const (
	ns          = "ns1"
	clusterName = "c1"
	cpName      = "c1-cp"
	pullSecret  = `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`
)

// testEnv is a real nodezero service, a fake management cluster holding a
// Cluster, its NodezeroControlPlane (with the service's v2 cluster) and
// the token and pull secrets, and the reconciler under test.
type testEnv struct {
	t         *testing.T
	ctx       context.Context
	svc       *servicetest.Service
	user      *wire.Client
	c         client.Client
	r         *Reconciler
	clusterID string
	proxy     *statusProxy // nil unless withProxy
}

type envOption func(*envConfig)

type envConfig struct {
	proxy       bool
	unprovision bool
	noClusterID bool
	paused      bool
}

// withProxy puts a proxy between the reconciler and the service that can
// report another status for the day-1 cluster (the gate table).
func withProxy() envOption { return func(c *envConfig) { c.proxy = true } }

func newEnv(t *testing.T, opts ...envOption) *testEnv {
	t.Helper()
	var conf envConfig
	for _, o := range opts {
		o(&conf)
	}
	e := &testEnv{t: t, ctx: context.Background(), svc: servicetest.Start(t)}
	e.user = e.svc.Client()
	cl, err := e.user.RegisterCluster(e.ctx, wire.ClusterCreateParams{Name: clusterName, OpenshiftVersion: "4.18", BaseDNSDomain: "example.com", PullSecret: pullSecret})
	if err != nil {
		t.Fatal(err)
	}
	e.clusterID = cl.ID
	serviceURL := e.svc.URL
	if conf.proxy {
		e.proxy = newStatusProxy(t, e.svc.URL, cl.ID)
		serviceURL = e.proxy.URL
	}

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, bootstrapv1.AddToScheme, cpv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	provisioned := !conf.unprovision
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName, UID: "cluster-uid"},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: cpv1.GroupVersion.Group, Kind: "NodezeroControlPlane", Name: cpName}},
		Status: clusterv1.ClusterStatus{Initialization: clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: &provisioned}},
	}
	if conf.paused {
		cluster.Spec.Paused = &conf.paused
	}
	cp := &cpv1.NodezeroControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cpName, UID: "cp-uid",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: clusterName, UID: "cluster-uid"}}},
		Spec: cpv1.NodezeroControlPlaneSpec{
			DistributionVersion: "4.18",
			Cluster:             cpv1.ClusterInputs{BaseDomain: "example.com", PullSecretRef: cpv1.SecretRef{Name: "pull"}},
			ServiceRef:          cpv1.ServiceRef{URL: serviceURL, TokenSecretRef: cpv1.SecretRef{Name: "tokens"}},
		},
	}
	if !conf.noClusterID {
		cp.Status.ClusterID = cl.ID
	}
	pull := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(pullSecret)}}
	e.c = fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(cluster, cp, pull, e.svc.TokenSecret(ns, "tokens")).
		WithStatusSubresource(&bootstrapv1.NodezeroConfig{}, &cpv1.NodezeroControlPlane{}, &clusterv1.Cluster{}, &clusterv1.Machine{}).
		Build()
	e.r = &Reconciler{Client: e.c}
	return e
}

// machine adds a Machine (a control-plane one when cp) and its
// NodezeroConfig of the same name.
func (e *testEnv) machine(name string, cp bool, spec bootstrapv1.NodezeroConfigSpec) *bootstrapv1.NodezeroConfig {
	e.t.Helper()
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	if cp {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("machine-uid-" + name), Labels: labels},
		Spec: clusterv1.MachineSpec{ClusterName: clusterName, Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: bootstrapv1.GroupVersion.Group, Kind: "NodezeroConfig", Name: name}}},
	}
	if err := e.c.Create(e.ctx, m); err != nil {
		e.t.Fatal(err)
	}
	return e.config(name, spec)
}

// config adds a NodezeroConfig owned by the Machine of its name (which
// may not exist).
func (e *testEnv) config(name string, spec bootstrapv1.NodezeroConfigSpec) *bootstrapv1.NodezeroConfig {
	e.t.Helper()
	cfg := &bootstrapv1.NodezeroConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("config-uid-" + name),
			Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name,
				UID: types.UID("machine-uid-" + name), Controller: ptr(true)}}},
		Spec: spec,
	}
	if err := e.c.Create(e.ctx, cfg); err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

// reconcile runs one reconcile of the config and returns it re-read (nil
// once it is gone).
func (e *testEnv) reconcile(name string) (ctrl.Result, *bootstrapv1.NodezeroConfig, error) {
	e.t.Helper()
	res, err := e.r.Reconcile(e.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	cfg := &bootstrapv1.NodezeroConfig{}
	if gerr := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, cfg); gerr != nil {
		return res, nil, err
	}
	return res, cfg, err
}

// mustReconcile fails the test on a reconcile error.
func (e *testEnv) mustReconcile(name string) (ctrl.Result, *bootstrapv1.NodezeroConfig) {
	e.t.Helper()
	res, cfg, err := e.reconcile(name)
	if err != nil {
		e.t.Fatalf("reconcile %s: %v", name, err)
	}
	return res, cfg
}

// secret reads a data secret; nil when absent.
func (e *testEnv) secret(name string) *corev1.Secret {
	e.t.Helper()
	s := &corev1.Secret{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		return nil
	}
	return s
}

// infraEnvsNamed lists the service's infra-envs of that name.
func (e *testEnv) infraEnvsNamed(name string) []*wire.InfraEnv {
	e.t.Helper()
	ies, err := e.user.ListInfraEnvs(e.ctx, "")
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*wire.InfraEnv
	for _, ie := range ies {
		if ie.Name == name {
			out = append(out, ie)
		}
	}
	return out
}

// registerHost registers a host with the agent token, as an agent does.
func (e *testEnv) registerHost(infraEnvID, hostID string) {
	e.t.Helper()
	if _, err := e.svc.AgentClient().RegisterHost(e.ctx, infraEnvID, wire.HostCreateParams{HostID: hostID, DiscoveryAgentVersion: "test"}); err != nil {
		e.t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func init() { ctrl.SetLogger(logr.Discard()) }

// statusProxy forwards to the service and reports another status for
// one cluster when told to.
type statusProxy struct {
	*httptest.Server
	mu       sync.Mutex
	status   wire.ClusterStatus
	installs int // POSTs of a host's actions/install
}

func newStatusProxy(t *testing.T, target, clusterID string) *statusProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &statusProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		r := pr.In
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/hosts/") && strings.HasSuffix(r.URL.Path, "/actions/install") {
			p.mu.Lock()
			p.installs++
			p.mu.Unlock()
		}
		pr.SetURL(u)
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		p.mu.Lock()
		st := p.status
		p.mu.Unlock()
		if st == "" || resp.Request.Method != http.MethodGet || !strings.HasSuffix(resp.Request.URL.Path, "/clusters/"+clusterID) || resp.StatusCode != http.StatusOK {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		m["status"] = string(st)
		b, _ = json.Marshal(m)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func (p *statusProxy) hostInstalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.installs
}

func (p *statusProxy) set(st wire.ClusterStatus) {
	p.mu.Lock()
	p.status = st
	p.mu.Unlock()
}

// controlPlane reads the control plane.
func (e *testEnv) controlPlane() *cpv1.NodezeroControlPlane {
	e.t.Helper()
	cp := &cpv1.NodezeroControlPlane{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: cpName}, cp); err != nil {
		e.t.Fatal(err)
	}
	return cp
}
