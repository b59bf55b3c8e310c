package assisted

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/wire"
)

func TestEvaluateReadyCluster(t *testing.T) {
	e := newEnv(t)
	// The user's machine network is not kept: multi-node, cluster-managed,
	// non-DHCP clusters derive it from the VIPs and the hosts (assisted
	// autoAssignMachineNetworks; transcript §7.2).
	p := clusterParams()
	p.MachineNetworks = []*wire.MachineNetwork{{CIDR: "10.9.0.0/24"}}
	clusterID, ie := e.cluster(p)
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusPendingForInput {
		t.Errorf("cluster without hosts: got %s, want pending-for-input", c.Status)
	}
	var hosts []string
	for i, tree := range []string{"master-0", "master-1", "master-2"} {
		hosts = append(hosts, e.addHost(ie, hwInventory(t, tree, tree, fmt.Sprintf("192.168.111.%d/24", 10+i))))
	}
	for _, id := range hosts {
		h := e.host(ie, id)
		if h.Status != wire.HostStatusKnown || h.StatusInfo != "Host is ready to be installed" {
			t.Errorf("host %s: got %s (%s), want known (Host is ready to be installed); validations %s", h.RequestedHostname, h.Status, h.StatusInfo, h.ValidationsInfo)
		}
		for id, r := range resultsByID(t, h.ValidationsInfo) {
			if id == string(wire.HostValidationIDReleaseDomainNameResolvedCorrectly) && r.Status == wire.ValidationPending {
				continue // the test cluster has no release image: honestly pending, and never gating
			}
			if r.Status != wire.ValidationSuccess {
				t.Errorf("host %s validation %s: got %s (%s), want success", h.RequestedHostname, id, r.Status, r.Message)
			}
		}
	}
	c := e.getCluster(clusterID)
	if c.Status != wire.ClusterStatusReady || c.StatusInfo != "Cluster ready to be installed" {
		t.Errorf("cluster: got %s (%s), want ready (Cluster ready to be installed)", c.Status, c.StatusInfo)
	}
	if c.ReadyHostCount != 3 || c.TotalHostCount != 3 || len(c.Hosts) != 3 {
		t.Errorf("cluster counts: ready %d total %d hosts %d, want 3 3 3", c.ReadyHostCount, c.TotalHostCount, len(c.Hosts))
	}
	if diff := cmp.Diff([]string{testMachineNet}, cidrs(c.MachineNetworks)); diff != "" {
		t.Errorf("machine networks mismatch (-want +got):\n%s", diff)
	}
	res := resultsByID(t, c.ValidationsInfo)
	for _, id := range []wire.ClusterValidationID{wire.ClusterValidationIDMachineCIDREqualsToCalculatedCIDR, wire.ClusterValidationIDAPIVIPsValid, wire.ClusterValidationIDIngressVIPsValid, wire.ClusterValidationIDSufficientMastersCount, wire.ClusterValidationIDAllHostsAreReadyToInstall} {
		if r := res[string(id)]; r.Status != wire.ValidationSuccess {
			t.Errorf("cluster validation %s: got %q (%s), want success", id, r.Status, r.Message)
		}
	}
}

// TestEvaluateUndersizedHost: a host short of CPU, memory and disk fails
// exactly the hardware validations, each with assisted's message, in the
// validations_info shape category → [{id, status, message}].
func TestEvaluateUndersizedHost(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.addHost(ie, hwInventory(t, "undersized", "small", "192.168.111.30/24"))
	h := e.host(ie, id)

	want := map[string]wire.Validation{
		"has-min-cpu-cores":   {ID: "has-min-cpu-cores", Status: "failure", Category: "hardware", Message: "The host is not eligible to participate in Openshift Cluster because the minimum required CPU cores for any role is 2, found only 1"},
		"has-min-memory":      {ID: "has-min-memory", Status: "failure", Category: "hardware", Message: "The host is not eligible to participate in Openshift Cluster because the minimum required RAM for any role is 8.00 GiB, found only 4.00 GiB"},
		"has-min-valid-disks": {ID: "has-min-valid-disks", Status: "failure", Category: "hardware", Message: "No eligible disks were found, please check specific disks to see why they are not eligible"},
		// Not a valid master candidate, the host is suggested worker and
		// measured against the worker requirements.
		"has-cpu-cores-for-role": {ID: "has-cpu-cores-for-role", Status: "failure", Category: "hardware", Message: "Require at least 2 CPU cores for worker role, found only 1"},
		"has-memory-for-role":    {ID: "has-memory-for-role", Status: "failure", Category: "hardware", Message: "Require at least 8.00 GiB RAM for role worker, found only 4.00 GiB"},
	}
	// And what a lone host of a cluster without a release image cannot know
	// yet; neither is a failure.
	pending := map[string]wire.Validation{
		"belongs-to-majority-group":              {ID: "belongs-to-majority-group", Status: "pending", Category: "network", Message: "Not enough hosts in cluster to calculate connectivity groups"},
		"release-domain-name-resolved-correctly": {ID: "release-domain-name-resolved-correctly", Status: "pending", Category: "network", Message: "The release image is not known yet"},
	}
	got := map[string]wire.Validation{}
	all := resultsByID(t, h.ValidationsInfo)
	for id, r := range all {
		if r.Status != wire.ValidationSuccess {
			got[id] = r
		}
	}
	wantAll := map[string]wire.Validation{}
	for k, v := range want {
		wantAll[k] = v
	}
	for k, v := range pending {
		wantAll[k] = v
	}
	if diff := cmp.Diff(wantAll, got); diff != "" {
		t.Errorf("non-success validations mismatch (-want +got):\n%s\nvalidations_info: %s", diff, h.ValidationsInfo)
	}
	for id, cat := range map[string]wire.ValidationCategory{"connected": "network", "has-inventory": "hardware", "hostname-unique": "hardware", "belongs-to-machine-cidr": "network"} {
		if r, ok := all[id]; !ok || r.Category != cat || r.Status != wire.ValidationSuccess {
			t.Errorf("validation %s: got %+v, want success under %s", id, r, cat)
		}
	}

	var msgs []string
	for _, r := range want {
		msgs = append(msgs, r.Message)
	}
	sort.Strings(msgs)
	wantInfo := "Host does not meet the minimum hardware requirements: " + strings.Join(msgs, " ; ")
	if h.Status != wire.HostStatusInsufficient || h.StatusInfo != wantInfo {
		t.Errorf("host: got %s (%s)\nwant insufficient (%s)", h.Status, h.StatusInfo, wantInfo)
	}
}

// TestEvaluateDuplicateHostname: two hosts going by one name both fail
// hostname-unique; renaming one fixes both, though only one host changed
// (the cluster's hostname counts flip for the other).
func TestEvaluateDuplicateHostname(t *testing.T) {
	for _, how := range []string{"update host_name", "new inventory hostname"} {
		t.Run(how, func(t *testing.T) {
			e := newEnv(t)
			clusterID, ie := e.cluster(nil)
			a := e.addHost(ie, masterInv(t, "dup", 10))
			b := e.addHost(ie, masterInv(t, "dup", 11))
			e.addHost(ie, masterInv(t, "master-2", 12))
			notUnique := wire.Validation{ID: "hostname-unique", Status: "failure", Category: "hardware", Message: "Hostname dup is not unique in cluster"}
			for _, id := range []string{a, b} {
				h := e.host(ie, id)
				if got := resultsByID(t, h.ValidationsInfo)["hostname-unique"]; got != notUnique {
					t.Errorf("host %s hostname-unique: got %+v, want %+v", id, got, notUnique)
				}
				if want := "Host cannot be installed due to following failing validation(s): Hostname dup is not unique in cluster"; h.Status != wire.HostStatusInsufficient || h.StatusInfo != want {
					t.Errorf("host %s: got %s (%s), want insufficient (%s)", id, h.Status, h.StatusInfo, want)
				}
			}
			if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusInsufficient {
				t.Errorf("cluster: got %s, want insufficient", c.Status)
			}

			switch how {
			case "update host_name":
				name := "master-1"
				if _, err := e.s.UpdateHost(e.ctx, ie, b, &wire.HostUpdateParams{HostName: &name}); err != nil {
					t.Fatalf("UpdateHost: %v", err)
				}
			default:
				e.postInventory(ie, b, masterInv(t, "master-1", 11))
			}
			for id, name := range map[string]string{a: "dup", b: "master-1"} {
				h := e.host(ie, id)
				want := wire.Validation{ID: "hostname-unique", Status: "success", Category: "hardware", Message: "Hostname " + name + " is unique in cluster"}
				if got := resultsByID(t, h.ValidationsInfo)["hostname-unique"]; got != want {
					t.Errorf("host %s after the rename, hostname-unique: got %+v, want %+v", name, got, want)
				}
				if h.Status != wire.HostStatusKnown || h.RequestedHostname != name {
					t.Errorf("host %s after the rename: got %s named %q, want known", name, h.Status, h.RequestedHostname)
				}
			}
			if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
				t.Errorf("cluster after the rename: got %s, want ready", c.Status)
			}
			msg := "Host dup: validation 'hostname-unique' is now fixed"
			if evs := e.events(EventsQuery{HostIDs: []string{a}}); !hasEvent(evs, "host_validation_fixed", msg) {
				t.Errorf("no event %q for the host that did not change; got %q", msg, eventLines(evs))
			}
		})
	}
}

// TestEvaluateClusterUpdate: new VIPs move the derived machine network,
// which every host is validated against again, including hosts whose own
// facts did not change.
func TestEvaluateClusterUpdate(t *testing.T) {
	e := newEnv(t)
	clusterID, ie := e.cluster(nil)
	var hosts []string
	for i := range 3 {
		inv := masterInv(t, fmt.Sprintf("master-%d", i), 10+i)
		if i < 2 { // the third host has no leg in 10.1.0.0/24
			inv.Interfaces = append(inv.Interfaces, &wire.Interface{Name: "eth9", Type: "physical", MACAddress: fmt.Sprintf("52:54:00:00:00:0%d", i), IPv4Addresses: []string{fmt.Sprintf("10.1.0.%d/24", 10+i)}})
		}
		hosts = append(hosts, e.addHost(ie, inv))
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Fatalf("cluster: got %s, want ready", c.Status)
	}
	c, err := e.s.UpdateCluster(e.ctx, clusterID, &wire.V2ClusterUpdateParams{
		APIVIPs: []*wire.APIVIP{{IP: "10.1.0.5"}}, IngressVIPs: []*wire.IngressVIP{{IP: "10.1.0.4"}},
	})
	if err != nil {
		t.Fatalf("UpdateCluster: %v", err)
	}
	if len(c.MachineNetworks) != 1 || c.MachineNetworks[0].CIDR != "10.1.0.0/24" {
		t.Errorf("machine networks after new VIPs: got %s, want 10.1.0.0/24", cidrs(c.MachineNetworks))
	}
	if c.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster: got %s, want insufficient", c.Status)
	}
	// The third host is out of the new machine network, and so the two
	// others are no majority of the cluster there (2 of 3 hosts, fewer than
	// assisted's minimum group of 3): all three are insufficient.
	wantStatus := []wire.HostStatus{wire.HostStatusInsufficient, wire.HostStatusInsufficient, wire.HostStatusInsufficient}
	for i, id := range hosts {
		h := e.host(ie, id)
		if h.Status != wantStatus[i] {
			t.Errorf("host %d: got %s (%s), want %s", i, h.Status, h.StatusInfo, wantStatus[i])
		}
		r := resultsByID(t, h.ValidationsInfo)["belongs-to-machine-cidr"]
		if wantOK := i < 2; (r.Status == wire.ValidationSuccess) != wantOK {
			t.Errorf("host %d belongs-to-machine-cidr: got %s (%s), want success %v", i, r.Status, r.Message, wantOK)
		}
	}
}

// TestEvaluateSuggestedRoles: auto-assign hosts are ordered by weight,
// lightest first, hosts with GPUs last; the first control_plane_count valid
// master candidates are masters, the rest workers (docs/reference/assisted-service.md
// §2.7). Changing control_plane_count suggests again.
func TestEvaluateSuggestedRoles(t *testing.T) {
	type spec struct {
		name                 string
		cores, ramGiB, diskG int64
		gpu                  bool
	}
	cases := []struct {
		name  string
		hosts []spec // registration order
		want  map[string]wire.HostRole
	}{
		{
			name: "by weight",
			hosts: []spec{
				{"huge", 32, 128, 1000, false}, {"small", 4, 16, 120, false}, {"big", 16, 64, 500, false},
				{"medium", 8, 32, 200, false}, {"mid", 6, 24, 150, false},
			},
			want: map[string]wire.HostRole{"small": "master", "mid": "master", "medium": "master", "big": "worker", "huge": "worker"},
		},
		{
			name: "gpu last",
			hosts: []spec{
				{"huge", 32, 128, 1000, false}, {"small", 4, 16, 120, true}, {"big", 16, 64, 500, false},
				{"medium", 8, 32, 200, false}, {"mid", 6, 24, 150, false},
			},
			want: map[string]wire.HostRole{"small": "worker", "mid": "master", "medium": "master", "big": "master", "huge": "worker"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clusterID, ie := e.cluster(nil)
			ids := map[string]string{}
			for i, s := range tc.hosts {
				ids[s.name] = e.addHost(ie, handInventory(s.name, s.cores, s.ramGiB, s.diskG, fmt.Sprintf("192.168.111.%d/24", 10+i), s.gpu))
			}
			roles := func() map[string]wire.HostRole {
				got := map[string]wire.HostRole{}
				for name, id := range ids {
					h := e.host(ie, id)
					got[name] = h.SuggestedRole
					if h.Role != wire.HostRoleAutoAssign {
						t.Errorf("host %s role %s, want auto-assign until installation", name, h.Role)
					}
				}
				return got
			}
			if diff := cmp.Diff(tc.want, roles()); diff != "" {
				t.Errorf("suggested roles mismatch (-want +got):\n%s", diff)
			}
			if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
				t.Errorf("cluster: got %s (%s), want ready", c.Status, c.StatusInfo)
			}

			five := int64(5)
			if _, err := e.s.UpdateCluster(e.ctx, clusterID, &wire.V2ClusterUpdateParams{ControlPlaneCount: &five}); err != nil {
				t.Fatalf("UpdateCluster control_plane_count 5: %v", err)
			}
			all := map[string]wire.HostRole{}
			for name := range ids {
				all[name] = wire.HostRoleMaster
			}
			if diff := cmp.Diff(all, roles()); diff != "" {
				t.Errorf("suggested roles with five control-plane nodes mismatch (-want +got):\n%s", diff)
			}
			for name, id := range ids {
				if tc.want[name] == wire.HostRoleWorker {
					msg := "Host " + name + ": calculated role is master"
					if evs := e.events(EventsQuery{HostIDs: []string{id}}); !hasEvent(evs, "host_role_updated", msg) {
						t.Errorf("no event %q; got %q", msg, eventLines(evs))
					}
				}
			}
		})
	}
}

func cidrs(nets []*wire.MachineNetwork) []string {
	var out []string
	for _, n := range nets {
		out = append(out, string(n.CIDR))
	}
	return out
}
