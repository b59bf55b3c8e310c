package contracttest

import (
	"bytes"
	"context"
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
	"github.com/nodezero/nodezero/capi/internal/controllers/bootstrap"
	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/capi/internal/testenv"
	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

const pullSecret = `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`

// poll waits for f to hold, failing the test after a generous deadline.
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

// TestBootstrapContract: with CAPI core's Machine controller owning the
// config, the reconciler (through its watches alone) writes the data
// secret the contract asks for, CAPI links it to the Machine and mirrors
// Ready to BootstrapConfigReady; the host that registers is bound; the
// Machine's deletion takes the config, its host and its infra-env with it.
func TestBootstrapContract(t *testing.T) {
	svc := servicetest.Start(t)
	ctx := context.Background()
	user := svc.Client()
	v2, err := user.RegisterCluster(ctx, wire.ClusterCreateParams{Name: "c1", OpenshiftVersion: "4.18", BaseDNSDomain: "example.com", PullSecret: pullSecret})
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{Setup: func(ctx context.Context, env *testenv.Env) error {
		return (&bootstrap.Reconciler{Client: env.Manager.GetClient(), WaitInterval: time.Second, PollInterval: 200 * time.Millisecond}).
			SetupWithManager(ctx, env.Manager)
	}})
	c := env.Client
	ns := env.Namespace(t)
	t.Logf("management cluster up in %v", env.Started)

	create := func(o client.Object) {
		t.Helper()
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
	create(svc.TokenSecret(ns, "tokens"))
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(pullSecret)}})
	three := int32(3)
	cp := &cpv1.NodezeroControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-cp"},
		Spec: cpv1.NodezeroControlPlaneSpec{
			Replicas: &three, Version: "v1.31.0", DistributionVersion: "4.18.0",
			MachineTemplate: cpv1.NodezeroControlPlaneMachineTemplate{Spec: cpv1.NodezeroControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: builder.InfrastructureGroupVersion.Group, Kind: builder.GenericInfrastructureMachineTemplateKind, Name: "cp"},
			}},
			Cluster:    cpv1.ClusterInputs{BaseDomain: "example.com", PullSecretRef: cpv1.SecretRef{Name: "pull"}, APIVIPs: []string{"192.0.2.5"}, IngressVIPs: []string{"192.0.2.6"}},
			ServiceRef: cpv1.ServiceRef{URL: svc.URL, TokenSecretRef: cpv1.SecretRef{Name: "tokens"}},
		},
	}
	create(cp)
	// The control-plane provider is not running here: the test plays its
	// part, the v2 cluster it made.
	cp.Status.ClusterID = v2.ID
	if err := c.Status().Update(ctx, cp); err != nil {
		t.Fatal(err)
	}
	create(&clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: cpv1.GroupVersion.Group, Kind: "NodezeroControlPlane", Name: cp.Name}},
	})
	infra := &unstructured.Unstructured{}
	infra.SetAPIVersion(builder.InfrastructureGroupVersion.String())
	infra.SetKind(builder.GenericInfrastructureMachineKind)
	infra.SetNamespace(ns)
	infra.SetName("w0")
	create(infra)
	create(&bootstrapv1.NodezeroConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w0",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}})
	create(&clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w0", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec: clusterv1.MachineSpec{ClusterName: "c1",
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "NodezeroConfig", Name: "w0"}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: builder.InfrastructureGroupVersion.Group, Kind: builder.GenericInfrastructureMachineKind, Name: "w0"}},
	})

	start := time.Now()
	m := &clusterv1.Machine{}
	poll(t, "Machine w0's bootstrap data", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, m); err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineBootstrapConfigReadyCondition)
		return m.Spec.Bootstrap.DataSecretName != nil && m.Status.Initialization.BootstrapDataSecretCreated != nil &&
			*m.Status.Initialization.BootstrapDataSecretCreated && ready != nil && ready.Status == metav1.ConditionTrue, nil
	})
	t.Logf("Machine created → its bootstrap data linked and BootstrapConfigReady: %v", time.Since(start))
	if *m.Spec.Bootstrap.DataSecretName != "w0" {
		t.Errorf("dataSecretName %q, want w0", *m.Spec.Bootstrap.DataSecretName)
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, sec); err != nil {
		t.Fatal(err)
	}
	cfg := &bootstrapv1.NodezeroConfig{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, cfg); err != nil {
		t.Fatal(err)
	}
	if owner := metav1.GetControllerOf(sec); sec.Type != clusterv1.ClusterSecretType || sec.Labels[clusterv1.ClusterNameLabel] != "c1" ||
		owner == nil || owner.UID != cfg.UID {
		t.Errorf("secret type %q labels %v controller %+v", sec.Type, sec.Labels, owner)
	}
	v := sec.Data[bootstrap.DataSecretValueKey]
	ms, err := configimage.Read(bytes.NewReader(v), int64(len(v)), configimage.Limits{})
	if err != nil {
		t.Fatalf("value: %v", err)
	}
	for _, mem := range ms {
		if mem.Path == onhost.MachineBindingPath {
			if b, err := onhost.ParseMachineBinding(mem.Path, mem.Data); err != nil || b.UID != string(m.UID) || b.Name != "w0" || b.Cluster != "c1" {
				t.Errorf("machine binding %+v (%v), want Machine w0 %s", b, err, m.UID)
			}
		}
	}

	// A host registers: the config binds it within a poll.
	hostID := "44444444-0000-4000-8000-000000000001"
	if _, err := svc.AgentClient().RegisterHost(ctx, cfg.Status.InfraEnvID, wire.HostCreateParams{HostID: hostID}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	poll(t, "the host bound", func() (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, cfg); err != nil {
			return false, err
		}
		return cfg.Status.HostID == hostID, nil
	})
	t.Logf("host registered → bound: %v", time.Since(start))

	// The Machine goes: CAPI deletes the config, whose finalizer removes
	// the host and the infra-env from the service first.
	ie := cfg.Status.InfraEnvID
	if err := c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	poll(t, "Machine and config gone", func() (bool, error) {
		errM := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, &clusterv1.Machine{})
		errC := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, &bootstrapv1.NodezeroConfig{})
		return apierrors.IsNotFound(errM) && apierrors.IsNotFound(errC), nil
	})
	t.Logf("Machine deleted → Machine and config gone: %v", time.Since(start))
	if _, err := user.GetInfraEnv(ctx, ie); !wire.IsStatus(err, 404) {
		t.Errorf("infra-env %s after the Machine's deletion: %v, want 404", ie, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("data secret after the Machine's deletion: %v, want not found", err)
	}
}
