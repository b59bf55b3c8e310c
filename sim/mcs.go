package sim

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/ignition/v2/config/v3_2/types"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodezero/nodezero/internal/pki"
)

// The installed cluster's machine config server, SIMULATED (sandbox): what
// a day-2 host's pointer Ignition merges from. The real one
// (machine-config-operator's machine-config-server, port 22623) serves each
// pool's rendered MachineConfig as Ignition; this stand-in serves the
// worker pool only, with the one file a joining node needs from it: the
// kubelet's bootstrap kubeconfig (/etc/kubernetes/kubeconfig), naming the
// cluster's internal API.
//
// Its answers follow the real server's (its pkg/server/api.go): GET or
// HEAD only (405 otherwise), /config/<pool> (404 for another pool or
// path), /healthz 200, and the spec version from the Accept header: an
// Ignition media type whose version is 3.1 up to 4 gets spec 3, one whose
// version is outside every range the real server knows is a 400. Where
// the real server falls back to spec 2.2 (no Ignition media type, or one
// without a version: curl, old Ignition) the stand-in, which has no spec 2
// form, answers 406 and says why.

// MCSPort is the machine config server's TLS port.
const MCSPort = 22623

// IgnitionMediaType is the media type Ignition asks for in its Accept
// header, with the highest spec version it reads
// ("application/vnd.coreos.ignition+json;version=3.4.0, */*;q=0.1").
const IgnitionMediaType = "application/vnd.coreos.ignition+json"

// MCSSpecVersion is the Ignition spec version the stand-in serves.
const MCSSpecVersion = "3.2.0"

// BootstrapKubeconfigPath is where the served Ignition writes the kubelet's
// bootstrap kubeconfig, as the real machine config server's does.
const BootstrapKubeconfigPath = "/etc/kubernetes/kubeconfig"

// MCSConfig is what StartMCS needs.
type MCSConfig struct {
	// Addr is the address to listen on (the sandbox: the API VIP), on
	// Port (MCSPort when 0).
	Addr netip.Addr
	Port int
	// ClusterName and BaseDomain name the cluster: the serving
	// certificate is for api-int.<ClusterName>.<BaseDomain> (and Addr),
	// and the bootstrap kubeconfig names https://api-int.…:6443.
	ClusterName, BaseDomain string
	// APICA is the PEM bundle the kubelet trusts for the API's serving
	// certificate (the kubeconfig's certificate-authority-data).
	APICA []byte
	// ClientCert and ClientKey (PEM), or Token, are the bootstrap
	// kubeconfig's credential. SIMULATED: a real cluster hands out the
	// node-bootstrapper service account's token, which may only create
	// CSRs; the sandbox gives the admin's certificate, the one
	// credential its kube API has.
	ClientCert, ClientKey []byte
	Token                 string
	Log                   *slog.Logger
}

// MCS is a running machine config server stand-in.
type MCS struct {
	// CACert is the PEM of the CA that signed the serving certificate:
	// what a pointer Ignition (the worker-user-data-managed secret, the
	// cluster's ignition_endpoint) names as its certificate authority.
	CACert []byte
	// Host is api-int.<cluster>.<domain>; Addr the address it listens on.
	Host string
	Addr netip.AddrPort

	srv    *http.Server
	done   chan struct{}
	err    error
	config []byte // the worker pool's Ignition, marshalled
	log    *slog.Logger
}

// StartMCS makes the stand-in's CA and serving certificate and listens.
// It serves until ctx ends or Close.
func StartMCS(ctx context.Context, cfg MCSConfig) (*MCS, error) {
	if cfg.ClusterName == "" || cfg.BaseDomain == "" {
		return nil, errors.New("machine config server: the cluster name and base domain are required")
	}
	if !cfg.Addr.IsValid() {
		return nil, errors.New("machine config server: no address to listen on")
	}
	if len(cfg.APICA) == 0 {
		return nil, errors.New("machine config server: the API's CA is required (the bootstrap kubeconfig's certificate-authority-data)")
	}
	if cfg.Token == "" && (len(cfg.ClientCert) == 0 || len(cfg.ClientKey) == 0) {
		return nil, errors.New("machine config server: the bootstrap kubeconfig needs a token or a client certificate and key")
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("subsystem", "mcs")
	host := "api-int." + cfg.ClusterName + "." + cfg.BaseDomain
	config, err := WorkerIgnition(host, cfg)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca, cert, key, err := pki.NewServer("machine-config-server-ca (SIMULATED)", []netip.Addr{cfg.Addr}, []string{host}, now, now.Add(10*365*24*time.Hour))
	if err != nil {
		return nil, fmt.Errorf("machine config server: %w", err)
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(pki.CertPEM(cert), keyPEM)
	if err != nil {
		return nil, err
	}
	port := cfg.Port
	if port == 0 {
		port = MCSPort
	}
	l, err := net.Listen("tcp", net.JoinHostPort(cfg.Addr.String(), strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("machine config server: %w", err)
	}
	m := &MCS{
		CACert: pki.CertPEM(ca.Cert), Host: host, Addr: netip.MustParseAddrPort(l.Addr().String()),
		done: make(chan struct{}), config: config, log: log,
	}
	m.srv = &http.Server{
		Handler:           m.handler(),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(m.done)
		if err := m.srv.ServeTLS(l, "", ""); !errors.Is(err, http.ErrServerClosed) {
			m.err = err
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = m.Close()
		case <-m.done:
		}
	}()
	log.Info("SIMULATED: the installed cluster's machine config server serves the worker pool's Ignition (the bootstrap kubeconfig only)", "url", m.WorkerURL(), "listen", m.Addr.String())
	return m, nil
}

// WorkerURL is the worker pool's Ignition URL by name, as a pointer
// Ignition names it: https://api-int.<cluster>.<domain>:<port>/config/worker.
func (m *MCS) WorkerURL() string {
	return "https://" + net.JoinHostPort(m.Host, strconv.Itoa(int(m.Addr.Port()))) + "/config/worker"
}

// Close stops serving.
func (m *MCS) Close() error {
	err := m.srv.Close()
	<-m.done
	if m.err != nil {
		return m.err
	}
	return err
}

func (m *MCS) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/config/", m.serveConfig)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})
	return mux
}

func (m *MCS) serveConfig(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	pool := strings.TrimPrefix(r.URL.Path, "/config/")
	m.log.Info("SIMULATED: machine config server: pool requested", "pool", pool, "remote", r.RemoteAddr, "accept", r.Header.Get("Accept"), "user-agent", r.UserAgent())
	spec3, err := AcceptsSpec3(r.Header.Get("Accept"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if pool != "worker" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if !spec3 {
		http.Error(w, "this machine config server stand-in serves Ignition spec 3 only: ask for "+IgnitionMediaType+";version=3.x (the real one would serve spec 2.2 here)", http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(m.config)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(m.config)
}

// AcceptsSpec3 reads an Accept header as the machine config server does:
// true when an Ignition media type, first by quality, names a version in
// [3.1, 4); false when none names a version in a range the server serves
// (where the real one falls back to spec 2.2); an error when an Ignition
// media type names a version outside both [2.2, 3) and [3.1, 4).
func AcceptsSpec3(accept string) (bool, error) {
	type value struct {
		ignition bool
		version  []int // nil: none or unparsable
		q        float64
	}
	var vals []value
	for _, part := range strings.Split(accept, ",") {
		params := strings.Split(part, ";")
		mt := strings.TrimSpace(params[0])
		if !strings.Contains(mt, "/") {
			continue
		}
		v := value{ignition: strings.SplitN(mt, "/", 2)[1] == "vnd.coreos.ignition+json", q: 1}
		gotV, gotQ := false, false
		for _, p := range params[1:] {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok {
				continue
			}
			switch {
			case k == "version" && !gotV:
				if sv, ok := semver(val); ok {
					v.version, gotV = sv, true
				}
			case k == "q" && !gotQ:
				if f, err := strconv.ParseFloat(val, 32); err == nil {
					v.q, gotQ = f, true
				}
			}
		}
		vals = append(vals, v)
	}
	// Highest quality first, in order otherwise (a stable sort).
	for i := 1; i < len(vals); i++ {
		for j := i; j > 0 && vals[j].q > vals[j-1].q; j-- {
			vals[j], vals[j-1] = vals[j-1], vals[j]
		}
	}
	unsupported := false
	for _, v := range vals {
		if !v.ignition || v.version == nil {
			continue
		}
		switch {
		case atLeast(v.version, 3, 1) && v.version[0] < 4:
			return true, nil
		case atLeast(v.version, 2, 2) && v.version[0] < 3:
			return false, nil
		}
		unsupported = true
	}
	if unsupported {
		return false, fmt.Errorf("unsupported Ignition version in Accept header: %s", accept)
	}
	return false, nil
}

// semver reads major.minor.patch (all three, digits only).
func semver(s string) ([]int, bool) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) != 3 {
		return nil, false
	}
	out := make([]int, 3)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || p[0] == '+' {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func atLeast(v []int, major, minor int) bool {
	return v[0] > major || v[0] == major && v[1] >= minor
}

// WorkerIgnition is the worker pool's Ignition (spec MCSSpecVersion) the
// stand-in serves: the bootstrap kubeconfig for the API at
// https://<apiInt>:6443 with cfg's CA and credential.
func WorkerIgnition(apiInt string, cfg MCSConfig) ([]byte, error) {
	kc := BootstrapKubeconfig("https://"+apiInt+":6443", cfg.APICA, cfg.ClientCert, cfg.ClientKey, cfg.Token)
	src := dataurl.New(kc, "text/plain").String()
	mode := 0o600
	overwrite := true
	c := types.Config{Ignition: types.Ignition{Version: MCSSpecVersion}}
	c.Storage.Files = []types.File{{
		Node:          types.Node{Path: BootstrapKubeconfigPath, Overwrite: &overwrite},
		FileEmbedded1: types.FileEmbedded1{Mode: &mode, Contents: types.Resource{Source: &src}},
	}}
	return json.Marshal(c)
}

// BootstrapKubeconfig is a kubelet's bootstrap kubeconfig for server: the
// CA, and a client certificate or a token.
func BootstrapKubeconfig(server string, ca, cert, key []byte, token string) []byte {
	b64 := base64.StdEncoding.EncodeToString
	var user string
	if token != "" {
		user = "    token: " + strconv.Quote(token) + "\n"
	} else {
		user = "    client-certificate-data: " + b64(cert) + "\n    client-key-data: " + b64(key) + "\n"
	}
	return []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n    server: " + server +
		"\n    certificate-authority-data: " + b64(ca) + "\n" +
		"users:\n- name: kubelet\n  user:\n" + user +
		"contexts:\n- name: kubelet\n  context:\n    cluster: local\n    user: kubelet\n" +
		"current-context: kubelet\npreferences: {}\n")
}
