package assisted

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/wire"
)

func stepOf(t *testing.T, s *wire.Steps, typ wire.StepType) *wire.Step {
	t.Helper()
	for _, st := range s.Instructions {
		if st.StepType == typ {
			return st
		}
	}
	t.Fatalf("no %s step in %v", typ, stepTypes(s))
	return nil
}

// TestHostCheckArgsAndReplies: a known host is asked to check the other
// hosts' addresses, its networks and the cluster's VIPs; what it answers is
// kept on the host (re-encoded) and on the cluster's VIPs; hostile output
// is refused with a 400 and changes nothing.
func TestHostCheckArgsAndReplies(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	steps := e.checkIn(ie, hosts[0])

	var cc wire.ConnectivityCheckParams
	if err := wire.DecodeStepArg(wire.StepTypeConnectivityCheck, stepOf(t, steps, wire.StepTypeConnectivityCheck).Args, &cc); err != nil {
		t.Fatal(err)
	}
	var peers []string
	for _, h := range cc {
		peers = append(peers, h.HostID)
		if len(h.Nics) == 0 || len(h.Nics[0].IPAddresses) == 0 || h.Nics[0].MAC == "" {
			t.Errorf("peer %s without NIC details: %+v", h.HostID, h.Nics)
		}
	}
	want := append([]string(nil), hosts[1:]...)
	if strings.Compare(want[0], want[1]) > 0 {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, peers); diff != "" {
		t.Errorf("connectivity-check peers (-want +got):\n%s", diff)
	}
	var free wire.FreeAddressesRequest
	if err := wire.DecodeStepArg(wire.StepTypeFreeNetworkAddresses, stepOf(t, steps, wire.StepTypeFreeNetworkAddresses).Args, &free); err != nil || len(free) != 1 || free[0] != "192.168.111.0/24" {
		t.Errorf("free-network-addresses args %v %v, want the host's /24", free, err)
	}
	var vips wire.VerifyVIPsRequest
	if err := wire.DecodeStepArg(wire.StepTypeVerifyVIPs, stepOf(t, steps, wire.StepTypeVerifyVIPs).Args, &vips); err != nil || len(vips) != 2 {
		t.Fatalf("verify-vips args %v %v", vips, err)
	}
	cl := e.getCluster(clusterID)
	if string(vips[0].VIP) != string(cl.APIVIPs[0].IP) || vips[0].VIPType != wire.VIPTypeAPI || vips[1].VIPType != wire.VIPTypeIngress {
		t.Errorf("verify-vips args %+v for VIPs %+v %+v", vips, cl.APIVIPs[0], cl.IngressVIPs[0])
	}

	reply := func(typ wire.StepType, out string) error {
		return e.s.PostStepReply(e.ctx, ie, hosts[0], &wire.StepReply{StepType: typ, StepID: stepOf(t, steps, typ).StepID, Output: out})
	}
	report := `{"remote_hosts":[{"host_id":"` + hosts[1] + `","l3_connectivity":[{"remote_ip_address":"192.168.111.11","successful":true,"average_rtt_ms":0.3}],"unknown":1}]}`
	if err := reply(wire.StepTypeConnectivityCheck, report); err != nil {
		t.Fatal(err)
	}
	var got wire.ConnectivityReport
	if err := json.Unmarshal([]byte(e.host(ie, hosts[0]).Connectivity), &got); err != nil || len(got.RemoteHosts) != 1 || got.RemoteHosts[0].L3Connectivity[0].AverageRTTMs != 0.3 {
		t.Errorf("kept connectivity %q %v", e.host(ie, hosts[0]).Connectivity, err)
	}
	if strings.Contains(e.host(ie, hosts[0]).Connectivity, "unknown") {
		t.Error("unknown fields kept; assisted re-encodes through the model")
	}
	if err := reply(wire.StepTypeNTPSynchronizer, `{"ntp_sources":[{"source_name":"10.0.0.1","source_state":"synced"}]}`); err != nil {
		t.Fatal(err)
	}
	if got := e.host(ie, hosts[0]).NTPSources; got != `[{"source_name":"10.0.0.1","source_state":"synced"}]` {
		t.Errorf("kept ntp sources %s", got)
	}
	if err := reply(wire.StepTypeVerifyVIPs, `[{"vip":"`+string(cl.APIVIPs[0].IP)+`","vip_type":"api","verification":"failed"}]`); err != nil {
		t.Fatal(err)
	}
	if v := e.getCluster(clusterID).APIVIPs[0].Verification; v != wire.VIPVerificationFailed {
		t.Errorf("API VIP verification %q, want failed", v)
	}

	before := e.host(ie, hosts[0])
	for _, bad := range []struct {
		typ wire.StepType
		out string
	}{
		{wire.StepTypeConnectivityCheck, `{"remote_hosts":"nope"}`},
		{wire.StepTypeConnectivityCheck, `{}{}`},
		{wire.StepTypeNTPSynchronizer, `[`},
		{wire.StepTypeVerifyVIPs, `[{"vip":"1.2.3.4","verification":"maybe"}]`},
		{wire.StepTypeFreeNetworkAddresses, `{"network":1}`},
	} {
		err := reply(bad.typ, bad.out)
		var ae *Error
		if !errors.As(err, &ae) || ae.Kind != KindBadRequest {
			t.Errorf("%s %q: %v, want a 400", bad.typ, bad.out, err)
		}
	}
	after := e.host(ie, hosts[0])
	if before.Connectivity != after.Connectivity || before.NTPSources != after.NTPSources {
		t.Error("a refused reply changed the host")
	}
}

// FuzzCheckReply: whatever an agent sends as a check's output, decoding
// either refuses it with a 400 or yields a document that decodes again.
func FuzzCheckReply(f *testing.F) {
	types := []wire.StepType{wire.StepTypeConnectivityCheck, wire.StepTypeFreeNetworkAddresses, wire.StepTypeNTPSynchronizer,
		wire.StepTypeVerifyVIPs, wire.StepTypeDomainResolution, wire.StepTypeDHCPLeaseAllocate}
	f.Add(uint8(0), `{"remote_hosts":[{"host_id":"x","l2_connectivity":[{"remote_mac":"aa","successful":true}]}]}`)
	f.Add(uint8(1), `[{"network":"10.0.0.0/24","free_addresses":["10.0.0.9"]}]`)
	f.Add(uint8(2), `{"ntp_sources":[{"source_name":"a","source_state":"synced"}]}`)
	f.Add(uint8(3), `[{"vip":"10.0.0.5","vip_type":"api","verification":"succeeded"}]`)
	f.Add(uint8(3), `[null,{"verification":"failed"}]`)
	f.Add(uint8(4), `{"resolutions":[{"domain_name":"api.c.test","ipv4_addresses":["10.0.0.5"]}]}`)
	f.Add(uint8(5), `{"api_vip_address":"10.0.0.50","ingress_vip_address":"10.0.0.51","api_vip_lease":"lease {}"}`)
	// Each type takes its row's decoder; what is kept is the result's
	// document (docText), as the keepers store it; connectivity reports
	// take the service's own path (compacted, and the document to keep).
	s := &Service{val: &validation.Validator{}, hosts: map[hostKey]*hostRec{}, names: validation.NewInterner()}
	decode := func(r *wire.StepReply) (doc string, ok bool, err error) {
		k := hostKey{"ie", "h"}
		var v any
		switch r.StepType {
		case wire.StepTypeConnectivityCheck:
			var c connReply
			c, ok, err = s.decodeConnectivity(k, r)
			return c.doc, ok, err
		case wire.StepTypeFreeNetworkAddresses:
			v, ok, err = decodeOutput[wire.FreeNetworksAddresses](s, k, r)
		case wire.StepTypeNTPSynchronizer:
			v, ok, err = decodeNTP(s, k, r)
		case wire.StepTypeVerifyVIPs:
			v, ok, err = decodeVerifyVIPs(s, k, r)
		case wire.StepTypeDomainResolution:
			v, ok, err = decodeOutput[wire.DomainResolutionResponse](s, k, r)
		case wire.StepTypeDHCPLeaseAllocate:
			v, ok, err = decodeLeases(s, k, r)
		}
		if err != nil || !ok {
			return "", ok, err
		}
		doc, _ = docText(v)
		return doc, true, nil
	}
	f.Fuzz(func(t *testing.T, which uint8, out string) {
		typ := types[int(which)%len(types)]
		doc, ok, err := decode(&wire.StepReply{StepType: typ, Output: out})
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || ae.Kind != KindBadRequest {
				t.Fatalf("%s %q: %v is not a 400", typ, out, err)
			}
			return
		}
		if !ok {
			t.Fatalf("%s: nothing kept and no error", typ)
		}
		if _, _, err := decode(&wire.StepReply{StepType: typ, Output: doc}); err != nil && typ != wire.StepTypeNTPSynchronizer {
			// ntp is kept as the bare source list, not the response object.
			t.Fatalf("%s: kept %q does not decode again: %v", typ, doc, err)
		}
	})
}

// TestDHCPVIPAllocation: with vip_dhcp_allocation a host is asked for the
// VIP leases on its machine-network NIC with the cluster's VIP MACs; the
// leased addresses become the VIPs and the lease texts go back out with
// the next request, so the same addresses are renewed.
func TestDHCPVIPAllocation(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	on := true
	if _, err := e.s.UpdateCluster(e.ctx, clusterID, &wire.V2ClusterUpdateParams{
		VIPDHCPAllocation: &on, APIVIPs: []*wire.APIVIP{}, IngressVIPs: []*wire.IngressVIP{},
		MachineNetworks: []*wire.MachineNetwork{{CIDR: "192.168.111.0/24"}},
	}); err != nil {
		t.Fatalf("UpdateCluster: %v", err)
	}
	steps := e.checkIn(ie, hosts[0])
	var req wire.DHCPAllocationRequest
	if err := wire.DecodeStepArg(wire.StepTypeDHCPLeaseAllocate, stepOf(t, steps, wire.StepTypeDHCPLeaseAllocate).Args, &req); err != nil {
		t.Fatal(err)
	}
	if req.Interface != "eno1" || req.APIVIPMAC != VIPMAC(clusterID, "api") || req.IngressVIPMAC != VIPMAC(clusterID, "ingress") || req.APIVIPLease != "" {
		t.Errorf("request %+v", req)
	}
	for _, st := range steps.Instructions {
		if st.StepType == wire.StepTypeVerifyVIPs {
			t.Error("verify-vips handed out in DHCP mode")
		}
	}
	lease := "lease {\n  interface \"api\";\n  fixed-address 192.168.111.50;\n}\n"
	out := `{"api_vip_address":"192.168.111.50","ingress_vip_address":"192.168.111.51","api_vip_lease":` + jsonString(lease) + `,"ingress_vip_lease":"lease {}"}`
	if err := e.s.PostStepReply(e.ctx, ie, hosts[0], &wire.StepReply{StepType: wire.StepTypeDHCPLeaseAllocate, StepID: "d", Output: out}); err != nil {
		t.Fatal(err)
	}
	c := e.getCluster(clusterID)
	if len(c.APIVIPs) != 1 || c.APIVIPs[0].IP != "192.168.111.50" || len(c.IngressVIPs) != 1 || c.IngressVIPs[0].IP != "192.168.111.51" {
		t.Errorf("VIPs after the lease: %+v %+v", c.APIVIPs, c.IngressVIPs)
	}
	e.clock.Advance(2 * time.Minute)
	steps = e.checkIn(ie, hosts[0])
	if err := wire.DecodeStepArg(wire.StepTypeDHCPLeaseAllocate, stepOf(t, steps, wire.StepTypeDHCPLeaseAllocate).Args, &req); err != nil {
		t.Fatal(err)
	}
	if req.APIVIPLease != lease {
		t.Errorf("the lease is not sent back for renewal: %q", req.APIVIPLease)
	}
	e.restart()
	steps = e.checkIn(ie, hosts[0])
	if err := wire.DecodeStepArg(wire.StepTypeDHCPLeaseAllocate, stepOf(t, steps, wire.StepTypeDHCPLeaseAllocate).Args, &req); err != nil || req.APIVIPLease != lease {
		t.Errorf("after a restart the lease is %q (%v), want it kept", req.APIVIPLease, err)
	}
	bad := `{"api_vip_address":"not-an-ip","ingress_vip_address":"192.168.111.51"}`
	if err := e.s.PostStepReply(e.ctx, ie, hosts[0], &wire.StepReply{StepType: wire.StepTypeDHCPLeaseAllocate, StepID: "d2", Output: bad}); err == nil {
		t.Error("a lease without an address accepted")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestConnectivityCheckSkipsDisconnectedHosts: as assisted-service's
// connectivity-check command, a host is not asked to reach a disconnected
// peer, which has no network now: a host cut off must not keep the others
// insufficient (packet loss to it) while it is away.
func TestConnectivityCheckSkipsDisconnectedHosts(t *testing.T) {
	e := newEnv(t)
	_, ie, hosts := e.readyCluster()
	e.clock.Advance(4 * time.Minute) // past the 3 m disconnection timeout
	e.checkIn(ie, hosts[0])
	e.checkIn(ie, hosts[1])
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatal(err)
	}
	if st := e.host(ie, hosts[2]).Status; st != wire.HostStatusDisconnected {
		t.Fatalf("silent host %s, want disconnected", st)
	}
	var cc wire.ConnectivityCheckParams
	if err := wire.DecodeStepArg(wire.StepTypeConnectivityCheck, stepOf(t, e.checkIn(ie, hosts[0]), wire.StepTypeConnectivityCheck).Args, &cc); err != nil {
		t.Fatal(err)
	}
	var peers []string
	for _, h := range cc {
		peers = append(peers, h.HostID)
	}
	if diff := cmp.Diff([]string{hosts[1]}, peers); diff != "" {
		t.Errorf("connectivity-check peers with %s disconnected (-want +got):\n%s", hosts[2], diff)
	}
}

// TestConnectivityArgs: the connectivity-check args put together from each
// host's entry, marshaled once per inventory, are what marshaling the whole
// list gives, also after a host's inventory changes.
func TestConnectivityArgs(t *testing.T) {
	e := newEnv(t)
	clusterID, infraEnvID, hosts := e.readyCluster()
	args := func() map[string]string {
		e.s.mu.Lock()
		defer e.s.mu.Unlock()
		c := e.s.clusters[clusterID]
		out := map[string]string{}
		for _, h := range c.hosts {
			want, err := json.Marshal(connectivityParams(c, h))
			if err != nil {
				t.Fatal(err)
			}
			got := connectivityArgs(c, h)
			if got != string(want) {
				t.Errorf("host %s: args\n%s\nwant\n%s", h.h.ID, got, want)
			}
			out[h.h.ID] = got
		}
		return out
	}
	// Plain addresses, as the swagger's connectivity-check-nic wants them
	// (the inventory has 192.168.111.11/24).
	before := args()
	if !strings.Contains(before[hosts[0]], `"192.168.111.11"`) {
		t.Fatalf("master-0's check does not list master-1's address: %s", before[hosts[0]])
	}
	e.postInventory(infraEnvID, hosts[1], masterInv(t, "master-1", 77))
	after := args()
	if !strings.Contains(after[hosts[0]], `"192.168.111.77"`) || strings.Contains(after[hosts[0]], `"192.168.111.11"`) {
		t.Errorf("master-0's check after master-1's new inventory: %s", after[hosts[0]])
	}
}

// TestStatusInfoNamesPendingChecks: a host held back only by checks not
// measured yet says which, instead of ending its status_info in an empty
// list ("…failing validation(s): ").
func TestStatusInfoNamesPendingChecks(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	id := e.addHost(ie, masterInv(t, "master-0", 10))
	h := e.host(ie, id)
	if h.Status != wire.HostStatusInsufficient {
		t.Fatalf("host %s (%s), want insufficient while its checks are pending", h.Status, h.StatusInfo)
	}
	var pending []string
	for _, r := range resultsByID(t, h.ValidationsInfo) {
		if r.Status == wire.ValidationPending {
			pending = append(pending, r.Message)
		}
	}
	if len(pending) == 0 {
		t.Fatalf("no pending validation: %s", h.ValidationsInfo)
	}
	const prefix = "Host cannot be installed due to following failing validation(s): "
	rest, ok := strings.CutPrefix(h.StatusInfo, prefix)
	if !ok || rest == "" {
		t.Fatalf("status_info %q, want %q and the pending checks", h.StatusInfo, prefix)
	}
	for _, m := range strings.Split(rest, " ; ") {
		if !slices.Contains(pending, m) {
			t.Errorf("status_info names %q, which is not a pending validation's message (%q)", m, pending)
		}
	}
}
