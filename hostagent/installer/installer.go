package installer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/wire"
)

// Service is the assisted service as the installer talks to it, bound to
// this host by the caller.
type Service interface {
	// UpdateProgress puts the host's install progress. An answer of 409
	// (stage already past) must come back as an error wire.IsStatus
	// recognises.
	UpdateProgress(ctx context.Context, stage wire.HostStage, info string) error
	// HostIgnition returns this host's ignition.
	HostIgnition(ctx context.Context) ([]byte, error)
	// ClusterHosts returns the cluster's hosts of role ("": every host),
	// with their progress (ListClusterHosts?role=; the waits read one
	// role's hosts, and at a thousand hosts listing all every round is
	// most of the service's work). Inventories and connectivity reports
	// are not needed.
	ClusterHosts(ctx context.Context, role wire.HostRole) ([]*wire.Host, error)
}

// WriteFunc writes the OS image and ignition to device, calling progress
// with the percentage written as it goes. It must return soon after ctx
// is cancelled.
type WriteFunc func(ctx context.Context, device string, ignition []byte, progress func(percent int)) error

// Rebooter reboots the host delay from now, telling logged-in users
// message.
type Rebooter interface {
	Reboot(ctx context.Context, delay time.Duration, message string) error
}

// Defaults of Config.
const (
	DefaultPoll                = 5 * time.Second
	DefaultControlPlaneTimeout = 60 * time.Minute
	DefaultReportRetry         = 10 * time.Minute
	DefaultEFIDir              = "/sys/firmware/efi"
	// HARebootDelay is the reboot delay of every host of a multi-node
	// cluster: a minute, so that the etcd member of a master leaves
	// cleanly (OCPBUGS-5988). A single node reboots at once.
	HARebootDelay = time.Minute
)

// RebootMessage is what logged-in users are told, as by assisted-installer.
const RebootMessage = "Installation completed, server is going to reboot."

// Progress infos of the waits this payload has nothing behind.
const (
	infoNoBootkube   = "no bootkube runs on this host: the cluster payload of the built-in generator needs no bootstrap control plane to wait for"
	infoNoController = "no assisted-installer-controller runs on this host: the cluster payload of the built-in generator has no controller to wait for"
	infoWorkerWait   = "waiting for the control plane hosts to be installed"
	infoJoinWait     = "waiting for the control plane hosts to join"
)

// Config is one installation.
type Config struct {
	Request wire.InstallCmdRequest
	Service Service
	// Write is the built-in image writer, used when coreos-installer is
	// not found.
	Write WriteFunc
	// CoreOSInstaller is the path of coreos-installer; "" looks it up in
	// PATH, "-" never uses it.
	CoreOSInstaller string
	// Efibootmgr is the path of efibootmgr, with CoreOSInstaller's
	// convention. It runs only when EFIDir exists.
	Efibootmgr string
	// EFIDir exists on a host booted by UEFI; "" is DefaultEFIDir.
	EFIDir string
	// BootEntry is the UEFI boot entry efibootmgr adds for the written
	// disk; its zero fields are RHCOS's (shim on partition 2).
	BootEntry BootEntry
	// Root is the host root holding opt/install-dir and the
	// NetworkManager keyfiles; "" is "/".
	Root   string
	Reboot Rebooter
	// RebootDelay is how long after "Rebooting" the host reboots; 0 is
	// HARebootDelay, or now for a single node.
	RebootDelay time.Duration
	// Poll is how often the waits ask the service for the cluster's
	// hosts; 0 is DefaultPoll.
	Poll time.Duration
	// ControlPlaneTimeout is how long the bootstrap host waits for the
	// other control-plane hosts to join (the service's timeout of
	// "Waiting for control plane"); 0 is DefaultControlPlaneTimeout.
	ControlPlaneTimeout time.Duration
	// ReportRetry is how long a failing call to the service (a stage
	// report, the ignition download) is retried before the installation
	// fails, as the service may be restarting; 0 is DefaultReportRetry.
	ReportRetry time.Duration
	// Console, when set, gets the installation's milestones, one line
	// each (every stage, the control plane joined, the reboot): a live
	// host shows them on its console, where the person at the machine
	// looks.
	Console func(line string)
	Logger  *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.EFIDir == "" {
		c.EFIDir = DefaultEFIDir
	}
	if c.Root == "" {
		c.Root = "/"
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.ControlPlaneTimeout <= 0 {
		c.ControlPlaneTimeout = DefaultControlPlaneTimeout
	}
	if c.ReportRetry <= 0 {
		c.ReportRetry = DefaultReportRetry
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// flow is the part a host plays; it decides the stages.
type flow int

const (
	flowMaster flow = iota // master and arbiter
	flowWorker
	flowBootstrap
	flowSingleNode
)

func flowOf(req wire.InstallCmdRequest) flow {
	switch req.Role {
	case wire.HostRoleWorker:
		return flowWorker
	case wire.HostRoleBootstrap:
		if req.ControlPlaneCount == 1 {
			return flowSingleNode
		}
		return flowBootstrap
	}
	return flowMaster
}

// stagesOf lists the stages a flow reports, in order.
func stagesOf(f flow) []wire.HostStage {
	switch f {
	case flowWorker:
		return []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
			wire.HostStageWaitingForControlPlane, wire.HostStageRebooting}
	case flowBootstrap:
		return []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
			wire.HostStageWaitingForControlPlane, wire.HostStageWaitingForBootkube, wire.HostStageWaitingForController,
			wire.HostStageRebooting}
	case flowSingleNode:
		return []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWaitingForBootkube,
			wire.HostStageWritingImageToDisk, wire.HostStageRebooting}
	}
	return []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk,
		wire.HostStageRebooting}
}

// install is one run.
type install struct {
	cfg    Config
	req    wire.InstallCmdRequest
	args   installerArgs
	flow   flow
	log    *slog.Logger
	rep    *reporter
	coreos string // coreos-installer's path; "" writes with cfg.Write
	efi    string // efibootmgr's path; "" sets no boot order
	// journal is what a restart of this process resumes from.
	journal *Journal
}

// Run installs the host as cfg.Request says and returns once the reboot is
// scheduled. An invalid request is an ErrInvalidRequest, returned before
// any stage is reported. Any later failure is reported as stage Failed
// with the error text, and returned; the bootstrap host whose control
// plane did not join in time fails so (ErrNotJoined) and is not rebooted.
// When ctx ends (the installation was stopped) Run returns its error at
// once, without a Failed report.
func Run(ctx context.Context, cfg Config) error {
	j := &Journal{Request: cfg.Request, StartedAt: time.Now().UTC()}
	return run(ctx, cfg, j, "")
}

// run is an installation, fresh (resumedAt "") or resumed after a restart
// of this process with the host at stage resumedAt.
func run(ctx context.Context, cfg Config, j *Journal, resumedAt wire.HostStage) error {
	args, err := validateRequest(cfg.Request)
	if err != nil {
		return err
	}
	if cfg.Service == nil || cfg.Reboot == nil {
		return errors.New("install: config needs a Service and a Rebooter")
	}
	cfg = cfg.withDefaults()
	in := &install{
		cfg:     cfg,
		req:     cfg.Request,
		args:    args,
		flow:    flowOf(cfg.Request),
		journal: j,
		log: cfg.Logger.With(slog.String(keySubsystem, "installer"), slog.String(keyHost, cfg.Request.HostID),
			slog.String(keyRole, string(cfg.Request.Role))),
	}
	in.rep = newReporter(cfg.Service, in.log, cfg.ReportRetry, stagesOf(in.flow))
	in.rep.console = cfg.Console
	in.rep.resumeAt(resumedAt)
	if resumedAt == "" {
		in.log.Info("installation starting", slog.String(keyDevice, in.req.BootDevice))
		if len(in.req.DisksToFormat) > 0 {
			// assisted-installer zeroes their first sector so that no old
			// system on them boots instead; this installer writes only the
			// installation disk and sets the boot order to it.
			in.log.Info("disks to format left as they are", slog.Any("disks", in.req.DisksToFormat))
		}
	}
	err = in.prepare()
	if err == nil {
		// Recorded before the first report: from here a restart of this
		// process resumes rather than registers.
		if jerr := in.journal.save(cfg.Root); jerr != nil {
			in.log.Warn("install journal not written: a restart of this process would not resume the installation", slog.Any(keyErr, jerr))
		}
		err = in.run(ctx)
	}
	if err == nil {
		in.log.Info("installation done; reboot scheduled")
		return nil
	}
	if ctx.Err() != nil {
		// Stopped, not failed: the journal stays, and the next start
		// resumes if the service still has the host installing.
		in.log.Info("installation stopped", slog.Any(keyErr, err))
		if !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("install stopped: %w (%v)", ctx.Err(), err)
		}
		return err
	}
	in.log.Error("installation failed", slog.Any(keyErr, err))
	if rerr := in.rep.failed(ctx, err); rerr != nil {
		in.log.Error("report stage Failed failed", slog.Any(keyErr, rerr))
	}
	if jerr := RemoveJournal(cfg.Root); jerr != nil {
		in.log.Warn("install journal not removed", slog.Any(keyErr, jerr))
	}
	return err
}

// prepare picks the tools and checks that the chosen writer can honour the
// installer args, before anything is written.
func (in *install) prepare() error {
	var err error
	if in.coreos, err = lookTool(in.cfg.CoreOSInstaller, "coreos-installer"); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if in.efi, err = lookTool(in.cfg.Efibootmgr, "efibootmgr"); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if in.coreos != "" {
		return nil
	}
	if in.cfg.Write == nil {
		return errors.New("install: no image writer: coreos-installer not found and no built-in writer given")
	}
	if len(in.args.builtinCant) > 0 {
		return fmt.Errorf("install: the built-in image writer cannot honour installer args %s (only %s, %s, %s, %s and %s); coreos-installer is not on this host",
			strings.Join(in.args.builtinCant, ", "), flagAppendKarg, flagDeleteKarg, flagCopyNetwork, flagCopyNetworkN, flagNetworkDir)
	}
	return nil
}

func (in *install) run(ctx context.Context) error {
	role := string(in.req.Role)
	if err := in.rep.stage(ctx, wire.HostStageStartingInstallation, role); err != nil {
		return err
	}
	if err := in.rep.stage(ctx, wire.HostStageInstalling, role); err != nil {
		return err
	}
	if in.flow == flowSingleNode {
		if err := in.rep.stage(ctx, wire.HostStageWaitingForBootkube, infoNoBootkube); err != nil {
			return err
		}
	}
	if in.journal.Written {
		in.log.Info("the image was written and verified before the restart; not writing it again")
	} else {
		if err := in.writeDisk(ctx); err != nil {
			return err
		}
		in.journal.Written, in.journal.WrittenAt = true, time.Now().UTC()
		if err := in.journal.save(in.cfg.Root); err != nil {
			in.log.Warn("install journal not updated: a restart would write the disk again", slog.Any(keyErr, err))
		}
	}
	switch in.flow {
	case flowWorker:
		if err := in.rep.stage(ctx, wire.HostStageWaitingForControlPlane, infoWorkerWait); err != nil {
			return err
		}
		if err := in.waitMastersInstalled(ctx); err != nil {
			return err
		}
	case flowBootstrap:
		if err := in.rep.stage(ctx, wire.HostStageWaitingForControlPlane, infoJoinWait); err != nil {
			return err
		}
		if err := in.waitMastersJoined(ctx); err != nil {
			return err
		}
		if err := in.rep.stage(ctx, wire.HostStageWaitingForBootkube, infoNoBootkube); err != nil {
			return err
		}
		if err := in.rep.stage(ctx, wire.HostStageWaitingForController, infoNoController); err != nil {
			return err
		}
		// ABI: the rendezvous host serves the API the workers still
		// need; it reboots last, once every worker is past waiting for
		// the control plane (assisted-installer's agent-installer path).
		if err := in.waitWorkersWritten(ctx); err != nil {
			return err
		}
	}
	return in.reboot(ctx)
}

// ignitionRole is the role part of the saved ignition's name. The
// bootstrap host installs as a master, and assisted-installer names its
// file master-<id>.ign after switching its role.
func (in *install) ignitionRole() string {
	if in.req.Role == wire.HostRoleBootstrap {
		return string(wire.HostRoleMaster)
	}
	return string(in.req.Role)
}

// writeDisk fetches and saves the host's ignition and writes the image,
// then points the firmware at the new disk.
func (in *install) writeDisk(ctx context.Context) error {
	var ign []byte
	err := retry(ctx, in.cfg.ReportRetry, in.log, "fetch host ignition", func(ctx context.Context) error {
		var err error
		ign, err = in.cfg.Service.HostIgnition(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if in.coreos == "" {
		if ign, err = in.foldArgs(ign); err != nil {
			return err
		}
	}
	path := ignitionPath(in.cfg.Root, in.ignitionRole(), in.req.HostID)
	if err := atomicfile.Write(path, ign, 0o600); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	if err := in.rep.stage(ctx, wire.HostStageWritingImageToDisk, ""); err != nil {
		return err
	}
	device := resolveDevice(in.req.BootDevice)
	progress := in.rep.percent(ctx)
	start := time.Now()
	in.log.Info("writing image", slog.String(keyDevice, device), slog.Bool(keyCoreOS, in.coreos != ""))
	if in.coreos != "" {
		err = coreosInstall(ctx, in.coreos, path, in.args.raw, device, progress, in.log)
	} else {
		err = in.cfg.Write(ctx, device, ign, progress)
	}
	if err != nil {
		return fmt.Errorf("write image to %s: %w", device, err)
	}
	in.log.Info("image written", slog.String(keyDevice, device), slog.Duration(keyDuration, time.Since(start)))
	setBootOrder(ctx, in.efi, in.cfg.EFIDir, device, in.cfg.BootEntry, in.log)
	return nil
}

// foldArgs applies the installer args to ign for the built-in writer.
func (in *install) foldArgs(ign []byte) ([]byte, error) {
	var kfs []keyfile
	if in.args.copyNetwork {
		var err error
		if kfs, err = readKeyfiles(filepath.Join(in.cfg.Root, in.args.networkDir)); err != nil {
			return nil, err
		}
		in.log.Info("copying network keyfiles into the ignition", slog.Int(keyCount, len(kfs)))
	}
	return applyInstallerArgs(ign, in.args, kfs)
}

// resolveDevice follows a /dev/disk/by-* link to the device node, as
// assisted-installer does before it runs coreos-installer (which mishandled
// links, coreos-installer#512). A path that does not resolve is used as
// given: the writer reports it.
func resolveDevice(device string) string {
	if p, err := filepath.EvalSymlinks(device); err == nil {
		return p
	}
	return device
}

// reboot reports Rebooting and schedules the reboot.
func (in *install) reboot(ctx context.Context) error {
	delay := in.cfg.RebootDelay
	if delay == 0 && in.flow != flowSingleNode {
		delay = HARebootDelay
	}
	info := "rebooting now"
	if delay > 0 {
		info = "rebooting in " + delay.String()
	}
	if err := in.rep.stage(ctx, wire.HostStageRebooting, info); err != nil {
		return err
	}
	if err := in.cfg.Reboot.Reboot(ctx, delay, RebootMessage); err != nil {
		return fmt.Errorf("reboot: %w", err)
	}
	return nil
}

// Log keys.
const (
	keySubsystem = "subsystem"
	keyHost      = "host_id"
	keyRole      = "role"
	keyDevice    = "device"
	keyStage     = "stage"
	keyInfo      = "info"
	keyErr       = "err"
	keyAttempt   = "attempt"
	keyRetryIn   = "retry_in"
	keyArgv      = "argv"
	keyOutput    = "output"
	keyCoreOS    = "coreos_installer"
	keyDuration  = "duration"
	keyCount     = "count"
)
