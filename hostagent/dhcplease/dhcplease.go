// Package dhcplease runs the dhcp-lease-allocate step: in VIP DHCP
// allocation mode the service asks one host to lease the cluster's API and
// ingress VIPs from the machine network's DHCP server. For each VIP the
// step puts a macvlan with the VIP's MAC on the host's machine-network NIC,
// runs a DHCP exchange on it (renewing the previous lease when the service
// sends one back), deletes the macvlan and reports the address and the
// lease text (docs/reference/agent-and-installer.md §2.4).
//
// It touches only the interface the request names and the macvlans it
// makes there, in the network namespace it runs in. It imports no project
// package but wire.
package dhcplease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/nodezero/nodezero/wire"
)

// Mode is the macvlan mode of the lease interfaces. Either works for
// talking to a DHCP server beyond the parent NIC: the mode only decides
// whether sibling macvlans on the same parent see each other's frames,
// and the step never has two up at once. Both are exercised in the test
// bed against dnsmasq behind a veth and a bridge.
type Mode string

const (
	// ModePrivate isolates the macvlan from its siblings; it is what the
	// real agent uses (baremetal-runtimecfg monitor.LeaseInterface).
	ModePrivate Mode = "private"
	// ModeBridge lets sibling macvlans talk to each other directly.
	ModeBridge Mode = "bridge"
)

// DefaultTimeout bounds one VIP's DHCP exchange: the real agent runs
// `timeout 28 dhclient …` per VIP.
const DefaultTimeout = 28 * time.Second

// Options tune Allocate. The zero value is the real agent's behaviour.
type Options struct {
	Mode    Mode          // default ModePrivate
	Timeout time.Duration // per VIP; default DefaultTimeout
	// Names of the macvlans for the API and ingress VIPs; default "api" and
	// "ingress", the agent's names (they also end the DHCP hostname).
	APIName, IngressName string
	Logger               *slog.Logger     // default: discard
	Now                  func() time.Time // default time.Now; lease times derive from it
}

func (o Options) withDefaults() Options {
	if o.Mode == "" {
		o.Mode = ModePrivate
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.APIName == "" {
		o.APIName = "api"
	}
	if o.IngressName == "" {
		o.IngressName = "ingress"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Errors callers tell apart with errors.Is.
var (
	// ErrInvalidRequest: the request is malformed (the step answers
	// step.ExitNotRun).
	ErrInvalidRequest = errors.New("invalid dhcp allocation request")
	// ErrNoInterface: the request's interface does not exist here.
	ErrNoInterface = errors.New("interface not found")
	// ErrNameInUse: a link with a lease interface's name exists and is not
	// a leftover of this step.
	ErrNameInUse = errors.New("lease interface name in use")
)

// Log attribute keys.
const (
	logKeyVIP       = "vip"
	logKeyInterface = "interface"
	logKeyAddress   = "address"
	logKeyErr       = "err"
)

// Allocate leases the API VIP and then the ingress VIP on req.Interface
// and returns both addresses with their lease texts (see Lease for the
// format). A previous lease text in req makes it ask for that address
// again; the server then normally ACKs it with a fresh expiry. The
// macvlans it makes are deleted before it returns, on every path.
func Allocate(ctx context.Context, req wire.DHCPAllocationRequest, opts Options) (*wire.DHCPAllocationResponse, error) {
	opts = opts.withDefaults()
	if err := Validate(req); err != nil {
		return nil, err
	}
	if opts.Mode != ModePrivate && opts.Mode != ModeBridge {
		return nil, fmt.Errorf("dhcp lease allocate: macvlan mode %q: want %q or %q", opts.Mode, ModePrivate, ModeBridge)
	}
	parent, err := netlink.LinkByName(req.Interface)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("dhcp lease allocate on %s: %w", req.Interface, ErrNoInterface)
		}
		return nil, fmt.Errorf("dhcp lease allocate: look up %s: %w", req.Interface, err)
	}
	apiMAC, _ := net.ParseMAC(req.APIVIPMAC) // checked by Validate
	ingressMAC, _ := net.ParseMAC(req.IngressVIPMAC)

	api, err := leaseVIP(ctx, parent, opts.APIName, apiMAC, req.APIVIPLease, opts)
	if err != nil {
		return nil, err
	}
	ingress, err := leaseVIP(ctx, parent, opts.IngressName, ingressMAC, req.IngressVIPLease, opts)
	if err != nil {
		return nil, err
	}
	return &wire.DHCPAllocationResponse{
		APIVIPAddress:     api.Address.String(),
		IngressVIPAddress: ingress.Address.String(),
		APIVIPLease:       api.String(),
		IngressVIPLease:   ingress.String(),
	}, nil
}

// Validate checks what Allocate needs from a request: an interface name the
// kernel could hold and two distinct unicast Ethernet MACs. Its errors wrap
// ErrInvalidRequest. Lease texts are not checked: one that does not parse
// is ignored, as dhclient ignores a garbled lease file.
func Validate(req wire.DHCPAllocationRequest) error {
	var problems []string
	if err := checkIfName(req.Interface); err != nil {
		problems = append(problems, "interface: "+err.Error())
	}
	macs := map[string]string{}
	for _, f := range []struct{ field, val string }{{"api_vip_mac", req.APIVIPMAC}, {"ingress_vip_mac", req.IngressVIPMAC}} {
		hw, err := net.ParseMAC(f.val)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: invalid MAC %q", f.field, f.val))
		case len(hw) != 6:
			problems = append(problems, fmt.Sprintf("%s: %q is not an Ethernet MAC", f.field, f.val))
		case hw[0]&1 != 0:
			problems = append(problems, fmt.Sprintf("%s: %s is a multicast MAC", f.field, hw))
		default:
			if other, dup := macs[hw.String()]; dup {
				problems = append(problems, fmt.Sprintf("%s: %s is also %s", f.field, hw, other))
			}
			macs[hw.String()] = f.field
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidRequest, strings.Join(problems, "; "))
	}
	return nil
}

// checkIfName applies the kernel's rules for interface names (dev_valid_name).
func checkIfName(name string) error {
	switch {
	case name == "":
		return errors.New("empty")
	case len(name) > 15:
		return fmt.Errorf("%q is longer than 15 bytes", name)
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a valid name", name)
	case strings.ContainsAny(name, "/: \t\n\r\v\f\x00"):
		return fmt.Errorf("%q holds a character interface names cannot", name)
	}
	return nil
}

// leaseVIP makes the macvlan, leases on it and deletes it.
func leaseVIP(ctx context.Context, parent netlink.Link, name string, mac net.HardwareAddr, prevText string, opts Options) (l Lease, err error) {
	log := opts.Logger.With(logKeyVIP, name, logKeyInterface, parent.Attrs().Name)
	var prev netip.Addr
	if prevText != "" {
		p, perr := ParseLease(prevText)
		if perr != nil {
			// A fresh lease is the safe fallback: the service replaces
			// the stored text with the one this run returns.
			log.Warn("ignoring previous lease", logKeyErr, perr)
		} else {
			prev = p.Address
		}
	}
	link, err := addMacvlan(parent, name, mac, opts.Mode)
	if err != nil {
		return Lease{}, fmt.Errorf("lease %s VIP on %s: %w", name, parent.Attrs().Name, err)
	}
	defer func() {
		if derr := netlink.LinkDel(link); derr != nil {
			err = errors.Join(err, fmt.Errorf("lease %s VIP: delete macvlan %s: %w", name, name, derr))
		}
	}()
	log.Info("leasing VIP", "mac", mac.String(), "previous", prev)
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	l, err = exchange(ctx, name, mac, prev, opts.Now)
	if err != nil {
		log.Error("leasing VIP failed", logKeyErr, err)
		return Lease{}, fmt.Errorf("lease %s VIP on %s: %w", name, parent.Attrs().Name, err)
	}
	log.Info("leased VIP", logKeyAddress, l.Address, "expire", l.Expire)
	return l, nil
}

// addMacvlan creates macvlan name on parent with mac and brings it up. A
// link that already has the name is removed first only when it is a
// leftover of this step (a macvlan on parent with mac, e.g. after a crash);
// any other link is left alone and the step fails with ErrNameInUse.
func addMacvlan(parent netlink.Link, name string, mac net.HardwareAddr, mode Mode) (netlink.Link, error) {
	if old, err := netlink.LinkByName(name); err == nil {
		mv, ok := old.(*netlink.Macvlan)
		if !ok || mv.Attrs().ParentIndex != parent.Attrs().Index || mv.Attrs().HardwareAddr.String() != mac.String() {
			return nil, fmt.Errorf("make macvlan %s: a %s link of that name exists: %w", name, old.Type(), ErrNameInUse)
		}
		if err := netlink.LinkDel(old); err != nil {
			return nil, fmt.Errorf("remove leftover macvlan %s: %w", name, err)
		}
	}
	attrs := netlink.NewLinkAttrs()
	attrs.Name = name
	attrs.ParentIndex = parent.Attrs().Index
	attrs.HardwareAddr = mac
	nlMode := netlink.MACVLAN_MODE_PRIVATE
	if mode == ModeBridge {
		nlMode = netlink.MACVLAN_MODE_BRIDGE
	}
	mv := &netlink.Macvlan{LinkAttrs: attrs, Mode: nlMode}
	if err := netlink.LinkAdd(mv); err != nil {
		return nil, fmt.Errorf("make macvlan %s on %s: %w", name, parent.Attrs().Name, err)
	}
	// From here the caller must delete it; look it up so the index is set.
	link, err := netlink.LinkByName(name)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("look up new macvlan %s: %w", name, err), netlink.LinkDel(mv))
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, errors.Join(fmt.Errorf("set macvlan %s up: %w", name, err), netlink.LinkDel(link))
	}
	return link, nil
}
