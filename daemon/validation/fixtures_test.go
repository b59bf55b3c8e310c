package validation

import (
	"fmt"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// now is the fixed clock of every test.
var now = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

const gib = int64(1) << 30

func ptr[T any](v T) *T { return &v }

// testInterner compacts the tests' connectivity reports, as the service's
// one Interner compacts all of its.
var testInterner = NewInterner()

// typed returns hosts as the service hands them over: the connectivity
// report and the check results a test wrote into each host's JSON-text
// fields (as a stored host document carries them), decoded: the report
// compacted with every probe kept (keepAll; runCompact compacts with the
// Validator's thresholds), the checks by ReadHostChecks.
func typed(hosts []HostEntry) []HostEntry {
	out := make([]HostEntry, len(hosts))
	for i, h := range hosts {
		out[i] = typedEntry(h)
	}
	return out
}

func typedEntry(h HostEntry) HostEntry {
	if h.Host == nil {
		return h
	}
	if h.Conn == nil && h.Host.Connectivity != "" {
		h.Conn = parseConnReport(testInterner, h.Host.Connectivity, keepAll)
	}
	if h.Checks == nil {
		c := ReadHostChecks(h.Host)
		h.Checks = &c
	}
	return h
}

// testCluster is a multi-node, cluster-managed-networking cluster with one
// machine network and a VIP pair inside it.
func testCluster() *wire.Cluster {
	return &wire.Cluster{
		ID:                "c1",
		Kind:              wire.ClusterKindCluster,
		Name:              "ostest",
		OpenshiftVersion:  "4.18.0",
		Status:            wire.ClusterStatusInsufficient,
		ControlPlaneCount: 3,
		BaseDNSDomain:     "example.com",
		PullSecretSet:     true,
		Platform:          &wire.Platform{Type: wire.PlatformTypeBaremetal},
		NetworkType:       ptr(wire.ClusterNetworkTypeOVNKubernetes),
		ClusterNetworks:   []*wire.ClusterNetwork{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks:   []*wire.ServiceNetwork{{CIDR: "172.30.0.0/16"}},
		MachineNetworks:   []*wire.MachineNetwork{{CIDR: "192.168.111.0/24"}},
		APIVIPs:           []*wire.APIVIP{{IP: "192.168.111.5"}},
		IngressVIPs:       []*wire.IngressVIP{{IP: "192.168.111.4"}},
	}
}

// testInventory is a host with cores CPUs, ramGiB of memory, one 200 GB
// eligible HDD and eth0 at addr.
func testInventory(name string, cores, ramGiB int64, addr string) *wire.Inventory {
	return &wire.Inventory{
		Hostname: name,
		CPU:      &wire.CPU{Count: cores, Architecture: "x86_64"},
		Memory:   &wire.Memory{PhysicalBytes: ramGiB * gib, UsableBytes: ramGiB * gib, PhysicalBytesMethod: wire.MemoryMethodGhw},
		Disks: []*wire.Disk{{
			ID: "/dev/disk/by-id/wwn-0x1", Name: "sda", Path: "/dev/sda", DriveType: wire.DriveTypeHDD,
			SizeBytes: 200 * 1000 * 1000 * 1000, HCTL: "0:0:0:0",
			InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
		}},
		Interfaces: []*wire.Interface{{
			Name: "eth0", Type: "physical", MACAddress: "52:54:00:aa:bb:01",
			IPv4Addresses: []string{addr},
		}},
		Routes: []*wire.Route{
			{Destination: "0.0.0.0", Gateway: "192.168.111.1", Interface: "eth0", Family: 2},
			{Destination: "192.168.111.0", Interface: "eth0", Family: 2},
		},
		SystemVendor: &wire.SystemVendor{Manufacturer: "Red Hat", ProductName: "KVM"},
	}
}

func testHost(id string, role wire.HostRole) *wire.Host {
	return &wire.Host{
		ID:          id,
		ClusterID:   ptr("c1"),
		InfraEnvID:  "ie1",
		Kind:        wire.HostKindHost,
		Status:      wire.HostStatusKnown,
		Role:        role,
		CheckedInAt: wire.DateTime(now.Add(-10 * time.Second)),
		Timestamp:   now.Unix(),
	}
}

// testHosts returns 3 master-class hosts (8 cores, 32 GiB) with role
// master and 2 worker-class hosts (2 cores, 8 GiB) with role worker.
func testHosts() []HostEntry {
	var hosts []HostEntry
	for i := range 5 {
		role, cores, ram, name := wire.HostRoleMaster, int64(8), int64(32), fmt.Sprintf("master-%d", i)
		if i >= 3 {
			role, cores, ram, name = wire.HostRoleWorker, 2, 8, fmt.Sprintf("worker-%d", i-3)
		}
		hosts = append(hosts, HostEntry{
			Host:      testHost(fmt.Sprintf("h%d", i), role),
			Inventory: testInventory(name, cores, ram, fmt.Sprintf("192.168.111.%d/24", 10+i)),
		})
	}
	// Every host has checked its peers (all reachable), its NTP sources
	// and the cluster's domain names (no wildcard record).
	setMesh(hosts, nil)
	for _, h := range hosts {
		h.Host.NTPSources = `[{"source_name":"192.168.111.1","source_state":"synced"}]`
		h.Host.DomainNameResolutions = resolutions(map[string][]string{})
	}
	return hosts
}

// findResult returns the result with id, failing the test when it is
// missing.
func findResult(t *testing.T, r Report, id string) wire.Validation {
	t.Helper()
	for _, res := range r.Results {
		if res.ID == id {
			return res
		}
	}
	t.Fatalf("no result for %s in %+v", id, r.Results)
	return wire.Validation{}
}
