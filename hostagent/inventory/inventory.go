// Package inventory is the host agent's inventory step and its host-ID
// derivation. Collect reads the hardware of a host the way
// assisted-installer-agent's `inventory` step does (src/inventory/*.go in
// openshift/assisted-installer-agent; docs/reference/agent-and-installer.md §2.1,
// §3) and returns the wire.Inventory the agent posts; HostID is the agent's
// host-ID algorithm (src/scanners/machine_uuid_scanner.go).
//
// Everything is read from a filesystem root: "/" on a real host, a synthetic
// tree under testdata/hw in tests and sandbox hosts. github.com/jaypipes/ghw
// reads block devices, memory, product, chassis and baseboard through that
// root (a ghw chroot); the rest (interfaces, CPU, boot, TPM, GPUs) is read
// from the same root directly, because the agent's tools (lscpu, dmidecode,
// file, sg_inq, systemd-detect-virt, ipmitool, netlink) have no chroot.
// Where a tool's answer is replaced by a file-based rule, the rule is
// documented next to the code.
//
// Collect never fails for missing or odd hardware data: like the agent, it
// leaves a field empty and logs at debug level. It fails only when the root
// is unusable or the context is done.
package inventory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/jaypipes/ghw"

	"github.com/nodezero/nodezero/wire"
)

// Options selects where hardware is read from and how the host presents
// itself.
type Options struct {
	// Root is the filesystem root to read hardware from: "/" on a real host,
	// a tree under testdata/hw in tests. Default: $GHW_CHROOT if set, else "/".
	Root string

	// Addresses, when non-empty, is for sandbox and test hosts that share one
	// loopback device: the root's first non-loopback NIC (by ifindex, from
	// Root/sys/class/net) is reported as a physical interface carrying exactly
	// these addresses (link-local ones dropped, as the agent drops them), with
	// a route for each of their networks and a default route per address
	// family, instead of the live addresses and the routes of
	// Root/proc/net/route and Root/proc/net/ipv6_route.
	Addresses []netip.Prefix
	// LiveRoutes reads the routes from the running system's /proc/net
	// instead of Root's: for hosts whose hardware is a tree but whose
	// network is live (the network-namespace test bed).
	LiveRoutes bool

	// Hostname is the host's name; "" means os.Hostname(). A forbidden name
	// (localhost and friends) is replaced as the agent replaces it.
	Hostname string

	// Logger receives what the agent would print as warnings, at debug
	// level. Nil discards.
	Logger *slog.Logger
}

// ErrRoot is returned when Options.Root is not a readable directory.
var ErrRoot = errors.New("hardware root is not a readable directory")

// Defaults the agent reports when ipmitool finds no BMC (src/inventory/bmc.go).
// There is no file-based source for a BMC's LAN settings, so these are always
// reported.
const (
	noBMCv4 = "0.0.0.0"
	noBMCv6 = "::/0"
)

// Collect returns the inventory of the host under o.Root, shaped as the agent
// sends it: zero and false fields are omitted by the v2 JSON tags, addresses
// are CIDR strings, link-local addresses are filtered out and disks carry the
// agent-side installation eligibility.
func Collect(ctx context.Context, o Options) (*wire.Inventory, error) {
	c, err := newCollector(o)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("collect inventory: %w", err)
	}
	inv := &wire.Inventory{BMCAddress: noBMCv4, BMCV6address: noBMCv6}
	// The sections read disjoint parts of the root and write disjoint
	// fields, so they run concurrently; most of the time is file I/O.
	var wg sync.WaitGroup
	wg.Go(func() { inv.Disks = c.disks() })
	wg.Go(func() { inv.Memory = c.memory() })
	wg.Go(func() { inv.SystemVendor = c.systemVendor() })
	wg.Go(func() {
		inv.Interfaces = c.interfaces()
		inv.Routes = c.routes(inv.Interfaces)
	})
	inv.Boot = c.boot()
	inv.CPU = c.cpu()
	inv.GPUs = c.gpus()
	inv.TPMVersion = c.tpmVersion()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("collect inventory: %w", err)
	}
	inv.Hostname = c.hostname(inv.Interfaces)
	return inv, nil
}

// collector reads one root. Paths given to its methods are absolute paths as
// seen from inside the root ("/sys/block").
type collector struct {
	root string // absolute path of the root on this machine
	o    Options
	log  *slog.Logger
}

func newCollector(o Options) (*collector, error) {
	root := o.Root
	if root == "" {
		root = os.Getenv("GHW_CHROOT")
	}
	if root == "" {
		root = "/"
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("hardware root %q: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("hardware root %q: %w", root, ErrRoot)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &collector{root: abs, o: o, log: log.With("subsystem", "inventory")}, nil
}

// ghwOpts are the ghw options for every ghw call: read through the root,
// never run external tools, skip NUMA topology (it only adds warnings), and
// send ghw's warnings to our logger at debug level.
func (c *collector) ghwOpts() []any {
	return []any{
		ghw.WithChroot(c.root),
		ghw.WithDisableTools(),
		ghw.WithDisableTopology(),
		ghw.WithLogger(slog.New(debugHandler{c.log.With("lib", "ghw").Handler()})),
	}
}

// host maps a path inside the root to a path on this machine.
func (c *collector) host(p string) string { return filepath.Join(c.root, filepath.FromSlash(p)) }

// readRaw returns the contents of a file inside the root.
func (c *collector) readRaw(p string) (string, error) {
	b, err := os.ReadFile(c.host(p))
	return string(b), err
}

// read returns the contents of a file inside the root without surrounding
// white space, as sysfs attributes are read.
func (c *collector) read(p string) (string, error) {
	s, err := c.readRaw(p)
	return strings.TrimSpace(s), err
}

// exists reports whether p exists inside the root, following symlinks as
// resolve does (an absolute link target stays inside the root).
func (c *collector) exists(p string) bool {
	_, err := c.resolve(p)
	return err == nil
}

// resolve follows the symlinks of p the way the kernel would if the root were
// the real root: absolute link targets start again at the root, ".." never
// leaves it. It returns the resolved path as seen from inside the root.
func (c *collector) resolve(p string) (string, error) {
	const maxLinks = 40
	links := 0
	todo := strings.Split(strings.TrimPrefix(path.Clean("/"+p), "/"), "/")
	cur := "/"
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, name)
		fi, err := os.Lstat(c.host(next))
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("resolve %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(c.host(next))
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

// safely runs f and turns a panic into an error. ghw and pcidb index into
// lines of files they parse; a malformed file in a root must cost one
// section of the inventory, not the agent.
func safely(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: panic: %v", what, r)
		}
	}()
	return f()
}

// debugHandler lowers every record to debug level: ghw warns about each
// missing DMI file, which on a VM or a test tree is normal.
type debugHandler struct{ h slog.Handler }

func (d debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d debugHandler) WithAttrs(as []slog.Attr) slog.Handler { return debugHandler{d.h.WithAttrs(as)} }
func (d debugHandler) WithGroup(name string) slog.Handler    { return debugHandler{d.h.WithGroup(name)} }
