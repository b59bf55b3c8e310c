package controlplane

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
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
	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/service"
	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/wire"
)

const (
	ns          = "fleet"
	clusterName = "ostest"
	cpName      = "ostest-cp"
	pullSecret  = `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`
)

// env is one control plane on a fake management API and a real
// `nodezero service`.
type env struct {
	t       *testing.T
	ctx     context.Context
	svc     *servicetest.Service
	c       client.Client
	r       *Reconciler
	cluster *clusterv1.Cluster
	// apiPort is the Cluster's controlPlaneEndpoint port on 127.0.0.1,
	// where nothing listens.
	apiPort int

	mu     sync.Mutex
	agents []func() // stops the simulated agents
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme,
		cpv1.AddToScheme, bootstrapv1.AddToScheme, infrav1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// newEnv makes the Cluster (infrastructure provisioned), the control
// plane with replicas, a worker MachineDeployment with workers replicas
// (none when 0), the template and the secrets.
func newEnv(t *testing.T, replicas, workers int32) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), svc: servicetest.Start(t), apiPort: closedPort(t)}
	t.Cleanup(e.stopAgents)
	api, ingress, err := simagent.VIPs(simagent.DefaultNetwork)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	e.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName, UID: "c0000000-0000-4000-8000-000000000001"},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "127.0.0.1", Port: int32(e.apiPort)},
			ControlPlaneRef:      clusterv1.ContractVersionedObjectReference{APIGroup: cpv1.GroupVersion.Group, Kind: "NodezeroControlPlane", Name: cpName},
			ClusterNetwork: clusterv1.ClusterNetwork{
				Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
				Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
			},
		},
		Status: clusterv1.ClusterStatus{Initialization: clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: &yes}},
	}
	cp := &cpv1.NodezeroControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cpName, UID: "c0000000-0000-4000-8000-000000000002", Generation: 1,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: clusterName, UID: e.cluster.UID}}},
		Spec: cpv1.NodezeroControlPlaneSpec{
			Replicas:            &replicas,
			Version:             "v1.33.4",
			DistributionVersion: "4.20.0",
			MachineTemplate: cpv1.NodezeroControlPlaneMachineTemplate{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"tier": "cp"}, Annotations: map[string]string{"note": "x"}},
				Spec: cpv1.NodezeroControlPlaneMachineTemplateSpec{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "NodezeroHostMachineTemplate", Name: "masters"},
					ReadinessGates:    []clusterv1.MachineReadinessGate{{ConditionType: "NodezeroHostReady"}},
					Deletion:          cpv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr(int32(30))},
				},
			},
			NodezeroConfigSpec: bootstrapv1.NodezeroConfigSpec{Format: bootstrapv1.FormatConfigImage, AdditionalNTPSources: []string{"ntp.example.com"}},
			Cluster:            cpv1.ClusterInputs{BaseDomain: "example.com", PullSecretRef: cpv1.SecretRef{Name: "pull-secret"}},
			ServiceRef:         cpv1.ServiceRef{URL: e.svc.URL, TokenSecretRef: cpv1.SecretRef{Name: "nodezero-tokens"}},
		},
	}
	if replicas != 1 {
		cp.Spec.Cluster.APIVIPs, cp.Spec.Cluster.IngressVIPs = []string{api.String()}, []string{ingress.String()}
	}
	tmpl := &infrav1.NodezeroHostMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "masters"},
		Spec: infrav1.NodezeroHostMachineTemplateSpec{Template: infrav1.NodezeroHostMachineTemplateResource{
			ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"from-template": "yes"}},
			Spec:       infrav1.NodezeroHostMachineSpec{Hardware: "master"}}},
	}
	objs := []client.Object{e.cluster, cp, tmpl, e.svc.TokenSecret(ns, "nodezero-tokens"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull-secret"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{PullSecretKey: []byte(pullSecret)}}}
	if workers > 0 {
		objs = append(objs, &clusterv1.MachineDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers", Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
			Spec:       clusterv1.MachineDeploymentSpec{ClusterName: clusterName, Replicas: &workers},
		})
	}
	scheme := testScheme(t)
	// The fake client's own mapper knows no kinds; the management API's
	// would serve every CRD's.
	mapper := meta.NewDefaultRESTMapper(scheme.PrioritizedVersionsAllGroups())
	for gvk := range scheme.AllKnownTypes() {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	e.c = fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(objs...).
		WithStatusSubresource(&cpv1.NodezeroControlPlane{}, &bootstrapv1.NodezeroConfig{}, &clusterv1.Machine{}, &clusterv1.Cluster{}).
		Build()
	e.r = &Reconciler{Client: e.c, WaitInterval: time.Second, PollInterval: time.Second}
	return e
}

func ptr[T any](v T) *T { return &v }

// reconcile runs one reconcile and fails the test on an error.
func (e *env) reconcile() ctrl.Result {
	e.t.Helper()
	res, err := e.r.Reconcile(e.ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: cpName}})
	if err != nil {
		e.t.Fatalf("Reconcile: %v", err)
	}
	return res
}

func (e *env) cp() *cpv1.NodezeroControlPlane {
	e.t.Helper()
	cp := &cpv1.NodezeroControlPlane{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: cpName}, cp); err != nil {
		e.t.Fatalf("get control plane: %v", err)
	}
	return cp
}

func (e *env) machines() []clusterv1.Machine {
	e.t.Helper()
	var l clusterv1.MachineList
	if err := e.c.List(e.ctx, &l, client.InNamespace(ns)); err != nil {
		e.t.Fatal(err)
	}
	return l.Items
}

// v2Clusters are the service's clusters made for this control plane (by
// its tag), without day-2 ones.
func (e *env) v2Clusters() []*wire.Cluster {
	e.t.Helper()
	list, err := e.svc.Client().ListClusters(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []*wire.Cluster
	for _, c := range list {
		if c.Kind != wire.ClusterKindAddHostsCluster {
			out = append(out, c)
		}
	}
	return out
}

func (e *env) v2Cluster(id string) *wire.Cluster {
	e.t.Helper()
	cl, err := e.svc.Client().GetClusterExcludingHosts(e.ctx, id)
	if err != nil {
		e.t.Fatalf("get v2 cluster %s: %v", id, err)
	}
	return cl
}

// condition returns the control plane's condition t, nil when absent.
func condition(cp *cpv1.NodezeroControlPlane, t string) *metav1.Condition {
	for i := range cp.Status.Conditions {
		if cp.Status.Conditions[i].Type == t {
			return &cp.Status.Conditions[i]
		}
	}
	return nil
}

// bindHost plays the bootstrap provider and the Machine's host for the
// NodezeroConfig cfg: an infra-env of its own bound to the v2 cluster, a
// simulated agent registering into it with the agent token, the host's
// role and name set, status.hostID recorded. index chooses the host's
// address; master the hardware class and role.
func (e *env) bindHost(cfgName, clusterID string, index int, master bool) string {
	e.t.Helper()
	user := e.svc.Client()
	ie, err := user.RegisterInfraEnv(e.ctx, wire.InfraEnvCreateParams{Name: ns + "-" + cfgName, PullSecret: pullSecret,
		ClusterID: &clusterID, OpenshiftVersion: "4.20.0", ImageType: wire.ImageTypeFullISO})
	if err != nil {
		e.t.Fatalf("register infra-env for %s: %v", cfgName, err)
	}
	class, role := simagent.Worker, wire.HostUpdateParamsHostRoleWorker
	if master {
		class, role = simagent.Master, wire.HostUpdateParamsHostRoleMaster
	}
	h, err := simagent.NewHost(index, simagent.DefaultNetwork, class)
	if err != nil {
		e.t.Fatal(err)
	}
	api, ingress, _ := simagent.VIPs(simagent.DefaultNetwork)
	agentClient, err := wire.NewClient(e.svc.URL, wire.WithAgentToken(e.svc.AgentToken), wire.WithAgentVersion(simagent.DefaultAgentVersion),
		wire.WithHTTPClient(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := simagent.New(simagent.Config{Client: agentClient, AgentVersion: simagent.DefaultAgentVersion, InfraEnvID: ie.ID, Host: h,
		Wait: 2 * time.Second, APIVIP: api, IngressVIP: ingress, RetryInterval: time.Second,
		Install: simagent.InstallConfig{Dir: e.t.TempDir(), Poll: time.Second}})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = a.Run(ctx)
	}()
	e.mu.Lock()
	e.agents = append(e.agents, func() { cancel(); <-done })
	e.mu.Unlock()

	poll(e.t, "host "+h.ID+" registered", func() (bool, error) {
		_, err := user.GetHost(e.ctx, ie.ID, h.ID)
		if wire.IsStatus(err, 404) {
			return false, nil
		}
		return err == nil, err
	})
	name := cfgName
	if _, err := user.UpdateHost(e.ctx, ie.ID, h.ID, wire.HostUpdateParams{HostRole: &role, HostName: &name}); err != nil {
		e.t.Fatalf("set role of %s: %v", h.ID, err)
	}
	cfg := &bootstrapv1.NodezeroConfig{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: cfgName}, cfg); err != nil {
		e.t.Fatalf("get NodezeroConfig %s: %v", cfgName, err)
	}
	orig := cfg.DeepCopy()
	cfg.Status.InfraEnvID, cfg.Status.HostID = ie.ID, h.ID
	if err := e.c.Status().Patch(e.ctx, cfg, client.MergeFrom(orig)); err != nil {
		e.t.Fatal(err)
	}
	return h.ID
}

// workerConfig is a worker Machine's NodezeroConfig as a MachineSet makes
// it: labelled with the cluster.
func (e *env) workerConfig(name string) {
	e.t.Helper()
	cfg := &bootstrapv1.NodezeroConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}}}
	if err := e.c.Create(e.ctx, cfg); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) stopAgents() {
	e.mu.Lock()
	stops := e.agents
	e.agents = nil
	e.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}

// poll calls f until it says done, failing the test after a generous
// deadline (a loaded 2-core machine).
func poll(t *testing.T, what string, f func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := f()
		if ok {
			return
		}
		last = err
		time.Sleep(100 * time.Millisecond) // polling a state, not a synchronisation
	}
	t.Fatalf("waiting for %s: timed out (last error: %v)", what, last)
}

// fakeWorkload answers /readyz as told and gives fixed cluster facts.
type fakeWorkload struct {
	mu    sync.Mutex
	ready bool
	info  *kube.ClusterInfo
	seen  [][]byte
}

func (f *fakeWorkload) Ready(_ context.Context, kubeconfig []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, kubeconfig)
	if !f.ready {
		return errors.New("connection refused")
	}
	return nil
}

func (f *fakeWorkload) ClusterInfo(context.Context, []byte, string) (*kube.ClusterInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.info == nil {
		return nil, errors.New("no cluster facts")
	}
	return f.info, nil
}

// openService opens the control plane's service as the reconciler does.
func openService(e *env) (*service.Service, error) {
	return service.Open(e.ctx, e.c, ns, e.cp().Spec.ServiceRef)
}

func workerEndpoint(url, ca string) *onhost.WorkerIgnitionEndpoint {
	return &onhost.WorkerIgnitionEndpoint{URL: url, CACertificate: ca}
}

// testCA is a self-signed CA certificate, PEM then base64, as a pointer
// Ignition carries the machine config server's.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "machine-config-server-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
