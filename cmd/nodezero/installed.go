package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coreos/ignition/v2/config/v3_4"
	"github.com/coreos/ignition/v2/config/v3_4/types"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodezero/nodezero/daemon/boot"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// The hardware edge of a sandbox or test host after the install step:
// rebooting and the firmware's boot order are faked here, and only here.
//
// A host read from a hardware tree cannot reboot the machine. When the
// installer reboots it, bootFromDisk records in ROOT/var/lib/nodezero
// that the firmware now boots the written disk, and the `nodezero run`
// process ends with exitReboot; the sandbox starts the same command again,
// which finds the record and boots "installed": it reads its disk back,
// verifies the image digest and its Ignition (role, hostname, host id), and
// reports Configuring → Joined → Done the way OpenShift's in-cluster
// assisted-installer-controller would. No OpenShift runs: that part is
// simulated, and the log and the console say so.

// bootDiskPath records the disk the fake firmware boots.
const bootDiskPath = "/var/lib/nodezero/boot-disk.json"

// exitReboot is the exit status of a `nodezero run` whose host rebooted
// into its installed disk (the sandbox restarts it).
const exitReboot = 10

// errReboot ends a run whose host rebooted.
var errReboot = rebootError{}

type rebootError struct{}

func (rebootError) Error() string {
	return "the host rebooted into its installed disk (sandbox: start it again)"
}
func (rebootError) ExitStatus() int { return exitReboot }

// bootDisk is what the fake firmware keeps: the disk to boot, and who the
// host was when it wrote it.
type bootDisk struct {
	Disk       string        `json:"disk"`        // the stand-in file written
	BootDevice string        `json:"boot_device"` // the device the service named
	ClusterID  string        `json:"cluster_id"`
	InfraEnvID string        `json:"infra_env_id"`
	HostID     string        `json:"host_id"`
	Role       wire.HostRole `json:"role"` // as the install step gave it: bootstrap, master, worker
	// ControlPlaneCount is 1 on a single node, whose stages after the
	// reboot are Joined and Done only.
	ControlPlaneCount int64     `json:"control_plane_count,omitempty"`
	RebootedAt        time.Time `json:"rebooted_at"`
}

// fakeRebooter is the Rebooter of a hardware-tree host: it records the
// boot disk and, after the delay (at least a second, so the install step's
// reply is posted first), ends the run with errReboot.
type fakeRebooter struct {
	root string
	disk bootDisk
	end  context.CancelCauseFunc
	log  *slog.Logger
}

func (r *fakeRebooter) Reboot(ctx context.Context, delay time.Duration, message string) error {
	r.disk.RebootedAt = time.Now().UTC()
	b, err := json.MarshalIndent(r.disk, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(r.root, bootDiskPath), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("fake firmware: %w", err)
	}
	wait := max(delay, time.Second)
	r.log.Info("rebooting (simulated: this process ends and the sandbox starts it again from the written disk)",
		"in", wait, "message", message, "disk", r.disk.Disk, "stage", "install")
	time.AfterFunc(wait, func() { r.end(errReboot) })
	return nil
}

var _ installer.Rebooter = (*fakeRebooter)(nil)

// readBootDisk returns the fake firmware's record, or nil when the host
// boots its factory image.
func readBootDisk(root string) (*bootDisk, error) {
	b, err := os.ReadFile(filepath.Join(root, bootDiskPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d bootDisk
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, bootDiskPath), err)
	}
	return &d, nil
}

// installedOptions are what runInstalled needs besides the record.
type installedOptions struct {
	root, payload string
	// neverJoin: a fault for tests: the host verifies its disk and reports
	// Configuring, but never Joined (a control-plane host that never
	// joins).
	neverJoin bool
	// settle is how long the host stays in Configuring and in Joined; a
	// real node spends minutes there, the sandbox none unless asked.
	settle time.Duration
	// service runs node zero's service again (node zero only); nil on
	// other hosts.
	service func(ctx context.Context, env boot.Env) (*wire.Client, <-chan error, error)
	status  func(string)
	log     *slog.Logger
}

// runInstalled is a host booted from its installed disk.
func runInstalled(ctx context.Context, d *bootDisk, o installedOptions) error {
	log := o.log.With("stage", "installed")
	env, err := boot.ReadEnv(o.root)
	if err != nil {
		return err
	}
	log.Warn("SIMULATED: this host booted its installed disk; no OpenShift runs here. nodezero checks the disk and reports Configuring, Joined and Done as the in-cluster controller would")
	o.status("Installed disk booted (sandbox: the cluster's OpenShift is simulated)")

	var served <-chan error
	var user *wire.Client
	if o.service != nil {
		if user, served, err = o.service(ctx, env); err != nil {
			return err
		}
	}
	agent, err := wire.NewClient(strings.TrimSuffix(env.ServiceBaseURL, "/"), wire.WithAgentToken(env.AgentToken), wire.WithCACertFile(env.ServiceCACert))
	if err != nil {
		return err
	}
	report := func(stage wire.HostStage, info string) error {
		return retry(ctx, log, "report "+string(stage), func() error {
			err := agent.UpdateHostInstallProgress(ctx, d.InfraEnvID, d.HostID, wire.HostProgress{CurrentStage: stage, ProgressInfo: info})
			var apiErr *wire.APIError
			if errors.As(err, &apiErr) && apiErr.StatusCode == 409 {
				// Already there (a restart of this host), unless node zero
				// no longer counts this host in: then it must not say it
				// is installed.
				// (v2GetHost is the user's; the agent lists its infra-env.)
				hs, lerr := agent.ListHosts(ctx, d.InfraEnvID)
				if lerr != nil {
					return lerr
				}
				for _, h := range hs {
					if h.ID == d.HostID && slices.Contains(outOfInstall, h.Status) {
						return permanent{fmt.Errorf("%w: node zero has the host %s (%s)", errRefusedStage, h.Status, h.StatusInfo)}
					}
				}
				return nil
			}
			if errors.As(err, &apiErr) && apiErr.StatusCode < 500 && apiErr.StatusCode != 408 && apiErr.StatusCode != 429 {
				return permanent{err}
			}
			return err
		})
	}

	if verr := verifyInstalledDisk(d, o.root, o.payload); verr != nil {
		log.Error("the installed disk does not boot as written", "err", verr)
		_ = report(wire.HostStageFailed, verr.Error())
		return wait(ctx, served)
	}
	log.Info("installed disk verified: image digest and Ignition (role, hostname, host id) match", "disk", d.Disk)

	for _, st := range installer.BootedSteps(d.Role, d.ControlPlaneCount) {
		if st.Stage == wire.HostStageJoined && o.neverJoin {
			log.Warn("fault injected: this host never joins the control plane")
			return wait(ctx, served)
		}
		err := report(st.Stage, st.Info)
		if errors.Is(err, errRefusedStage) {
			// Node zero no longer counts this host in: it keeps its
			// disk, and says why instead of claiming it is installed.
			log.Error("this host booted its installed disk, but node zero refused its progress: it is not part of the cluster", "err", err)
			o.status("Installed disk booted, but node zero refused this host: " + err.Error())
			return wait(ctx, served)
		}
		if err != nil {
			return err
		}
		if st.Settle && !backoff.Sleep(ctx, o.settle) {
			return ctx.Err()
		}
	}
	log.Info("host installed")
	o.status("Host installed (simulated OpenShift)")
	if user != nil {
		// The sandbox's kube API, when it runs one: the operators' and
		// the cluster version's status go there.
		kw, err := newClusterStatusWriter(o.root, log)
		if err != nil {
			return fmt.Errorf("the installed cluster's kubeconfig: %w", err)
		}
		if err := completeWhenFinalizing(ctx, user, agent, d.ClusterID, kw, log); err != nil {
			return err
		}
	}
	return wait(ctx, served)
}

// completeWhenFinalizing is the simulated controller's last act: once the
// cluster is finalizing, it reports the installation complete. With a
// kube API (kw not nil) it writes the operators' status there as the hosts
// join, and completes only once the ClusterVersion is Available.
func completeWhenFinalizing(ctx context.Context, user, agent *wire.Client, clusterID string, kw *clusterStatusWriter, log *slog.Logger) error {
	for {
		var c *wire.Cluster
		var err error
		if kw != nil {
			c, err = user.GetCluster(ctx, clusterID) // the hosts' stages too
		} else {
			c, err = user.GetClusterExcludingHosts(ctx, clusterID) // the status only
		}
		cvReady := true
		if err == nil && kw != nil {
			var serr error
			if cvReady, serr = kw.sync(ctx, c); serr != nil {
				kw.failed(serr)
			}
		}
		if err == nil {
			switch c.Status {
			case wire.ClusterStatusFinalizing:
				if !cvReady {
					break // the cluster version is not Available yet
				}
				ok := true
				if _, err := agent.CompleteInstallation(ctx, clusterID, wire.CompletionParams{IsSuccess: &ok}); err != nil {
					log.Warn("complete installation", "err", err)
					break
				}
				log.Info("installation complete (reported by the simulated controller)", "cluster", clusterID)
				return nil
			case wire.ClusterStatusInstalled:
				if cvReady {
					return nil
				}
			case wire.ClusterStatusError, wire.ClusterStatusCancelled:
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// verifyInstalledDisk reads the disk back: the image digest (outside the
// Ignition partition) and the Ignition the first boot would apply, which
// must be this host's: its role, hostname and host id.
func verifyInstalledDisk(d *bootDisk, root, payloadDir string) error {
	p, err := diskwrite.LoadPayload(payloadDir)
	if err != nil {
		return err
	}
	ign, err := diskwrite.Verify(d.Disk, p.OS)
	if err != nil {
		return err
	}
	files, err := ignitionFiles(ign)
	if err != nil {
		return fmt.Errorf("the installed disk's Ignition: %w", err)
	}
	wantRole := "master"
	if d.Role == wire.HostRoleWorker {
		wantRole = "worker"
	}
	hostname, _ := os.ReadFile(filepath.Join(root, "etc/hostname"))
	checks := []struct{ path, want string }{
		{"/etc/nodezero/role", wantRole},
		{"/etc/nodezero/host-id", d.HostID},
		{"/etc/hostname", strings.TrimSpace(string(hostname))},
	}
	for _, c := range checks {
		got, ok := files[c.path]
		if !ok {
			return fmt.Errorf("the installed disk's Ignition has no %s", c.path)
		}
		if strings.TrimSpace(got) != c.want {
			return fmt.Errorf("the installed disk's Ignition says %s is %q; this host wants %q", c.path, strings.TrimSpace(got), c.want)
		}
	}
	return nil
}

// ignitionFiles parses an Ignition config and returns its inline files'
// contents by path.
func ignitionFiles(ign []byte) (map[string]string, error) {
	cfg, rpt, err := v3_4.ParseCompatibleVersion(ign)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, rpt.String())
	}
	out := map[string]string{}
	for _, f := range cfg.Storage.Files {
		if src := sourceOf(f); src != "" {
			u, err := dataurl.DecodeString(src)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			out[f.Path] = string(u.Data)
		}
	}
	return out, nil
}

func sourceOf(f types.File) string {
	if f.Contents.Source != nil {
		return *f.Contents.Source
	}
	return ""
}

// retry calls fn until it succeeds or ctx ends, backing off to 5 s: node
// zero may be rebooting.
func retry(ctx context.Context, log *slog.Logger, what string, fn func() error) error {
	delay := 200 * time.Millisecond
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if p, ok := err.(permanent); ok {
			return fmt.Errorf("%s: %w", what, p.error)
		}
		log.Debug(what+": retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// errRefusedStage: node zero refused a stage because the host is out of
// the install (error, cancelled).
var errRefusedStage = errors.New("node zero refused the stage")

// outOfInstall are the host statuses in which node zero takes no more
// progress from the host.
var outOfInstall = []wire.HostStatus{wire.HostStatusError, wire.HostStatusCancelled, wire.HostStatusResetting, wire.HostStatusResettingPendingUserAction}

// permanent is an error retrying cannot fix.
type permanent struct{ error }

// wait holds an installed host until it is stopped (node zero keeps
// serving the API).
func wait(ctx context.Context, served <-chan error) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}
