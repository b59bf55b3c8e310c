package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// The API's HTTP server: the handler behind per-connection limits, a
// per-client connection cap (listener.go) and optional TLS, served until
// its context ends. `nodezero service` and node zero's runtime both serve
// the API through Serve.

// Limits bound what one client can hold of the service: how long each
// phase of a connection may take, how large the headers may be and how
// many connections one address may keep open. Request bodies are bounded
// per operation by the handler (limits.go).
type Limits struct {
	// ReadHeaderTimeout bounds a TLS handshake, the request line and the
	// headers: a client trickling them (slowloris) is cut off here.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds a whole request with its body. A log upload
	// extends its own (transferTimeout).
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
	// LimitLoopback (tests). Negative: no cap.
	ConnsPerClient int
	LimitLoopback  bool
}

// DefaultLimits are node zero's; the write timeout is MaxWait + 30 s.
// Bodies: limits.go.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	IdleTimeout:       120 * time.Second,
	MaxWait:           60 * time.Second,
	MaxHeaderBytes:    64 << 10,
	ConnsPerClient:    64,
}

// WithDefaults fills the zero fields from DefaultLimits and checks that a
// long-poll fits in the write timeout.
func (l Limits) WithDefaults() (Limits, error) {
	d := DefaultLimits
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

// ServerTLS loads the API's certificate and key. TLS 1.2 is the oldest
// version served: RHCOS and every client nodezero ships speak 1.3.
func ServerTLS(certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("api tls: give both a certificate and a key (got certificate %q, key %q)", certFile, keyFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("api tls: %s, %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// ServerConfig is what Serve needs besides the listener.
type ServerConfig struct {
	Handler http.Handler
	// Limits are applied as they are: give them through WithDefaults.
	Limits Limits
	// TLS, when set, makes the server speak HTTPS (ServerTLS); nil: HTTP,
	// as ABI's assisted-service does.
	TLS *tls.Config
	// Logger gets the limiter's warnings and, at debug level, the
	// server's own errors (clients that hang up or fail their handshake).
	Logger *slog.Logger
}

// Serve serves cfg.Handler on ln until ctx ends, then shuts down,
// giving requests in flight 5 seconds. Requests end with ctx: a held
// ?wait= returns at once.
func Serve(ctx context.Context, ln net.Listener, cfg ServerConfig) error {
	lim, log := cfg.Limits, cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln = LimitConnsPerClient(ln, lim.ConnsPerClient, lim.LimitLoopback, log)
	srv := &http.Server{
		Handler:           cfg.Handler,
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    lim.MaxHeaderBytes,
		// HTTP/1.1 only, with TLS too: every limit here is per connection,
		// one request at a time, as ABI's agents speak it. HTTP/2 would
		// need its own (streams per connection, frame and window sizes).
		Protocols: http1Only(),
		TLSConfig: cfg.TLS,
		// Requests end with the daemon: a held ?wait= returns at once.
		BaseContext: func(net.Listener) context.Context { return ctx },
		// Clients that hang up or fail their TLS handshake: debug level.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.TLS != nil {
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

func http1Only() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	return &p
}

// ServePprof serves Go's profiling endpoints on their own listener, so
// the API's mux never exposes them. stop closes it.
func ServePprof(addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
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
