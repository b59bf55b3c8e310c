package node

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// ServiceConfig is what Serve needs: `nodezero service` fills it from
// flags, node zero's runtime from the host's config image.
type ServiceConfig struct {
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
	Limits               api.Limits     // zero fields: api.DefaultLimits'
	// Images are the release images the install step names (the payload's);
	// zero fields: assisted-service's defaults, or left out.
	Images assisted.InstallImages
	// TLSCertFile and TLSKeyFile, when set, make the API serve HTTPS with
	// this PEM certificate (chain) and key; empty, it serves HTTP as ABI's
	// assisted-service does.
	TLSCertFile, TLSKeyFile string
}

// Serve runs the embedded assisted service and its API until ctx ends.
func Serve(ctx context.Context, cfg ServiceConfig) error {
	log := cfg.Logger
	key, err := auth.ParsePublicKey(cfg.PublicKeyPEM)
	if err != nil {
		return err
	}
	lim, err := cfg.Limits.WithDefaults()
	if err != nil {
		return err
	}
	srv := api.ServerConfig{Limits: lim, Logger: log.With("subsystem", "api")}
	if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
		if srv.TLS, err = api.ServerTLS(cfg.TLSCertFile, cfg.TLSKeyFile); err != nil {
			return err
		}
	}
	st, err := store.Open(ctx, filepath.Join(cfg.Dir, "nodezero.db"), store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	req, err := requirementsFromEnv()
	if err != nil {
		return err
	}
	svc, err := assisted.New(assisted.Config{
		Store: st, Logger: log.With("subsystem", "assisted"), Requirements: req,
		MonitorInterval: cfg.MonitorInterval, DisconnectionTimeout: cfg.DisconnectionTimeout, EvaluationDelay: cfg.EvaluationDelay,
		StepInterval: cfg.StepInterval, HostConfigs: cfg.HostConfigs, MaxWait: lim.MaxWait,
		Installer: cfg.Installer, ClusterTLSDir: cfg.ClusterTLSDir, WorkDir: cfg.Dir, BootstrapMAC: cfg.BootstrapMAC, Images: cfg.Images,
		DisabledSteps:           stepsFromEnv(),
		DisabledHostValidations: listFromEnv("DISABLED_HOST_VALIDATIONS"), DisabledClusterValidations: listFromEnv("DISABLED_CLUSTER_VALIDATIONS"),
	})
	if err != nil {
		return err
	}
	defer svc.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv.Handler = api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(key, nil), Logger: log.With("subsystem", "api"), LogsDir: filepath.Join(cfg.Dir, "logs")})
	if cfg.Listening != nil {
		cfg.Listening(ln.Addr())
	}
	return api.Serve(ctx, ln, srv)
}

// PayloadImages reads the release's images that node zero's service names
// in every install step from the factory image's payload: a payload
// without them is an error naming payload.json and the field, and so is a
// missing payload.
func PayloadImages(dir string) (assisted.InstallImages, error) {
	p, err := diskwrite.LoadPayload(dir)
	if err == nil {
		err = p.CheckReleaseImages()
	}
	if err != nil {
		return assisted.InstallImages{}, err
	}
	return assisted.InstallImages{Installer: p.Images.Installer, Controller: p.Images.Controller,
		MCO: p.Images.MCO, MustGather: p.Images.MustGather, Agent: p.Images.Agent}, nil
}

// OverrideImages is base with every image set in over replacing its own.
func OverrideImages(base, over assisted.InstallImages) assisted.InstallImages {
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

// TuneMemory keeps node zero small. The service's live heap is mostly
// per-host state and per-connection buffers (a thousand agents hold a
// thousand long polls); Go's default GOGC=100 lets the heap grow to twice
// that before collecting. A GC target of 50 % and a soft limit of 96 MiB keep
// a 1,000-host install under 100 MiB at the price of more frequent, short
// collections while hosts register. GOGC and GOMEMLIMIT in the environment
// win, as they always do.
func TuneMemory() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(96 << 20)
	}
}

// requirementsFromEnv reads the hardware requirements from
// HW_VALIDATOR_REQUIREMENTS in the process environment, as assisted-service
// reads them from its own (ABI's unit fills the variable; nil when it is
// unset or still the template's placeholder: assisted's defaults).
func requirementsFromEnv() (*validation.Requirements, error) {
	v := os.Getenv("HW_VALIDATOR_REQUIREMENTS")
	if v == "" || v == "TO_BE_REPLACED_BY_SYSTEMD" {
		return nil, nil
	}
	r, err := validation.ParseRequirements([]byte(v))
	if err != nil {
		return nil, fmt.Errorf("HW_VALIDATOR_REQUIREMENTS: %w", err)
	}
	return r, nil
}

// listFromEnv reads a comma-separated list from the process environment,
// as assisted-service reads DISABLED_STEPS and DISABLED_HOST_VALIDATIONS
// from its own (empty items are left out).
func listFromEnv(name string) []string {
	var out []string
	for _, v := range strings.Split(os.Getenv(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// stepsFromEnv is DISABLED_STEPS: the step types the service never hands
// out (a sandbox's loopback hosts cannot answer free-network-addresses).
func stepsFromEnv() []wire.StepType {
	var out []wire.StepType
	for _, v := range listFromEnv("DISABLED_STEPS") {
		out = append(out, wire.StepType(v))
	}
	return out
}
