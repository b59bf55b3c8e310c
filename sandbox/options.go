package sandbox

import (
	"context"
	"io"
	"time"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/wire"
)

// Options are a sandbox run's. Run fills in the defaults of the empty
// ones marked so.
type Options struct {
	// Dir is the work directory, kept afterwards ("": a new directory
	// under /var/tmp). A directory an earlier run used is refused unless
	// Resume or Fresh.
	Dir string
	// Resume continues the install an earlier run left in Dir, at the same
	// addresses (DIR/sandbox.json); an installed one is only reported.
	// Fresh wipes Dir first.
	Resume, Fresh bool
	// HW is the directory of the hosts' hardware trees, one per host name
	// ("": the trees the sandbox needs, written into DIR/hw).
	HW string
	// Disks is the directory of the hosts' disk files, DISKS/<host>/<device>
	// ("": DIR/disks, or with DisksTmpfs a directory in /dev/shm named
	// after DIR). Keep leaves them after an install that succeeded.
	Disks      string
	DisksTmpfs bool
	Keep       bool
	// Payload is a payload directory to install ("": DIR/payload, a
	// generated OS image of ImageSize bytes with a known digest).
	Payload   string
	ImageSize int64
	// Bin is the nodezero binary the hosts run; LogLevel their log level.
	Bin, LogLevel    string
	Masters, Workers int
	// Timeout: give up when the cluster is not installed by then.
	Timeout time.Duration
	// CheckInterval is how often hosts repeat their host checks.
	CheckInterval time.Duration
	// ControlPlaneTimeout is how long the bootstrap host waits for the
	// other control-plane hosts to join (0: the installer's default).
	ControlPlaneTimeout time.Duration
	// Settle is how long a host booted from its installed disk stays in
	// Configuring and in Joined.
	Settle time.Duration
	// KeepRunning leaves the hosts running after the install until ctx
	// ends.
	KeepRunning bool
	// NeverJoin names a host that, once installed, never joins (tests).
	NeverJoin string
	// APITLS serves node zero's API over HTTPS, with certificates made
	// here (MakeAPICerts) put into the install directory's tls/.
	APITLS bool
	// NetNS runs each host in a network namespace of its own on a test
	// bed (netns.go: root, and ip, dnsmasq and docker-registry) instead
	// of on loopback.
	NetNS bool
	// VM makes every host a QEMU virtual machine booting the factory
	// image (vm.go: root, qemu, OVMF; implies NetNS's bed). VMImage makes
	// that image (required with VM).
	VM      bool
	VMImage VMImage
	// Inspect, when set, is called with VM for each VM at each Phase:
	// tests read a real machine through it (its serial console, the guest
	// agent). An error ends the run with it.
	Inspect func(ctx context.Context, phase Phase, h *Host) error
	// KubeAPI runs the installed cluster's Kubernetes API after node
	// zero's reboot (kube.go): "yes", "no", or "auto" (when the tools are
	// found). "" is no.
	KubeAPI string
	// Console shows node zero's dashboard (tui) while the install runs;
	// the progress lines then go to DIR/sandbox.log.
	Console bool
	// ConfigImage makes the config image (required).
	ConfigImage ConfigImage
	// Started, when set, is called once every host has started, with the
	// API client and the hosts (the crash tests kill processes through it).
	Started func(c *wire.Client, hosts []*Host)
	// Stdout gets the progress lines and the summary; Stderr what went
	// wrong beside the run (nil: discarded).
	Stdout, Stderr io.Writer
}

// ConfigImage is `nodezero create config-image` as the sandbox needs it:
// the command's own code, given by cmd.
type ConfigImage struct {
	// Create makes DIR/agentconfig.noarch.iso and DIR/auth/ from the
	// inputs in dir for releaseImage.
	Create func(ctx context.Context, dir, releaseImage string) error
	// State reads the credentials Create kept in dir.
	State func(dir string) (*credentials.State, error)
	// StateFile is the name of the file in dir that keeps them.
	StateFile string
}

func (o Options) stderr() io.Writer {
	if o.Stderr == nil {
		return io.Discard
	}
	return o.Stderr
}
