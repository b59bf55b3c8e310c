package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/daemon/issue"
	"github.com/nodezero/nodezero/daemon/register"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// failuresFilePath is where the registration writes the host configs it
// could not apply (ABI's apply-host-config).
const failuresFilePath = "/var/run/agent-installer/host-config-failures"

// NodeZero runs node zero's part: the embedded service, and beside it what
// ABI's register-cluster, register-infraenv, apply-host-config and
// start-cluster-installation units do.
type NodeZero struct {
	Root, Listen, DataDir string
	Payload               string // its images name the release; openshift-install is looked for here
	// DisconnectionTimeout and CheckInterval are the service's
	// (ServiceConfig).
	DisconnectionTimeout, CheckInterval time.Duration
	Board                               *issue.Board // the console's status lines (Run)
	Status                              func(string) // systemd's STATUS
	Logger                              *slog.Logger

	// Now is the clock the add-nodes token watch reads (nil: time.Now).
	Now func() time.Time

	images            assisted.InstallImages      // from the payload (Run); zero: assisted's defaults
	client            atomic.Pointer[wire.Client] // set once the service listens; read by Healthy
	base              atomic.Pointer[string]      // the service's own URL, once it listens (URL)
	up                chan struct{}               // closed once base is set
	upOnce, closeOnce sync.Once
}

// Run is node zero's part of the boot sequence (boot.Sequence.Service):
// the service, and the registration of the cluster, its infra-env and
// host configs, which starts the install when the hosts are ready. The
// service goes on when the registration stops: the console and the API
// say why.
func (nz *NodeZero) Run(ctx context.Context, env boot.Env) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := os.Stat(filepath.Join(nz.Payload, diskwrite.PayloadFile)); errors.Is(err, os.ErrNotExist) {
		// A host without a factory image's payload (a development or test
		// host) installs with coreos-installer, if at all: its install
		// steps name assisted-service's default images.
		nz.Logger.Warn("no payload: the install steps name assisted-service's default images", "payload", nz.Payload, "stage", "service")
	} else {
		images, err := PayloadImages(nz.Payload)
		if err != nil {
			return fmt.Errorf("node zero: %w", err)
		}
		nz.images = images
	}
	c, served, err := nz.Serve(ctx, env)
	if err != nil {
		return err
	}
	if env.AddNodes != nil {
		return nz.addNodes(ctx, c, served, env)
	}
	set, err := manifests.LoadFrom(filepath.Join(nz.Root, configimage.ManifestsDir), filepath.Join(nz.Root, configimage.ExtraManifestsDir))
	if err != nil {
		return fmt.Errorf("node zero: %w", err)
	}
	hcDir := filepath.Join(nz.Root, configimage.HostConfigDir)
	failures := filepath.Join(nz.Root, failuresFilePath)
	registered := make(chan error, 1)
	go func() {
		id, err := register.Run(ctx, register.RunConfig{
			Client: c, Set: set, HostConfigDir: hcDir, FailuresFile: failures,
			Status: func(s string) { nz.installStatus(ctx, s, failures) },
			Logger: nz.Logger.With("subsystem", "register"),
		})
		if err == nil {
			nz.Logger.Info("installation started", "cluster", id, "stage", "service")
		}
		registered <- err
	}()
	for {
		select {
		case err := <-served:
			return err
		case err := <-registered:
			if err != nil && ctx.Err() == nil {
				// The service goes on: the console and the API say why the
				// install cannot start, and a person can fix it through them.
				nz.Logger.Error("registration stopped", "err", err, "stage", "service")
				nz.setIssue(ctx, issue.KeyStartInstall, issue.LightRed, "Installation cannot proceed: "+err.Error())
			}
			registered = nil
		}
	}
}

// addNodes is node zero's part on a host booted from a node config image
// (day 2): beside the service, the add-nodes flow (boot.AddNodes) imports
// the installed cluster and installs this host into it. The service goes
// on when the flow stops (an expired token, manifests it cannot register):
// the console and the API say why.
func (nz *NodeZero) addNodes(ctx context.Context, c *wire.Client, served <-chan error, env boot.Env) error {
	set, err := manifests.LoadAddNodes(filepath.Join(nz.Root, configimage.ManifestsDir))
	if err != nil {
		return fmt.Errorf("node zero: %w", err)
	}
	failures := filepath.Join(nz.Root, failuresFilePath)
	flow := boot.AddNodes{
		Register: register.AddNodeConfig{
			Client: c, Set: set, Env: *env.AddNodes,
			ClusterConfigDir: filepath.Join(nz.Root, onhost.ClusterConfigDir),
			HostConfigDir:    filepath.Join(nz.Root, configimage.HostConfigDir),
			FailuresFile:     failures, LocalMACs: env.MACs,
			Logger: nz.Logger.With("subsystem", "register"),
		},
		Token: boot.TokenWatch{Expiry: env.AddNodes.TokenExpiry, Now: nz.Now},
		Board: nz.Board, Status: nz.Status, Logger: nz.Logger,
	}
	done := make(chan error, 1)
	go func() { done <- flow.Run(ctx) }()
	for {
		select {
		case err := <-served:
			return err
		case err := <-done:
			switch {
			case errors.Is(err, boot.ErrTokenExpired):
				// 65_token says it; nothing else is to happen.
			case err != nil && ctx.Err() == nil:
				nz.Logger.Error("add-nodes flow stopped", "err", err, "stage", "service")
				nz.setIssue(ctx, issue.KeyAddNode, issue.LightRed, "Installation cannot proceed: "+err.Error())
			}
			done = nil
		}
	}
}

// URL is where this host's own service answers, once it listens: the
// agent's SERVICE_BASE_URL when the rendezvous address is a loopback one
// (boot.Env.OwnService), as the sandbox gives each added host its own
// --listen address on the shared loopback.
func (nz *NodeZero) URL(ctx context.Context) (string, error) {
	nz.upOnce.Do(func() { nz.up = make(chan struct{}) })
	select {
	case <-nz.up:
		return *nz.base.Load(), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// listeningAt records the service's own URL and wakes URL's callers.
func (nz *NodeZero) listeningAt(u string) {
	nz.upOnce.Do(func() { nz.up = make(chan struct{}) })
	nz.base.Store(&u)
	nz.closeOnce.Do(func() { close(nz.up) })
}

// Serve starts node zero's service and returns a client with the user
// token once it listens, and a channel that gets the service's end.
func (nz *NodeZero) Serve(ctx context.Context, env boot.Env) (*wire.Client, <-chan error, error) {
	svcEnvPath := filepath.Join(nz.Root, onhost.AssistedServiceEnvPath)
	b, err := os.ReadFile(svcEnvPath)
	if err != nil {
		return nil, nil, fmt.Errorf("node zero: %w", err)
	}
	svcEnv, err := onhost.ParseEnv(svcEnvPath, b)
	if err != nil {
		return nil, nil, err
	}
	if svcEnv["EC_PUBLIC_KEY_PEM"] == "" {
		return nil, nil, fmt.Errorf("node zero: %s: EC_PUBLIC_KEY_PEM is missing", svcEnvPath)
	}
	hcDir := filepath.Join(nz.Root, configimage.HostConfigDir)
	hostConfigs, err := manifests.LoadHostConfigs(hcDir)
	if err != nil {
		return nil, nil, fmt.Errorf("node zero: %w", err)
	}
	if hostConfigs == nil {
		hostConfigs = []manifests.HostConfig{}
	}
	if err := os.MkdirAll(nz.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("node zero: %w", err)
	}
	TuneMemory()
	installer := filepath.Join(nz.Payload, "openshift-install")
	if _, err := os.Stat(installer); err != nil {
		installer = "" // the built-in Ignition generator
	}
	// The config image's signers and kubeadmin password, which the
	// install files use whichever generator runs (installfiles.Input.TLSDir),
	// rooted as every host path is.
	var tlsDir string
	if d := svcEnv["EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR"]; d != "" {
		tlsDir = filepath.Join(nz.Root, d)
	}
	mac := env.BootstrapMAC
	if mac == "" {
		// Installed mode: node zero's record of itself.
		mac = readNode0MAC(nz.Root)
	}

	// HTTPS when the config image made SERVICE_BASE_URL https:// (it then
	// carries the certificate and key): every client follows that URL.
	var certFile, keyFile string
	https := strings.HasPrefix(strings.ToLower(env.ServiceBaseURL), "https:")
	if https {
		certFile, keyFile = filepath.Join(nz.Root, configimage.APICertPath), filepath.Join(nz.Root, configimage.APIKeyPath)
	}

	listening := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServiceConfig{
			Dir: nz.DataDir, Listen: nz.Listen, PublicKeyPEM: []byte(svcEnv["EC_PUBLIC_KEY_PEM"]),
			HostConfigs: hostConfigs, Logger: nz.Logger, MonitorInterval: 5 * time.Second,
			DisconnectionTimeout: nz.DisconnectionTimeout, EvaluationDelay: 5 * time.Millisecond, StepInterval: nz.CheckInterval,
			Listening: func(a net.Addr) { listening <- a }, Installer: installer, ClusterTLSDir: tlsDir, BootstrapMAC: mac,
			TLSCertFile: certFile, TLSKeyFile: keyFile, Images: nz.images,
		})
	}()
	var addr net.Addr
	select {
	case err := <-served:
		return nil, nil, err
	case addr = <-listening:
	}
	local, opts := localURL(addr), []wire.ClientOption{wire.WithUserToken(env.UserToken)}
	if https {
		// Over loopback, to a certificate that names the rendezvous IP.
		local = "https" + strings.TrimPrefix(local, "http")
		opts = append(opts, wire.WithCACertFile(env.ServiceCACert), wire.WithTLSServerName(env.NodeZeroIP.String()))
	}
	c, err := wire.NewClient(local, opts...)
	if err != nil {
		return nil, nil, err
	}
	nz.client.Store(c)
	nz.listeningAt(local)
	nz.Logger.Info("service listening", "addr", addr.String(), "stage", "service")
	return c, served, nil
}

// readNode0MAC reads BOOTSTRAP_HOST_MAC from node zero's record.
func readNode0MAC(root string) string {
	b, err := os.ReadFile(filepath.Join(root, onhost.Node0Path))
	if err != nil {
		return ""
	}
	return onhost.ParseNode0(b)
}

// installStatus shows register.Run's status and the host config failures
// it wrote on the console and in systemd's status.
func (nz *NodeZero) installStatus(ctx context.Context, s, failuresFile string) {
	nz.Status(s)
	b, err := os.ReadFile(failuresFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		nz.Logger.Warn("host config failures", "err", err)
	}
	if err := boot.ShowInstallStatus(ctx, nz.Board, s, strings.Split(string(b), "\n")); err != nil {
		nz.Logger.Warn("console status", "err", err)
	}
}

func (nz *NodeZero) setIssue(ctx context.Context, k issue.Key, c issue.Color, lines ...string) {
	if _, err := nz.Board.Set(ctx, k, c, lines...); err != nil {
		nz.Logger.Warn("console status", "key", k, "err", err)
	}
}

// Healthy is the watchdog's check: on node zero the API must answer; on
// other hosts, and before the service listens, the process being
// scheduled is enough.
func (nz *NodeZero) Healthy(ctx context.Context) error {
	if c := nz.client.Load(); c != nil {
		return c.Health(ctx)
	}
	return nil
}

// localURL is the service's base URL from this host: the listener's own
// address, or loopback when it listens on all addresses.
func localURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
