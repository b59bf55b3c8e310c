package validation

import (
	"fmt"
	"testing"
	"time"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// now is the fixed clock of every test.
var now = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

const gib = int64(1) << 30

func ptr[T any](v T) *T { return &v }

// testCluster is a multi-node, cluster-managed-networking cluster with one
// machine network and a VIP pair inside it.
func testCluster() *v2.Cluster {
	return &v2.Cluster{
		ID:                "c1",
		Kind:              v2.ClusterKindCluster,
		Name:              "ostest",
		OpenshiftVersion:  "4.18.0",
		Status:            v2.ClusterStatusInsufficient,
		ControlPlaneCount: 3,
		BaseDNSDomain:     "example.com",
		PullSecretSet:     true,
		Platform:          &v2.Platform{Type: v2.PlatformTypeBaremetal},
		NetworkType:       ptr(v2.ClusterNetworkTypeOVNKubernetes),
		ClusterNetworks:   []*v2.ClusterNetwork{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
		ServiceNetworks:   []*v2.ServiceNetwork{{CIDR: "172.30.0.0/16"}},
		MachineNetworks:   []*v2.MachineNetwork{{CIDR: "192.168.111.0/24"}},
		APIVIPs:           []*v2.APIVIP{{IP: "192.168.111.5"}},
		IngressVIPs:       []*v2.IngressVIP{{IP: "192.168.111.4"}},
	}
}

// testInventory is a host with cores CPUs, ramGiB of memory, one 200 GB
// eligible HDD and eth0 at addr.
func testInventory(name string, cores, ramGiB int64, addr string) *v2.Inventory {
	return &v2.Inventory{
		Hostname: name,
		CPU:      &v2.CPU{Count: cores, Architecture: "x86_64"},
		Memory:   &v2.Memory{PhysicalBytes: ramGiB * gib, UsableBytes: ramGiB * gib, PhysicalBytesMethod: v2.MemoryMethodGhw},
		Disks: []*v2.Disk{{
			ID: "/dev/disk/by-id/wwn-0x1", Name: "sda", Path: "/dev/sda", DriveType: v2.DriveTypeHDD,
			SizeBytes: 200 * 1000 * 1000 * 1000, HCTL: "0:0:0:0",
			InstallationEligibility: &v2.DiskInstallationEligibility{Eligible: true},
		}},
		Interfaces: []*v2.Interface{{
			Name: "eth0", Type: "physical", MACAddress: "52:54:00:aa:bb:01",
			IPv4Addresses: []string{addr},
		}},
		Routes: []*v2.Route{
			{Destination: "0.0.0.0", Gateway: "192.168.111.1", Interface: "eth0", Family: 2},
			{Destination: "192.168.111.0", Interface: "eth0", Family: 2},
		},
		SystemVendor: &v2.SystemVendor{Manufacturer: "Red Hat", ProductName: "KVM"},
	}
}

func testHost(id string, role v2.HostRole) *v2.Host {
	return &v2.Host{
		ID:          id,
		ClusterID:   ptr("c1"),
		InfraEnvID:  "ie1",
		Kind:        v2.HostKindHost,
		Status:      v2.HostStatusKnown,
		Role:        role,
		CheckedInAt: v2.DateTime(now.Add(-10 * time.Second)),
		Timestamp:   now.Unix(),
	}
}

// testHosts returns 3 master-class hosts (8 cores, 32 GiB) with role
// master and 2 worker-class hosts (2 cores, 8 GiB) with role worker.
func testHosts() []HostEntry {
	var hosts []HostEntry
	for i := range 5 {
		role, cores, ram, name := v2.HostRoleMaster, int64(8), int64(32), fmt.Sprintf("master-%d", i)
		if i >= 3 {
			role, cores, ram, name = v2.HostRoleWorker, 2, 8, fmt.Sprintf("worker-%d", i-3)
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
func findResult(t *testing.T, r Report, id string) Result {
	t.Helper()
	for _, res := range r.Results {
		if res.ID == id {
			return res
		}
	}
	t.Fatalf("no result for %s in %+v", id, r.Results)
	return Result{}
}
