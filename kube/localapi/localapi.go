package localapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nodezero/nodezero/kube"
)

// Config is what Start needs.
type Config struct {
	// Dir holds etcd's data, the certificates made here and both logs.
	Dir string
	// Addr is the one address every listener binds: a 127.x address of
	// the caller's (the sandbox's API VIP). The API listens on Port,
	// etcd's client and peer URLs on 2379 and 2380.
	Addr netip.Addr
	Port int // 6443 when 0
	// Names are the serving certificate's DNS names (api.<cluster>.<domain>,
	// api-int.…); Addr is always in it too.
	Names []string
	// ServingSignerCert and ServingSignerKey sign the serving certificate
	// (the config image's kube-apiserver-lb-signer), PEM.
	ServingSignerCert, ServingSignerKey []byte
	// ClientCA is the PEM bundle a client certificate must chain to (the
	// admin-kubeconfig-signer).
	ClientCA []byte
	// AdminCert and AdminKey are a client certificate ClientCA trusts, in
	// system:masters, for the API's own setup (CRDs, the first objects).
	AdminCert, AdminKey []byte
	// ServiceNetwork is the service CIDR (172.30.0.0/16 when empty); it is
	// an allocation range only, nothing is routed.
	ServiceNetwork string
	// Cluster describes the ClusterVersion to create.
	Cluster Cluster
	// Operators are the ClusterOperators to create (DefaultOperators when
	// nil).
	Operators []string
	Tools     Tools
	// StartTimeout bounds each process's way to ready (2 min when 0: the
	// machine may be loaded); StopTimeout is how long Close waits after
	// SIGTERM before SIGKILL (5 s when 0).
	StartTimeout, StopTimeout time.Duration
	Log                       *slog.Logger
}

// Cluster is what the ClusterVersion says at the start (the cluster's id
// and the release it is installing) and what the other seeded objects
// carry.
type Cluster struct {
	ID, Version, Image string
	// Name and BaseDomain make Infrastructure cluster's API URLs
	// (https://api.<Name>.<BaseDomain>:6443, api-int); when empty they
	// come from the first api.<cluster>.<domain> in Config.Names.
	Name, BaseDomain string
	// Platform is Infrastructure cluster's platform type (None when
	// empty).
	Platform string
	// PullSecret is openshift-config/pull-secret's .dockerconfigjson; no
	// secret when empty.
	PullSecret []byte
	// WorkerIgnitionURL is the worker pool's machine config server
	// (https://api-int.<cluster>.<domain>:22623/config/worker) and
	// WorkerIgnitionCA its CA (PEM): openshift-machine-api/
	// worker-user-data-managed holds a pointer Ignition to them. No
	// secret when the URL is empty.
	WorkerIgnitionURL string
	WorkerIgnitionCA  []byte
}

// DefaultOperators are the cluster operators the local API creates: a short
// list, named as OpenShift's.
var DefaultOperators = []string{
	"authentication", "console", "dns", "etcd", "ingress", "kube-apiserver",
	"kube-controller-manager", "kube-scheduler", "machine-config", "monitoring",
	"network", "openshift-apiserver",
}

// API is a running local API. Close stops it; so does the end of the
// context given to Start.
type API struct {
	// URL is https://<Addr>:<Port>.
	URL string
	// CAFile is the serving signer's certificate, for clients.
	CAFile                string
	EtcdLog, APIServerLog string

	client      *kube.Client
	etcd, kas   *proc
	stopTimeout time.Duration
	log         *slog.Logger
	done        chan struct{} // closed when a process ends or Close is called
	doneOnce    sync.Once
	closeOnce   sync.Once
	watchers    sync.WaitGroup
}

// Start runs etcd and kube-apiserver, waits until the API is ready,
// installs the CRDs, seeds what adding nodes reads (namespaces,
// Infrastructure, the pull secret, the worker pool's pointer Ignition) and
// creates the ClusterVersion and ClusterOperators (in the Progressing
// state; existing objects are left as they are).
func Start(ctx context.Context, cfg Config) (a *API, err error) {
	if !cfg.Addr.Is4() || !cfg.Addr.IsLoopback() {
		return nil, fmt.Errorf("local api: address %v: want a 127.x address", cfg.Addr)
	}
	if cfg.Tools.APIServer == "" || cfg.Tools.Etcd == "" {
		return nil, fmt.Errorf("%w: local api: kube-apiserver %q, etcd %q", ErrNoTools, cfg.Tools.APIServer, cfg.Tools.Etcd)
	}
	if cfg.Port == 0 {
		cfg.Port = 6443
	}
	if cfg.ServiceNetwork == "" {
		cfg.ServiceNetwork = "172.30.0.0/16"
	}
	if cfg.Operators == nil {
		cfg.Operators = DefaultOperators
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 5 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	log := cfg.Log.With("subsystem", "localapi")
	pki := filepath.Join(cfg.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	chain, key, err := servingCert(cfg.ServingSignerCert, cfg.ServingSignerKey, cfg.Names, cfg.Addr, time.Now())
	if err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	saKey, err := serviceAccountKey()
	if err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	files := map[string][]byte{"serving.crt": chain, "serving.key": key, "client-ca.crt": cfg.ClientCA, "serving-ca.crt": cfg.ServingSignerCert, "service-account.key": saKey}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(pki, name), b, 0o600); err != nil {
			return nil, fmt.Errorf("local api: %w", err)
		}
	}

	host := cfg.Addr.String()
	etcdURL := "http://" + net.JoinHostPort(host, "2379")
	peerURL := "http://" + net.JoinHostPort(host, "2380")
	a = &API{
		URL:          "https://" + net.JoinHostPort(host, strconv.Itoa(cfg.Port)),
		CAFile:       filepath.Join(pki, "serving-ca.crt"),
		EtcdLog:      filepath.Join(cfg.Dir, "etcd.log"),
		APIServerLog: filepath.Join(cfg.Dir, "kube-apiserver.log"),
		stopTimeout:  cfg.StopTimeout,
		log:          log,
		done:         make(chan struct{}),
	}
	defer func() {
		if err != nil {
			a.Close()
			a = nil
		}
	}()

	started := time.Now()
	// etcd: one member, client and peer URLs on the address (etcd opens no
	// other listener: no metrics URL is given), fsync off (a sandbox's data
	// is thrown away).
	a.etcd, err = startProc("etcd", cfg.Tools.Etcd, []string{
		"--name", "localapi", "--data-dir", filepath.Join(cfg.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "localapi=" + peerURL, "--initial-cluster-state", "new",
		"--unsafe-no-fsync", "--logger", "zap", "--log-outputs", "stderr",
	}, a.EtcdLog)
	if err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	if err := a.waitEtcd(ctx, etcdURL, cfg.StartTimeout); err != nil {
		return nil, err
	}
	log.Info("etcd ready", "url", etcdURL, "after", time.Since(started).Round(time.Millisecond))

	a.kas, err = startProc("kube-apiserver", cfg.Tools.APIServer, []string{
		"--bind-address", host, "--advertise-address", host, "--secure-port", strconv.Itoa(cfg.Port),
		"--etcd-servers", etcdURL,
		"--tls-cert-file", filepath.Join(pki, "serving.crt"), "--tls-private-key-file", filepath.Join(pki, "serving.key"),
		"--client-ca-file", filepath.Join(pki, "client-ca.crt"),
		"--anonymous-auth=false", "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(pki, "service-account.key"),
		"--service-account-signing-key-file", filepath.Join(pki, "service-account.key"),
		"--service-cluster-ip-range", cfg.ServiceNetwork,
		"--cert-dir", pki, "--profiling=false", "--shutdown-delay-duration", "0s",
	}, a.APIServerLog)
	if err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	admin := &kube.Config{Server: a.URL, CAData: cfg.ServingSignerCert, CertData: cfg.AdminCert, KeyData: cfg.AdminKey}
	if a.client, err = kube.NewClient(admin); err != nil {
		return nil, fmt.Errorf("local api: admin client: %w", err)
	}
	if err := a.waitReady(ctx, cfg.StartTimeout); err != nil {
		return nil, err
	}
	log.Info("kube-apiserver ready", "url", a.URL, "after", time.Since(started).Round(time.Millisecond))

	if err := installCRDs(ctx, a.client, cfg.StartTimeout); err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	if err := seed(ctx, a.client, cfg.Cluster, cfg.Names); err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	if err := createObjects(ctx, a.client, cfg.Cluster, cfg.Operators); err != nil {
		return nil, fmt.Errorf("local api: %w", err)
	}
	log.Info("local api up: CRDs installed, ClusterVersion and ClusterOperators created", "url", a.URL, "after", time.Since(started).Round(time.Millisecond))

	a.watchers.Add(1)
	go func() {
		defer a.watchers.Done()
		select {
		case <-ctx.Done():
			a.shutdown()
		case <-a.etcd.done:
			a.log.Error("etcd ended", "err", a.etcd.exited())
		case <-a.kas.done:
			a.log.Error("kube-apiserver ended", "err", a.kas.exited())
		case <-a.done:
		}
		a.doneOnce.Do(func() { close(a.done) })
	}()
	return a, nil
}

// Client is a client with the admin credentials Start was given.
func (a *API) Client() *kube.Client { return a.client }

// Done is closed when the API stops: Close, the context's end, or a
// process that ended by itself (Err says which).
func (a *API) Done() <-chan struct{} { return a.done }

// Err is why a process ended by itself, or nil.
func (a *API) Err() error {
	for _, p := range []*proc{a.etcd, a.kas} {
		if p != nil {
			if err := p.exited(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close stops kube-apiserver, then etcd: SIGTERM, SIGKILL after the stop
// timeout; it waits for both. It may be called more than once.
func (a *API) Close() error {
	a.shutdown()
	a.watchers.Wait()
	return nil
}

// shutdown stops the processes once.
func (a *API) shutdown() {
	a.closeOnce.Do(func() {
		a.doneOnce.Do(func() { close(a.done) })
		if a.kas != nil && a.kas.stop(a.stopTimeout) {
			a.log.Warn("kube-apiserver did not stop on SIGTERM in time: killed", "after", a.stopTimeout)
		}
		if a.etcd != nil && a.etcd.stop(a.stopTimeout) {
			a.log.Warn("etcd did not stop on SIGTERM in time: killed", "after", a.stopTimeout)
		}
		if a.client != nil {
			a.client.Close()
		}
	})
}

// Pids are the processes' ids, for tests that look at their sockets.
func (a *API) Pids() []int {
	var out []int
	for _, p := range []*proc{a.etcd, a.kas} {
		if p != nil {
			out = append(out, p.cmd.Process.Pid)
		}
	}
	return out
}

// poll calls fn every interval until it returns nil, p ends, ctx ends or
// timeout passes.
func poll(ctx context.Context, p *proc, what string, timeout time.Duration, fn func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if err := p.exited(); err != nil {
			return fmt.Errorf("local api: %s: %w", what, err)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = fn(rctx)
		cancel()
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("local api: %s: not ready after %s: %v (log %s)%s", what, timeout, last, p.log, tail(p.log, 10))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
		case <-tick.C:
		}
	}
}

func (a *API) waitEtcd(ctx context.Context, url string, timeout time.Duration) error {
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer hc.CloseIdleConnections()
	return poll(ctx, a.etcd, "etcd", timeout, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var h struct {
			Health string `json:"health"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&h); err != nil {
			return err
		}
		if h.Health != "true" {
			return fmt.Errorf("health %q", h.Health)
		}
		return nil
	})
}

func (a *API) waitReady(ctx context.Context, timeout time.Duration) error {
	return poll(ctx, a.kas, "kube-apiserver", timeout, a.client.Ready)
}
