package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
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
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with this PEM certificate (chain); needs --tls-key (default: HTTP)")
	tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert")
	connsPerClient := fs.Int("conns-per-client", defaultLimits.ConnsPerClient, "the most connections one client IP address may hold open (0: no cap; raise it when many hosts reach node zero through one NAT address)")
	pprofAddr := fs.String("pprof", "", "serve Go's net/http/pprof profiles on this address, e.g. 127.0.0.1:6060 (off by default; for load tests)")
	payload := fs.String("payload", "", "a factory image's payload directory: the install step names the release images its payload.json lists (the image flags below override them)")
	var images assisted.InstallImages
	fs.StringVar(&images.Installer, "installer-image", "", "the assisted-installer image the install step names (default: the payload's, else "+assisted.DefaultImages().Installer+")")
	fs.StringVar(&images.Controller, "controller-image", "", "the assisted-installer controller image (default: the payload's, else "+assisted.DefaultImages().Controller+")")
	fs.StringVar(&images.MCO, "mco-image", "", "the release's machine-config-operator image (default: the payload's, else none)")
	fs.StringVar(&images.MustGather, "must-gather-image", "", "the release's must-gather image (default: the payload's, else none)")
	fs.StringVar(&images.Agent, "agent-image", "", "the agent image next_step_runner_command names (default: the payload's, else the agent's own version)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *payload != "" {
		from, err := payloadImages(*payload)
		if err != nil {
			return fmt.Errorf("--payload: %w", err)
		}
		images = overrideImages(from, images)
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
	if *connsPerClient < 0 {
		return fmt.Errorf("--conns-per-client %d: want 0 (no cap) or more", *connsPerClient)
	}
	limits := serviceLimits{ConnsPerClient: *connsPerClient}
	if *connsPerClient == 0 {
		limits.ConnsPerClient = -1 // no cap (zero would mean the default)
	}
	return serve(ctx, serviceConfig{
		Dir: *dir, Listen: *listen, PublicKeyPEM: pem, HostConfigs: hostConfigs, Logger: log, Limits: limits,
		MonitorInterval: *monitor, DisconnectionTimeout: *disconnect, EvaluationDelay: *evalDelay,
		TLSCertFile: *tlsCert, TLSKeyFile: *tlsKey, Images: images,
		Listening: func(addr net.Addr) {
			scheme := "http"
			if *tlsCert != "" {
				scheme = "https"
			}
			fmt.Fprintf(stdout, "nodezero service: listening on %s://%s%s\n", scheme, addr, api.Base)
		},
	})
}

// overrideImages is base with every image set in over replacing its own.
func overrideImages(base, over assisted.InstallImages) assisted.InstallImages {
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&base.Installer, over.Installer}, {&base.Controller, over.Controller}, {&base.MCO, over.MCO},
		{&base.MustGather, over.MustGather}, {&base.Agent, over.Agent},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return base
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
	ClusterTLSDir        string         // the config image's /opt/agent/tls ("": install files mint their credentials)
	BootstrapMAC         string         // node zero's MAC: its host is the bootstrap host
	Limits               serviceLimits  // zero fields: defaultLimits'
	// Images are the release images the install step names (the payload's);
	// zero fields: assisted-service's defaults, or left out.
	Images assisted.InstallImages
	// TLSCertFile and TLSKeyFile, when set, make the API serve HTTPS with
	// this PEM certificate (chain) and key; empty, it serves HTTP as ABI's
	// assisted-service does.
	TLSCertFile, TLSKeyFile string
}

// serve runs the embedded assisted service and its API until ctx ends.
func serve(ctx context.Context, cfg serviceConfig) error {
	log := cfg.Logger
	key, err := auth.ParsePublicKey(cfg.PublicKeyPEM)
	if err != nil {
		return err
	}
	lim, err := cfg.Limits.withDefaults()
	if err != nil {
		return err
	}
	var tlsConf *tls.Config
	if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
		if tlsConf, err = serverTLS(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return err
		}
	}
	st, err := store.Open(ctx, filepath.Join(cfg.Dir, "nodezero.db"), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := assisted.New(assisted.Config{
		Store: st, Logger: log.With("subsystem", "assisted"),
		MonitorInterval: cfg.MonitorInterval, DisconnectionTimeout: cfg.DisconnectionTimeout, EvaluationDelay: cfg.EvaluationDelay,
		StepInterval: cfg.StepInterval, HostConfigs: cfg.HostConfigs, MaxWait: lim.MaxWait,
		Installer: cfg.Installer, ClusterTLSDir: cfg.ClusterTLSDir, WorkDir: cfg.Dir, BootstrapMAC: cfg.BootstrapMAC, Images: cfg.Images,
	})
	if err != nil {
		return err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	ln = newClientLimiter(ln, lim.ConnsPerClient, lim.LimitLoopback, log.With("subsystem", "api"))
	srv := &http.Server{
		Handler:           api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(key, nil), Logger: log.With("subsystem", "api"), LogsDir: filepath.Join(cfg.Dir, "logs")}),
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		// HTTP/1.1 only, with TLS too: every limit here is per connection,
		// one request at a time, as ABI's agents speak it. HTTP/2 would
		// need its own (streams per connection, frame and window sizes).
		Protocols: http1Only(),
		TLSConfig: tlsConf,
		// Requests end with the daemon: a held ?wait= returns at once.
		BaseContext: func(net.Listener) context.Context { return ctx },
		// Clients that hang up or fail their TLS handshake: debug level.
		ErrorLog: slog.NewLogLogger(log.With("subsystem", "api").Handler(), slog.LevelDebug),
	}
	if cfg.Listening != nil {
		cfg.Listening(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() {
		if tlsConf != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
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

// serviceLimits bound what one client can hold of the service: how long
// each phase of a connection may take, how large the headers may be and
// how many connections one address may keep open. Request bodies are
// bounded per operation by daemon/api (limits.go).
type serviceLimits struct {
	// ReadHeaderTimeout bounds a TLS handshake, the request line and the
	// headers: a client trickling them (slowloris) is cut off here.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds a whole request with its body. A log upload
	// extends its own (daemon/api transferTimeout).
	ReadTimeout time.Duration
	// WriteTimeout runs from the end of the headers to the end of the
	// answer, so it must exceed MaxWait: a long-poll is held that long
	// before its answer is written. A download extends its own.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request. The
	// agent's own transport lets go of an idle one after 90 s, before this.
	IdleTimeout time.Duration
	// MaxWait caps an agent's ?wait= (assisted.Config.MaxWait).
	MaxWait        time.Duration
	MaxHeaderBytes int
	// ConnsPerClient caps the open connections from one IP address; a
	// connection over it is closed at once. A host needs a few (the
	// agent's long-poll, its step replies, a log upload); each costs the
	// service a goroutine and its buffers, and one host on the network
	// must not be able to hold the memory of the others. Loopback clients
	// are processes on node zero itself (the console, its own agent, a
	// load test's thousand simulated agents) and are not counted unless
	// LimitLoopback (tests).
	ConnsPerClient int
	LimitLoopback  bool
}

// defaultLimits are node zero's; the write timeout is MaxWait + 30 s.
// Bodies: daemon/api/limits.go.
var defaultLimits = serviceLimits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxWait:           60 * time.Second,
	MaxHeaderBytes:    64 << 10,
	ConnsPerClient:    64,
}

// withDefaults fills the zero fields from defaultLimits and checks that a
// long-poll fits in the write timeout.
func (l serviceLimits) withDefaults() (serviceLimits, error) {
	d := defaultLimits
	set := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	set(&l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	set(&l.ReadTimeout, d.ReadTimeout)
	set(&l.IdleTimeout, d.IdleTimeout)
	set(&l.MaxWait, d.MaxWait)
	if l.WriteTimeout == 0 {
		l.WriteTimeout = l.MaxWait + 30*time.Second
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.ConnsPerClient == 0 {
		l.ConnsPerClient = d.ConnsPerClient
	}
	if l.WriteTimeout <= l.MaxWait {
		return l, fmt.Errorf("service limits: write timeout %s must exceed the longest ?wait= %s, or long-polls are cut off", l.WriteTimeout, l.MaxWait)
	}
	return l, nil
}

// clientLimiter is a listener that keeps at most limit connections open
// per client IP address (serviceLimits.ConnsPerClient).
type clientLimiter struct {
	net.Listener
	limit         int
	countLoopback bool
	log           *slog.Logger

	mu       sync.Mutex
	open     map[netip.Addr]int
	refused  int       // since the last warning
	warnedAt time.Time // warnings at most once a minute
}

func newClientLimiter(ln net.Listener, limit int, countLoopback bool, log *slog.Logger) net.Listener {
	if limit <= 0 {
		return ln
	}
	return &clientLimiter{Listener: ln, limit: limit, countLoopback: countLoopback, log: log, open: map[netip.Addr]int{}}
}

// Accept returns the next connection within its client's limit; those
// over it are closed here, unseen by the server.
func (l *clientLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
		if err != nil {
			return c, nil // not TCP: nothing to count by
		}
		ip := ap.Addr().Unmap()
		if ip.IsLoopback() && !l.countLoopback {
			return c, nil
		}
		if l.take(ip) {
			return &countedConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		_ = c.Close()
	}
}

func (l *clientLimiter) take(ip netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] < l.limit {
		l.open[ip]++
		return true
	}
	l.refused++
	if now := time.Now(); now.Sub(l.warnedAt) >= time.Minute {
		l.log.Warn("connections refused: a client is over its limit of open connections",
			"client", ip.String(), "limit", l.limit, "refused", l.refused)
		l.warnedAt, l.refused = now, 0
	}
	return false
}

func (l *clientLimiter) release(ip netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip]--; l.open[ip] <= 0 {
		delete(l.open, ip)
	}
}

// countedConn gives its slot back once, on its first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// serverTLS loads the API's certificate and key. TLS 1.2 is the oldest
// version served: RHCOS and every client nodezero ships speak 1.3.
func serverTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("api tls: give both a certificate and a key (got certificate %q, key %q)", certFile, keyFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("api tls: %s, %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

func http1Only() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	return &p
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
