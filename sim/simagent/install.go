package simagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sim"
	"github.com/nodezero/nodezero/wire"
)

// The install step of a simulated host. It is the real installer
// (hostagent/installer.Run, through the same installer.Step adapter the
// host agent registers), so the stages each role reports, their order, the
// write progress cadence and the bootstrap host's waits are the real ones.
// Only the hardware edge is simulated: the "disk" is a sparse file under
// InstallConfig.Dir, and the reboot ends the host's discovery agent and
// starts the simulated in-cluster controller (sim.Controller, the one a
// sandbox host runs on its booted disk) — verify the disk, report the
// stages OpenShift's controller would, and on the bootstrap host (node
// zero) complete the installation once the cluster is finalizing.

// Request kinds of the install.
const (
	KindProgress     = sim.KindProgress            // PUT .../progress: the installer and the installed host
	KindIgnition     = "host-ignition"             // the installer's ignition download
	KindClusterHosts = "cluster-hosts (installer)" // the installer's waits
	KindListHosts    = sim.KindListHosts           // the installed host, after a 409 on its progress
	KindGetCluster   = sim.KindGetCluster          // node zero waiting for finalizing
	KindComplete     = sim.KindComplete            // node zero's last call
)

const (
	writeSteps       = 20               // the image is written in 5 % steps
	defaultReboot    = time.Second      // InstallConfig.RebootDelay's default
	stopInstallWait  = 30 * time.Second // hostagent.DefaultStopWait
	diskFileName     = "disk.img"       // under the host's directory
	rootDirName      = "root"           // the installer's Config.Root
	ignitionTailSize = int64(len(ignitionTailMagic))
)

// ignitionTailMagic ends the ignition on the simulated disk, so the
// installed host can find and check it.
const ignitionTailMagic = "NZSIMIGN"

// InstallConfig is how simulated hosts run the install step.
type InstallConfig struct {
	// Dir holds one directory per host: the installer's root (its journal
	// and the saved ignition) and the disk file. "" refuses the install
	// step: the installer's root would be this machine's "/".
	Dir string
	// DiskMiB is how much image data each host writes to its disk file
	// (a sparse file the size of the disk); 0 writes only the ignition.
	DiskMiB int
	// WriteTime is how long writing the image takes: the data and the
	// progress reports are spread over it in 5 % steps.
	WriteTime time.Duration
	// RebootDelay is the time from "Rebooting" to the reboot; 0 is a
	// second (a real multi-node host waits a minute).
	RebootDelay time.Duration
	// Poll is how often the installer's waits list the cluster's hosts;
	// 0 is the installer's default (5 s).
	Poll time.Duration
}

func (c InstallConfig) rebootDelay() time.Duration {
	if c.RebootDelay <= 0 {
		return defaultReboot
	}
	return c.RebootDelay
}

// bootDisk is what the simulated firmware boots after the reboot: the disk
// the installer wrote and who the host was when it wrote it (the record a
// sandbox host keeps), and where on the disk its ignition lies.
type bootDisk struct {
	onhost.BootDisk
	ignitionAt  int64    // offset of the ignition on the disk
	ignitionLen int64    // its length
	ignitionSum [32]byte // its SHA-256
}

// installation is the install step running in its own goroutine, as the
// real agent runs every step: the instruction loop keeps asking meanwhile.
type installation struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// installStep starts st unless an install is already running (the real
// agent does not start a step type twice). It runs the installer, posts
// its reply, and when the reboot was scheduled, waits the reboot delay and
// calls reboot with the disk.
func (a *Agent) installStep(ctx context.Context, st *wire.Step, reboot func(*bootDisk)) {
	a.instMu.Lock()
	defer a.instMu.Unlock()
	if a.inst != nil {
		select {
		case <-a.inst.done:
		default:
			return // still running: its reply answers for this step too
		}
	}
	ictx, cancel := context.WithCancel(ctx)
	in := &installation{cancel: cancel, done: make(chan struct{})}
	a.inst = in
	go func() { // owned by the instruction loop, which waits for done
		defer close(in.done)
		defer cancel()
		var disk *bootDisk
		run := installer.Step(func(req wire.InstallCmdRequest) (installer.Config, error) {
			return a.installerConfig(req, func(d *bootDisk) { disk = d })
		})
		_, stderr, code := run(ictx, st.Args)
		if ctx.Err() != nil {
			return // the agent stopped (or the host rebooted) meanwhile
		}
		// The reply goes out with the step's own id even when stopped.
		a.post(ctx, st, "", stderr, code, nil)
		if code != 0 || disk == nil || ictx.Err() != nil {
			return
		}
		if backoff.Sleep(ctx, a.cfg.Install.rebootDelay()) {
			reboot(disk)
		}
	}()
}

// stopInstall is the stop-installation step: it cancels a running install
// and waits for it, as the real agent stops the installer container.
func (a *Agent) stopInstall() (stderr string, code int) {
	a.instMu.Lock()
	in := a.inst
	a.instMu.Unlock()
	if in == nil {
		return "", 0
	}
	in.cancel()
	select {
	case <-in.done:
		return "", 0
	case <-time.After(stopInstallWait):
		return fmt.Sprintf("stop installation: the install step is still running %s after it was cancelled", stopInstallWait), 1
	}
}

// waitInstall waits for a running install to return (its context is the
// instruction loop's, which has ended).
func (a *Agent) waitInstall() {
	a.instMu.Lock()
	in := a.inst
	a.instMu.Unlock()
	if in != nil {
		<-in.done
	}
}

// errNoInstallDir refuses an install step on a fleet without a directory.
var errNoInstallDir = errors.New("this simulated host has no install directory (InstallConfig.Dir)")

// installerConfig is the simulated host's installer.Config: the real
// installer with the disk writer and the reboot simulated.
func (a *Agent) installerConfig(req wire.InstallCmdRequest, scheduled func(*bootDisk)) (installer.Config, error) {
	ic := a.cfg.Install
	if ic.Dir == "" {
		return installer.Config{}, errNoInstallDir
	}
	if req.HostID != a.sessionHostID() {
		return installer.Config{}, fmt.Errorf("install request for host %s sent to host %s", req.HostID, a.sessionHostID())
	}
	dir := filepath.Join(ic.Dir, a.cfg.Host.Hostname)
	disk := &bootDisk{BootDisk: onhost.BootDisk{Disk: filepath.Join(dir, diskFileName), BootDevice: req.BootDevice,
		ClusterID: req.ClusterID, InfraEnvID: req.InfraEnvID, HostID: req.HostID, Role: string(req.Role), ControlPlaneCount: req.ControlPlaneCount}}
	svc := &observedService{c: a.cfg.Client, req: req, obs: a.cfg.Observer}
	return installer.Config{
		Service: svc,
		Write: func(ctx context.Context, device string, ign []byte, progress func(int)) error {
			return a.writeDisk(ctx, disk, device, ign, progress)
		},
		// No tool of this machine may run, nor its firmware be touched.
		CoreOSInstaller: "-", Efibootmgr: "-", EFIDir: filepath.Join(dir, "no-efi"),
		Root:        filepath.Join(dir, rootDirName),
		Reboot:      rebooter(func() { scheduled(disk) }),
		RebootDelay: ic.rebootDelay(),
		Poll:        ic.Poll,
	}, nil
}

// rebooter is the simulated reboot: it only records that the installer
// scheduled one; the install goroutine carries it out after the delay.
type rebooter func()

func (r rebooter) Reboot(context.Context, time.Duration, string) error {
	r()
	return nil
}

// imageChunk is the data every simulated disk is written from, shared by
// all hosts so that a thousand writers hold one buffer.
var imageChunk = sync.OnceValue(func() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = byte(i*7 + i>>10)
	}
	return b
})

// writeDisk is the built-in writer's stand-in: the host's disk from its
// inventory becomes a sparse file of its size, DiskMiB of image data go at
// its start in 5 % steps spread over WriteTime (each step reported), and
// the ignition follows, then a sync.
func (a *Agent) writeDisk(ctx context.Context, disk *bootDisk, device string, ign []byte, progress func(int)) error {
	size, ok := a.diskSize(device)
	if !ok {
		return fmt.Errorf("simulated host %s has no disk %s", a.cfg.Host.Hostname, device)
	}
	image := int64(a.cfg.Install.DiskMiB) << 20
	if need := image + int64(len(ign)) + ignitionTailSize; need > size {
		return fmt.Errorf("disk %s holds %d bytes, the image and ignition need %d", device, size, need)
	}
	if err := os.MkdirAll(filepath.Dir(disk.Disk), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(disk.Disk, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return fmt.Errorf("size the disk file: %w", err)
	}
	start, chunk := time.Now(), imageChunk()
	var off int64
	for step := 1; step <= writeSteps; step++ {
		end := image * int64(step) / writeSteps
		for off < end {
			n, err := f.WriteAt(chunk[:min(int64(len(chunk)), end-off)], off)
			if err != nil {
				return fmt.Errorf("write image: %w", err)
			}
			off += int64(n)
		}
		// Paced against the start, so the write takes WriteTime however
		// long the writes themselves took.
		if !backoff.Sleep(ctx, time.Until(start.Add(a.cfg.Install.WriteTime*time.Duration(step)/writeSteps))) {
			return ctx.Err()
		}
		progress(step * 100 / writeSteps)
	}
	tail := append(append([]byte(nil), ign...), ignitionTailMagic...)
	if _, err := f.WriteAt(tail, image); err != nil {
		return fmt.Errorf("write ignition: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync disk file: %w", err)
	}
	disk.ignitionAt, disk.ignitionLen, disk.ignitionSum = image, int64(len(ign)), sha256.Sum256(ign)
	return f.Close()
}

// diskSize finds device among the host's disks by any of its names.
func (a *Agent) diskSize(device string) (int64, bool) {
	for _, d := range a.cfg.Host.Inventory().Disks {
		if d != nil && (d.Path == device || d.ByID == device || d.ID == device || d.ByPath == device) {
			return d.SizeBytes, true
		}
	}
	return 0, false
}

// verify reads the ignition back from the booted disk: the installed
// system's first boot would apply it.
func (d *bootDisk) verify() error {
	f, err := os.Open(d.Disk)
	if err != nil {
		return fmt.Errorf("the installed disk: %w", err)
	}
	defer f.Close()
	b := make([]byte, d.ignitionLen+ignitionTailSize)
	if _, err := f.ReadAt(b, d.ignitionAt); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the installed disk's ignition: %w", err)
	}
	ign, tail := b[:d.ignitionLen], b[d.ignitionLen:]
	if !bytes.Equal(tail, []byte(ignitionTailMagic)) || sha256.Sum256(ign) != d.ignitionSum {
		return fmt.Errorf("the installed disk %s does not hold the ignition written to it", d.Disk)
	}
	return nil
}

// installed is the host booted from its disk: the simulated in-cluster
// controller, as a sandbox host runs it, without a service of its own or
// a kube API. It returns once the host reported Done (node zero: once the
// installation is complete) or failed.
func (a *Agent) installed(ctx context.Context, d *bootDisk) {
	c := &sim.Controller{Agent: a.cfg.Client, Observer: a.cfg.Observer}
	if wire.HostRole(d.Role) == wire.HostRoleBootstrap {
		c.Cluster = a.cfg.Client
	}
	_ = c.Run(ctx, &d.BootDisk, d.verify) // its end is the host's: nothing to tell
}

// observedService is installer.Service over the agent's client, each call
// timed for the load test.
type observedService struct {
	c   *wire.Client
	req wire.InstallCmdRequest
	obs Observer
}

func (s *observedService) observe(ctx context.Context, kind string, start time.Time, err error) {
	if s.obs != nil && (err == nil || ctx.Err() == nil) {
		s.obs.Observe(kind, time.Since(start), err)
	}
}

func (s *observedService) UpdateProgress(ctx context.Context, stage wire.HostStage, info string) error {
	start := time.Now()
	err := s.c.UpdateHostInstallProgress(ctx, s.req.InfraEnvID, s.req.HostID, wire.HostProgress{CurrentStage: stage, ProgressInfo: info})
	s.observe(ctx, KindProgress, start, err)
	return err
}

func (s *observedService) HostIgnition(ctx context.Context) ([]byte, error) {
	start := time.Now()
	b, err := s.c.DownloadHostIgnition(ctx, s.req.InfraEnvID, s.req.HostID)
	s.observe(ctx, KindIgnition, start, err)
	return b, err
}

// ClusterHosts asks for what the installer's waits read: roles, statuses
// and progress, no inventories or reports.
func (s *observedService) ClusterHosts(ctx context.Context, role wire.HostRole) ([]*wire.Host, error) {
	return s.list(ctx, wire.HostsQuery{Role: role})
}

func (s *observedService) list(ctx context.Context, q wire.HostsQuery) ([]*wire.Host, error) {
	start := time.Now()
	hs, err := s.c.ListClusterHostsQuery(ctx, s.req.ClusterID, q)
	s.observe(ctx, KindClusterHosts, start, err)
	return hs, err
}
