package validation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestConnectivityGroups(t *testing.T) {
	all := []string{"h0", "h1", "h2", "h3", "h4"}
	tests := []struct {
		name string
		cut  func(from, to int) bool
		want []string // the L2 group of 192.168.111.0/24 and the IPv4 group
	}{
		{name: "all connected", want: all},
		{name: "one host cut off", cut: cutHost(3), want: []string{"h0", "h1", "h2", "h4"}},
		{name: "one way only is not connected", cut: func(from, to int) bool { return from == 4 },
			want: []string{"h0", "h1", "h2", "h3"}},
		{name: "partitions of 3 and 2", cut: func(from, to int) bool { return (from < 3) != (to < 3) },
			want: []string{"h0", "h1", "h2"}},
		{name: "partitions of 2, 2 and 1: no majority", cut: func(from, to int) bool { return from/2 != to/2 },
			want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hosts := testHosts()
			// Reverse the order: hosts come out sorted by ID anyway.
			for i, j := 0, len(hosts)-1; i < j; i, j = i+1, j-1 {
				hosts[i], hosts[j] = hosts[j], hosts[i]
			}
			setMesh(hosts, func(from, to int) bool {
				if tc.cut == nil {
					return false
				}
				return tc.cut(4-from, 4-to) // indexes of the unreversed hosts
			})
			got, err := ConnectivityGroups(testCluster(), typed(hosts), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"192.168.111.0/24": tc.want, "IPv4": tc.want, "IPv6": {}}
			if diff := cmp.Diff(want, got.MajorityGroups); diff != "" {
				t.Errorf("MajorityGroups mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConnectivityGroupsL3Addresses(t *testing.T) {
	hosts := testHosts()
	setMesh(hosts, cutHost(4))
	got, err := ConnectivityGroups(testCluster(), typed(hosts), nil)
	if err != nil {
		t.Fatal(err)
	}
	// h4 reaches nobody and nobody reaches it: every other host is
	// reached by only 3 of its 4 peers, so no address counts.
	if len(got.L3ConnectedAddresses) != 0 {
		t.Errorf("L3ConnectedAddresses = %v, want none", got.L3ConnectedAddresses)
	}
	setMesh(hosts, nil)
	got, _ = ConnectivityGroups(testCluster(), typed(hosts), nil)
	if a := got.L3ConnectedAddresses["h2"]; len(a) != 1 || a[0] != "192.168.111.12" {
		t.Errorf("L3ConnectedAddresses[h2] = %v, want [192.168.111.12]", a)
	}
	s, err := got.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, `{"majority_groups":{`) || !strings.Contains(s, `"l3_connected_addresses":{`) {
		t.Errorf("Marshal = %s, want assisted's keys", s)
	}
}

func TestConnectivityGroupsBadReport(t *testing.T) {
	hosts := testHosts()
	hosts[1].Host.Connectivity = "{not json"
	got, err := ConnectivityGroups(testCluster(), typed(hosts), nil)
	if err == nil || !strings.Contains(err.Error(), "host h1") {
		t.Fatalf("ConnectivityGroups with a bad report: err = %v, want one naming h1", err)
	}
	// h1 reported nothing, so no edge to it is mutual.
	if diff := cmp.Diff([]string{"h0", "h2", "h3", "h4"}, got.MajorityGroups["192.168.111.0/24"]); diff != "" {
		t.Errorf("group mismatch (-want +got):\n%s", diff)
	}
}

func TestIPCollisionsFromReports(t *testing.T) {
	hosts := testHosts()
	var r wire.ConnectivityReport
	if err := json.Unmarshal([]byte(hosts[0].Host.Connectivity), &r); err != nil {
		t.Fatal(err)
	}
	r.RemoteHosts[0].L2Connectivity = append(r.RemoteHosts[0].L2Connectivity,
		&wire.L2Connectivity{OutgoingNic: "eth0", RemoteIPAddress: "192.168.111.11", RemoteMAC: "52:54:00:00:00:99"},
		// Another interface may see another MAC: not a collision.
		&wire.L2Connectivity{OutgoingNic: "eth1", RemoteIPAddress: "192.168.111.12", RemoteMAC: "52:54:00:00:00:98"},
		// The same address written another way is the same address.
		&wire.L2Connectivity{OutgoingNic: "eth0", RemoteIPAddress: "::ffff:192.168.111.11", RemoteMAC: "52:54:00:00:00:97"},
		// Loopback is left out.
		&wire.L2Connectivity{OutgoingNic: "eth0", RemoteIPAddress: "127.0.0.1", RemoteMAC: "52:54:00:00:00:96"},
		&wire.L2Connectivity{OutgoingNic: "eth0", RemoteIPAddress: "127.0.0.1", RemoteMAC: "52:54:00:00:00:95"})
	b, _ := json.Marshal(r)
	hosts[0].Host.Connectivity = string(b)
	got := IPCollisions(typed(hosts))
	want := map[string][]string{"192.168.111.11": {"52:54:00:00:00:97", "52:54:00:00:00:99", "52:54:00:aa:bb:01"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("IPCollisions mismatch (-want +got):\n%s", diff)
	}
}

// FuzzHostFields feeds hostile text to every host field the check
// validations parse: no panic, and a field that does not parse gives an
// error status with a message, never a success.
func FuzzHostFields(f *testing.F) {
	for _, s := range []string{"", "{", "[]", "null", `{"remote_hosts":[null,{"l3_connectivity":[null]}]}`,
		`[{"source_state":"synced"},null]`, `{"resolutions":[null,{"domain_name":"x"}]}`, `{"a":null}`, `[null]`, "7", `"s"`,
		`{"remote_hosts":[{"host_id":"h1","l2_connectivity":[{"remote_ip_address":"::zz","successful":true}]}]}`} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, text string, field uint8) {
		s := newHostScene()
		s.in.Cluster.UserManagedNetworking = ptr(field&8 != 0)
		s.in.Host.InstallationDiskPath = "/dev/sda"
		h := s.in.Host
		var id wire.HostValidationID
		switch field % 7 {
		case 0:
			h.Connectivity, id = text, wire.HostValidationIDSufficientNetworkLatencyRequirementForRole
		case 1:
			h.NTPSources, id = text, wire.HostValidationIDNTPSynced
		case 2:
			h.DomainNameResolutions, id = text, wire.HostValidationIDDNSWildcardNotConfigured
		case 3:
			h.ImagesStatus, id = text, wire.HostValidationIDContainerImagesAvailable
		case 4:
			h.DisksInfo, id = text, wire.HostValidationIDSufficientInstallationDiskSpeed
		case 5:
			s.in.Cluster.ConnectivityMajorityGroups, id = text, wire.HostValidationIDBelongsToMajorityGroup
		case 6:
			s.others[0].Host.Connectivity, id = text, wire.HostValidationIDNoIPCollisionsInNetwork
			all := append([]HostEntry{{Host: h, Inventory: s.in.Inventory}}, s.others...)
			if _, err := ConnectivityGroups(s.in.Cluster, typed(all), nil); err == nil && text != "" && !json.Valid([]byte(text)) {
				t.Errorf("ConnectivityGroups accepted invalid report %q", text)
			}
		}
		rep := s.run()
		for _, r := range rep.Results {
			if r.Message == "" && r.Status != wire.ValidationSuccess {
				t.Errorf("%s = %s with no message", r.ID, r.Status)
			}
			if r.ID == string(id) && field%7 != 6 && strings.TrimSpace(text) != "" && !json.Valid([]byte(text)) && r.Status != wire.ValidationError {
				t.Errorf("%s with invalid JSON %q = %s %q, want error", r.ID, text, r.Status, r.Message)
			}
		}
	})
}
