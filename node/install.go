package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nodezero/nodezero/hostagent"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// InstallOptions wire the install step (hostagent/installer) into an agent.
type InstallOptions struct {
	// Root is the host's root: /opt/install-dir and the NetworkManager
	// keyfiles --copy-network copies live under it.
	Root string
	// Live: the agent writes the real disk the service names, with
	// coreos-installer when the host has it, and reboots through logind.
	// Otherwise (a hardware-tree host) the disk is its stand-in file, the
	// built-in writer writes it, and Reboot is the sandbox's.
	Live bool
	// Payload is the factory image's payload directory (payload.json and
	// the OS image the built-in writer streams).
	Payload string
	Disks   DiskFiles
	// Rebooter ends the host's life in the live system, for one install
	// request; nil is logind's (a live host).
	Rebooter func(req wire.InstallCmdRequest) (installer.Rebooter, error)
	// RebootDelay overrides the installer's per-role delay (HA: 1 minute);
	// negative: the installer's default.
	RebootDelay time.Duration
	// ControlPlaneTimeout bounds the bootstrap host's wait for the other
	// control-plane hosts (0: the installer's default, assisted's 60 m).
	ControlPlaneTimeout time.Duration
	// Poll is how often the installer looks at its peers (0: 5 s).
	Poll   time.Duration
	Logger *slog.Logger
}

// agentService is the installer's view of node zero through the v2 API
// with the agent token.
type agentService struct {
	c   *wire.Client
	req wire.InstallCmdRequest
}

func (s agentService) UpdateProgress(ctx context.Context, stage wire.HostStage, info string) error {
	return s.c.UpdateHostInstallProgress(ctx, s.req.InfraEnvID, s.req.HostID, wire.HostProgress{CurrentStage: stage, ProgressInfo: info})
}

func (s agentService) HostIgnition(ctx context.Context) ([]byte, error) {
	return s.c.DownloadHostIgnition(ctx, s.req.InfraEnvID, s.req.HostID)
}

func (s agentService) ClusterHosts(ctx context.Context, role wire.HostRole) ([]*wire.Host, error) {
	return s.c.ListClusterHostsQuery(ctx, s.req.ClusterID, wire.HostsQuery{Role: role})
}

// addInstallStep registers the install step, talking to the service
// through c.
func addInstallStep(steps *hostagent.Steps, c *wire.Client, o InstallOptions) {
	steps.Handle(wire.StepTypeInstall, installer.Step(func(req wire.InstallCmdRequest) (installer.Config, error) {
		return o.config(c, req)
	}))
}

// resumeInstall continues an installation a restart of this process cut
// short (installer.Resume); it reports whether one was resumed and has
// scheduled its reboot. A resumed installation that fails has reported
// Failed: the agent then registers as usual.
func resumeInstall(ctx context.Context, c *wire.Client, o InstallOptions) bool {
	err := installer.Resume(ctx, o.Root, func(req wire.InstallCmdRequest) (installer.Config, error) { return o.config(c, req) })
	switch {
	case err == nil:
		return true
	case errors.Is(err, installer.ErrNothingToResume):
		o.log().Debug("no installation to resume", "err", err, "stage", "install")
	default:
		o.log().Error("resumed installation ended", "err", err, "stage", "install")
	}
	return false
}

func (o InstallOptions) log() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// config is the installer's configuration for req.
func (o InstallOptions) config(c *wire.Client, req wire.InstallCmdRequest) (installer.Config, error) {
	cfg := installer.Config{
		Request: req, Service: agentService{c: c, req: req},
		Root: o.Root, Poll: o.Poll, ControlPlaneTimeout: o.ControlPlaneTimeout,
		Logger: o.Logger,
	}
	if o.RebootDelay >= 0 {
		cfg.RebootDelay = o.RebootDelay
	}
	payload, perr := diskwrite.LoadPayload(o.Payload)
	write := func(ctx context.Context, device string, ignition []byte, progress func(int)) error {
		if perr != nil {
			return fmt.Errorf("the built-in writer needs the factory image's payload: %w", perr)
		}
		target := device
		if !o.Live {
			p, err := o.Disks.Path(device)
			if err != nil {
				return err
			}
			target = p
		}
		_, err := diskwrite.Write(ctx, diskwrite.Options{
			Device: target, Payload: payload, Ignition: ignition,
			Progress: func(written, total int64) {
				if total > 0 {
					progress(int(written * 100 / total))
				}
			},
		})
		return err
	}
	cfg.Write = write
	if perr == nil {
		cfg.BootEntry = installer.BootEntry{Partition: payload.OS.EFIPartition, Loader: payload.OS.EFILoader, Label: payload.OS.EFILabel}
	}
	if !o.Live {
		// A hardware-tree host has neither coreos-installer nor
		// firmware of its own: the machine's must not be touched.
		cfg.CoreOSInstaller, cfg.Efibootmgr = "-", "-"
		cfg.EFIDir = filepath.Join(o.Disks.HardwareRoot, "sys/firmware/efi")
	}
	cfg.Reboot = installer.LogindRebooter()
	if o.Live {
		cfg.Console = kernelConsole(o.log())
		cfg.Reboot = recordingRebooter{root: o.Root, next: cfg.Reboot, disk: onhost.BootDisk{
			Disk: resolveDevice(req.BootDevice), BootDevice: req.BootDevice, ClusterID: req.ClusterID,
			InfraEnvID: req.InfraEnvID, HostID: req.HostID, Role: string(req.Role),
			ControlPlaneCount: req.ControlPlaneCount, Live: true,
		}}
	}
	if o.Rebooter != nil {
		r, err := o.Rebooter(req)
		if err != nil {
			return cfg, err
		}
		cfg.Reboot = r
	}
	return cfg, nil
}

// recordingRebooter is a live host's reboot: it records who the host is on
// the disk it just wrote (ROOT/var/lib/nodezero/boot-disk.json, Live),
// then reboots through next. The record stays on the factory disk; the
// installed OS's simulated in-cluster part (sim.RunInstalled) reads it
// from there after the reboot, as a sandbox host reads its fake
// firmware's.
type recordingRebooter struct {
	root string
	disk onhost.BootDisk
	next installer.Rebooter
}

func (r recordingRebooter) Reboot(ctx context.Context, delay time.Duration, message string) error {
	r.disk.RebootedAt = time.Now().UTC()
	b, err := r.disk.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(r.root, onhost.BootDiskPath), b, 0o644); err != nil {
		return fmt.Errorf("record the boot disk before the reboot: %w", err)
	}
	return r.next.Reboot(ctx, delay, message)
}

// resolveDevice follows a /dev/disk/by-* link to its device node; a path
// that does not resolve is kept as given.
func resolveDevice(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// kernelConsole writes lines to the kernel log (/dev/kmsg, at notice
// level), which the kernel prints on the machine's consoles, the serial
// line included: the install's milestones reach the person at the machine
// whatever else holds the terminal. A host where /dev/kmsg cannot be
// written logs why once and goes on.
func kernelConsole(log *slog.Logger) func(string) {
	var once sync.Once
	return func(line string) {
		f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("<5>nodezero: " + line + "\n")
			f.Close()
		}
		if err != nil {
			once.Do(func() { log.Info("the install's milestones stay off the console", "err", err) })
		}
	}
}
