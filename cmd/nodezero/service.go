package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/store"
)

func runService(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "/var/lib/nodezero", "data directory: the SQLite file and auth/")
	listen := fs.String("listen", ":8090", "address to serve the v2 API on")
	publicKey := fs.String("public-key", "", "PEM (or base64 of PEM) P-256 public key file to verify tokens with; default: DIR/auth/public-key.pem, made with tokens when missing")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	monitor := fs.Duration("monitor-interval", 5*time.Second, "how often time-based rules (disconnection, timeouts) are checked")
	disconnect := fs.Duration("disconnection-timeout", 3*time.Minute, "a host that has not checked in for this long is disconnected")
	evalDelay := fs.Duration("evaluation-delay", 5*time.Millisecond, "window in which agents' changes share one cluster-wide evaluation (0: evaluate within each request)")
	hostConfigDir := fs.String("host-config-dir", "", "the config image's host configs (/etc/assisted/hostconfig on node zero): the installation disk follows their root device hints and the service validates them (off when empty)")
	pprofAddr := fs.String("pprof", "", "serve Go's net/http/pprof profiles on this address, e.g. 127.0.0.1:6060 (off by default; for load tests)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	tuneMemory()
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	var pem []byte
	if *publicKey != "" {
		if pem, err = os.ReadFile(*publicKey); err != nil {
			return fmt.Errorf("--public-key: %w", err)
		}
	} else if env := os.Getenv("EC_PUBLIC_KEY_PEM"); env != "" {
		pem = []byte(env)
	} else {
		authDir := filepath.Join(*dir, "auth")
		m, created, err := auth.LoadOrCreate(authDir)
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(stdout, "nodezero service: made a key pair and tokens in %s (agent.token, user.token, watcher.token, public-key.pem)\n", authDir)
		}
		pem = m.PublicKeyPEM
	}
	var hostConfigs []manifests.HostConfig
	if *hostConfigDir != "" {
		if hostConfigs, err = manifests.LoadHostConfigs(*hostConfigDir); err != nil {
			return fmt.Errorf("--host-config-dir: %w", err)
		}
		if hostConfigs == nil {
			hostConfigs = []manifests.HostConfig{} // configured, but none: still validated
		}
	}
	if *pprofAddr != "" {
		stop, err := servePprof(*pprofAddr)
		if err != nil {
			return err
		}
		defer stop()
	}
	return serve(ctx, serviceConfig{
		Dir: *dir, Listen: *listen, PublicKeyPEM: pem, HostConfigs: hostConfigs, Logger: log,
		MonitorInterval: *monitor, DisconnectionTimeout: *disconnect, EvaluationDelay: *evalDelay,
		Listening: func(addr net.Addr) {
			fmt.Fprintf(stdout, "nodezero service: listening on http://%s%s\n", addr, api.Base)
		},
	})
}

// serviceConfig is what serve needs: `nodezero service` fills it from
// flags, `nodezero run` from the host's config image.
type serviceConfig struct {
	Dir                  string // the SQLite file lives here
	Listen               string
	PublicKeyPEM         []byte // PEM or base64 of PEM
	HostConfigs          []manifests.HostConfig
	Logger               *slog.Logger
	MonitorInterval      time.Duration
	DisconnectionTimeout time.Duration
	EvaluationDelay      time.Duration
	StepInterval         time.Duration  // how often repeating steps (inventory, host checks) are handed out; 0: 60 s
	Listening            func(net.Addr) // called once the API accepts connections; may be nil
	Installer            string         // the payload's openshift-install ("": the built-in Ignition generator)
	BootstrapMAC         string         // node zero's MAC: its host is the bootstrap host
}

// serve runs the embedded assisted service and its API until ctx ends.
func serve(ctx context.Context, cfg serviceConfig) error {
	log := cfg.Logger
	key, err := auth.ParsePublicKey(cfg.PublicKeyPEM)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, filepath.Join(cfg.Dir, "nodezero.db"), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := assisted.New(assisted.Config{
		Store: st, Logger: log.With("subsystem", "assisted"),
		MonitorInterval: cfg.MonitorInterval, DisconnectionTimeout: cfg.DisconnectionTimeout, EvaluationDelay: cfg.EvaluationDelay,
		StepInterval: cfg.StepInterval, HostConfigs: cfg.HostConfigs,
		Installer: cfg.Installer, WorkDir: cfg.Dir, BootstrapMAC: cfg.BootstrapMAC,
	})
	if err != nil {
		return err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(key, nil), Logger: log.With("subsystem", "api"), LogsDir: filepath.Join(cfg.Dir, "logs")}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      90 * time.Second, // above the longest ?wait=
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		// Requests end with the daemon: a held ?wait= returns at once.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	if cfg.Listening != nil {
		cfg.Listening(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// servePprof serves the profiling endpoints on their own listener, so the
// API's mux never exposes them. stop closes it.
func servePprof(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }() // ends when stop closes the server
	return func() { _ = srv.Close() }, nil
}

// tuneMemory keeps node zero small. The service's live heap is mostly
// per-host state and per-connection buffers (a thousand agents hold a
// thousand long polls); Go's default GOGC=100 lets the heap grow to twice
// that before collecting. A GC target of 50 % and a soft limit of 96 MiB keep
// a 1,000-host install under 100 MiB at the price of more frequent, short
// collections while hosts register. GOGC and GOMEMLIMIT in the environment
// win, as they always do.
func tuneMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(96 << 20)
	}
}
