package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coreos/ignition/v2/config/v3_4"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// A sandbox host booted from its installed disk: the `nodezero run` the
// sandbox starts again after the fake firmware's reboot. It reads its disk
// back, verifies the image digest and its Ignition (role, hostname, host
// id), and reports Configuring → Joined → Done the way OpenShift's
// in-cluster assisted-installer-controller would (Controller). No
// OpenShift runs: that part is simulated, and the log and the console say
// so.

// Installed is what RunInstalled needs besides the fake firmware's record.
type Installed struct {
	// Root is the host's root directory; Payload the factory image's
	// payload directory, whose OS image the disk must hold.
	Root, Payload string
	// ServiceURL, AgentToken and ServiceCACert are the host's
	// rendezvous-host.env's SERVICE_BASE_URL, agent token and API CA file.
	ServiceURL, AgentToken, ServiceCACert string
	// AppliedRoot is where the installed OS's own Ignition applied the
	// host's config (a real machine: "/"); empty, the Ignition is read
	// back from the disk, which nothing booted (a sandbox host).
	AppliedRoot string
	// DNSServer, "host:port", is the host's resolver ("": the system's):
	// a day-2 host resolves its machine config server and the cluster's
	// API through it.
	DNSServer string
	// Addresses are the host's own (a sandbox host's, on loopback): a
	// day-2 host's Node lists them.
	Addresses []netip.Prefix
	// NeverJoin and Settle: Controller's.
	NeverJoin bool
	Settle    time.Duration
	// Service runs node zero's service again (node zero only; nil on
	// other hosts), returning its user client and where its end is sent.
	Service func(ctx context.Context) (*wire.Client, <-chan error, error)
	Status  func(string)
	Log     *slog.Logger
}

// RunInstalled is a host booted from its installed disk d. Once its part
// is done it keeps running (node zero keeps serving the API) until ctx
// ends or the service stops.
//
// A disk whose Ignition is a pointer config to the cluster's machine
// config server is a day-2 host's: it reports to no service, and joins
// the cluster as a kubelet would (runDay2).
func RunInstalled(ctx context.Context, d *onhost.BootDisk, o Installed) error {
	var ign []byte
	var readErr error
	if o.AppliedRoot == "" {
		ign, readErr = diskIgnition(d, o.Payload)
		if readErr == nil {
			p, err := ParsePointer(ign)
			if err == nil && p != nil {
				return runDay2(ctx, d, p, o)
			}
		} else if isDay2Root(o.Root) {
			logDay2Held(o.Log.With("stage", "installed", "day2", true), o.Status, readErr)
			return hold(ctx)
		}
	}
	log := o.Log.With("stage", "installed")
	// Said at info: it is how every sandbox install goes on, not a
	// problem (a healthy install logs no warning).
	log.Info("SIMULATED: this host booted its installed disk; no OpenShift runs here. nodezero checks the disk and reports Configuring, Joined and Done as the in-cluster controller would")
	o.Status("Installed disk booted (sandbox: the cluster's OpenShift is simulated)")

	var served <-chan error
	var user *wire.Client
	var err error
	if o.Service != nil {
		if user, served, err = o.Service(ctx); err != nil {
			return err
		}
	}
	agent, err := wire.NewClient(strings.TrimSuffix(o.ServiceURL, "/"), wire.WithAgentToken(o.AgentToken), wire.WithCACertFile(o.ServiceCACert))
	if err != nil {
		return err
	}
	c := &Controller{Agent: agent, Cluster: user, NeverJoin: o.NeverJoin, Settle: o.Settle, Status: o.Status, Log: log}
	if o.AppliedRoot == "" {
		// A Cluster API Machine's host registers its own Node
		// (machine.go).
		if c.Node, err = NodeRegistration(o.Root, d, o.Addresses, log); err != nil {
			return fmt.Errorf("the host's Node: %w", err)
		}
	}
	if user != nil {
		// The sandbox's kube API, when it runs one: the operators' and
		// the cluster version's status go there.
		if c.Kube, err = LoadStatusWriter(o.Root, log); err != nil {
			return fmt.Errorf("the installed cluster's kubeconfig: %w", err)
		}
		if c.Kube != nil && c.Node != nil {
			c.Kube.hostsOwnNodes = true
		}
	}
	verify := func() error {
		if readErr != nil {
			return readErr
		}
		return verifyIgnition(d, o.Root, ign)
	}
	if o.AppliedRoot != "" {
		verify = func() error { return VerifyApplied(d, o.AppliedRoot) }
	}
	err = c.Run(ctx, d, verify)
	if err != nil && !errors.Is(err, ErrHeld) {
		return err
	}
	// Held or done, the host stays up.
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}

// VerifyDisk reads the disk back: the image digest (outside the Ignition
// partition) and the Ignition the first boot would apply, which must be
// this host's (under root): its role, hostname and host id.
func VerifyDisk(d *onhost.BootDisk, root, payloadDir string) error {
	ign, err := diskIgnition(d, payloadDir)
	if err != nil {
		return err
	}
	return verifyIgnition(d, root, ign)
}

// diskIgnition reads the disk back: the image digest (outside the
// Ignition partition) must be the payload's; it returns the Ignition the
// first boot would apply.
func diskIgnition(d *onhost.BootDisk, payloadDir string) ([]byte, error) {
	p, err := diskwrite.LoadPayload(payloadDir)
	if err != nil {
		return nil, err
	}
	return diskwrite.Verify(d.Disk, p.OS)
}

// verifyIgnition checks that the disk's Ignition is this host's (under
// root): its role, hostname and host id.
func verifyIgnition(d *onhost.BootDisk, root string, ign []byte) error {
	files, err := IgnitionFiles(ign)
	if err != nil {
		return fmt.Errorf("the installed disk's Ignition: %w", err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "etc/hostname"))
	hostname := strings.TrimSpace(string(b))
	if hostname == "" {
		// A Cluster API Machine's host has no name of its own before
		// its install: the service gives it its Machine's.
		if m, err := readMachineBinding(root); err == nil && m != nil {
			hostname = m.Name
		}
	}
	return checkIdentity(d, hostname, func(p string) (string, bool) {
		v, ok := files[p]
		return v, ok
	}, "the installed disk's Ignition")
}

// VerifyApplied checks what Ignition applied on a real machine's installed
// OS under root: the files that say who the host is must be there and be
// this host's. Its hostname is the one Ignition wrote.
func VerifyApplied(d *onhost.BootDisk, root string) error {
	read := func(p string) (string, bool) {
		b, err := os.ReadFile(filepath.Join(root, p))
		return string(b), err == nil
	}
	hostname, ok := read("/etc/hostname")
	if !ok {
		return errors.New("the installed OS has no /etc/hostname: its Ignition applied none")
	}
	return checkIdentity(d, strings.TrimSpace(hostname), read, "the installed OS (as Ignition applied it)")
}

// checkIdentity checks the role, host id and hostname files read gives
// against the host d is and its hostname; where names the source.
func checkIdentity(d *onhost.BootDisk, hostname string, read func(string) (string, bool), where string) error {
	wantRole := "master"
	if wire.HostRole(d.Role) == wire.HostRoleWorker {
		wantRole = "worker"
	}
	checks := []struct{ path, want string }{
		{"/etc/nodezero/role", wantRole},
		{"/etc/nodezero/host-id", d.HostID},
		{"/etc/hostname", hostname},
	}
	for _, c := range checks {
		got, ok := read(c.path)
		if !ok {
			return fmt.Errorf("%s has no %s", where, c.path)
		}
		if strings.TrimSpace(got) != c.want {
			return fmt.Errorf("%s says %s is %q; this host wants %q", where, c.path, strings.TrimSpace(got), c.want)
		}
	}
	return nil
}

// IgnitionFiles parses an Ignition config and returns its inline files'
// contents by path.
func IgnitionFiles(ign []byte) (map[string]string, error) {
	cfg, rpt, err := v3_4.ParseCompatibleVersion(ign)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, rpt.String())
	}
	out := map[string]string{}
	for _, f := range cfg.Storage.Files {
		if f.Contents.Source == nil || *f.Contents.Source == "" {
			continue
		}
		u, err := dataurl.DecodeString(*f.Contents.Source)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		out[f.Path] = string(u.Data)
	}
	return out, nil
}
