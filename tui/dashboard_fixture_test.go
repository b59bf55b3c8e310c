package tui

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// Fixtures for the dashboard tests: clusters and hosts as node zero's
// service sends them, with inventories and validations_info written the
// way the service writes them.

// fixtureTime is when every fixture snapshot was taken.
var fixtureTime = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

const gib = int64(1) << 30

// hostSpec describes one fixture host.
type hostSpec struct {
	id, name   string
	role       wire.HostRole
	bootstrap  bool
	status     wire.HostStatus
	statusInfo string
	stage      wire.HostStage
	progress   string // the stage's progress_info
	pct        int64
	cores      int64
	ram        int64 // bytes
	diskGB     int64
	noInv      bool
	// failing maps validation ids to the failure message that replaces
	// their success.
	failing map[string]string
	pending map[string]string
}

// hostValidations are a host's validations in the service's categories
// and order, with their success messages.
var hostValidations = []struct{ cat, id, ok string }{
	{"hardware", "has-inventory", "Valid inventory exists for the host"},
	{"hardware", "has-min-cpu-cores", "Sufficient CPU cores"},
	{"hardware", "has-min-memory", "Sufficient minimum RAM"},
	{"hardware", "has-min-valid-disks", "Sufficient disk capacity"},
	{"hardware", "has-cpu-cores-for-role", "Sufficient CPU cores for role %s"},
	{"hardware", "has-memory-for-role", "Sufficient RAM for role %s"},
	{"hardware", "hostname-unique", "Hostname %s is unique in cluster"},
	{"hardware", "hostname-valid", "Hostname %s is allowed"},
	{"network", "connected", "Host is connected"},
	{"network", "machine-cidr-defined", "Machine Network CIDR is defined"},
	{"network", "belongs-to-machine-cidr", "Host belongs to all machine network CIDRs"},
	{"network", "has-default-route", "Host has been configured with at least one default route."},
	{"network", "ntp-synced", "Host NTP is synced"},
	{"network", "api-domain-name-resolved-correctly", "Domain name resolution for the api.ocp-edge.example.com domain was successful or not required"},
	{"operators", "lso-requirements-satisfied", "lso is disabled"},
	{"operators", "odf-requirements-satisfied", "odf is disabled"},
}

func fixtureHost(s hostSpec) *wire.Host {
	clusterID := fixtureClusterID
	h := &wire.Host{
		Kind: wire.HostKindHost, ID: s.id, Href: "/api/assisted-install/v2/infra-envs/" + fixtureInfraEnvID + "/hosts/" + s.id,
		ClusterID: &clusterID, InfraEnvID: fixtureInfraEnvID, Status: s.status, StatusInfo: s.statusInfo,
		Role: s.role, Bootstrap: s.bootstrap, RequestedHostname: s.name,
		CheckedInAt: wire.DateTime(fixtureTime.Add(-20 * time.Second)),
	}
	if s.stage != "" || s.pct > 0 {
		h.Progress = &wire.HostProgressInfo{CurrentStage: s.stage, ProgressInfo: s.progress, InstallationPercentage: s.pct}
	}
	if !s.noInv {
		h.Inventory = mustJSON(fixtureInventory(s))
		h.InstallationDiskID = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d" + s.id[len(s.id)-1:]
		h.InstallationDiskPath = "/dev/sda"
	}
	groups := map[string][]map[string]string{}
	for _, v := range hostValidations {
		st, msg := "success", v.ok
		if m, ok := s.failing[v.id]; ok {
			st, msg = "failure", m
		} else if m, ok := s.pending[v.id]; ok {
			st, msg = "pending", m
		} else if strings.Contains(msg, "%s") {
			arg := s.name
			if v.id == "has-cpu-cores-for-role" || v.id == "has-memory-for-role" {
				arg = string(s.role)
			}
			msg = fmt.Sprintf(msg, arg)
		}
		groups[v.cat] = append(groups[v.cat], map[string]string{"id": v.id, "status": st, "message": msg})
	}
	h.ValidationsInfo = mustJSON(groups)
	return h
}

func fixtureInventory(s hostSpec) *wire.Inventory {
	n := s.id[len(s.id)-1:]
	eligible := &wire.DiskInstallationEligibility{Eligible: true}
	return &wire.Inventory{
		Hostname:     s.name,
		SystemVendor: &wire.SystemVendor{Manufacturer: "Dell Inc.", ProductName: "PowerEdge R650", SerialNumber: "7XK2QW" + n},
		CPU:          &wire.CPU{Count: s.cores, ModelName: "Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz", Architecture: "x86_64"},
		Memory:       &wire.Memory{PhysicalBytes: s.ram, UsableBytes: s.ram - gib/2},
		Boot:         &wire.Boot{CurrentBootMode: "uefi"},
		Interfaces: []*wire.Interface{{
			Name: "eno1", MACAddress: "b8:ce:f6:12:34:5" + n, MTU: 1500, HasCarrier: true, SpeedMbps: 25000,
			IPv4Addresses: []string{"192.168.111.2" + n + "/24"}, IPv6Addresses: []string{"fd2e:6f44:5dd8::2" + n + "/64"},
		}},
		Disks: []*wire.Disk{
			{ID: "/dev/disk/by-id/wwn-0x5000c500a0b1c2d" + n, Name: "sda", Path: "/dev/sda", DriveType: wire.DriveTypeSSD,
				SizeBytes: s.diskGB * 1e9, InstallationEligibility: eligible},
			{ID: "/dev/disk/by-path/pci-0000:00:14.0-usb-0:1:1.0-scsi-0:0:0:0", Name: "sdb", Path: "/dev/sdb", DriveType: wire.DriveTypeSSD,
				SizeBytes: 8e9, Removable: true, IsInstallationMedia: true,
				InstallationEligibility: &wire.DiskInstallationEligibility{NotEligibleReasons: []string{
					"Disk is too small (disk only has 8.0 GB, but 100 GB are required)", "Disk appears to be an installation media"}}},
		},
		Routes: []*wire.Route{{Interface: "eno1", Gateway: "192.168.111.1", Destination: "0.0.0.0", Family: 2}},
	}
}

const (
	fixtureClusterID  = "5c8a41b4-55b7-4d8e-a2a8-0f3e6f1c1a90"
	fixtureInfraEnvID = "0d8f5f0e-7f0e-4f3c-9d84-32b3e7a1c2f1"
)

// clusterValidations are the cluster's validations with their success
// messages.
var clusterValidations = []struct{ cat, id, ok string }{
	{"network", "machine-cidr-defined", "The Machine Network CIDR is defined."},
	{"network", "cluster-cidr-defined", "The Cluster Network CIDR is defined."},
	{"network", "service-cidr-defined", "The Service Network CIDR is defined."},
	{"network", "no-cidrs-overlapping", "No CIDRS are overlapping."},
	{"network", "api-vips-defined", "API virtual IPs are defined."},
	{"network", "api-vips-valid", "api vips 192.168.111.5 belongs to the Machine CIDR and is not in use."},
	{"network", "ingress-vips-defined", "Ingress virtual IPs are defined."},
	{"network", "ingress-vips-valid", "ingress vips 192.168.111.4 belongs to the Machine CIDR and is not in use."},
	{"network", "ntp-server-configured", "No ntp problems found"},
	{"hosts-data", "all-hosts-are-ready-to-install", "All hosts in the cluster are ready to install."},
	{"hosts-data", "sufficient-masters-count", "The cluster has the exact amount of dedicated control plane nodes."},
	{"configuration", "pull-secret-set", "The pull secret is set."},
}

func fixtureCluster(status wire.ClusterStatus, info string, pct int64, failing, pending map[string]string) *wire.Cluster {
	groups := map[string][]map[string]string{}
	for _, v := range clusterValidations {
		st, msg := "success", v.ok
		if m, ok := failing[v.id]; ok {
			st, msg = "failure", m
		} else if m, ok := pending[v.id]; ok {
			st, msg = "pending", m
		}
		groups[v.cat] = append(groups[v.cat], map[string]string{"id": v.id, "status": st, "message": msg})
	}
	// node zero's own configured-hosts-registered, when a case sets it.
	id := string(wire.ClusterValidationIDConfiguredHostsRegistered)
	if m, ok := failing[id]; ok {
		groups["hosts-data"] = append(groups["hosts-data"], map[string]string{"id": id, "status": "failure", "message": m})
	} else if m, ok := pending[id]; ok {
		groups["hosts-data"] = append(groups["hosts-data"], map[string]string{"id": id, "status": "pending", "message": m})
	}
	c := &wire.Cluster{
		Kind: wire.ClusterKindCluster, ID: fixtureClusterID, Href: "/api/assisted-install/v2/clusters/" + fixtureClusterID,
		Name: "ocp-edge", OpenshiftVersion: "4.18.3", BaseDNSDomain: "example.com", Status: status, StatusInfo: info,
		ControlPlaneCount: 3, ValidationsInfo: mustJSON(groups),
	}
	if pct > 0 {
		c.Progress = &wire.ClusterProgressInfo{TotalPercentage: pct}
	}
	if installing(&wire.Cluster{Status: status}) {
		c.InstallStartedAt = wire.DateTime(fixtureTime.Add(-25 * time.Minute))
	}
	return c
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Host ids of the five-host fixtures.
const (
	idMaster0 = "8d2c6a10-1b2e-4c3d-9e4f-5a6b7c8d9e00"
	idMaster1 = "8d2c6a10-1b2e-4c3d-9e4f-5a6b7c8d9e01"
	idMaster2 = "8d2c6a10-1b2e-4c3d-9e4f-5a6b7c8d9e02"
	idWorker0 = "8d2c6a10-1b2e-4c3d-9e4f-5a6b7c8d9e03"
	idWorker1 = "8d2c6a10-1b2e-4c3d-9e4f-5a6b7c8d9e04"
)

// fiveHosts are three masters and two workers, all passing, known.
func fiveHosts() []hostSpec {
	return []hostSpec{
		{id: idMaster0, name: "master-0", role: wire.HostRoleMaster, status: wire.HostStatusKnown, statusInfo: "Host is ready to be installed", cores: 16, ram: 64 * gib, diskGB: 480},
		{id: idMaster1, name: "master-1", role: wire.HostRoleMaster, status: wire.HostStatusKnown, statusInfo: "Host is ready to be installed", cores: 16, ram: 64 * gib, diskGB: 480},
		{id: idMaster2, name: "master-2", role: wire.HostRoleMaster, status: wire.HostStatusKnown, statusInfo: "Host is ready to be installed", cores: 16, ram: 64 * gib, diskGB: 480},
		{id: idWorker0, name: "worker-0", role: wire.HostRoleWorker, status: wire.HostStatusKnown, statusInfo: "Host is ready to be installed", cores: 32, ram: 128 * gib, diskGB: 960},
		{id: idWorker1, name: "worker-1", role: wire.HostRoleWorker, status: wire.HostStatusKnown, statusInfo: "Host is ready to be installed", cores: 32, ram: 128 * gib, diskGB: 960},
	}
}

func buildHosts(specs []hostSpec) []*wire.Host {
	out := make([]*wire.Host, len(specs))
	for i, s := range specs {
		out[i] = fixtureHost(s)
	}
	return out
}

// fixtureEvent is one event, sec seconds before fixtureTime.
func fixtureEvent(sec int, severity wire.EventSeverity, hostID, msg string) *wire.Event {
	clusterID := fixtureClusterID
	e := &wire.Event{Name: "host_status_updated", ClusterID: &clusterID, Severity: severity, Category: wire.EventCategoryUser,
		Message: msg, EventTime: wire.DateTime(fixtureTime.Add(-time.Duration(sec) * time.Second))}
	if hostID != "" {
		e.HostID = &hostID
	}
	return e
}

// healthySnapshot: ready, three masters and two workers all passing; the
// console runs on master-0.
func healthySnapshot() Snapshot {
	return Snapshot{
		At: fixtureTime, ThisHost: idMaster0,
		Cluster: fixtureCluster(wire.ClusterStatusReady, "Cluster ready to be installed", 0, nil, nil),
		Hosts:   buildHosts(fiveHosts()),
		Events: []*wire.Event{
			fixtureEvent(420, wire.EventSeverityInfo, "", "Successfully registered cluster ocp-edge with id "+fixtureClusterID),
			fixtureEvent(300, wire.EventSeverityInfo, idMaster0, "Host master-0: Successfully registered"),
			fixtureEvent(240, wire.EventSeverityInfo, idWorker1, "Host worker-1: updated status from discovering to known (Host is ready to be installed)"),
			fixtureEvent(90, wire.EventSeverityInfo, "", "Cluster validation 'all-hosts-are-ready-to-install' is now fixed"),
			fixtureEvent(60, wire.EventSeverityInfo, "", "Updated status of the cluster to ready"),
		},
	}
}

const memoryFailure = "Require at least 16.00 GiB RAM for role master, found only 8.00 GiB"

// failingSnapshot: insufficient; master-1 has too little memory and the
// API VIP is outside the machine network.
func failingSnapshot() Snapshot {
	specs := fiveHosts()
	specs[1].status = wire.HostStatusInsufficient
	specs[1].ram = 8 * gib
	specs[1].statusInfo = "Host cannot be installed due to following failing validation(s): " + memoryFailure
	specs[1].failing = map[string]string{"has-memory-for-role": memoryFailure}
	specs[4].failing = map[string]string{"ntp-synced": "Host couldn't synchronize with any NTP server"}
	return Snapshot{
		At: fixtureTime, ThisHost: idMaster0,
		Cluster: fixtureCluster(wire.ClusterStatusInsufficient, "Cluster is not ready for install", 0, map[string]string{
			"all-hosts-are-ready-to-install": "The cluster has hosts that are not ready to install.",
			"api-vips-valid":                 "api vips <192.168.122.5> does not belong to machine-network-cidr <192.168.111.0/24>",
		}, nil),
		Hosts: buildHosts(specs),
		Events: []*wire.Event{
			fixtureEvent(300, wire.EventSeverityInfo, idMaster1, "Host master-1: Successfully registered"),
			fixtureEvent(200, wire.EventSeverityWarning, idMaster1, "Host master-1: validation 'has-memory-for-role' that used to succeed is now failing"),
			fixtureEvent(199, wire.EventSeverityWarning, idMaster1, "Host master-1: updated status from discovering to insufficient (Host cannot be installed due to following failing validation(s): "+memoryFailure+")"),
			fixtureEvent(120, wire.EventSeverityWarning, "", "Cluster validation 'api-vips-valid' that used to succeed is now failing"),
			fixtureEvent(30, wire.EventSeverityWarning, idWorker1, "Host worker-1: validation 'ntp-synced' that used to succeed is now failing"),
		},
	}
}

// installingSnapshot: installing; the hosts are at different stages.
func installingSnapshot() Snapshot {
	specs := fiveHosts()
	set := func(i int, stage wire.HostStage, pct int64) {
		specs[i].status, specs[i].statusInfo = wire.HostStatusInstallingInProgress, string(stage)
		specs[i].stage, specs[i].pct = stage, pct
	}
	specs[0].bootstrap = true
	set(0, wire.HostStageWaitingForControlPlane, 45)
	set(1, wire.HostStageRebooting, 62)
	set(2, wire.HostStageWritingImageToDisk, 37)
	set(3, wire.HostStageWaitingForControlPlane, 44)
	set(4, wire.HostStageInstalling, 22)
	return Snapshot{
		At: fixtureTime, ThisHost: idMaster0,
		Cluster: fixtureCluster(wire.ClusterStatusInstalling, "Installation in progress", 31, nil, nil),
		Hosts:   buildHosts(specs),
		Events: []*wire.Event{
			fixtureEvent(600, wire.EventSeverityInfo, "", "Updated status of the cluster to installing"),
			fixtureEvent(300, wire.EventSeverityInfo, idMaster0, "Host master-0: updated status from installing to installing-in-progress (Starting installation)"),
			fixtureEvent(180, wire.EventSeverityInfo, idMaster2, "Host: master-2, reached installation stage Writing image to disk: 37%"),
			fixtureEvent(100, wire.EventSeverityInfo, idMaster0, "Host: master-0, reached installation stage Waiting for control plane"),
			fixtureEvent(20, wire.EventSeverityInfo, idMaster1, "Host: master-1, reached installation stage Rebooting"),
		},
	}
}

// notJoinedReason is what the bootstrap host reports when the other
// control plane hosts do not join in time.
const notJoinedReason = "control plane hosts master-1 did not join within 30s; not rebooting the bootstrap host"

// failedSnapshot: the installation failed. The bootstrap host (master-0)
// waited for the control plane, master-1 never joined, and master-0
// reported stage Failed; the service stopped the other hosts (error,
// abortedInfo). worker-1 had an NTP warning all along.
func failedSnapshot() Snapshot {
	specs := fiveHosts()
	set := func(i int, stage wire.HostStage, pct int64) {
		specs[i].status, specs[i].statusInfo = wire.HostStatusError, abortedInfo
		specs[i].stage, specs[i].pct = stage, pct
	}
	specs[0].bootstrap = true
	set(0, wire.HostStageFailed, 55)
	specs[0].statusInfo, specs[0].progress = "Failed - "+notJoinedReason, notJoinedReason
	set(1, wire.HostStageConfiguring, 75)
	set(2, wire.HostStageJoined, 87)
	set(3, wire.HostStageWaitingForIgnition, 66)
	set(4, wire.HostStageRebooting, 55)
	specs[4].failing = map[string]string{"ntp-synced": "Host couldn't synchronize with any NTP server"}
	c := fixtureCluster(wire.ClusterStatusError, "cluster has hosts in error", 62, nil, nil)
	c.InstallStartedAt = wire.DateTime(fixtureTime.Add(-10 * time.Minute))
	return Snapshot{
		At: fixtureTime, ThisHost: idMaster0,
		Cluster: c,
		Hosts:   buildHosts(specs),
		Events: []*wire.Event{
			fixtureEvent(400, wire.EventSeverityInfo, "", "Updated status of the cluster to installing"),
			fixtureEvent(200, wire.EventSeverityInfo, idMaster1, "Host: master-1, reached installation stage Rebooting: rebooting in 1ms"),
			fixtureEvent(120, wire.EventSeverityInfo, idMaster1, "Host: master-1, reached installation stage Configuring: the node applies its machine config (simulated)"),
			fixtureEvent(31, wire.EventSeverityError, idMaster0, "Host master-0: updated status from installing-in-progress to error (Failed - "+notJoinedReason+")"),
			fixtureEvent(30, wire.EventSeverityError, "", "Updated status of the cluster to error"),
		},
	}
}

// installedSnapshot: the installation is done.
func installedSnapshot() Snapshot {
	specs := fiveHosts()
	for i := range specs {
		specs[i].status, specs[i].statusInfo = wire.HostStatusInstalled, "Done"
		specs[i].stage, specs[i].pct = wire.HostStageDone, 100
	}
	specs[0].bootstrap = true
	return Snapshot{
		At: fixtureTime, ThisHost: idMaster0,
		Cluster: fixtureCluster(wire.ClusterStatusInstalled, "Cluster is installed", 100, nil, nil),
		Hosts:   buildHosts(specs),
		Events: []*wire.Event{
			fixtureEvent(60, wire.EventSeverityInfo, idMaster0, "Host: master-0, reached installation stage Done: the node is Ready (simulated)"),
			fixtureEvent(30, wire.EventSeverityInfo, "", "Successfully completed installing cluster ocp-edge"),
		},
	}
}

// reconnectingSnapshot: the installing data, and node zero not answering.
func reconnectingSnapshot() Snapshot {
	s := installingSnapshot()
	s.Err = &FetchError{URL: "http://192.168.111.80:8090", Err: fmt.Errorf("list clusters: %w",
		&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})}
	return s
}

// manyHostsSnapshot: n hosts installing, for the benchmark.
func manyHostsSnapshot(tb testing.TB, n int) Snapshot {
	tb.Helper()
	s := installingSnapshot()
	s.Hosts = nil
	for i := range n {
		role := wire.HostRoleWorker
		if i < 3 {
			role = wire.HostRoleMaster
		}
		s.Hosts = append(s.Hosts, fixtureHost(hostSpec{
			id: fmt.Sprintf("8d2c6a10-1b2e-4c3d-9e4f-%012d", i), name: fmt.Sprintf("node-%03d", i), role: role,
			status: wire.HostStatusInstallingInProgress, stage: wire.HostStageWritingImageToDisk, pct: int64(i % 100),
			cores: 32, ram: 128 * gib, diskGB: 960,
		}))
	}
	return s
}
