package validation

import (
	"net"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/wire"
)

// DefaultDisconnectionTimeout is assisted's HOST_MAX_DISCONNECTION_TIME.
const DefaultDisconnectionTimeout = 3 * time.Minute

// bootstrapExtraTimeout is added for the bootstrap host, whose resolv.conf
// is rewritten mid-installation (assisted isConnected).
const bootstrapExtraTimeout = 2 * time.Minute

// Validator evaluates validations. Its zero value uses assisted's defaults.
// It holds no state between calls and is safe for concurrent use.
type Validator struct {
	// Requirements is the hardware table; nil means DefaultRequirements.
	Requirements *Requirements
	// DisconnectionTimeout is how long a host may go without checking in
	// (0: 3 minutes); the bootstrap host gets 2 minutes more.
	DisconnectionTimeout time.Duration
	// DisabledHost and DisabledCluster are validation IDs that report
	// "disabled" (assisted's DISABLED_HOST_VALIDATIONS and
	// DISABLED_CLUSTER_VALIDATIONS). As in assisted, a cluster with an
	// ignore list of its own overrides them.
	DisabledHost, DisabledCluster IDSet
	// AllowVirtualInterfaces keeps interfaces of any type in network
	// calculations (assisted's ENABLE_VIRTUAL_INTERFACES).
	AllowVirtualInterfaces bool
	// HostConfigs are the config image's host configs (hints.go). Nil
	// leaves out the validations about them; the installation disk is
	// chosen by a matching config's root device hints.
	HostConfigs []manifests.HostConfig
	// HostConfigGrace: see DefaultHostConfigGrace (0: that).
	HostConfigGrace time.Duration
	// ReleaseImage is the release image whose registry host
	// release-domain-name-resolved-correctly checks; "" means the cluster's
	// ocp_release_image. Pass the same image to DomainsToResolve.
	ReleaseImage string
}

// HostEntry is a host as the validations read it: its own fields (Host;
// the JSON-text fields of a wire.Host are not read: what they carry comes
// decoded, below), its inventory (nil before the first one), its compacted
// connectivity report (nil: none yet) and its check results (nil: none).
type HostEntry struct {
	Host      *wire.Host
	Inventory *wire.Inventory
	Conn      *ConnReport
	Checks    *HostChecks
}

// HostInput is everything one host's validations read.
type HostInput struct {
	// Host is read for its own fields, never for its JSON-text ones
	// (inventory, connectivity, the check results): those are the fields
	// below.
	Host      *wire.Host
	Inventory *wire.Inventory // nil when none has arrived
	Cluster   *wire.Cluster   // nil for a host bound to no cluster
	// Conn is the host's compacted connectivity report
	// (Validator.DecodeConnectivity); nil: none yet.
	Conn *ConnReport
	// Checks are the host's check results; nil: none yet.
	Checks *HostChecks
	// Groups are the cluster's connectivity majority groups as the
	// cluster keeps them (ConnectivityGroups); not Set: none yet.
	Groups Reported[*Connectivity]
	// Facts are the cluster-wide aggregates from Validator.Facts over the
	// cluster's hosts, this one included. Nil counts as a cluster with no
	// other host.
	Facts *ClusterFacts
	Now   time.Time
}

// ClusterFacts are cluster-wide aggregates computed once per cluster, so
// that a host's validations read them in constant time.
type ClusterFacts struct {
	hostnames   map[string]hostnameUse
	machineNets []*net.IPNet
	machineOK   bool
	versionReq  VersionRequirements
	// hostCount counts the cluster's hosts, with or without an inventory.
	hostCount int
	// peers are the cluster's hosts by ID, with what the connectivity
	// validations read of them (peers.go).
	peers map[string]*peer
	// peerIDs are the keys of peers, sorted: the order messages name
	// peers in (sorted once, not per host).
	peerIDs []string
	// collisions maps an address to the MACs seen holding it (peers.go).
	collisions map[string][]string
	// macHost maps a MAC to the name of the host that has it.
	macHost map[string]string
}

type hostnameUse struct {
	count int
	first string // id of the first host with the name
}

// Facts computes the aggregates of a cluster's hosts: the hostname each
// host goes by (requested, else inventory hostname; hosts with an
// inventory only), the parsed machine networks and the requirements for the
// cluster's version, every host's name, role, addresses and parsed
// connectivity report, and the addresses seen on two MACs. Recompute them
// when a host's name, role, inventory or connectivity or the cluster's
// networks or version change. memo, when not nil, is the cluster's
// (ClusterMemo): the address collisions are taken from it when the
// reports and inventories are those of its last call.
func (v *Validator) Facts(c *wire.Cluster, hosts []HostEntry, memo *ClusterMemo) *ClusterFacts {
	f := &ClusterFacts{hostnames: make(map[string]hostnameUse, len(hosts))}
	f.addPeers(hosts, memo)
	for _, h := range hosts {
		if h.Host == nil || h.Inventory == nil {
			continue
		}
		name := RealHostname(h.Host, h.Inventory)
		u := f.hostnames[name]
		if u.count == 0 {
			u.first = h.Host.ID
		}
		u.count++
		f.hostnames[name] = u
	}
	if c != nil {
		f.machineNets, f.machineOK = parseMachineNetworks(c)
		f.versionReq = v.requirements().ForVersion(c.OpenshiftVersion)
	} else {
		f.versionReq = v.requirements().ForVersion("")
	}
	return f
}

// RealHostname is the name a host goes by: requested_hostname when set,
// else the inventory's hostname.
func RealHostname(h *wire.Host, inv *wire.Inventory) string {
	if h.RequestedHostname != "" {
		return h.RequestedHostname
	}
	if inv == nil {
		return ""
	}
	return inv.Hostname
}

// EffectiveRole is the host's role, or its suggested role while the role is
// auto-assign (assisted GetEffectiveRole).
func EffectiveRole(h *wire.Host) wire.HostRole {
	if h.Role == wire.HostRoleAutoAssign && h.SuggestedRole != "" {
		return h.SuggestedRole
	}
	return h.Role
}

func (v *Validator) requirements() *Requirements {
	if v.Requirements != nil {
		return v.Requirements
	}
	r, err := DefaultRequirements()
	if err != nil {
		// The embedded table is checked by the package's tests; a binary
		// whose copy does not parse cannot validate anything.
		panic("validation: embedded hardware requirements: " + err.Error())
	}
	return r
}

func (v *Validator) disconnectionTimeout() time.Duration {
	if v.DisconnectionTimeout > 0 {
		return v.DisconnectionTimeout
	}
	return DefaultDisconnectionTimeout
}

// HostRequirements returns the requirements that apply to a host: by its
// effective role in a cluster (SNO values for the master of a single-node
// cluster), or the unbound values when c is nil.
func (v *Validator) HostRequirements(c *wire.Cluster, h *wire.Host, inv *wire.Inventory) RoleRequirements {
	if c == nil {
		return v.requirements().ForVersion("").Unbound()
	}
	return v.requirements().ForVersion(c.OpenshiftVersion).ForHost(h, inv, isSNO(c))
}

// ProcessInventory does to a newly reported inventory what assisted does
// before storing it: drops interfaces that are not usable (unless virtual
// interfaces are allowed), recomputes every disk's eligibility for the
// host's requirements and gives every disk an id. It returns the disk to
// install on (SelectInstallationDisk against the host's current choice), or
// nil: store DiskID and DiskPath of it as installation_disk_id and
// installation_disk_path.
func (v *Validator) ProcessInventory(c *wire.Cluster, h *wire.Host, inv *wire.Inventory) *wire.Disk {
	if !v.AllowVirtualInterfaces {
		inv.Interfaces = FilterInterfaces(inv.Interfaces, false)
	}
	version := ""
	if c != nil {
		version = c.OpenshiftVersion
	}
	ApplyDiskEligibility(inv, v.HostRequirements(c, h, inv).DiskSizeGB, version)
	current := h.InstallationDiskID
	if current == "" {
		current = h.InstallationDiskPath
	}
	if hc := v.hostConfig(inv); hc != nil && !hc.Hints.Empty() {
		if ok := AcceptableDisks(inv.Disks, hc.Hints); len(ok) > 0 {
			return SelectInstallationDisk(ok, current)
		}
	}
	return SelectInstallationDisk(inv.Disks, current)
}
