package contract

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/wire"
)

// TestInstallContract: three simulated control-plane hosts register into
// their Machines' infra-envs and the cluster installs, with CAPI core and
// the providers in-process:
//   - each config binds its Machine's host (status.hostID, HostBound) and
//     gives it its role and the Machine's name; the control plane starts
//     the install once every expected host is known;
//   - the day-2 gate: a worker MachineDeployment created while the v2
//     cluster installs (held there: the hosts' install progress is held
//     back until the test lets it go) gets no data secret, its config
//     says WaitingForInstallComplete;
//   - once installed: the <cluster>-kubeconfig secret in the contract's
//     shape, pointing at the Cluster's endpoint (a kube-apiserver playing
//     the workload cluster, trusting the signers the service made the
//     kubeconfig with); controlPlaneInitialized only once the API answers
//     through it; Available, mirrored by CAPI to the Cluster's
//     ControlPlaneAvailable;
//   - the day-2 cluster imported; the held worker gets its data, bound to
//     it; scaled away, its host is deregistered and its infra-env deleted;
//   - deleting the Cluster leaves nothing, in the apiserver or the
//     service.
func TestInstallContract(t *testing.T) {
	t.Parallel()
	env := workloadAPI(t)
	s := newScenario(t, "--cluster-tls-dir", env.tlsDir)
	cp := s.controlPlane(3)
	s.cluster(cp, clusterv1.APIEndpoint{Host: env.addr.String(), Port: 6443})

	// One simulated host per control-plane Machine, into its infra-env,
	// their install progress held.
	hold := &holdProgress{base: http.DefaultTransport.(*http.Transport).Clone(), release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(hold.release)
		}
	}()
	agent, err := wire.NewClient(s.svc.URL, wire.WithAgentToken(s.svc.AgentToken), wire.WithAgentVersion(simagent.DefaultAgentVersion),
		wire.WithHTTPClient(&http.Client{Transport: hold}), wire.WithRequestTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	h := s.hosts(agent)
	started := map[string]simagent.Host{} // by Machine
	s.poll("three control-plane Machines with infra-envs, a host started into each", long, func() (bool, string) {
		ms := s.machines(controlPlaneMachines())
		for _, m := range ms {
			if _, ok := started[m.Name]; ok {
				continue
			}
			cfg, err := s.config(&m)
			if err != nil || cfg.Status.InfraEnvID == "" {
				continue
			}
			started[m.Name] = h.start(cfg.Status.InfraEnvID, simagent.Master)
		}
		return len(ms) == 3 && len(started) == 3, fmt.Sprintf("%d Machines, %d hosts started", len(ms), len(started))
	})
	s.poll("hosts known, roles set, install started: the v2 cluster installing", long, func() (bool, string) {
		cp = s.cp()
		return cp.Status.InstallState == string(wire.ClusterStatusInstalling), fmt.Sprintf("installState %q, %s", cp.Status.InstallState, condition(cp.Status.Conditions, cpv1.InstalledCondition))
	})
	for _, m := range s.machines(controlPlaneMachines()) {
		cfg, err := s.config(&m)
		if err != nil {
			t.Fatal(err)
		}
		if want := started[m.Name].ID; cfg.Status.HostID != want || !isTrue(cfg.Status.Conditions, bootstrapv1.HostBoundCondition) {
			t.Errorf("NodezeroConfig %s: hostID %q, %s; want %s bound", cfg.Name, cfg.Status.HostID, condition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition), want)
			continue
		}
		host, err := s.svc.Client().GetHost(s.ctx, cfg.Status.InfraEnvID, cfg.Status.HostID)
		if err != nil {
			t.Fatal(err)
		}
		if host.Role != wire.HostRoleMaster || host.RequestedHostname != m.Name {
			t.Errorf("Machine %s's host %s: role %q, hostname %q; want master, %s", m.Name, host.ID, host.Role, host.RequestedHostname, m.Name)
		}
	}

	// The day-2 gate, while the install is held.
	s.workers("workers", 1)
	s.poll("worker created mid-install: WaitingForInstallComplete", short, func() (bool, string) {
		ws := s.machines(workerMachines())
		if len(ws) != 1 {
			return false, fmt.Sprintf("%d worker Machines", len(ws))
		}
		cfg, err := s.config(&ws[0])
		if err != nil {
			return false, err.Error()
		}
		c := findCondition(cfg.Status.Conditions, bootstrapv1.DataSecretAvailableCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == bootstrapv1.WaitingForInstallCompleteReason,
			condition(cfg.Status.Conditions, bootstrapv1.DataSecretAvailableCondition)
	})
	worker := s.machines(workerMachines())[0]
	wcfg, err := s.config(&worker)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.get(&corev1.Secret{}, wcfg.Name); err == nil || wcfg.Status.DataSecretName != "" || ptrTrue(wcfg.Status.Initialization.DataSecretCreated) || worker.Spec.Bootstrap.DataSecretName != nil {
		t.Errorf("held worker %s: secret lookup %v, dataSecretName %q, dataSecretCreated %v, Machine dataSecretName %v; want no data at all",
			worker.Name, err, wcfg.Status.DataSecretName, wcfg.Status.Initialization.DataSecretCreated, worker.Spec.Bootstrap.DataSecretName)
	}
	if st := s.cp().Status.InstallState; st != string(wire.ClusterStatusInstalling) {
		t.Fatalf("the v2 cluster left installing (%s) while its hosts' progress was held (%d requests held)", st, hold.held.Load())
	}
	t.Logf("%d progress requests held", hold.held.Load())

	// The install completes: kubeconfig, initialized, Available. The
	// workload cluster has the control plane's Nodes, as an installed
	// cluster does (a day-2 import reads the architecture from them).
	for _, m := range s.machines(controlPlaneMachines()) {
		env.node(t, m.Name)
	}
	close(hold.release)
	released = true
	s.poll("installed, kubeconfig written, API answering: controlPlaneInitialized and Available", long, func() (bool, string) {
		cp = s.cp()
		return cp.Status.InstallState == string(wire.ClusterStatusInstalled) && ptrTrue(cp.Status.Initialization.ControlPlaneInitialized) &&
				isTrue(cp.Status.Conditions, cpv1.AvailableCondition),
			fmt.Sprintf("installState %q, initialized %v, %s", cp.Status.InstallState, cp.Status.Initialization.ControlPlaneInitialized, condition(cp.Status.Conditions, cpv1.AvailableCondition))
	})
	s.poll("CAPI: Cluster ControlPlaneAvailable and controlPlaneInitialized", short, func() (bool, string) {
		cl := &clusterv1.Cluster{}
		if err := s.get(cl, clusterName); err != nil {
			return false, err.Error()
		}
		return isTrue(cl.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition) && ptrTrue(cl.Status.Initialization.ControlPlaneInitialized),
			fmt.Sprintf("%s, initialization %+v", condition(cl.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition), cl.Status.Initialization)
	})
	if cp.Status.Version != cp.Spec.Version {
		t.Errorf("installed control plane: status.version %q, want spec.version %q", cp.Status.Version, cp.Spec.Version)
	}
	checkKubeconfigSecret(t, s, cp, env)

	// Day 2: the imported cluster, the held worker's data bound to it.
	s.poll("day-2 cluster imported; the held worker gets its data", long, func() (bool, string) {
		cp = s.cp()
		w := &clusterv1.Machine{}
		if err := s.get(w, worker.Name); err != nil {
			return false, err.Error()
		}
		cfg, err := s.config(w)
		if err != nil {
			return false, err.Error()
		}
		return cp.Status.Day2ClusterID != "" && w.Spec.Bootstrap.DataSecretName != nil && ptrTrue(cfg.Status.Initialization.DataSecretCreated),
			fmt.Sprintf("day2ClusterID %q, worker %s, dataSecretName %v", cp.Status.Day2ClusterID, condition(cfg.Status.Conditions, bootstrapv1.DataSecretAvailableCondition), w.Spec.Bootstrap.DataSecretName)
	})
	w := &clusterv1.Machine{}
	if err := s.get(w, worker.Name); err != nil {
		t.Fatal(err)
	}
	checkBootstrapData(t, s, w)
	wcfg, err = s.config(w)
	if err != nil {
		t.Fatal(err)
	}
	ie, err := s.svc.Client().GetInfraEnv(s.ctx, wcfg.Status.InfraEnvID)
	if err != nil {
		t.Fatal(err)
	}
	if ie.ClusterID != cp.Status.Day2ClusterID {
		t.Errorf("worker's infra-env %s: cluster_id %q, want the day-2 cluster %s", ie.ID, ie.ClusterID, cp.Status.Day2ClusterID)
	}
	list, err := s.svc.Client().ListClusters(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Errorf("the service holds %d clusters, want 2 (day 1, day 2)", len(list))
	}

	// Scale the workers down: the worker's host is deregistered and its
	// infra-env deleted. (A host registered straight through the API: no
	// agent runs for it.)
	workerHost := newUUID(t)
	if _, err := s.svc.AgentClient().RegisterHost(s.ctx, wcfg.Status.InfraEnvID, wire.HostCreateParams{HostID: workerHost}); err != nil {
		t.Fatal(err)
	}
	s.poll("day-2 worker host bound", short, func() (bool, string) {
		cfg, err := s.config(w)
		if err != nil {
			return false, err.Error()
		}
		return cfg.Status.HostID == workerHost, fmt.Sprintf("hostID %q, %s", cfg.Status.HostID, condition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition))
	})
	md := &clusterv1.MachineDeployment{}
	if err := s.get(md, "workers"); err != nil {
		t.Fatal(err)
	}
	origMD := md.DeepCopy()
	zero := int32(0)
	md.Spec.Replicas = &zero
	if err := s.c.Patch(s.ctx, md, client.MergeFrom(origMD)); err != nil {
		t.Fatal(err)
	}
	s.poll("workers scaled to 0: the Machine gone, its host deregistered, its infra-env deleted", long, func() (bool, string) {
		n := len(s.machines(workerMachines()))
		_, herr := s.svc.Client().GetHost(s.ctx, wcfg.Status.InfraEnvID, workerHost)
		_, ierr := s.svc.Client().GetInfraEnv(s.ctx, wcfg.Status.InfraEnvID)
		return n == 0 && wire.IsStatus(herr, 404) && wire.IsStatus(ierr, 404),
			fmt.Sprintf("%d worker Machines; host: %v; infra-env: %v", n, herr, ierr)
	})

	// Deletion leaves nothing.
	cl := &clusterv1.Cluster{}
	if err := s.get(cl, clusterName); err != nil {
		t.Fatal(err)
	}
	if err := s.c.Delete(s.ctx, cl); err != nil {
		t.Fatal(err)
	}
	s.poll("Cluster deleted: every Machine, the control plane and the Cluster gone", long, func() (bool, string) {
		if n := len(s.machines()); n > 0 {
			return false, fmt.Sprintf("%d Machines left", n)
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
	s.poll("service: both v2 clusters and every infra-env deleted", short, s.serviceEmpty)
	var secrets corev1.SecretList
	if err := s.c.List(s.ctx, &secrets, client.InNamespace(s.ns), client.HasLabels{clusterv1.ClusterNameLabel}); err != nil {
		t.Fatal(err)
	}
	for _, sec := range secrets.Items {
		t.Errorf("secret %s with the cluster-name label left after the Cluster's deletion (owners %v)", sec.Name, sec.OwnerReferences)
	}
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// checkKubeconfigSecret: the control-plane contract's kubeconfig secret,
// and that it opens the workload API.
func checkKubeconfigSecret(t *testing.T, s *scenario, cp *cpv1.NodezeroControlPlane, env *workload) {
	t.Helper()
	sec := &corev1.Secret{}
	if err := s.get(sec, clusterName+"-kubeconfig"); err != nil {
		t.Fatalf("kubeconfig secret: %v", err)
	}
	if sec.Type != clusterv1.ClusterSecretType || sec.Labels[clusterv1.ClusterNameLabel] != clusterName {
		t.Errorf("kubeconfig secret: type %q, labels %v; want %s and %s=%s", sec.Type, sec.Labels, clusterv1.ClusterSecretType, clusterv1.ClusterNameLabel, clusterName)
	}
	if ref := metav1.GetControllerOf(sec); ref == nil || ref.UID != cp.UID {
		t.Errorf("kubeconfig secret: controller reference %+v, want the control plane", ref)
	}
	cfg, err := kube.ParseKubeconfig(sec.Data["value"], "kubeconfig secret")
	if err != nil {
		t.Fatalf("kubeconfig secret value: %v", err)
	}
	if want := "https://" + net.JoinHostPort(env.addr.String(), "6443"); cfg.Server != want || cfg.TLSServerName != "api."+clusterName+".nodezero.test" {
		t.Errorf("kubeconfig server %q, tls-server-name %q; want %s (the Cluster's endpoint), api.%s.nodezero.test", cfg.Server, cfg.TLSServerName, want, clusterName)
	}
	c, err := kube.NewClient(cfg, kube.WithTimeout(15*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ready(s.ctx); err != nil {
		t.Errorf("the kubeconfig secret does not open the workload API: %v", err)
	}
}

// holdProgress holds the hosts' install progress reports (PUT
// .../progress) until release is closed: the v2 cluster stays installing
// for as long as a test needs, without a timing assumption.
type holdProgress struct {
	base    http.RoundTripper
	release chan struct{}
	held    atomic.Int32
}

func (h *holdProgress) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/progress") {
		select {
		case <-h.release:
		default:
			h.held.Add(1)
			select {
			case <-h.release:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
	}
	return h.base.RoundTrip(r)
}

// workload is a kube-apiserver playing the installed cluster: on its own
// 127.x address, serving api.c1.nodezero.test with the signers a service
// given tlsDir (--cluster-tls-dir) makes the cluster's kubeconfig with,
// and trusting its admin client certificate; ClusterVersion and the
// objects a day-2 import reads are seeded.
type workload struct {
	addr   netip.Addr
	tlsDir string
	api    *localapi.API
}

func workloadAPI(t *testing.T) *workload {
	t.Helper()
	tools, err := localapi.FindTools()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skipf("%v", err)
	}
	dir := t.TempDir()
	tls, err := credentials.NewTLS(nil, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	w := &workload{addr: randomLoopback(t), tlsDir: filepath.Join(dir, "tls")}
	if err := os.MkdirAll(w.tlsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for n, b := range tls.Files() {
		if err := os.WriteFile(filepath.Join(w.tlsDir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cert, key, err := tls.IssueAdminClient(nil, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	lb, adminCA := tls.Signers["kube-apiserver-lb-signer"], tls.Signers["admin-kubeconfig-signer"]
	domain := clusterName + ".nodezero.test"
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	began := time.Now()
	w.api, err = localapi.Start(ctx, localapi.Config{
		Dir: filepath.Join(dir, "api"), Addr: w.addr, Names: []string{"api." + domain, "api-int." + domain},
		ServingSignerCert: lb.CertPEM, ServingSignerKey: lb.KeyPEM, ClientCA: adminCA.CertPEM, AdminCert: cert, AdminKey: key,
		Cluster: localapi.Cluster{ID: newUUID(t), Version: "4.18.0", Image: "registry.example.com/ocp/release:4.18.0-x86_64",
			Name: clusterName, BaseDomain: "nodezero.test", Platform: "None", PullSecret: []byte(pullSecret)},
		Tools: tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.api.Close() })
	t.Logf("workload apiserver %s up in %s", w.api.URL, time.Since(began).Round(time.Millisecond))
	return w
}

// node creates a Ready control-plane Node named name in the workload
// cluster, as its kubelet would.
func (w *workload) node(t *testing.T, name string) {
	t.Helper()
	n := &kube.Node{Metadata: kube.ObjectMeta{Name: name, Labels: map[string]string{
		kube.LabelMasterRole: "", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name}}}
	n.Status.NodeInfo.Architecture = "amd64"
	n.Status.NodeInfo.OperatingSystem = "linux"
	n.SetCondition(kube.NodeCondition{Type: kube.NodeReadyCondition, Status: kube.True, Reason: "KubeletReady"})
	if _, err := w.api.Client().CreateNode(context.Background(), n); err != nil {
		t.Fatalf("workload Node %s: %v", name, err)
	}
}

// randomLoopback is a 127.x address no other test is likely to use
// (capi/test/e2e takes 127.100-199.x.y).
func randomLoopback(t *testing.T) netip.Addr {
	n := func(max int64) byte {
		v, err := rand.Int(rand.Reader, big.NewInt(max))
		if err != nil {
			t.Fatal(err)
		}
		return byte(v.Int64())
	}
	return netip.AddrFrom4([4]byte{127, 200 + n(50), 1 + n(250), 1 + n(250)})
}

func newUUID(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
