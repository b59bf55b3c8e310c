package validation

import (
	"fmt"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// thousandHosts is a 1,000-host cluster: 3 masters and 997 workers, each
// with its own inventory in a /22 machine network.
func thousandHosts() (*wire.Cluster, []HostEntry) {
	c := testCluster()
	c.MachineNetworks = []*wire.MachineNetwork{{CIDR: "192.168.108.0/22"}}
	c.APIVIPs = []*wire.APIVIP{{IP: "192.168.108.5"}}
	c.IngressVIPs = []*wire.IngressVIP{{IP: "192.168.108.4"}}
	// Every host's NTP is synced (ntp-synced fails without a result).
	synced := &HostChecks{NTPSources: Got([]*wire.NTPSource{{SourceName: "192.168.108.1", SourceState: wire.SourceStateSynced}})}
	hosts := make([]HostEntry, 1000)
	for i := range hosts {
		role, cores, ram := wire.HostRoleWorker, int64(8), int64(16)
		if i < 3 {
			role, cores, ram = wire.HostRoleMaster, 16, 64
		}
		addr := fmt.Sprintf("192.168.%d.%d/22", 108+(i+10)/256, (i+10)%256)
		hosts[i] = HostEntry{
			Host:      testHost(fmt.Sprintf("h%04d", i), role),
			Inventory: testInventory(fmt.Sprintf("node-%04d", i), cores, ram, addr),
			Checks:    synced,
		}
	}
	return c, hosts
}

// BenchmarkHostValidations validates one host of a 1,000-host cluster with
// the cluster's facts computed once, as the service does when one host's
// facts change.
func BenchmarkHostValidations(b *testing.B) {
	c, hosts := thousandHosts()
	v := &Validator{}
	facts := v.Facts(c, hosts, nil)
	in := HostInput{Host: hosts[500].Host, Inventory: hosts[500].Inventory, Checks: hosts[500].Checks, Cluster: c, Facts: facts, Now: now}
	if f := v.ValidateHost(in).Failing(); len(f) != 0 {
		b.Fatalf("benchmark host fails %v", f)
	}
	b.ReportAllocs()
	for b.Loop() {
		v.ValidateHost(in)
	}
}

// BenchmarkClusterFacts is the once-per-cluster aggregation, with the
// cluster's memo as the service keeps it (the address collisions are
// computed once: the inventories and reports do not change).
func BenchmarkClusterFacts(b *testing.B) {
	c, hosts := thousandHosts()
	v := &Validator{}
	memo := &ClusterMemo{}
	b.ReportAllocs()
	for b.Loop() {
		v.Facts(c, hosts, memo)
	}
}

// BenchmarkClusterValidations evaluates a 1,000-host cluster.
func BenchmarkClusterValidations(b *testing.B) {
	c, hosts := thousandHosts()
	v := &Validator{}
	in := ClusterInput{Cluster: c, Hosts: hosts}
	b.ReportAllocs()
	for b.Loop() {
		v.ValidateCluster(in)
	}
}
