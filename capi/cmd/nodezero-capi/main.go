// Command nodezero-capi is nodezero's Cluster API manager: the bootstrap
// provider (NodezeroConfig) and the control-plane provider
// (NodezeroControlPlane) in one controller-runtime manager. They speak to
// a `nodezero service` through its v2 REST API only.
//
// Flags: --controllers (bootstrap,controlplane by default),
// --metrics-bind-address ("0", off, by default), --health-probe-bind-address
// (127.0.0.1:8081 by default), --leader-elect, --namespace (watch one
// namespace only), --kubeconfig (controller-runtime's: else in-cluster
// config, else ~/.kube/config). A listener on every interface (":8080",
// "0.0.0.0:...") is refused: name the address to bind.
//
// main only parses flags and calls run; os.Exit lives here.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/capi/internal/controllers/bootstrap"
	"github.com/nodezero/nodezero/capi/internal/controllers/controlplane"
)

// Controller names for --controllers.
const (
	ControllerBootstrap    = "bootstrap"
	ControllerControlPlane = "controlplane"
)

// options are the parsed flags.
type options struct {
	controllers      []string
	metricsAddr      string
	probeAddr        string
	leaderElect      bool
	leaderElectionNS string
	namespace        string
	verbose          bool
}

func main() {
	o, err := parseFlags(flag.CommandLine, os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodezero-capi:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "nodezero-capi:", err)
		stop()
		os.Exit(1)
	}
}

// parseFlags reads args into options. fs is flag.CommandLine in main, so
// that controller-runtime's --kubeconfig is among the flags.
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer) (options, error) {
	var o options
	var controllers string
	fs.SetOutput(out)
	fs.StringVar(&controllers, "controllers", ControllerBootstrap+","+ControllerControlPlane, "the controllers to run, comma-separated: bootstrap, controlplane")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", `the metrics endpoint's address, e.g. 127.0.0.1:8080; "0" turns it off`)
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", "127.0.0.1:8081", `the health probes' address (/healthz, /readyz); "0" turns them off`)
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "elect a leader, so that only one replica reconciles")
	fs.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "where the leader election lease lives (default: the pod's namespace)")
	fs.StringVar(&o.namespace, "namespace", "", "watch and reconcile this namespace only (default: all)")
	fs.BoolVar(&o.verbose, "v", false, "log debug messages")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for c := range strings.SplitSeq(controllers, ",") {
		c = strings.TrimSpace(c)
		switch c {
		case "":
			continue
		case ControllerBootstrap, ControllerControlPlane:
			if !slices.Contains(o.controllers, c) {
				o.controllers = append(o.controllers, c)
			}
		default:
			return o, fmt.Errorf("--controllers: %q is not one of %s, %s", c, ControllerBootstrap, ControllerControlPlane)
		}
	}
	if len(o.controllers) == 0 {
		return o, errors.New("--controllers: name at least one controller")
	}
	for _, f := range []struct{ name, addr string }{{"--metrics-bind-address", o.metricsAddr}, {"--health-probe-bind-address", o.probeAddr}} {
		if err := checkBindAddress(f.addr); err != nil {
			return o, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return o, nil
}

// checkBindAddress refuses a listener on every interface: "0" (off) or a
// host:port naming one address.
func checkBindAddress(addr string) error {
	if addr == "0" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port or 0", addr)
	}
	if port == "" {
		return fmt.Errorf("%q has no port", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("%q listens on every interface: name one address (127.0.0.1:%s, or the pod's)", addr, port)
	}
	return nil
}

// Scheme is the manager's: core, CAPI v1beta2, nodezero's providers.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme, cpv1.AddToScheme, bootstrapv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// run builds the manager with the chosen controllers and runs it until
// ctx ends.
func run(ctx context.Context, o options) error {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	log := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctrl.SetLogger(log)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	mo := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "nodezero-capi.cluster.x-k8s.io",
		LeaderElectionNamespace: o.leaderElectionNS,
	}
	if o.namespace != "" {
		mo.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{o.namespace: {}}}
	}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	for _, c := range o.controllers {
		var err error
		switch c {
		case ControllerBootstrap:
			err = (&bootstrap.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr)
		case ControllerControlPlane:
			err = (&controlplane.Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr)
		}
		if err != nil {
			return fmt.Errorf("controller %s: %w", c, err)
		}
	}
	if o.probeAddr != "0" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
			return err
		}
	}
	log.Info("starting", "controllers", strings.Join(o.controllers, ","), "namespace", o.namespace, "leaderElect", o.leaderElect)
	return mgr.Start(ctx)
}
