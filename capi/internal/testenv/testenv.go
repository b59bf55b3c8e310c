// Package testenv is the management cluster of the providers' tests: a real
// kube-apiserver and etcd (controller-runtime's envtest pointed at the
// binaries kube/localapi.FindTools finds in the tools cache; every listener
// on 127.0.0.1), the CRDs of Cluster API core, of nodezero's providers and
// of CAPI's Generic* test infrastructure, and one controller-runtime
// manager that runs CAPI core's Cluster, Machine, MachineSet and
// MachineDeployment reconcilers in-process plus whatever the test adds.
//
// Two ways in:
//
//   - Start(t, opts) runs one environment for one test and stops it when
//     the test ends (≈ 5–15 s of start on a loaded 2-core machine).
//   - Main(m, opts) in a package's TestMain and Shared(t) in its tests: the
//     environment starts on the first Shared call (a package whose selected
//     tests never call it pays nothing) and stops after m.Run. Tests that
//     share it keep to their own namespaces (Env.Namespace) and may run in
//     parallel.
//
// A test needing the binaries fails when CI=true and they are missing, and
// skips with the reason elsewhere.
//
// What envtest is not (each one was hit once; docs/capi.md, "What envtest
// is and is not"): there is no kube-controller-manager, so no garbage collector
// (ownerReferences never cascade) and no namespace finalizer (namespaces
// are never deleted here); there are no CAPI webhooks, so CAPI objects must
// be complete (a MachineDeployment needs spec.rollout.strategy and
// spec.deletion.order: see MachineDeploymentDefaults); the workload
// connection is retried every second, not every 30 s.
//
// It imports the main module's kube/localapi (tool paths) and the capi
// API packages; nothing of the reconcilers.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util/test/builder"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	controlplanev1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	infrav1 "github.com/nodezero/nodezero/capi/api/infrastructure/v1alpha1"
	"github.com/nodezero/nodezero/kube/localapi"
)

// Options shape an environment.
type Options struct {
	// Setup adds the caller's reconcilers (and field indexes) to the
	// manager before it starts. env.Manager, env.ClusterCache and
	// env.Scheme are set; ctx lives as long as the manager.
	Setup func(ctx context.Context, env *Env) error
	// NoCore leaves CAPI core's reconcilers out (tests of CRDs and schema
	// rules only need the apiserver; the manager still runs).
	NoCore bool
	// CRDDirs and CRDs are installed besides CAPI core's, nodezero's and
	// the Generic* test infrastructure's.
	CRDDirs []string
	CRDs    []*apiextensionsv1.CustomResourceDefinition
}

// Env is one running management cluster.
type Env struct {
	// Config is the apiserver's admin config (client certificate).
	Config *rest.Config
	// Client talks to the apiserver directly (no cache): what a test
	// reads is what the apiserver has.
	Client client.Client
	// Manager runs CAPI core and the caller's reconcilers.
	Manager ctrl.Manager
	// ClusterCache is CAPI's workload-cluster connection cache (nil with
	// NoCore).
	ClusterCache clustercache.ClusterCache
	Scheme       *runtime.Scheme
	// Dir holds the manager's log (manager.log) and the apiserver's and
	// etcd's output (kube-apiserver.log, etcd.log).
	Dir string
	// Started is how long the start took (apiserver, CRDs, manager
	// cache sync).
	Started time.Duration
	// Keep leaves Dir in place after Stop: set by Start and Main when a
	// test failed, and by NODEZERO_KEEP_TESTENV=1.
	Keep bool

	te      *envtest.Environment
	cancel  context.CancelFunc
	mgrDone chan error
	logFile *os.File
	outs    []*os.File
}

// Scheme is the scheme every environment's clients use: client-go's
// built-in types, apiextensions, CAPI core v1beta2 and nodezero's three API
// groups.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		clusterv1.AddToScheme,
		bootstrapv1.AddToScheme,
		controlplanev1.AddToScheme,
		infrav1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ErrNoTools is localapi.ErrNoTools: kube-apiserver or etcd is missing.
var ErrNoTools = localapi.ErrNoTools

// Start runs an environment for one test and stops it when the test ends.
// Without the binaries it fails under CI=true and skips elsewhere.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	env, err := New(opts)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			env.Keep = true
			t.Logf("testenv: the failed test's apiserver, etcd and manager logs are kept in %s", env.Dir)
		}
		if err := env.Stop(); err != nil {
			t.Logf("testenv: stop: %v", err)
		}
	})
	t.Logf("testenv: management API %s up in %s (logs in %s)", env.Config.Host, env.Started.Round(time.Millisecond), env.Dir)
	return env
}

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNoTools) && os.Getenv("CI") != "true" {
		t.Skipf("testenv: %v", err)
	}
	t.Fatalf("testenv: %v", err)
}

// New starts an environment; Stop ends it. Errors wrap ErrNoTools when a
// binary is missing.
func New(opts Options) (_ *Env, err error) {
	begin := time.Now()
	tools, err := localapi.FindTools()
	if err != nil {
		return nil, err
	}
	dirs, err := crdDirs()
	if err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nodezero-testenv-")
	if err != nil {
		return nil, err
	}
	env := &Env{Scheme: scheme, Dir: dir}
	defer func() {
		if err != nil {
			_ = env.Stop()
		}
	}()

	etcdURL, err := loopbackURL()
	if err != nil {
		return nil, err
	}
	peerURL, err := loopbackURL()
	if err != nil {
		return nil, err
	}
	etcd := &envtest.Etcd{Path: tools.Etcd, URL: etcdURL}
	// envtest's default peer address is "localhost:port"; pin it to
	// 127.0.0.1 like every other listener.
	etcd.Configure().Set("listen-peer-urls", peerURL.String())
	// Off by default in etcd 3.4, said anyway: no metrics listener.
	etcd.Configure().Set("listen-metrics-urls", "")
	api := &envtest.APIServer{Path: tools.APIServer}
	api.SecureServing.ListenAddr.Address = "127.0.0.1"
	api.Configure().Set("bind-address", "127.0.0.1")
	etcdLog, err := env.output("etcd.log")
	if err != nil {
		return nil, err
	}
	etcd.Out, etcd.Err = etcdLog, etcdLog
	apiLog, err := env.output("kube-apiserver.log")
	if err != nil {
		return nil, err
	}
	api.Out, api.Err = apiLog, apiLog

	crds := []*apiextensionsv1.CustomResourceDefinition{
		builder.GenericInfrastructureClusterCRD.DeepCopy(),
		builder.GenericInfrastructureClusterTemplateCRD.DeepCopy(),
		builder.GenericInfrastructureMachineCRD.DeepCopy(),
		builder.GenericInfrastructureMachineTemplateCRD.DeepCopy(),
		builder.GenericBootstrapConfigCRD.DeepCopy(),
		builder.GenericBootstrapConfigTemplateCRD.DeepCopy(),
		builder.GenericControlPlaneCRD.DeepCopy(),
		builder.GenericControlPlaneTemplateCRD.DeepCopy(),
	}
	crds = append(crds, opts.CRDs...)
	env.te = &envtest.Environment{
		ControlPlane:             envtest.ControlPlane{APIServer: api, Etcd: etcd},
		Scheme:                   scheme,
		CRDDirectoryPaths:        append(dirs, opts.CRDDirs...),
		CRDs:                     crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		// The apiserver often outlives SIGTERM by more than 20 s under
		// envtest (not root-caused; docs/capi.md, "What envtest is and
		// is not"): it is throwaway, so it is killed after 5 s.
		ControlPlaneStopTimeout: 5 * time.Second,
	}
	env.Config, err = env.te.Start()
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver and etcd: %w", err)
	}
	env.Client, err = client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	if err := env.startManager(opts); err != nil {
		return nil, err
	}
	env.Started = time.Since(begin)
	return env, nil
}

// startManager makes the manager, adds CAPI core and the caller's
// reconcilers, starts it and waits for its caches.
func (env *Env) startManager(opts Options) error {
	f, err := os.Create(filepath.Join(env.Dir, "manager.log"))
	if err != nil {
		return err
	}
	env.logFile = f
	logger := logr.FromSlogHandler(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// controller-runtime wants one global logger; every environment of
	// the process writes through the first one's handler otherwise, so
	// each sets its own (tests in one package share one environment).
	log.SetLogger(logger)

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme,
		Logger: logger,
		// No listener beyond the apiserver's: metrics and probes off; the
		// webhook server (started only if something registers a webhook)
		// would bind 127.0.0.1.
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		PprofBindAddress:       "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: 0}),
		Client:                 managerClientOptions(),
		GracefulShutdownTimeout: func() *time.Duration {
			d := 30 * time.Second
			return &d
		}(),
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	env.Manager = mgr
	ctx, cancel := context.WithCancel(context.Background())
	env.cancel = cancel
	if !opts.NoCore {
		if err := env.setupCore(ctx); err != nil {
			return err
		}
	}
	if opts.Setup != nil {
		if err := opts.Setup(ctx, env); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
	}
	env.mgrDone = make(chan error, 1)
	go func() { env.mgrDone <- mgr.Start(ctx) }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		select {
		case err := <-env.mgrDone:
			env.mgrDone <- err
			return fmt.Errorf("manager stopped before its caches synced: %w", err)
		default:
			return errors.New("manager caches did not sync within 2m")
		}
	}
	return nil
}

// Stop stops the manager, then the apiserver and etcd, and removes Dir
// (unless Keep, or NODEZERO_KEEP_TESTENV is set). The apiserver killed after
// its stop timeout is reported, not failed on.
func (env *Env) Stop() error {
	var errs []error
	if env.cancel != nil {
		env.cancel()
		if env.mgrDone != nil {
			select {
			case err := <-env.mgrDone:
				if err != nil {
					errs = append(errs, fmt.Errorf("manager: %w", err))
				}
			case <-time.After(45 * time.Second):
				errs = append(errs, errors.New("manager did not stop within 45s"))
			}
		}
	}
	if env.ClusterCache != nil {
		if s, ok := env.ClusterCache.(interface{ Shutdown() }); ok {
			s.Shutdown()
		}
	}
	if env.te != nil {
		if err := env.te.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	if env.logFile != nil {
		env.logFile.Close()
	}
	for _, f := range env.outs {
		f.Close()
	}
	if !env.Keep && os.Getenv("NODEZERO_KEEP_TESTENV") == "" && env.Dir != "" {
		os.RemoveAll(env.Dir)
	}
	return errors.Join(errs...)
}

// Kubeconfig is a kubeconfig for the apiserver with the admin's client
// certificate: the value of a `<cluster>-kubeconfig` secret when the
// management cluster plays the workload cluster too.
func (env *Env) Kubeconfig() []byte { return env.te.KubeConfig }

// Namespace creates a namespace of its own for a test (generated name
// from the test's) and returns its name. It is never deleted: envtest has
// no namespace finalizer.
func (env *Env) Namespace(t testing.TB) string {
	t.Helper()
	prefix := strings.ToLower(t.Name())
	prefix = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, prefix)
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.Trim(prefix, "-") + "-"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// crdDirs are CAPI core's CRDs (core/config/crd/bases of the
// sigs.k8s.io/cluster-api module the capi module requires) and nodezero's
// (capi/config/crd/bases), found with `go list -m`.
func crdDirs() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/nodezero/nodezero/capi", "sigs.k8s.io/cluster-api")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("find the CRDs: go list -m: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return nil, fmt.Errorf("find the CRDs: go list -m printed %q", out)
	}
	dirs := []string{
		filepath.Join(lines[1], "core", "config", "crd", "bases"),
		filepath.Join(lines[0], "config", "crd", "bases"),
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("find the CRDs: %w", err)
		}
	}
	return dirs, nil
}

// loopbackURL is http://127.0.0.1:<a free port>.
func loopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, nil
}

// output is a log file in Dir for a child process.
func (env *Env) output(name string) (*os.File, error) {
	f, err := os.Create(filepath.Join(env.Dir, name))
	if err != nil {
		return nil, err
	}
	env.outs = append(env.outs, f)
	return f, nil
}

// shared is the package-wide environment of Main and Shared.
var shared struct {
	mu   sync.Mutex
	opts Options
	main bool
	env  *Env
	err  error
}

// Main runs a package's tests with one environment shared by every test
// that calls Shared, started on the first such call and stopped after the
// tests. Use it as `func TestMain(m *testing.M) { os.Exit(testenv.Main(m, opts)) }`.
func Main(m *testing.M, opts Options) int {
	shared.mu.Lock()
	shared.opts, shared.main = opts, true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.env != nil {
		if code != 0 {
			shared.env.Keep = true
			fmt.Fprintf(os.Stderr, "testenv: tests failed: the apiserver, etcd and manager logs are kept in %s\n", shared.env.Dir)
		}
		if err := shared.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		}
		shared.env = nil
	}
	return code
}

// Shared is the package's environment (see Main), started on first use.
// Without the binaries it fails under CI=true and skips elsewhere; a
// failed start fails every test that asks.
func Shared(t testing.TB) *Env {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		t.Fatal("testenv.Shared needs testenv.Main in the package's TestMain")
	}
	if shared.env == nil && shared.err == nil {
		shared.env, shared.err = New(shared.opts)
		if shared.err == nil {
			t.Logf("testenv: shared management API %s up in %s (logs in %s)", shared.env.Config.Host, shared.env.Started.Round(time.Millisecond), shared.env.Dir)
		}
	}
	if shared.err != nil {
		skipOrFail(t, shared.err)
	}
	return shared.env
}
