package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/servicetest"
	"github.com/nodezero/nodezero/capi/internal/testenv"
	"github.com/nodezero/nodezero/wire"
)

const serviceAccount = "nodezero-capi-manager"

// The manager binary's run, against a real kube-apiserver, as its service
// account bound to the generated ClusterRole (config/rbac/role.yaml) and
// nothing else: it starts, answers its probes on 127.0.0.1, and its
// control-plane reconciler makes the v2 cluster on a real nodezero
// service and the three control-plane Machines (valid for CAPI's CRDs),
// then deletes them, the v2 cluster and its finalizer when the object is
// deleted. A marker missing from the role shows up here as a forbidden
// call.
func TestManagerAsServiceAccount(t *testing.T) {
	env := testenv.Start(t, testenv.Options{NoCore: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := env.Client
	ns := env.Namespace(t)

	// The service account and the generated role, bound.
	role := &rbacv1.ClusterRole{}
	b, err := os.ReadFile(filepath.Join(moduleDir(t), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, role); err != nil {
		t.Fatalf("config/rbac/role.yaml: %v", err)
	}
	role.Name = "nodezero-capi-manager-" + ns
	mustCreate(ctx, t, c,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: serviceAccount}},
		role,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: serviceAccount}}})
	kc := impersonatingKubeconfig(t, env.Kubeconfig(), ns)
	t.Setenv("KUBECONFIG", kc)
	// The kubeconfig really acts as the service account: what the role
	// does not grant is forbidden.
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := client.New(rc, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := sa.List(ctx, &corev1.NamespaceList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing namespaces as the service account: %v, want forbidden", err)
	}

	probe := freeAddr(t)
	done := make(chan error, 1)
	mctx, stop := context.WithCancel(ctx)
	go func() {
		done <- run(mctx, options{controllers: []string{ControllerBootstrap, ControllerControlPlane}, metricsAddr: "0", probeAddr: probe})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	testenv.Poll(t, "the manager's /readyz", time.Minute, func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v", err)
		default:
		}
		resp, err := http.Get("http://" + probe + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})

	svc := servicetest.Start(t)
	replicas := int32(3)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ostest"},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "127.0.0.1", Port: 6443},
			ControlPlaneRef:      clusterv1.ContractVersionedObjectReference{APIGroup: cpv1.GroupVersion.Group, Kind: "NodezeroControlPlane", Name: "ostest"},
		},
	}
	mustCreate(ctx, t, c, svc.TokenSecret(ns, "nodezero-tokens"),
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull-secret"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`)}},
		&infrav1.NodezeroHostMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "masters"},
			Spec: infrav1.NodezeroHostMachineTemplateSpec{Template: infrav1.NodezeroHostMachineTemplateResource{
				Spec: infrav1.NodezeroHostMachineSpec{Hardware: "master"}}}},
		cluster)
	yes := true
	cluster.Status.Initialization.InfrastructureProvisioned = &yes
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	cp := &cpv1.NodezeroControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ostest",
			// CAPI's Cluster controller sets it; it does not run here.
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}}},
		Spec: cpv1.NodezeroControlPlaneSpec{
			Replicas: &replicas, Version: "v1.33.4", DistributionVersion: "4.20.0",
			MachineTemplate: cpv1.NodezeroControlPlaneMachineTemplate{Spec: cpv1.NodezeroControlPlaneMachineTemplateSpec{
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "NodezeroHostMachineTemplate", Name: "masters"}}},
			Cluster: cpv1.ClusterInputs{BaseDomain: "example.com", PullSecretRef: cpv1.SecretRef{Name: "pull-secret"},
				APIVIPs: []string{"198.18.0.5"}, IngressVIPs: []string{"198.18.0.6"}},
			ServiceRef: cpv1.ServiceRef{URL: svc.URL, TokenSecretRef: cpv1.SecretRef{Name: "nodezero-tokens"}},
		},
	}
	mustCreate(ctx, t, c, cp)

	took := testenv.Poll(t, "three control-plane Machines and the v2 cluster", 2*time.Minute, func() (bool, string) {
		var ms clusterv1.MachineList
		if err := c.List(ctx, &ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cp), cp); err != nil {
			return false, err.Error()
		}
		r := cp.Status.Replicas
		return len(ms.Items) == 3 && cp.Status.ClusterID != "" && r != nil && *r == 3,
			fmt.Sprintf("%d Machines, status %+v", len(ms.Items), cp.Status)
	})
	t.Logf("object created → 3 Machines and the v2 cluster: %s", took.Round(time.Millisecond))
	if !controllerutil.ContainsFinalizer(cp, cpv1.Finalizer) {
		t.Errorf("finalizers = %v", cp.Finalizers)
	}
	var hms infrav1.NodezeroHostMachineList
	var cfgs bootstrapv1.NodezeroConfigList
	if err := c.List(ctx, &hms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &cfgs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(hms.Items) != 3 || len(cfgs.Items) != 3 {
		t.Errorf("%d NodezeroHostMachines and %d NodezeroConfigs, want 3 and 3", len(hms.Items), len(cfgs.Items))
	}
	id := cp.Status.ClusterID
	if _, err := svc.Client().GetClusterExcludingHosts(ctx, id); err != nil {
		t.Fatalf("v2 cluster %s: %v", id, err)
	}

	if err := c.Delete(ctx, cp); err != nil {
		t.Fatal(err)
	}
	took = testenv.Poll(t, "the control plane deleted", 2*time.Minute, func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(cp), &cpv1.NodezeroControlPlane{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	t.Logf("object deleted → Machines, v2 cluster and finalizer gone: %s", took.Round(time.Millisecond))
	var ms clusterv1.MachineList
	if err := c.List(ctx, &ms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(ms.Items) != 0 {
		t.Errorf("%d Machines left", len(ms.Items))
	}
	if _, err := svc.Client().GetClusterExcludingHosts(ctx, id); !wire.IsStatus(err, 404) {
		t.Errorf("v2 cluster after deletion: %v, want 404", err)
	}
}

func mustCreate(ctx context.Context, t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// impersonatingKubeconfig writes envtest's admin kubeconfig told to act
// as the manager's service account, and returns its path.
func impersonatingKubeconfig(t *testing.T, admin []byte, ns string) string {
	t.Helper()
	cfg, err := clientcmd.Load(admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		ai.Impersonate = "system:serviceaccount:" + ns + ":" + serviceAccount
		ai.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// moduleDir is the capi module's folder (this file is in cmd/nodezero-capi).
func moduleDir(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}
