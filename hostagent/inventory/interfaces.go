package inventory

import (
	"cmp"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// link is what sysfs says about one network interface.
type link struct {
	name     string
	ifindex  int
	mac      string
	mtu      int64
	carrier  bool
	speed    int64
	flags    net.Flags
	typ      string
	loopback bool
	product  string // PCI device ID of the NIC, as sysfs spells it ("0x1563")
	vendor   string // PCI vendor ID ("0x8086")
}

// Kernel interface flags (include/uapi/linux/if.h) and link type.
const (
	iffUp          = 0x1
	iffBroadcast   = 0x2
	iffLoopback    = 0x8
	iffPointToPnt  = 0x10
	iffMulticast   = 0x1000
	arphrdLoopback = 772
)

// links reads Root/sys/class/net, ordered like net.Interfaces (by ifindex).
func (c *collector) links() []link {
	entries, err := os.ReadDir(c.host("/sys/class/net"))
	if err != nil {
		c.log.Debug("list network interfaces", "err", err)
		return nil
	}
	var ls []link
	for _, e := range entries {
		ls = append(ls, c.link(e.Name()))
	}
	slices.SortStableFunc(ls, func(a, b link) int {
		return cmp.Or(cmp.Compare(a.ifindex, b.ifindex), cmp.Compare(a.name, b.name))
	})
	return ls
}

func (c *collector) link(name string) link {
	dir := "/sys/class/net/" + name
	l := link{name: name}
	attr := func(a string) string {
		s, _ := c.read(dir + "/" + a)
		return s
	}
	l.ifindex, _ = strconv.Atoi(attr("ifindex"))
	l.mtu, _ = strconv.ParseInt(attr("mtu"), 10, 64)
	// The agent reads carrier and speed from sysfs too (interfaces.go,
	// network_interface.go); an unreadable speed is 0, a down link may say -1.
	l.carrier = attr("carrier") == "1"
	l.speed, _ = strconv.ParseInt(attr("speed"), 10, 32)
	l.product = attr("device/device")
	l.vendor = attr("device/vendor")

	// The permanent MAC: a bond slave's own address, not the bond's
	// (getPermMacAddress); an all-zero address is no address, as netlink
	// reports it.
	mac := attr("bonding_slave/perm_hwaddr")
	if mac == "" {
		mac = attr("address")
	}
	if hw, err := net.ParseMAC(mac); err == nil && !allZero(hw) {
		l.mac = hw.String()
	}

	arphrd, _ := strconv.Atoi(attr("type"))
	raw, _ := strconv.ParseUint(strings.TrimPrefix(attr("flags"), "0x"), 16, 32)
	l.loopback = arphrd == arphrdLoopback || raw&iffLoopback != 0
	l.flags = goFlags(raw, attr("operstate"))
	l.typ = c.linkType(dir, l.loopback)
	return l
}

// goFlags turns sysfs flags into Go's net.Flags. sysfs shows dev->flags,
// which never has IFF_RUNNING; the kernel adds it (dev_get_flags) when the
// device is up and its operstate is up or unknown, so we do too.
func goFlags(raw uint64, operstate string) net.Flags {
	var f net.Flags
	if raw&iffUp != 0 {
		f |= net.FlagUp
		if operstate == "up" || operstate == "unknown" {
			f |= net.FlagRunning
		}
	}
	if raw&iffBroadcast != 0 {
		f |= net.FlagBroadcast
	}
	if raw&iffLoopback != 0 {
		f |= net.FlagLoopback
	}
	if raw&iffPointToPnt != 0 {
		f |= net.FlagPointToPoint
	}
	if raw&iffMulticast != 0 {
		f |= net.FlagMulticast
	}
	return f
}

// linkType is the agent's rule (util/network_interface.go Type/IsPhysical):
// "physical" when /sys/class/net/X does not resolve under /virtual/ (or cannot
// be resolved), else netlink's link kind. The loopback device is never
// physical. Without netlink, the kind comes from sysfs: DEVTYPE in uevent
// (bond, vlan, bridge, ...), the bonding/bridge/tun_flags attributes, else
// "device", which is what netlink calls a link with no kind (loopback, veth
// is the one kind this misses).
func (c *collector) linkType(dir string, loopback bool) string {
	if !loopback {
		resolved, err := c.resolve(dir)
		if err != nil || !strings.Contains(resolved, "/virtual/") {
			return "physical"
		}
	}
	if uevent, err := c.readRaw(dir + "/uevent"); err == nil {
		for line := range strings.Lines(uevent) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "DEVTYPE="); ok && v != "" {
				return v
			}
		}
	}
	switch {
	case c.exists(dir + "/bonding"):
		return "bond"
	case c.exists(dir + "/bridge"):
		return "bridge"
	case c.exists(dir + "/tun_flags"):
		return "tuntap"
	}
	return "device"
}

// interfaces builds the inventory's interface list from the root's links and
// either the override addresses or the live ones.
func (c *collector) interfaces() []*wire.Interface {
	ls := c.links()
	addrs := c.liveAddresses
	if len(c.o.Addresses) > 0 {
		addrs = c.overrideAddresses(ls)
	}
	var out []*wire.Interface
	for _, l := range ls {
		iface := &wire.Interface{
			Name:       l.name,
			MACAddress: l.mac,
			MTU:        l.mtu,
			HasCarrier: l.carrier,
			SpeedMbps:  l.speed,
			Product:    l.product,
			Vendor:     l.vendor,
			Flags:      flagWords(l.flags),
			Type:       l.typ,
		}
		for _, p := range addrs(l) {
			if !p.IsValid() || p.Addr().IsLinkLocalUnicast() {
				continue // 169.254.0.0/16 and fe80::/10, as the agent filters
			}
			if p.Addr().Is4() {
				iface.IPv4Addresses = append(iface.IPv4Addresses, p.String())
			} else {
				iface.IPv6Addresses = append(iface.IPv6Addresses, p.String())
			}
		}
		out = append(out, iface)
	}
	if len(c.o.Addresses) > 0 {
		if nic := addressedLink(ls); nic >= 0 {
			out[nic].Type = "physical"
		}
	}
	return out
}

// flagWords splits Go's flag string on "|" as the agent does (getFlags).
func flagWords(f net.Flags) []string {
	if f == 0 {
		return nil
	}
	return strings.Split(f.String(), "|")
}

// addressedLink is the index of the link that carries Options.Addresses: the
// first one that is not the loopback device.
func addressedLink(ls []link) int {
	for i, l := range ls {
		if !l.loopback {
			return i
		}
	}
	return -1
}

func (c *collector) overrideAddresses(ls []link) func(link) []netip.Prefix {
	nic := addressedLink(ls)
	return func(l link) []netip.Prefix {
		if nic >= 0 && l.name == ls[nic].name {
			return c.o.Addresses
		}
		return nil
	}
}

// liveAddresses returns the addresses the running system has on an interface
// of the same name. With Root "/" that is the interface itself.
func (c *collector) liveAddresses(l link) []netip.Prefix {
	ifi, err := net.InterfaceByName(l.name)
	if err != nil {
		return nil
	}
	as, err := ifi.Addrs()
	if err != nil {
		c.log.Debug("read interface addresses", "interface", l.name, "err", err)
		return nil
	}
	var out []netip.Prefix
	for _, a := range as {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		addr, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		bits, _ := ipn.Mask.Size()
		out = append(out, netip.PrefixFrom(addr.Unmap(), bits))
	}
	return out
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}
