package validation

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

// hostIP returns a test host's first address without its prefix.
func hostIP(h HostEntry) string {
	ip, _, _ := net.ParseCIDR(h.Inventory.Interfaces[0].IPv4Addresses[0])
	return ip.String()
}

// setMesh writes every host's connectivity report: L2, L3 (1 ms, no loss)
// and MTU probes to every other host, failing where cut(from, to) holds.
func setMesh(hosts []HostEntry, cut func(from, to int) bool) {
	for from, h := range hosts {
		var r wire.ConnectivityReport
		for to, o := range hosts {
			if to == from {
				continue
			}
			ok := cut == nil || !cut(from, to)
			ip := hostIP(o)
			r.RemoteHosts = append(r.RemoteHosts, &wire.ConnectivityRemoteHost{
				HostID: o.Host.ID,
				L2Connectivity: []*wire.L2Connectivity{{OutgoingNic: "eth0", OutgoingIPAddress: hostIP(h),
					RemoteIPAddress: ip, RemoteMAC: o.Inventory.Interfaces[0].MACAddress, Successful: ok}},
				L3Connectivity: []*wire.L3Connectivity{{OutgoingNic: "eth0", RemoteIPAddress: ip, Successful: ok, AverageRTTMs: 1}},
				MTUReport:      []*wire.MTUReport{{OutgoingNic: "eth0", RemoteIPAddress: ip, MTUSuccessful: true}},
			})
		}
		b, _ := json.Marshal(r)
		h.Host.Connectivity = string(b)
	}
}

// editReport changes host h's stored connectivity report.
func editReport(t *testing.T, h *wire.Host, edit func(*wire.ConnectivityReport)) {
	t.Helper()
	var r wire.ConnectivityReport
	if err := json.Unmarshal([]byte(h.Connectivity), &r); err != nil {
		t.Fatal(err)
	}
	edit(&r)
	b, _ := json.Marshal(r)
	h.Connectivity = string(b)
}

// resolutions is a domain-resolution reply for the test cluster: the
// wildcard probes resolve to nothing, the names in m to their addresses.
func resolutions(m map[string][]string) string {
	resp := wire.DomainResolutionResponse{Resolutions: []*wire.DomainResolutionResponseResolutionsItem{
		{DomainName: "validateNoWildcardDNS.ostest.example.com."},
		{DomainName: "validateNoWildcardDNS.ostest.example.com"},
	}}
	for name, ips := range m {
		resp.Resolutions = append(resp.Resolutions, &wire.DomainResolutionResponseResolutionsItem{DomainName: name, IPv4Addresses: ips})
	}
	b, _ := json.Marshal(resp)
	return string(b)
}

func majorityJSON(c *wire.Cluster, hosts []HostEntry) string {
	conn, err := ConnectivityGroups(c, typed(hosts), nil)
	if err != nil {
		panic(err)
	}
	s, err := conn.Marshal()
	if err != nil {
		panic(err)
	}
	return s
}

// recompute refreshes the scene's majority groups after a case changed the
// reports.
func (s *hostScene) recompute() {
	all := append([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}}, s.others...)
	s.in.Cluster.ConnectivityMajorityGroups = majorityJSON(s.in.Cluster, all)
}

func cutHost(i int) func(from, to int) bool {
	return func(from, to int) bool { return from == i || to == i }
}

func TestHostCheckValidations(t *testing.T) {
	tests := []struct {
		name   string
		id     wire.HostValidationID
		setup  func(t *testing.T, s *hostScene)
		status wire.ValidationStatus
		msg    string // exact; with prefix set, the start
		prefix bool
		hidden bool
	}{
		// belongs-to-majority-group
		{name: "majority/all connected", id: wire.HostValidationIDBelongsToMajorityGroup,
			status: wire.ValidationSuccess, msg: "Host has connectivity to the majority of hosts in the cluster"},
		{name: "majority/cut off", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup: func(t *testing.T, s *hostScene) {
				setMesh(append([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}}, s.others...), cutHost(0))
				s.recompute()
			},
			status: wire.ValidationFailure, msg: "No connectivity to the majority of hosts in the cluster; unreachable: master-1 (192.168.111.11), master-2 (192.168.111.12), worker-0 (192.168.111.13), worker-1 (192.168.111.14)"},
		{name: "majority/cut from two masters", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup: func(t *testing.T, s *hostScene) {
				// h0 cannot reach h1 and h2: the majority is {h1,h2,h3,h4}.
				setMesh(append([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}}, s.others...),
					func(from, to int) bool { return (from == 0 && to <= 2) || (to == 0 && from <= 2) })
				s.recompute()
			},
			status: wire.ValidationFailure, msg: "No connectivity to the majority of hosts in the cluster; unreachable: master-1 (192.168.111.11), master-2 (192.168.111.12)"},
		{name: "majority/cut from one master wins the tie", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup: func(t *testing.T, s *hostScene) {
				// h0 and h2 cannot reach each other: {h0,h1,h3,h4} and
				// {h1,h2,h3,h4} tie and the lower indexes win, as in assisted.
				setMesh(append([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}}, s.others...),
					func(from, to int) bool { return (from == 0 && to == 2) || (from == 2 && to == 0) })
				s.recompute()
			},
			status: wire.ValidationSuccess, msg: "Host has connectivity to the majority of hosts in the cluster"},
		{name: "majority/not computed yet", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.ConnectivityMajorityGroups = "" },
			status: wire.ValidationPending, msg: "Machine Network CIDR or Connectivity Majority Groups missing"},
		{name: "majority/two hosts", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup: func(t *testing.T, s *hostScene) {
				s.others = s.others[:1]
				s.recompute()
			},
			status: wire.ValidationPending, msg: "Not enough hosts in cluster to calculate connectivity groups"},
		{name: "majority/SNO", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.ControlPlaneCount = 1
				s.in.Cluster.ConnectivityMajorityGroups = ""
			},
			status: wire.ValidationSuccess, msg: "Host has connectivity to the majority of hosts in the cluster"},
		{name: "majority/day-2 host", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.Kind = wire.HostKindAddToExistingClusterHost },
			status: wire.ValidationSuccess, msg: "Day2 host is not required to be connected to other hosts in the cluster"},
		{name: "majority/garbage", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.ConnectivityMajorityGroups = "{" },
			status: wire.ValidationError, msg: "Parse error for connectivity majority group"},
		{name: "majority/L3 with user-managed networking", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.UserManagedNetworking = ptr(true) },
			status: wire.ValidationSuccess, msg: "Host has connectivity to the majority of hosts in the cluster"},
		{name: "majority/unbound", id: wire.HostValidationIDBelongsToMajorityGroup,
			setup: func(t *testing.T, s *hostScene) { s.in.Cluster = nil }, hidden: true},

		// sufficient-network-latency-requirement-for-role
		{name: "latency/fine", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			status: wire.ValidationSuccess, msg: "Network latency requirement has been satisfied."},
		{name: "latency/slow master peer", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			setup: func(t *testing.T, s *hostScene) {
				editReport(t, s.in.Host, func(r *wire.ConnectivityReport) {
					r.RemoteHosts[1].L3Connectivity[0].AverageRTTMs = 150.5 // master-2
					r.RemoteHosts[2].L3Connectivity[0].AverageRTTMs = 900   // worker-0: other role
				})
			},
			status: wire.ValidationFailure, prefix: true,
			msg: "A total network latency above the tolerated threshold of 100.00 ms was encountered when performing network latency tests between host master-0 and master-2 at 192.168.111.12 (150.50 ms)\nActions:\n"},
		{name: "latency/worker threshold 1000", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.Role = wire.HostRoleWorker
				editReport(t, s.in.Host, func(r *wire.ConnectivityReport) { r.RemoteHosts[2].L3Connectivity[0].AverageRTTMs = 900 })
			},
			status: wire.ValidationSuccess, msg: "Network latency requirement has been satisfied."},
		{name: "latency/no report", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.Connectivity = "" },
			status: wire.ValidationPending, msg: "Missing network latency information."},
		{name: "latency/no inventory", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			setup:  func(t *testing.T, s *hostScene) { s.in.Inventory = nil },
			status: wire.ValidationPending, msg: "The inventory is not available yet."},
		{name: "latency/auto-assign", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.Role = wire.HostRoleAutoAssign
				s.in.Host.Connectivity = ""
			},
			status: wire.ValidationSuccess, msg: "Network latency requirement has been satisfied."},
		{name: "latency/garbage", id: wire.HostValidationIDSufficientNetworkLatencyRequirementForRole,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.Connectivity = "[1]" },
			status: wire.ValidationError, msg: "Parse error while attempting to process the connectivity report"},

		// sufficient-packet-loss-requirement-for-role
		{name: "packet-loss/none", id: wire.HostValidationIDSufficientPacketLossRequirementForRole,
			status: wire.ValidationSuccess, msg: "Packet loss requirement has been satisfied."},
		{name: "packet-loss/master loses 5%", id: wire.HostValidationIDSufficientPacketLossRequirementForRole,
			setup: func(t *testing.T, s *hostScene) {
				editReport(t, s.in.Host, func(r *wire.ConnectivityReport) { r.RemoteHosts[0].L3Connectivity[0].PacketLossPercentage = 5 })
			},
			status: wire.ValidationFailure, prefix: true,
			msg: "A total packet loss above the tolerated threshold of 0.00% was encountered when performing connectivity validation between host master-0 and master-1 at 192.168.111.11 (5.00%)\nActions:\n1: Check if there are multiple devices"},
		{name: "packet-loss/worker tolerates 5%", id: wire.HostValidationIDSufficientPacketLossRequirementForRole,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.Role = wire.HostRoleWorker
				editReport(t, s.in.Host, func(r *wire.ConnectivityReport) { r.RemoteHosts[2].L3Connectivity[0].PacketLossPercentage = 5 })
			},
			status: wire.ValidationSuccess, msg: "Packet loss requirement has been satisfied."},
		{name: "packet-loss/no report", id: wire.HostValidationIDSufficientPacketLossRequirementForRole,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.Connectivity = "" },
			status: wire.ValidationPending, msg: "Missing packet loss information."},

		// mtu-valid
		{name: "mtu/ok", id: wire.HostValidationIDMTUValid, status: wire.ValidationSuccess, msg: "MTU is ok"},
		{name: "mtu/broken in machine network", id: wire.HostValidationIDMTUValid,
			setup: func(t *testing.T, s *hostScene) {
				editReport(t, s.in.Host, func(r *wire.ConnectivityReport) { r.RemoteHosts[1].MTUReport[0].MTUSuccessful = false })
			},
			status: wire.ValidationFailure, msg: "MTU is broken. Interface: eth0, remote IP address: 192.168.111.12"},
		{name: "mtu/broken outside machine network", id: wire.HostValidationIDMTUValid,
			setup: func(t *testing.T, s *hostScene) {
				editReport(t, s.in.Host, func(r *wire.ConnectivityReport) {
					r.RemoteHosts[1].MTUReport = append(r.RemoteHosts[1].MTUReport, &wire.MTUReport{OutgoingNic: "eth1", RemoteIPAddress: "10.9.9.9"})
				})
			},
			status: wire.ValidationSuccess, msg: "MTU is ok"},
		{name: "mtu/no report", id: wire.HostValidationIDMTUValid,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.Connectivity = "" },
			status: wire.ValidationPending, msg: "Missing MTU report information"},
		{name: "mtu/SNO", id: wire.HostValidationIDMTUValid,
			setup: func(t *testing.T, s *hostScene) { s.in.Cluster.ControlPlaneCount = 1 }, hidden: true},

		// no-ip-collisions-in-network
		{name: "ip-collisions/none", id: wire.HostValidationIDNoIPCollisionsInNetwork,
			status: wire.ValidationSuccess, msg: "No IP collisions were detected by host h0"},
		{name: "ip-collisions/same address on two hosts", id: wire.HostValidationIDNoIPCollisionsInNetwork,
			setup: func(t *testing.T, s *hostScene) {
				withMACs(append([]HostEntry{{Host: s.in.Host, Inventory: s.in.Inventory}}, s.others...))
				s.others[2].Inventory.Interfaces[0].IPv4Addresses = []string{"192.168.111.10/24"}
			},
			status: wire.ValidationFailure, msg: "Collisions detected for host ID h0, IP address: 192.168.111.10 Mac addresses: 52:54:00:aa:bb:00 (master-0),52:54:00:aa:bb:03 (worker-0)"},
		{name: "ip-collisions/seen by a peer on two MACs", id: wire.HostValidationIDNoIPCollisionsInNetwork,
			setup: func(t *testing.T, s *hostScene) {
				editReport(t, s.others[0].Host, func(r *wire.ConnectivityReport) {
					r.RemoteHosts[0].L2Connectivity = append(r.RemoteHosts[0].L2Connectivity, &wire.L2Connectivity{
						OutgoingNic: "eth0", RemoteIPAddress: "192.168.111.10", RemoteMAC: "52:54:00:de:ad:00", Successful: true})
				})
			},
			status: wire.ValidationFailure, msg: "Collisions detected for host ID h0, IP address: 192.168.111.10 Mac addresses: 52:54:00:aa:bb:01 (worker-1),52:54:00:de:ad:00"},

		// ntp-synced
		{name: "ntp/synced", id: wire.HostValidationIDNTPSynced, status: wire.ValidationSuccess, msg: "Host NTP is synced"},
		{name: "ntp/unreachable sources", id: wire.HostValidationIDNTPSynced,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.NTPSources = `[{"source_name":"a","source_state":"unreachable"},{"source_name":"b","source_state":"combined"}]`
			},
			status: wire.ValidationFailure, msg: "Host couldn't synchronize with any NTP server"},
		{name: "ntp/not reported", id: wire.HostValidationIDNTPSynced,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.NTPSources = "" },
			status: wire.ValidationFailure, msg: "Host couldn't synchronize with any NTP server"},
		{name: "ntp/garbage", id: wire.HostValidationIDNTPSynced,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.NTPSources = "{" },
			status: wire.ValidationError, msg: "Parse error for NTP sources"},

		// container-images-available
		{name: "images/none tried", id: wire.HostValidationIDContainerImagesAvailable,
			status: wire.ValidationSuccess, msg: "All required container images were either pulled successfully or no attempt was made to pull them"},
		{name: "images/pull failed", id: wire.HostValidationIDContainerImagesAvailable,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.ImagesStatus = `{"quay.io/a:1":{"name":"quay.io/a:1","result":"failure"},"quay.io/b:1":{"name":"quay.io/b:1","result":"success","size_bytes":10,"download_rate":5}}`
			},
			status: wire.ValidationFailure, msg: "Failed to fetch container images needed for installation from quay.io/a:1. This may be due to a network hiccup. Retry to install again. If this problem persists, check your network settings to make sure you’re not blocked."},
		{name: "images/too slow, as a list", id: wire.HostValidationIDContainerImagesAvailable,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.ImagesStatus = `[{"name":"quay.io/c:1","result":"success","size_bytes":1000,"download_rate":0.0001}]`
			},
			status: wire.ValidationFailure, prefix: true, msg: "Failed to fetch container images needed for installation from quay.io/c:1."},
		{name: "images/garbage", id: wire.HostValidationIDContainerImagesAvailable,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.ImagesStatus = "7" },
			status: wire.ValidationError, msg: "Validation error"},

		// sufficient-installation-disk-speed
		{name: "disk-speed/not measured", id: wire.HostValidationIDSufficientInstallationDiskSpeed,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.InstallationDiskID = "/dev/disk/by-id/wwn-0x1" },
			status: wire.ValidationSuccess, msg: "Speed of installation disk has not yet been measured"},
		{name: "disk-speed/fast", id: wire.HostValidationIDSufficientInstallationDiskSpeed,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.InstallationDiskID = "/dev/disk/by-id/wwn-0x1"
				s.in.Host.DisksInfo = `{"/dev/disk/by-id/wwn-0x1":{"path":"/dev/disk/by-id/wwn-0x1","disk_speed":{"tested":true,"exit_code":0,"speed_ms":3}}}`
			},
			status: wire.ValidationSuccess, msg: "Speed of installation disk is sufficient"},
		{name: "disk-speed/slow", id: wire.HostValidationIDSufficientInstallationDiskSpeed,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.InstallationDiskID = "/dev/disk/by-id/wwn-0x1"
				s.in.Host.DisksInfo = `{"/dev/disk/by-id/wwn-0x1":{"disk_speed":{"tested":true,"exit_code":0,"speed_ms":25}}}`
			},
			status: wire.ValidationFailure, msg: "While preparing the previous installation the installation disk speed measurement failed or was found to be insufficient: disk /dev/disk/by-id/wwn-0x1 took 25 ms to sync, more than the 10 ms threshold"},
		{name: "disk-speed/test failed", id: wire.HostValidationIDSufficientInstallationDiskSpeed,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.InstallationDiskPath = "/dev/sda"
				s.in.Host.DisksInfo = `{"/dev/sda":{"disk_speed":{"tested":true,"exit_code":2}}}`
			},
			status: wire.ValidationFailure, msg: "While preparing the previous installation the installation disk speed measurement failed or was found to be insufficient: the measurement on disk /dev/sda failed with exit code 2"},
		{name: "disk-speed/garbage", id: wire.HostValidationIDSufficientInstallationDiskSpeed,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.InstallationDiskPath = "/dev/sda"
				s.in.Host.DisksInfo = `[`
			},
			status: wire.ValidationError, msg: "Validation error"},

		// api / api-int / apps domain names
		{name: "api-domain/not required with managed networking", id: wire.HostValidationIDAPIDomainNameResolvedCorrectly,
			status: wire.ValidationSuccess, msg: "Domain name resolution for the api.ostest.example.com domain was successful or not required"},
		{name: "api-domain/UMN resolves", id: wire.HostValidationIDAPIDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.UserManagedNetworking = ptr(true)
				s.in.Host.DomainNameResolutions = resolutions(map[string][]string{"api.ostest.example.com": {"192.168.111.5"}})
			},
			status: wire.ValidationSuccess, msg: "Domain name resolution for the api.ostest.example.com domain was successful or not required"},
		{name: "api-domain/UMN does not resolve", id: wire.HostValidationIDAPIDomainNameResolvedCorrectly,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.UserManagedNetworking = ptr(true) },
			status: wire.ValidationFailure, msg: "Couldn't resolve domain name api.ostest.example.com on the host. To continue installation, create the necessary DNS entries to resolve this domain name to your cluster's API load balancer IP address"},
		{name: "api-domain/UMN points at this host", id: wire.HostValidationIDAPIDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.UserManagedNetworking = ptr(true)
				s.in.Host.DomainNameResolutions = resolutions(map[string][]string{"api.ostest.example.com": {"192.168.111.10"}})
			},
			status: wire.ValidationFailure, msg: "Domain api.ostest.example.com must not point at 192.168.111.10 as it is the API address of this host. This domain must instead point at the IP address of a load balancer when using user managed networking in a multi control-plane node cluster"},
		{name: "api-domain/UMN not resolved yet", id: wire.HostValidationIDAPIDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.UserManagedNetworking = ptr(true)
				s.in.Host.DomainNameResolutions = ""
			},
			status: wire.ValidationPending, msg: "DNS validation for the api.ostest.example.com domain cannot be performed yet because the host has not yet performed DNS resolution"},
		{name: "api-domain/UMN SNO uses dnsmasq", id: wire.HostValidationIDAPIDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.UserManagedNetworking = ptr(true)
				s.in.Cluster.ControlPlaneCount = 1
			},
			status: wire.ValidationSuccess, msg: "Domain name resolution for the api.ostest.example.com domain was successful or not required"},
		{name: "api-int-domain/UMN does not resolve", id: wire.HostValidationIDAPIIntDomainNameResolvedCorrectly,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.UserManagedNetworking = ptr(true) },
			status: wire.ValidationFailure, msg: "Couldn't resolve domain name api-int.ostest.example.com on the host. To continue installation, create the necessary DNS entries to resolve this domain name to your cluster's internal API load balancer IP address"},
		{name: "apps-domain/UMN does not resolve", id: wire.HostValidationIDAppsDomainNameResolvedCorrectly,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.UserManagedNetworking = ptr(true) },
			status: wire.ValidationFailure, msg: "Couldn't resolve domain name *.apps.ostest.example.com on the host. To continue installation, create the necessary DNS entries to resolve this domain name to your cluster's application ingress IP address"},
		{name: "apps-domain/UMN resolves the console probe", id: wire.HostValidationIDAppsDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.UserManagedNetworking = ptr(true)
				s.in.Host.DomainNameResolutions = resolutions(map[string][]string{"console-openshift-console.apps.ostest.example.com": {"192.168.111.4"}})
			},
			status: wire.ValidationSuccess, msg: "Domain name resolution for the *.apps.ostest.example.com domain was successful or not required"},

		// dns-wildcard-not-configured
		{name: "wildcard/none", id: wire.HostValidationIDDNSWildcardNotConfigured,
			status: wire.ValidationSuccess, msg: "DNS wildcard check was successful"},
		{name: "wildcard/FQDN resolves", id: wire.HostValidationIDDNSWildcardNotConfigured,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.DomainNameResolutions = `{"resolutions":[{"domain_name":"validateNoWildcardDNS.ostest.example.com.","ipv4_addresses":["1.2.3.4"]},{"domain_name":"validateNoWildcardDNS.ostest.example.com"}]}`
			},
			status: wire.ValidationFailure, msg: "DNS wildcard configuration was detected for domain *.ostest.example.com - the installation will not be able to complete while this record exists. Please remove it to proceed. The domain resolves to 1.2.3.4"},
		{name: "wildcard/relative name resolves", id: wire.HostValidationIDDNSWildcardNotConfigured,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Host.DomainNameResolutions = `{"resolutions":[{"domain_name":"validateNoWildcardDNS.ostest.example.com."},{"domain_name":"validateNoWildcardDNS.ostest.example.com","cnames":["x.corp."]}]}`
			},
			status: wire.ValidationFailure, prefix: true, msg: "Unexpected domain name resolution was detected for the relative domain name with the sub-domain *.ostest.example.com despite"},
		{name: "wildcard/not resolved yet", id: wire.HostValidationIDDNSWildcardNotConfigured,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.DomainNameResolutions = "" },
			status: wire.ValidationPending, msg: "DNS wildcard check cannot be performed yet because the host has not yet performed DNS resolution"},
		{name: "wildcard/probe missing", id: wire.HostValidationIDDNSWildcardNotConfigured,
			setup:  func(t *testing.T, s *hostScene) { s.in.Host.DomainNameResolutions = `{"resolutions":[]}` },
			status: wire.ValidationError, msg: "Internal error - DNS wildcard check cannot be performed because the DNS validation result doesn't contain the wildcard domain"},

		// release-domain-name-resolved-correctly
		{name: "release-domain/resolves", id: wire.HostValidationIDReleaseDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.v.ReleaseImage = "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64"
				s.in.Host.DomainNameResolutions = resolutions(map[string][]string{"quay.io": {"3.3.3.3"}})
			},
			status: wire.ValidationSuccess, msg: "Domain name resolution for the quay.io domain was successful or not required"},
		{name: "release-domain/does not resolve", id: wire.HostValidationIDReleaseDomainNameResolvedCorrectly,
			setup: func(t *testing.T, s *hostScene) {
				s.in.Cluster.OCPReleaseImage = "registry.example.com:5000/ocp/release:4.18"
			},
			status: wire.ValidationFailure, msg: "Couldn't resolve domain name registry.example.com on the host. To continue installation, create the necessary DNS entries to resolve this domain name to your cluster's release image host IP address"},
		{name: "release-domain/registry by address", id: wire.HostValidationIDReleaseDomainNameResolvedCorrectly,
			setup:  func(t *testing.T, s *hostScene) { s.in.Cluster.OCPReleaseImage = "10.0.0.1:5000/ocp/release:4.18" },
			status: wire.ValidationSuccess, msg: "Release host 10.0.0.1 is an IP address"},
		{name: "release-domain/unknown image", id: wire.HostValidationIDReleaseDomainNameResolvedCorrectly,
			status: wire.ValidationPending, msg: "The release image is not known yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newHostScene()
			if tc.setup != nil {
				tc.setup(t, s)
			}
			rep := s.run()
			// The service hands reports over compacted: the same results.
			if diff := cmp.Diff(rep.Results, s.runCompact(t).Results); diff != "" {
				t.Errorf("results from compacted reports differ (-text +compact):\n%s", diff)
			}
			id := string(tc.id)
			for _, r := range rep.Results {
				if r.ID != id {
					continue
				}
				if tc.hidden {
					t.Fatalf("%s = %s %q, want it left out", id, r.Status, r.Message)
				}
				okMsg := r.Message == tc.msg || (tc.prefix && strings.HasPrefix(r.Message, tc.msg))
				if r.Status != tc.status || !okMsg {
					t.Errorf("%s = %s %q, want %s %q", id, r.Status, r.Message, tc.status, tc.msg)
				}
				return
			}
			if !tc.hidden {
				t.Fatalf("no result for %s", id)
			}
		})
	}
}

func TestDomainsToResolve(t *testing.T) {
	c := testCluster()
	got := DomainsToResolve(c, "quay.io/openshift-release-dev/ocp-release@sha256:abc")
	want := []string{
		"api.ostest.example.com", "api-int.ostest.example.com",
		"console-openshift-console.apps.ostest.example.com",
		"validateNoWildcardDNS.ostest.example.com.", "validateNoWildcardDNS.ostest.example.com",
		"quay.io",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("DomainsToResolve = %q, want %q", got, want)
	}
	if got := DomainsToResolve(c, "[fd00::1]:5000/ocp/release:4.18"); len(got) != 5 {
		t.Errorf("DomainsToResolve with a registry address = %q, want no release host", got)
	}
	c.BaseDNSDomain = ""
	if got := DomainsToResolve(c, ""); got != nil {
		t.Errorf("DomainsToResolve without base domain = %q, want nil", got)
	}
	for in, want := range map[string]string{
		"quay.io/a/b:1": "quay.io", "reg:5000/a": "reg", "busybox": "", "[fd00::1]:5000/a": "fd00::1", "10.0.0.1/a": "10.0.0.1",
	} {
		if got := ReleaseImageHost(in); got != want {
			t.Errorf("ReleaseImageHost(%q) = %q, want %q", in, got, want)
		}
	}
}
