package validation

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/configimage/manifests"

	"github.com/nodezero/nodezero/wire"
)

// hostScene is one host of testHosts (h0, master-0) in its cluster, which a
// case may change before the facts are computed.
type hostScene struct {
	v      *Validator
	in     HostInput
	others []HostEntry
}

func newHostScene() *hostScene {
	hosts := testHosts()
	c := testCluster()
	c.ConnectivityMajorityGroups = majorityJSON(c, hosts)
	return &hostScene{
		v:      &Validator{},
		in:     HostInput{Host: hosts[0].Host, Inventory: hosts[0].Inventory, Cluster: c, Now: now},
		others: hosts[1:],
	}
}

// run validates the scene's host as the service does: with the reports,
// check results and majority groups the case wrote as text decoded.
func (s *hostScene) run() Report {
	in := s.in
	self := typedEntry(HostEntry{Host: s.in.Host, Inventory: s.in.Inventory})
	in.Conn, in.Checks = self.Conn, self.Checks
	if s.in.Cluster != nil {
		in.Groups = ReadMajorityGroups(s.in.Cluster.ConnectivityMajorityGroups)
		in.Facts = s.v.Facts(s.in.Cluster, append([]HostEntry{self}, typed(s.others)...), nil)
	}
	return s.v.ValidateHost(in)
}

// runCompact is run with every report handed over compacted by the
// Validator (HostEntry.Conn, with its thresholds) rather than as text, the
// way the service hands them over. It leaves s as it was.
func (s *hostScene) runCompact(t *testing.T) Report {
	t.Helper()
	compact := func(h *wire.Host) (*wire.Host, *ConnReport) {
		if h.Connectivity == "" {
			return h, nil
		}
		c := *h
		c.Connectivity = ""
		return &c, s.v.ParseConnectivity(testInterner, h.Connectivity)
	}
	in := s.in
	var self HostEntry
	checks := ReadHostChecks(s.in.Host)
	in.Host, in.Conn = compact(s.in.Host)
	in.Checks = &checks
	self = HostEntry{Host: in.Host, Inventory: in.Inventory, Conn: in.Conn, Checks: in.Checks}
	all := []HostEntry{self}
	textAll := typed([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}})
	for _, o := range s.others {
		h, conn := compact(o.Host)
		all = append(all, HostEntry{Host: h, Inventory: o.Inventory, Conn: conn})
		textAll = append(textAll, typedEntry(o))
	}
	if s.in.Cluster != nil {
		c := *s.in.Cluster
		in.Cluster = &c
		in.Groups = ReadMajorityGroups(c.ConnectivityMajorityGroups)
		in.Facts = s.v.Facts(in.Cluster, all, nil)
		// Unmemoised: cases change inventories in place, which the memo
		// (keyed by pointer) does not expect.
		want, werr := connectivityGroups(s.in.Cluster, textAll)
		got, gerr := connectivityGroups(in.Cluster, all)
		if diff := cmp.Diff(want, got); diff != "" || (werr == nil) != (gerr == nil) {
			t.Errorf("majority groups from compacted reports (-text +compact):\n%s\nerrors %v, %v", diff, werr, gerr)
		}
		if diff := cmp.Diff(IPCollisions(textAll), IPCollisions(all)); diff != "" {
			t.Errorf("address collisions from compacted reports (-text +compact):\n%s", diff)
		}
	}
	return s.v.ValidateHost(in)
}

func TestHostValidations(t *testing.T) {
	tests := []struct {
		name   string
		id     wire.HostValidationID
		setup  func(s *hostScene)
		status wire.ValidationStatus // "" with hidden
		msg    string
		hidden bool // left out of validations_info
		pass   bool // the condition
	}{
		// connected
		{name: "connected/recent check-in", id: wire.HostValidationIDConnected,
			status: wire.ValidationSuccess, msg: "Host is connected", pass: true},
		{name: "connected/silent for 4 minutes", id: wire.HostValidationIDConnected,
			setup:  func(s *hostScene) { s.in.Host.CheckedInAt = wire.DateTime(now.Add(-4 * time.Minute)) },
			status: wire.ValidationFailure, msg: "Host is disconnected"},
		{name: "connected/bootstrap gets 2 more minutes", id: wire.HostValidationIDConnected,
			setup: func(s *hostScene) {
				s.in.Host.Bootstrap = true
				s.in.Host.CheckedInAt = wire.DateTime(now.Add(-4 * time.Minute))
			},
			status: wire.ValidationSuccess, msg: "Host is connected", pass: true},
		{name: "connected/custom timeout", id: wire.HostValidationIDConnected,
			setup: func(s *hostScene) {
				s.v.DisconnectionTimeout = 5 * time.Second
			},
			status: wire.ValidationFailure, msg: "Host is disconnected"},
		{name: "connected/after reboot always connected and hidden", id: wire.HostValidationIDConnected,
			setup: func(s *hostScene) {
				s.in.Host.CheckedInAt = wire.DateTime(now.Add(-time.Hour))
				s.in.Host.Progress = &wire.HostProgressInfo{CurrentStage: wire.HostStageRebooting}
			},
			hidden: true, pass: true},
		// media-connected
		{name: "media-connected/connected", id: wire.HostValidationIDMediaConnected,
			status: wire.ValidationSuccess, msg: "Media device is connected", pass: true},
		{name: "media-connected/disconnected", id: wire.HostValidationIDMediaConnected,
			setup:  func(s *hostScene) { s.in.Host.MediaStatus = ptr(wire.HostMediaStatusDisconnected) },
			status: wire.ValidationFailure, msg: "Unable to read from the discovery media. It was either disconnected or poor network conditions prevented it from being read. Try using the minimal ISO option and be sure to keep the media connected until the installation is completed"},
		// has-inventory
		{name: "has-inventory/present", id: wire.HostValidationIDHasInventory,
			status: wire.ValidationSuccess, msg: "Valid inventory exists for the host", pass: true},
		{name: "has-inventory/not yet received", id: wire.HostValidationIDHasInventory,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationFailure, msg: "Inventory has not been received for the host"},
		{name: "has-inventory/no cpu", id: wire.HostValidationIDHasInventory,
			setup:  func(s *hostScene) { s.in.Inventory.CPU = nil },
			status: wire.ValidationFailure, msg: "Inventory is not valid, CPU not detected"},
		// truncation
		{name: "inventory-not-fully-truncated/full", id: wire.HostValidationIDInventoryNotFullyTruncated,
			setup: func(s *hostScene) {
				s.in.Inventory.Truncation = &wire.InventoryTruncation{Type: wire.InventoryTruncationTypeFull, Reasons: []string{"too big", "really"}}
			},
			status: wire.ValidationFailure, msg: "Inventory is truncated (full): too big; really"},
		{name: "inventory-not-partially-truncated/pending", id: wire.HostValidationIDInventoryNotPartiallyTruncated,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory"},
		// has-min-cpu-cores
		{name: "has-min-cpu-cores/enough", id: wire.HostValidationIDHasMinCPUCores,
			status: wire.ValidationSuccess, msg: "Sufficient CPU cores", pass: true},
		{name: "has-min-cpu-cores/one core", id: wire.HostValidationIDHasMinCPUCores,
			setup:  func(s *hostScene) { s.in.Inventory.CPU.Count = 1 },
			status: wire.ValidationFailure, msg: "The host is not eligible to participate in Openshift Cluster because the minimum required CPU cores for any role is 2, found only 1"},
		{name: "has-min-cpu-cores/no inventory", id: wire.HostValidationIDHasMinCPUCores,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory"},
		// has-min-memory
		{name: "has-min-memory/enough", id: wire.HostValidationIDHasMinMemory,
			status: wire.ValidationSuccess, msg: "Sufficient minimum RAM", pass: true},
		{name: "has-min-memory/4 GiB", id: wire.HostValidationIDHasMinMemory,
			setup:  func(s *hostScene) { s.in.Inventory.Memory.PhysicalBytes = 4 * gib },
			status: wire.ValidationFailure, msg: "The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 4.00 GiB"},
		{name: "has-min-memory/100 MiB short is tolerated", id: wire.HostValidationIDHasMinMemory,
			setup:  func(s *hostScene) { s.in.Inventory.Memory.PhysicalBytes = (8192 - 100) * mib },
			status: wire.ValidationSuccess, msg: "Sufficient minimum RAM", pass: true},
		{name: "has-min-memory/2% more from meminfo", id: wire.HostValidationIDHasMinMemory,
			setup: func(s *hostScene) {
				s.in.Inventory.Memory.PhysicalBytes = (8192 - 100 - 163) * mib
				s.in.Inventory.Memory.PhysicalBytesMethod = wire.MemoryMethodMeminfo
			},
			status: wire.ValidationSuccess, msg: "Sufficient minimum RAM", pass: true},
		{name: "has-min-memory/2% only from meminfo", id: wire.HostValidationIDHasMinMemory,
			setup:  func(s *hostScene) { s.in.Inventory.Memory.PhysicalBytes = (8192 - 100 - 163) * mib },
			status: wire.ValidationFailure, msg: "The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 7.74 GiB"},
		{name: "has-min-memory/no inventory", id: wire.HostValidationIDHasMinMemory,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory"},
		// has-min-valid-disks
		{name: "has-min-valid-disks/eligible disk", id: wire.HostValidationIDHasMinValidDisks,
			status: wire.ValidationSuccess, msg: "Sufficient disk capacity", pass: true},
		{name: "has-min-valid-disks/none eligible", id: wire.HostValidationIDHasMinValidDisks,
			setup: func(s *hostScene) {
				s.in.Inventory.Disks[0].InstallationEligibility = &wire.DiskInstallationEligibility{NotEligibleReasons: []string{"Disk is an LVM logical volume"}}
			},
			status: wire.ValidationFailure, msg: "No eligible disks were found, please check specific disks to see why they are not eligible"},
		{name: "has-min-valid-disks/no disks", id: wire.HostValidationIDHasMinValidDisks,
			setup:  func(s *hostScene) { s.in.Inventory.Disks = nil },
			status: wire.ValidationError, msg: "Failed to detected disks"},
		{name: "has-min-valid-disks/no inventory", id: wire.HostValidationIDHasMinValidDisks,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory"},
		// machine-cidr-defined
		{name: "machine-cidr-defined/defined", id: wire.HostValidationIDMachineCIDRDefined,
			status: wire.ValidationSuccess, msg: "Machine Network CIDR is defined", pass: true},
		{name: "machine-cidr-defined/undefined", id: wire.HostValidationIDMachineCIDRDefined,
			setup:  func(s *hostScene) { s.in.Cluster.MachineNetworks = nil },
			status: wire.ValidationFailure, msg: "Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs"},
		{name: "machine-cidr-defined/undefined with DHCP", id: wire.HostValidationIDMachineCIDRDefined,
			setup: func(s *hostScene) {
				s.in.Cluster.MachineNetworks = nil
				s.in.Cluster.VIPDHCPAllocation = ptr(true)
			},
			status: wire.ValidationFailure, msg: "Machine Network CIDR is undefined"},
		{name: "machine-cidr-defined/user managed networking", id: wire.HostValidationIDMachineCIDRDefined,
			setup: func(s *hostScene) {
				s.in.Cluster.MachineNetworks = nil
				s.in.Cluster.UserManagedNetworking = ptr(true)
			},
			status: wire.ValidationSuccess, msg: "No Machine Network CIDR needed: User Managed Networking", pass: true},
		{name: "machine-cidr-defined/unbound host", id: wire.HostValidationIDMachineCIDRDefined,
			setup:  func(s *hostScene) { s.in.Cluster, s.in.Host.ClusterID = nil, nil },
			hidden: true, pass: true},
		// has-cpu-cores-for-role
		{name: "has-cpu-cores-for-role/master with 8", id: wire.HostValidationIDHasCPUCoresForRole,
			status: wire.ValidationSuccess, msg: "Sufficient CPU cores for role master", pass: true},
		{name: "has-cpu-cores-for-role/master with 2", id: wire.HostValidationIDHasCPUCoresForRole,
			setup:  func(s *hostScene) { s.in.Inventory.CPU.Count = 2 },
			status: wire.ValidationFailure, msg: "Require at least 4 CPU cores for master role, found only 2"},
		{name: "has-cpu-cores-for-role/suggested master", id: wire.HostValidationIDHasCPUCoresForRole,
			setup: func(s *hostScene) {
				s.in.Host.Role, s.in.Host.SuggestedRole = wire.HostRoleAutoAssign, wire.HostRoleMaster
				s.in.Inventory.CPU.Count = 3
			},
			status: wire.ValidationFailure, msg: "Require at least 4 CPU cores for master role, found only 3"},
		{name: "has-cpu-cores-for-role/auto-assign uses worker values", id: wire.HostValidationIDHasCPUCoresForRole,
			setup: func(s *hostScene) {
				s.in.Host.Role = wire.HostRoleAutoAssign
				s.in.Inventory.CPU.Count = 1
			},
			status: wire.ValidationFailure, msg: "Require at least 2 CPU cores for auto-assign role, found only 1"},
		{name: "has-cpu-cores-for-role/SNO before 4.22", id: wire.HostValidationIDHasCPUCoresForRole,
			setup: func(s *hostScene) {
				s.in.Cluster.ControlPlaneCount = 1
				s.in.Inventory.CPU.Count = 4
			},
			status: wire.ValidationFailure, msg: "Require at least 8 CPU cores for master role, found only 4"},
		{name: "has-cpu-cores-for-role/SNO from 4.22", id: wire.HostValidationIDHasCPUCoresForRole,
			setup: func(s *hostScene) {
				s.in.Cluster.ControlPlaneCount = 1
				s.in.Cluster.OpenshiftVersion = "4.22.1"
				s.in.Inventory.CPU.Count = 4
			},
			status: wire.ValidationSuccess, msg: "Sufficient CPU cores for role master", pass: true},
		{name: "has-cpu-cores-for-role/no inventory", id: wire.HostValidationIDHasCPUCoresForRole,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory or role"},
		// has-memory-for-role
		{name: "has-memory-for-role/master with 32 GiB", id: wire.HostValidationIDHasMemoryForRole,
			status: wire.ValidationSuccess, msg: "Sufficient RAM for role master", pass: true},
		{name: "has-memory-for-role/master with 8 GiB", id: wire.HostValidationIDHasMemoryForRole,
			setup:  func(s *hostScene) { s.in.Inventory.Memory.PhysicalBytes = 8 * gib },
			status: wire.ValidationFailure, msg: "Require at least 16.00 GiB RAM for role master, found only 8.00 GiB"},
		{name: "has-memory-for-role/100 MiB short is tolerated", id: wire.HostValidationIDHasMemoryForRole,
			setup:  func(s *hostScene) { s.in.Inventory.Memory.PhysicalBytes = (16384 - 100) * mib },
			status: wire.ValidationSuccess, msg: "Sufficient RAM for role master", pass: true},
		{name: "has-memory-for-role/101 MiB short, meminfo adds nothing", id: wire.HostValidationIDHasMemoryForRole,
			setup: func(s *hostScene) {
				s.in.Inventory.Memory.PhysicalBytes = (16384 - 101) * mib
				s.in.Inventory.Memory.PhysicalBytesMethod = wire.MemoryMethodMeminfo
			},
			status: wire.ValidationFailure, msg: "Require at least 16.00 GiB RAM for role master, found only 15.90 GiB"},
		{name: "has-memory-for-role/no inventory", id: wire.HostValidationIDHasMemoryForRole,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory or role"},
		// hostname-unique
		{name: "hostname-unique/unique", id: wire.HostValidationIDHostnameUnique,
			status: wire.ValidationSuccess, msg: "Hostname master-0 is unique in cluster", pass: true},
		{name: "hostname-unique/same as another host", id: wire.HostValidationIDHostnameUnique,
			setup:  func(s *hostScene) { s.others[1].Inventory.Hostname = "master-0" },
			status: wire.ValidationFailure, msg: "Hostname master-0 is not unique in cluster"},
		{name: "hostname-unique/requested name collides", id: wire.HostValidationIDHostnameUnique,
			setup:  func(s *hostScene) { s.in.Host.RequestedHostname = "worker-1" },
			status: wire.ValidationFailure, msg: "Hostname worker-1 is not unique in cluster"},
		{name: "hostname-unique/no inventory", id: wire.HostValidationIDHostnameUnique,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "Missing inventory"},
		// belongs-to-machine-cidr
		{name: "belongs-to-machine-cidr/inside", id: wire.HostValidationIDBelongsToMachineCIDR,
			status: wire.ValidationSuccess, msg: "Host belongs to all machine network CIDRs", pass: true},
		{name: "belongs-to-machine-cidr/outside", id: wire.HostValidationIDBelongsToMachineCIDR,
			setup:  func(s *hostScene) { s.in.Inventory.Interfaces[0].IPv4Addresses = []string{"10.0.0.5/24"} },
			status: wire.ValidationFailure, msg: "Host does not belong to machine network CIDRs. Verify that the host belongs to every CIDR listed under machine networks"},
		{name: "belongs-to-machine-cidr/only a virtual interface inside", id: wire.HostValidationIDBelongsToMachineCIDR,
			setup:  func(s *hostScene) { s.in.Inventory.Interfaces[0].Type = "bridge" },
			status: wire.ValidationFailure, msg: "Host does not belong to machine network CIDRs. Verify that the host belongs to every CIDR listed under machine networks"},
		{name: "belongs-to-machine-cidr/virtual interfaces allowed", id: wire.HostValidationIDBelongsToMachineCIDR,
			setup: func(s *hostScene) {
				s.in.Inventory.Interfaces[0].Type = "bridge"
				s.v.AllowVirtualInterfaces = true
			},
			status: wire.ValidationSuccess, msg: "Host belongs to all machine network CIDRs", pass: true},
		{name: "belongs-to-machine-cidr/no machine network yet", id: wire.HostValidationIDBelongsToMachineCIDR,
			setup:  func(s *hostScene) { s.in.Cluster.MachineNetworks = nil },
			status: wire.ValidationPending, msg: "Missing inventory or machine network CIDR"},
		{name: "belongs-to-machine-cidr/user managed networking", id: wire.HostValidationIDBelongsToMachineCIDR,
			setup:  func(s *hostScene) { s.in.Cluster.UserManagedNetworking = ptr(true) },
			status: wire.ValidationSuccess, msg: "No machine network CIDR validation needed: User Managed Networking", pass: true},
		{name: "belongs-to-machine-cidr/user managed load balancer, one of two", id: wire.HostValidationIDBelongsToMachineCIDR,
			setup: func(s *hostScene) {
				s.in.Cluster.LoadBalancer = &wire.LoadBalancer{Type: wire.LoadBalancerTypeUserManaged}
				s.in.Cluster.MachineNetworks = append(s.in.Cluster.MachineNetworks, &wire.MachineNetwork{CIDR: "10.9.0.0/16"})
			},
			status: wire.ValidationSuccess, msg: "Host belongs to at least one machine network CIDR", pass: true},
		// hostname-valid
		{name: "hostname-valid/allowed", id: wire.HostValidationIDHostnameValid,
			status: wire.ValidationSuccess, msg: "Hostname master-0 is allowed", pass: true},
		{name: "hostname-valid/localhost", id: wire.HostValidationIDHostnameValid,
			setup:  func(s *hostScene) { s.in.Inventory.Hostname = "localhost" },
			status: wire.ValidationFailure, msg: "The host name localhost is forbidden"},
		{name: "hostname-valid/uppercase and underscore", id: wire.HostValidationIDHostnameValid,
			setup:  func(s *hostScene) { s.in.Host.RequestedHostname = "Master_0" },
			status: wire.ValidationFailure, msg: "Hostname Master_0 is forbidden, hostname should match pattern ^[a-z0-9][a-z0-9-]{0,62}(?:[.][a-z0-9-]{1,63})*$"},
		{name: "hostname-valid/no inventory fails", id: wire.HostValidationIDHostnameValid,
			setup:  func(s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationFailure, msg: "Missing inventory"},
		// time-synced-between-host-and-service
		{name: "time-synced/in sync", id: wire.HostValidationIDTimeSyncedBetweenHostAndService,
			status: wire.ValidationSuccess, msg: "Host clock is synchronized with service", pass: true},
		{name: "time-synced/host 21 minutes behind", id: wire.HostValidationIDTimeSyncedBetweenHostAndService,
			setup:  func(s *hostScene) { s.in.Host.Timestamp = now.Add(-21 * time.Minute).Unix() },
			status: wire.ValidationFailure, msg: "Host clock is not synchronized, service time is ahead of host's at least for 20.0 minutes, please configure an NTP server via DHCP. Service time: 2026-11-22 05:00:00 +0000 UTC"},
		{name: "time-synced/no host time", id: wire.HostValidationIDTimeSyncedBetweenHostAndService,
			setup:  func(s *hostScene) { s.in.Host.Timestamp = 0 },
			status: wire.ValidationPending, msg: "Missing host time, can't determine synchronization between host and service"},
		// has-default-route
		{name: "has-default-route/present", id: wire.HostValidationIDHasDefaultRoute,
			status: wire.ValidationSuccess, msg: "Host has been configured with at least one default route.", pass: true},
		{name: "has-default-route/none", id: wire.HostValidationIDHasDefaultRoute,
			setup:  func(s *hostScene) { s.in.Inventory.Routes = s.in.Inventory.Routes[1:] },
			status: wire.ValidationFailure, msg: "Host has not yet been configured with a default route."},
		// compatible-with-cluster-platform
		{name: "compatible-with-cluster-platform/baremetal", id: wire.HostValidationIDCompatibleWithClusterPlatform,
			status: wire.ValidationSuccess, msg: "Host is compatible with cluster platform baremetal", pass: true},
		{name: "compatible-with-cluster-platform/vsphere on KVM", id: wire.HostValidationIDCompatibleWithClusterPlatform,
			setup:  func(s *hostScene) { s.in.Cluster.Platform = &wire.Platform{Type: wire.PlatformTypeVsphere} },
			status: wire.ValidationFailure, msg: "Host is not compatible with cluster platform vsphere; either disable this host or discover a new compatible host."},
		{name: "compatible-with-cluster-platform/no platform", id: wire.HostValidationIDCompatibleWithClusterPlatform,
			setup:  func(s *hostScene) { s.in.Cluster.Platform = nil },
			status: wire.ValidationPending, msg: "Missing inventory or platform isn't set"},
		// the cluster's ignore list
		{name: "ignored/forces the condition, not the status", id: wire.HostValidationIDHasCPUCoresForRole,
			setup: func(s *hostScene) {
				s.in.Inventory.CPU.Count = 2
				s.in.Cluster.IgnoredHostValidations = `["has-cpu-cores-for-role"]`
			},
			status: wire.ValidationFailure, msg: "Require at least 4 CPU cores for master role, found only 2", pass: true},
		{name: "ignored/all cannot ignore hostname-valid", id: wire.HostValidationIDHostnameValid,
			setup: func(s *hostScene) {
				s.in.Inventory.Hostname = "localhost"
				s.in.Cluster.IgnoredHostValidations = `["all"]`
			},
			status: wire.ValidationFailure, msg: "The host name localhost is forbidden"},
		{name: "ignored/a cluster ignore list overrides disabled", id: wire.HostValidationIDHasMinCPUCores,
			setup: func(s *hostScene) {
				s.v.DisabledHost = NewIDSet(string(wire.HostValidationIDHasMinCPUCores))
				s.in.Cluster.IgnoredHostValidations = `[]`
			},
			status: wire.ValidationSuccess, msg: "Sufficient CPU cores", pass: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newHostScene()
			if tc.setup != nil {
				tc.setup(s)
			}
			rep := s.run()
			id := string(tc.id)
			if got := rep.Conditions[id]; got != tc.pass {
				t.Errorf("condition %s = %v, want %v", id, got, tc.pass)
			}
			if tc.hidden {
				for _, r := range rep.Results {
					if r.ID == id {
						t.Fatalf("result %+v is in validations_info, want it left out", r)
					}
				}
				return
			}
			got := findResult(t, rep, id)
			if got.Status != tc.status || got.Message != tc.msg {
				t.Errorf("%s = %s %q, want %s %q", id, got.Status, got.Message, tc.status, tc.msg)
			}
		})
	}
}

func TestHostValidationsDisabled(t *testing.T) {
	for _, id := range HostValidationIDs() {
		t.Run(string(id), func(t *testing.T) {
			s := newHostScene()
			s.in.Inventory = nil // every validation would otherwise fail or pend
			s.v.DisabledHost = NewIDSet(string(id))
			rep := s.run()
			got := findResult(t, rep, string(id))
			if got.Status != wire.ValidationDisabled || got.Message != "Validation disabled by configuration" {
				t.Errorf("%s = %s %q, want disabled", id, got.Status, got.Message)
			}
			if !rep.Conditions[string(id)] {
				t.Errorf("condition %s = false, want true for a disabled validation", id)
			}
		})
	}
}

func TestHostValidationsUnbound(t *testing.T) {
	s := newHostScene()
	s.in.Cluster, s.in.Host.ClusterID = nil, nil
	s.in.Inventory.CPU.Count = 1
	rep := s.run()
	// A host bound to no cluster is held to the role with the smallest disk
	// (arbiter: 2 cores, 8 GiB, 50 GB).
	got := findResult(t, rep, string(wire.HostValidationIDHasCPUCoresForRole))
	want := "Require at least 2 CPU cores for master role, found only 1"
	if got.Message != want {
		t.Errorf("has-cpu-cores-for-role = %q, want %q", got.Message, want)
	}
	for _, id := range []wire.HostValidationID{wire.HostValidationIDHostnameUnique, wire.HostValidationIDBelongsToMachineCIDR, wire.HostValidationIDCompatibleWithClusterPlatform} {
		for _, r := range rep.Results {
			if r.ID == string(id) {
				t.Errorf("unbound host reports %s, want it left out", id)
			}
		}
	}
}

func TestHostValidationsOrder(t *testing.T) {
	s := newHostScene()
	s.v.HostConfigs = []manifests.HostConfig{} // shows the validations about them
	rep := s.run()
	var got []string
	for _, r := range rep.Results {
		got = append(got, r.ID)
	}
	var want []string
	for _, id := range HostValidationIDs() {
		want = append(want, string(id))
	}
	if len(got) != len(want) {
		t.Fatalf("got %d results %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("result %d = %s, want %s", i, got[i], want[i])
		}
	}
	if f := rep.Failing(); len(f) != 0 {
		t.Errorf("healthy master fails %v", f)
	}
}
