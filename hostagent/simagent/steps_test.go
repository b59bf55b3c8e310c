package simagent

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// newTestAgent returns an agent for host index 5 whose session is open, for
// the step tests; its client points nowhere and is never used.
func newTestAgent(t *testing.T) *Agent {
	t.Helper()
	c, err := v2.NewClient("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHost(5, DefaultNetwork, Master)
	if err != nil {
		t.Fatal(err)
	}
	api, ingress, _ := VIPs(DefaultNetwork)
	a, err := New(Config{Client: c, InfraEnvID: "ie", Host: h, APIVIP: api, IngressVIP: ingress})
	if err != nil {
		t.Fatal(err)
	}
	a.sess = session{infraEnvID: "ie", hostID: h.ID}
	return a
}

func arg(t *testing.T, v any) []string {
	t.Helper()
	return []string{v2.MustEncodeEmbedded(v)}
}

func TestAnswer(t *testing.T) {
	a := newTestAgent(t)
	h := a.Host()
	tests := []struct {
		name string
		step v2.StepType
		args []string
		out  any // decoded output; want is the same type
		want any
	}{
		{
			name: "verify-vips", step: v2.StepTypeVerifyVIPs,
			args: arg(t, v2.VerifyVIPsRequest{{VIP: "198.18.0.100", VIPType: v2.VIPTypeAPI}}),
			out:  &v2.VerifyVIPsResponse{},
			want: &v2.VerifyVIPsResponse{{VIP: "198.18.0.100", VIPType: v2.VIPTypeAPI, Verification: v2.VIPVerificationSucceeded}},
		},
		{
			name: "ntp-synchronizer without a source", step: v2.StepTypeNTPSynchronizer,
			args: arg(t, v2.NTPSynchronizationRequest{}),
			out:  &v2.NTPSynchronizationResponse{},
			want: &v2.NTPSynchronizationResponse{NTPSources: []*v2.NTPSource{{SourceName: simNTPSource, SourceState: v2.SourceStateSynced}}},
		},
		{
			name: "ntp-synchronizer with sources", step: v2.StepTypeNTPSynchronizer,
			args: arg(t, v2.NTPSynchronizationRequest{NTPSource: "a.example, b.example"}),
			out:  &v2.NTPSynchronizationResponse{},
			want: &v2.NTPSynchronizationResponse{NTPSources: []*v2.NTPSource{
				{SourceName: "a.example", SourceState: v2.SourceStateSynced}, {SourceName: "b.example", SourceState: v2.SourceStateSynced}}},
		},
		{
			name: "domain-resolution", step: v2.StepTypeDomainResolution,
			args: arg(t, v2.DomainResolutionRequest{Domains: []*v2.DomainResolutionRequestDomainsItem{
				{DomainName: "api.lt.example.com"}, {DomainName: "console-openshift-console.apps.lt.example.com"},
				{DomainName: "validateNoWildcardDNS.lt.example.com."}, {DomainName: "quay.io"}}}),
			out: &v2.DomainResolutionResponse{},
			want: &v2.DomainResolutionResponse{Resolutions: []*v2.DomainResolutionResponseResolutionsItem{
				{DomainName: "api.lt.example.com", IPv4Addresses: []string{"198.18.0.100"}},
				{DomainName: "console-openshift-console.apps.lt.example.com", IPv4Addresses: []string{"198.18.0.101"}},
				{DomainName: "validateNoWildcardDNS.lt.example.com."},
				{DomainName: "quay.io", IPv4Addresses: []string{"198.51.100.10"}}}},
		},
		{
			name: "connectivity-check", step: v2.StepTypeConnectivityCheck,
			args: arg(t, v2.ConnectivityCheckParams{{HostID: "other", Nics: []*v2.ConnectivityCheckNic{
				{Name: "eno1", MAC: "02:00:5e:00:00:09", IPAddresses: []string{"198.18.1.9"}}}}}),
			out: &v2.ConnectivityReport{},
			want: &v2.ConnectivityReport{RemoteHosts: []*v2.ConnectivityRemoteHost{{HostID: "other",
				L2Connectivity: []*v2.L2Connectivity{{OutgoingNic: "eno1", OutgoingIPAddress: h.Address.Addr().String(),
					RemoteIPAddress: "198.18.1.9", RemoteMAC: "02:00:5e:00:00:09", Successful: true}},
				L3Connectivity: []*v2.L3Connectivity{{OutgoingNic: "eno1", RemoteIPAddress: "198.18.1.9", Successful: true, AverageRTTMs: simRTTMs}},
				MTUReport:      []*v2.MTUReport{{OutgoingNic: "eno1", RemoteIPAddress: "198.18.1.9", MTUSuccessful: true}}}}},
		},
		{
			name: "free-network-addresses", step: v2.StepTypeFreeNetworkAddresses,
			args: arg(t, v2.FreeAddressesRequest{"10.1.2.0/24"}),
			out:  &v2.FreeNetworksAddresses{},
			want: &v2.FreeNetworksAddresses{{Network: "10.1.2.0/24", FreeAddresses: []string{
				"10.1.2.254", "10.1.2.253", "10.1.2.252", "10.1.2.251", "10.1.2.250", "10.1.2.249", "10.1.2.248", "10.1.2.247",
				"10.1.2.246", "10.1.2.245", "10.1.2.244", "10.1.2.243", "10.1.2.242", "10.1.2.241", "10.1.2.240", "10.1.2.239"}}},
		},
		{
			name: "installation-disk-speed-check", step: v2.StepTypeInstallationDiskSpeedCheck,
			args: append(arg(t, v2.DiskSpeedCheckRequest{Path: "/dev/sda"}), "480"),
			out:  &v2.DiskSpeedCheckResponse{},
			want: &v2.DiskSpeedCheckResponse{Path: "/dev/sda", IOSyncDuration: simSyncMs},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			output, stderr, code := a.answer(&v2.Step{StepType: tt.step, StepID: "x", Args: tt.args})
			if code != 0 {
				t.Fatalf("answer(%s) exit %d, stderr %q; want 0", tt.step, code, stderr)
			}
			if err := v2.DecodeEmbedded(output, tt.out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, tt.out, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("answer(%s) output (-want +got):\n%s", tt.step, diff)
			}
		})
	}
}

func TestAnswerInventory(t *testing.T) {
	a := newTestAgent(t)
	out, _, code := a.answer(&v2.Step{StepType: v2.StepTypeInventory, Args: []string{a.Host().ID}})
	var inv v2.Inventory
	if code != 0 || v2.DecodeEmbedded(out, &inv) != nil {
		t.Fatalf("inventory answer exit %d, output %.80q; want 0 and an inventory", code, out)
	}
	if diff := cmp.Diff(a.Host().Inventory(), &inv, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("inventory output (-want +got):\n%s", diff)
	}
	again, _, _ := a.answer(&v2.Step{StepType: v2.StepTypeInventory, Args: []string{a.Host().ID}})
	if again != out {
		t.Error("a second inventory differs from the first: the reply cache would never suppress it")
	}
}

func TestAnswerRefuses(t *testing.T) {
	a := newTestAgent(t)
	tests := []struct {
		name   string
		step   v2.Step
		stderr string
	}{
		{"unknown step", v2.Step{StepType: v2.StepTypeUpgradeAgent, Args: []string{"{}"}}, "failed to find action for step type upgrade-agent"},
		{"inventory of another host", v2.Step{StepType: v2.StepTypeInventory, Args: []string{"someone-else"}}, "inventory cmd accepts only 1 params"},
		{"two args", v2.Step{StepType: v2.StepTypeVerifyVIPs, Args: []string{"[]", "[]"}}, "verify-vips cmd accepts 1 params"},
		{"bad JSON", v2.Step{StepType: v2.StepTypeDomainResolution, Args: []string{"{"}}, "domain-resolution args"},
		{"bad CIDR", v2.Step{StepType: v2.StepTypeFreeNetworkAddresses, Args: arg(t, []string{"nope"})}, `"nope" is not a CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := a.answer(&tt.step)
			if code != exitNotRun || out != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("answer(%s %v) = %q, %q, %d; want no output, stderr with %q, exit %d",
					tt.step.StepType, tt.step.Args, out, stderr, code, tt.stderr, exitNotRun)
			}
		})
	}
}

func TestFreeAddressesAvoidHosts(t *testing.T) {
	a := newTestAgent(t)
	out, err := a.freeAddresses(arg(t, []string{DefaultNetwork.String()}))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(out[0].FreeAddresses) != maxFreeAddrs {
		t.Fatalf("freeAddresses(%s) = %+v, want one network with %d addresses", DefaultNetwork, out, maxFreeAddrs)
	}
	last, _ := NewHost(MaxHosts(DefaultNetwork)-1, DefaultNetwork, Worker)
	for _, s := range out[0].FreeAddresses {
		if netip.MustParseAddr(s).Compare(last.Address.Addr()) <= 0 {
			t.Errorf("free address %s could be a host's (the last host is %s)", s, last.Address.Addr())
		}
	}
}
