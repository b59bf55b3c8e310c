package nmstate

import "net/netip"

// The nmstate interface types this subset renders, spelled as nmstate does
// (the spelling goes into the stable UUIDs).
const (
	typeEthernet = "ethernet"
	typeBond     = "bond"
	typeVLAN     = "vlan"
	typeBridge   = "linux-bridge"
)

// Interface states.
const (
	stateUp     = "up"
	stateDown   = "down"
	stateAbsent = "absent"
	stateIgnore = "ignore"
)

// State is a parsed and validated nmstate document, ready to be rendered
// with Keyfiles. Its contents are private: the keyfiles are the product.
type State struct {
	ifaces []*iface // document order, then ports nmstate creates
	byName map[string]*iface
	routes []*route // routes.config entries that are rendered, document order
	dns    *dnsConfig
}

// iface is one interface after decoding and, once link has run, with its
// controller, routes and DNS settled.
type iface struct {
	at      pos // the interface's mapping
	name    string
	nameAt  pos
	typ     string
	state   string
	profile string
	descr   *string
	byMAC   bool
	mac     string // upper case, as nmstate sanitizes it
	macAt   pos
	mtu     *uint64
	mtuAt   pos
	waitIP  string
	lldp    *bool
	allMACs *bool // accept-all-mac-addresses
	eth     *ethConfig
	ipv4    *ipConfig
	ipv6    *ipConfig
	bond    *bondConfig
	vlan    *vlanConfig
	bridge  *bridgeConfig
	ctrlSet bool // `controller:` given
	ctrl    string
	ctrlAt  pos

	// Settled by link.
	auto       bool   // created by nmstate for an undefined port
	master     string // controller name, "" when none
	masterType string // typeBond or typeBridge
	upPriority int
	routes     []*route
	dns        [2]*dnsPlacement // [0] IPv4 section, [1] IPv6 section
}

func (i *iface) active() bool { return i.state == stateUp || i.state == stateDown }

func (i *iface) isController() bool { return i.typ == typeBond || i.typ == typeBridge }

// canHaveIP is false for ports: nmstate writes no IP sections for them.
func (i *iface) canHaveIP() bool { return i.master == "" }

// ports lists the port names a controller names, nil when it names none.
func (i *iface) ports() []portRef {
	switch {
	case i.bond != nil && i.bond.portsSet:
		return i.bond.ports
	case i.bond != nil && i.bond.portsConfigSet:
		out := make([]portRef, len(i.bond.portsConfig))
		for k, p := range i.bond.portsConfig {
			out[k] = portRef{name: p.name, at: p.at}
		}
		return out
	case i.bridge != nil && i.bridge.portsSet:
		out := make([]portRef, len(i.bridge.ports))
		for k, p := range i.bridge.ports {
			out[k] = portRef{name: p.name, at: p.at}
		}
		return out
	}
	return nil
}

type portRef struct {
	name string
	at   pos
}

// ethConfig is the `ethernet:` section of an ethernet interface.
type ethConfig struct {
	autoNeg *bool
	speed   *uint64
	duplex  string
}

// ipConfig is an `ipv4:` or `ipv6:` section after nmstate's sanitize.
type ipConfig struct {
	v6             bool
	at             pos
	enabled        bool
	dhcp           *bool
	autoconf       *bool
	addrs          []netip.Prefix // address as written (host bits kept), prefix length
	autoDNS        *bool
	autoGateway    *bool
	autoRoutes     *bool
	autoTable      *uint64
	autoMetric     *uint64
	clientID       string // NM dhcp-client-id, "" when not given
	duid           string // NM dhcp-duid, "" when not given
	addrGenMode    int
	sendHostname   *bool
	customHostname *string
	token          *string
}

func (ip *ipConfig) isTrue(b *bool) bool { return b != nil && *b }

// isAuto is nmstate's is_auto: DHCP (or, for IPv6, autoconf) on an enabled stack.
func (ip *ipConfig) isAuto() bool {
	if ip == nil || !ip.enabled {
		return false
	}
	return ip.isTrue(ip.dhcp) || (ip.v6 && ip.isTrue(ip.autoconf))
}

// isStatic is nmstate's is_static: enabled, not auto, with addresses.
func (ip *ipConfig) isStatic() bool {
	return ip != nil && ip.enabled && !ip.isAuto() && len(ip.addrs) > 0
}

func enabled(ip *ipConfig) bool { return ip != nil && ip.enabled }

// bondConfig is `link-aggregation:`.
type bondConfig struct {
	mode           string // NM name; "" when not given
	opts           map[string]string
	optsAt         pos
	miimon         *uint64
	arpInterval    *uint64
	failOverMAC    string
	xmitHash       string
	balanceSLB     *bool
	adActorSystem  string
	adActorAt      pos
	portsSet       bool
	ports          []portRef
	portsAt        pos
	portsConfigSet bool
	portsConfig    []bondPortConfig
}

type bondPortConfig struct {
	name     string
	at       pos
	priority *int64
	queueID  *uint64
}

// vlanConfig is `vlan:`.
type vlanConfig struct {
	base     string
	id       uint64
	protocol string // "802.1ad" or ""
	flags    uint32
}

// bridgeConfig is `bridge:` of a linux-bridge.
type bridgeConfig struct {
	opts     map[string]string // NM [bridge] keys
	portsSet bool
	ports    []bridgePort
}

type bridgePort struct {
	name     string
	at       pos
	hairpin  *bool
	pathCost *uint64
	priority *uint64
}

// route is one routes.config entry after nmstate's sanitize.
type route struct {
	at      pos
	ifaceAt pos
	dst     string // network text, host bits cleared, e.g. 10.0.0.0/8
	v6      bool
	iface   string
	via     string // canonical next hop, "" when none
	src     string
	metric  *int64 // nil or -1: NetworkManager's default, written as 0
	tableID *uint64
	weight  *uint64
	cwnd    *uint64
}

// dnsConfig is dns-resolver.config.
type dnsConfig struct {
	at       pos
	serverAt []pos
	servers  []string // canonical; link-local IPv6 may carry %iface
	search   []string
	options  []string
}

// dnsPlacement is what one IP section of the chosen interface carries.
type dnsPlacement struct {
	servers  []string
	search   []string
	options  []string
	priority int
}
