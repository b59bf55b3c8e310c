package inventory

import (
	"net/netip"
	"os"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// forbiddenHostnames are replaced before the inventory is sent
// (assisted-installer-agent src/inventory/inventory.go; the service's
// hostname-valid validation rejects the same list).
var forbiddenHostnames = []string{
	"localhost",
	"localhost.localdomain",
	"localhost4",
	"localhost4.localdomain4",
	"localhost6",
	"localhost6.localdomain6",
}

// hostname returns Options.Hostname (or os.Hostname), replacing a forbidden
// name by the lowercase, dash-separated MAC of the first usable NIC; with no
// usable NIC the forbidden name is kept, as the agent keeps it.
func (c *collector) hostname(ifaces []*wire.Interface) string {
	h := c.o.Hostname
	if h == "" {
		var err error
		if h, err = os.Hostname(); err != nil {
			c.log.Debug("read hostname", "err", err)
			return ""
		}
	}
	h = strings.TrimSpace(h)
	if !slices.Contains(forbiddenHostnames, h) {
		return h
	}
	if nic := usableNIC(ifaces); nic != nil {
		return strings.ToLower(strings.ReplaceAll(nic.MACAddress, ":", "-"))
	}
	return h
}

// usableNIC is the first interface by name that is physical, a VLAN or a
// bond, has a MAC and has a global unicast address (findUsableNIC).
func usableNIC(ifaces []*wire.Interface) *wire.Interface {
	sorted := slices.Clone(ifaces)
	slices.SortStableFunc(sorted, func(a, b *wire.Interface) int { return strings.Compare(a.Name, b.Name) })
	for _, nic := range sorted {
		switch nic.Type {
		case "physical", "vlan", "bond":
		default:
			continue
		}
		if nic.MACAddress == "" {
			continue
		}
		if hasGlobal(nic.IPv4Addresses) || hasGlobal(nic.IPv6Addresses) {
			return nic
		}
	}
	return nil
}

// hasGlobal reports whether a CIDR in cidrs is a global unicast address (Go's
// definition, so private ranges count and loopback does not).
func hasGlobal(cidrs []string) bool {
	for _, s := range cidrs {
		if p, err := netip.ParsePrefix(s); err == nil && p.Addr().IsGlobalUnicast() {
			return true
		}
	}
	return false
}
