package assisted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// Config is what a Service needs. Zero durations take the defaults noted.
type Config struct {
	Store  *store.Store
	Now    func() time.Time // nil: time.Now
	Logger *slog.Logger     // nil: discard

	// DisconnectionTimeout is assisted's HOST_MAX_DISCONNECTION_TIME (3m).
	DisconnectionTimeout time.Duration
	// MonitorInterval is how often the monitor looks at time-based rules
	// (5s). A negative value turns the monitor off (tests drive Tick).
	MonitorInterval time.Duration
	// StepInterval is how often a repeating step (inventory) is handed out
	// again in the same status (60s, the agent's cadence).
	StepInterval time.Duration
	// NextInstructionSeconds is what agents that do not long-poll are told
	// (60, as assisted-service; backed-off statuses get twice that). While
	// their cluster forms they are told less, down to a few seconds, and
	// never more than this (pollSeconds).
	NextInstructionSeconds int64
	// MaxWait caps ?wait= (60s).
	MaxWait time.Duration
	// Requirements are the hardware requirements; zero: assisted's defaults.
	Requirements *validation.Requirements
	// EvaluationDelay coalesces the cluster-wide evaluation that agents'
	// requests cause: it runs once per window for all of them (see
	// settle). Zero evaluates within each request (tests).
	EvaluationDelay time.Duration
	// ProbeSettle is how long the hosts a connectivity check probes must
	// stay the same before a long-polling agent is handed one (see
	// connectivityWait); real time, like the long poll. Zero: one second;
	// negative: no wait (tests that count steps).
	ProbeSettle time.Duration
	// DisabledHostValidations / DisabledClusterValidations report "disabled".
	DisabledHostValidations, DisabledClusterValidations []string
	// DisabledSteps are assisted's DISABLED_STEPS: step types never handed
	// to an agent, in any status. As in assisted, a validation that reads
	// such a step's result is left as it is (free-network-addresses, which
	// a loopback host cannot answer, feeds none). A type that is no step
	// is logged and ignored, as assisted does.
	DisabledSteps []wire.StepType
	// HostConfigs are node zero's host configs from the config image
	// (/etc/assisted/hostconfig): the installation disk follows their root
	// device hints, and two validations of nodezero's own say when a
	// configured host's disks match none or it never registers. Nil: no
	// such validations (validation.Validator.HostConfigs).
	HostConfigs []manifests.HostConfig
	// HostConfigGrace is how long a host config may match no host before
	// that is a failure (0: validation.DefaultHostConfigGrace).
	HostConfigGrace time.Duration
	// Installer is the payload's openshift-install, which the installation
	// preparation runs; "" generates the Ignition configs itself
	// (installfiles.Generate).
	Installer string
	// ClusterTLSDir is assisted-service's
	// EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR (the config image's
	// /opt/agent/tls): the signers and kubeadmin password every
	// preparation's install files use, so that the user's auth/kubeconfig
	// and password open the cluster. "": each preparation mints its own
	// (installfiles.Input.TLSDir).
	ClusterTLSDir string
	// WorkDir is where preparations make their scratch directories
	// ("": the system's temporary directory).
	WorkDir string
	// BootstrapMAC makes the host with this MAC in its inventory the
	// bootstrap host (ABI's BOOTSTRAP_HOST_MAC: node zero's own).
	BootstrapMAC string
	// Images are the release's images the install step names; node zero
	// takes them from its payload. Empty installer, controller and agent
	// images take assisted-service's defaults; empty MCO and must-gather
	// images are left out of the step.
	Images InstallImages
	// CheckClusterVersion is assisted's CHECK_CLUSTER_VERSION (false, as ABI
	// leaves it): the install step's check_cvo.
	CheckClusterVersion bool
}

func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.DisconnectionTimeout == 0 {
		c.DisconnectionTimeout = 3 * time.Minute
	}
	if c.MonitorInterval == 0 {
		c.MonitorInterval = 5 * time.Second
	}
	if c.StepInterval == 0 {
		c.StepInterval = 60 * time.Second
	}
	if c.NextInstructionSeconds == 0 {
		c.NextInstructionSeconds = 60
	}
	if c.MaxWait == 0 {
		c.MaxWait = 60 * time.Second
	}
	if c.ProbeSettle == 0 {
		c.ProbeSettle = time.Second
	}
}

// Service is the embedded assisted service. Its methods are safe for
// concurrent use.
type Service struct {
	cfg      Config
	log      *slog.Logger
	store    *store.Store
	start    time.Time
	val      *validation.Validator
	timeouts machine.Timeouts
	// names holds the host IDs and addresses of every connectivity
	// report the service compacts (validation.Interner): one for all, so
	// that reports compare. It outlives reloads of the model.
	names *validation.Interner
	// disabledSteps are Config.DisabledSteps that name a step.
	disabledSteps map[wire.StepType]bool

	mu        sync.RWMutex // guards the model below
	clusters  map[string]*clusterRec
	infraEnvs map[string]*infraEnvRec
	hosts     map[hostKey]*hostRec

	queue  commitQueue
	reload atomic.Bool // a panic left the model suspect: the writer reloads it
	broken error       // the last reload failed; guarded by mu

	prepSeq atomic.Int64 // numbers installation preparations

	evalPending map[string]*clusterRec // clusters the evaluator owes a pass; guarded by mu
	evalSignal  chan struct{}

	// heldHook, when set (by tests, before the requests it is for), is
	// called each time an instructions request starts to wait for a step.
	heldHook func()

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New loads every cluster, infra-env and host from the store and starts the
// writer and the monitor. Close stops them.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("assisted: no store")
	}
	cfg.setDefaults()
	s := &Service{cfg: cfg, log: cfg.Logger, store: cfg.Store, start: cfg.Now()}
	req := cfg.Requirements
	if req == nil {
		r, err := validation.DefaultRequirements()
		if err != nil {
			return nil, fmt.Errorf("assisted: hardware requirements: %w", err)
		}
		req = r
	}
	s.val = &validation.Validator{
		Requirements: req, DisconnectionTimeout: cfg.DisconnectionTimeout,
		DisabledHost:    validation.NewIDSet(cfg.DisabledHostValidations...),
		DisabledCluster: validation.NewIDSet(cfg.DisabledClusterValidations...),
		HostConfigs:     cfg.HostConfigs, HostConfigGrace: cfg.HostConfigGrace,
	}
	s.disabledSteps = disabledSteps(cfg.DisabledSteps, s.log)
	s.names = validation.NewInterner()
	s.timeouts = machine.DefaultTimeouts()
	s.timeouts.HostDisconnection = cfg.DisconnectionTimeout
	s.queue.init()
	if err := s.load(context.Background()); err != nil {
		return nil, err
	}
	s.evalPending, s.evalSignal = map[string]*clusterRec{}, make(chan struct{}, 1)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(2)
	go s.writer()
	go s.evaluator()
	// What was stored is evaluated once now: a restart may have cut off
	// an evaluation, and time has passed.
	if err := s.Tick(s.ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("assisted: first evaluation: %w", err)
	}
	if cfg.MonitorInterval > 0 {
		s.wg.Add(1)
		go s.monitor()
	}
	s.resumePreparations()
	return s, nil
}

// Close stops the monitor and the writer, after the writer has committed
// what was queued.
func (s *Service) Close() error {
	s.cancel()
	s.queue.close()
	s.wg.Wait()
	return nil
}

// load replaces the in-memory model with what the store holds.
func (s *Service) load(ctx context.Context) error {
	clusters := map[string]*clusterRec{}
	infraEnvs := map[string]*infraEnvRec{}
	hosts := map[hostKey]*hostRec{}
	err := s.store.View(ctx, func(tx *store.Tx) error {
		cs, err := tx.Clusters()
		if err != nil {
			return err
		}
		for _, row := range cs {
			r, err := loadCluster(row)
			if err != nil {
				return err
			}
			clusters[r.c.ID] = r
		}
		ms, err := tx.Manifests("")
		if err != nil {
			return err
		}
		for _, m := range ms {
			if c := clusters[m.ClusterID]; c != nil {
				c.setManifest(manifestKey{folder: wire.ManifestFolder(m.Folder), name: m.FileName}, wire.ManifestSource(m.Source))
			}
		}
		ies, err := tx.InfraEnvs()
		if err != nil {
			return err
		}
		for _, row := range ies {
			r, err := loadInfraEnv(row)
			if err != nil {
				return err
			}
			infraEnvs[r.ie.ID] = r
		}
		hs, err := tx.Hosts(store.HostFilter{})
		if err != nil {
			return err
		}
		for _, row := range hs {
			r, err := loadHost(row)
			if err != nil {
				return err
			}
			hosts[r.key()] = r
			steps, err := tx.Steps(row.InfraEnvID, row.ID)
			if err != nil {
				return err
			}
			for _, st := range steps {
				if r.agent.pending == nil {
					r.agent.pending = map[string]wire.StepType{}
				}
				r.agent.pending[st.StepID] = wire.StepType(st.StepType)
			}
			if c := clusters[r.clusterID()]; c != nil {
				c.addHost(r)
			}
		}
		reports, err := tx.HostsConnectivity(store.HostFilter{})
		if err != nil {
			return err
		}
		for _, rep := range reports {
			if h := hosts[hostKey{rep.InfraEnvID, rep.HostID}]; h != nil {
				h.conn = s.val.ParseConnectivity(s.names, rep.Report)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("assisted: load store: %w", err)
	}
	s.clusters, s.infraEnvs, s.hosts = clusters, infraEnvs, hosts
	return nil
}

// monitor handles the rules that depend on time alone: disconnection and
// timeouts. Everything else is evaluated when facts change.
func (s *Service) monitor() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.MonitorInterval)
	defer t.Stop()
	var lastErr time.Time
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			if err := s.Tick(s.ctx); err != nil && !errors.Is(err, context.Canceled) {
				// Rate-limited: a failing disk would otherwise log every tick.
				if now := s.cfg.Now(); now.Sub(lastErr) > time.Minute {
					s.log.Error("monitor", "err", err)
					lastErr = now
				}
			}
		}
	}
}

// Tick re-evaluates every host and cluster whose state can change with time
// alone. The monitor calls it; tests call it with a moved clock.
func (s *Service) Tick(ctx context.Context) error {
	return s.update(ctx, func(t *txn) error {
		for _, h := range s.hosts {
			if timeSensitive(h) {
				t.touchHost(h)
			}
		}
		for _, c := range s.clusters {
			t.touchCluster(c)
		}
		return nil
	})
}

// deferClusters hands clusters to the evaluator. Callers hold s.mu.
func (s *Service) deferClusters(sets ...map[string]*clusterRec) {
	for _, m := range sets {
		for id, c := range m {
			s.evalPending[id] = c
		}
	}
	select {
	case s.evalSignal <- struct{}{}:
	default:
	}
}

// evaluator does the cluster-wide evaluation agents' requests deferred,
// once per window: EvaluationDelay, or three times as long as the last
// evaluation took when that is longer. An evaluation revalidates every
// host of the cluster under the model lock, so at a thousand hosts
// reporting at once it is most of the work; this keeps it to about a
// quarter of the time, and the agents' requests, which bring what there
// is to evaluate, get the rest. (Half the time, as it was, let 1,000
// hosts' connectivity reports in 20 % slower; loadtest.)
func (s *Service) evaluator() {
	defer s.wg.Done()
	var took time.Duration
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.evalSignal:
		}
		timer := time.NewTimer(max(s.cfg.EvaluationDelay, 3*took))
		select {
		case <-s.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		start := time.Now()
		err := s.update(s.ctx, func(t *txn) error {
			for id, c := range s.evalPending {
				delete(s.evalPending, id)
				if s.clusters[id] == c {
					t.touchCluster(c)
				}
			}
			return nil
		})
		took = time.Since(start)
		if err != nil {
			s.log.Error("cluster evaluation", "err", err)
		}
	}
}
