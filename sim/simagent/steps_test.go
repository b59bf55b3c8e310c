package simagent

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// newTestAgent returns an agent for host index 5 whose session is open, for
// the step tests; its client points nowhere and is never used.
func newTestAgent(t *testing.T) *Agent {
	t.Helper()
	c, err := wire.NewClient("http://127.0.0.1:1")
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
	return []string{wire.MustEncodeEmbedded(v)}
}

func TestAnswer(t *testing.T) {
	a := newTestAgent(t)
	h := a.Host()
	tests := []struct {
		name string
		step wire.StepType
		args []string
		out  any // decoded output; want is the same type
		want any
	}{
		{
			name: "verify-vips", step: wire.StepTypeVerifyVIPs,
			args: arg(t, wire.VerifyVIPsRequest{{VIP: "198.18.0.100", VIPType: wire.VIPTypeAPI}}),
			out:  &wire.VerifyVIPsResponse{},
			want: &wire.VerifyVIPsResponse{{VIP: "198.18.0.100", VIPType: wire.VIPTypeAPI, Verification: wire.VIPVerificationSucceeded}},
		},
		{
			name: "ntp-synchronizer without a source", step: wire.StepTypeNTPSynchronizer,
			args: arg(t, wire.NTPSynchronizationRequest{}),
			out:  &wire.NTPSynchronizationResponse{},
			want: &wire.NTPSynchronizationResponse{NTPSources: []*wire.NTPSource{{SourceName: simNTPSource, SourceState: wire.SourceStateSynced}}},
		},
		{
			name: "ntp-synchronizer with sources", step: wire.StepTypeNTPSynchronizer,
			args: arg(t, wire.NTPSynchronizationRequest{NTPSource: "a.example, b.example"}),
			out:  &wire.NTPSynchronizationResponse{},
			want: &wire.NTPSynchronizationResponse{NTPSources: []*wire.NTPSource{
				{SourceName: "a.example", SourceState: wire.SourceStateSynced}, {SourceName: "b.example", SourceState: wire.SourceStateSynced}}},
		},
		{
			name: "domain-resolution", step: wire.StepTypeDomainResolution,
			args: arg(t, wire.DomainResolutionRequest{Domains: []*wire.DomainResolutionRequestDomainsItem{
				{DomainName: "api.lt.example.com"}, {DomainName: "console-openshift-console.apps.lt.example.com"},
				{DomainName: "validateNoWildcardDNS.lt.example.com."}, {DomainName: "quay.io"}}}),
			out: &wire.DomainResolutionResponse{},
			want: &wire.DomainResolutionResponse{Resolutions: []*wire.DomainResolutionResponseResolutionsItem{
				{DomainName: "api.lt.example.com", IPv4Addresses: []string{"198.18.0.100"}},
				{DomainName: "console-openshift-console.apps.lt.example.com", IPv4Addresses: []string{"198.18.0.101"}},
				{DomainName: "validateNoWildcardDNS.lt.example.com."},
				{DomainName: "quay.io", IPv4Addresses: []string{"198.51.100.10"}}}},
		},
		{
			name: "connectivity-check", step: wire.StepTypeConnectivityCheck,
			args: arg(t, wire.ConnectivityCheckParams{{HostID: "other", Nics: []*wire.ConnectivityCheckNic{
				{Name: "eno1", MAC: "02:00:5e:00:00:09", IPAddresses: []string{"198.18.1.9"}}}}}),
			out: &wire.ConnectivityReport{},
			want: &wire.ConnectivityReport{RemoteHosts: []*wire.ConnectivityRemoteHost{{HostID: "other",
				L2Connectivity: []*wire.L2Connectivity{{OutgoingNic: "eno1", OutgoingIPAddress: h.Address.Addr().String(),
					RemoteIPAddress: "198.18.1.9", RemoteMAC: "02:00:5e:00:00:09", Successful: true}},
				L3Connectivity: []*wire.L3Connectivity{{OutgoingNic: "eno1", RemoteIPAddress: "198.18.1.9", Successful: true, AverageRTTMs: simRTTMs}},
				MTUReport:      []*wire.MTUReport{{OutgoingNic: "eno1", RemoteIPAddress: "198.18.1.9", MTUSuccessful: true}}}}},
		},
		{
			name: "free-network-addresses", step: wire.StepTypeFreeNetworkAddresses,
			args: arg(t, wire.FreeAddressesRequest{"10.1.2.0/24"}),
			out:  &wire.FreeNetworksAddresses{},
			want: &wire.FreeNetworksAddresses{{Network: "10.1.2.0/24", FreeAddresses: []string{
				"10.1.2.254", "10.1.2.253", "10.1.2.252", "10.1.2.251", "10.1.2.250", "10.1.2.249", "10.1.2.248", "10.1.2.247",
				"10.1.2.246", "10.1.2.245", "10.1.2.244", "10.1.2.243", "10.1.2.242", "10.1.2.241", "10.1.2.240", "10.1.2.239"}}},
		},
		{
			name: "installation-disk-speed-check", step: wire.StepTypeInstallationDiskSpeedCheck,
			args: append(arg(t, wire.DiskSpeedCheckRequest{Path: "/dev/sda"}), "480"),
			out:  &wire.DiskSpeedCheckResponse{},
			want: &wire.DiskSpeedCheckResponse{Path: "/dev/sda", IOSyncDuration: simSyncMs},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			output, stderr, code := a.answer(&wire.Step{StepType: tt.step, StepID: "x", Args: tt.args})
			if code != 0 {
				t.Fatalf("answer(%s) exit %d, stderr %q; want 0", tt.step, code, stderr)
			}
			if err := wire.DecodeEmbedded(output, tt.out); err != nil {
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
	out, _, code := a.answer(&wire.Step{StepType: wire.StepTypeInventory, Args: []string{a.Host().ID}})
	var inv wire.Inventory
	if code != 0 || wire.DecodeEmbedded(out, &inv) != nil {
		t.Fatalf("inventory answer exit %d, output %.80q; want 0 and an inventory", code, out)
	}
	if diff := cmp.Diff(a.Host().Inventory(), &inv, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("inventory output (-want +got):\n%s", diff)
	}
	again, _, _ := a.answer(&wire.Step{StepType: wire.StepTypeInventory, Args: []string{a.Host().ID}})
	if again != out {
		t.Error("a second inventory differs from the first: the reply cache would never suppress it")
	}
}

func TestAnswerRefuses(t *testing.T) {
	a := newTestAgent(t)
	tests := []struct {
		name   string
		step   wire.Step
		stderr string
	}{
		{"unknown step", wire.Step{StepType: wire.StepTypeUpgradeAgent, Args: []string{"{}"}}, "failed to find action for step type upgrade-agent"},
		{"inventory of another host", wire.Step{StepType: wire.StepTypeInventory, Args: []string{"someone-else"}}, "inventory cmd accepts only 1 params"},
		{"two args", wire.Step{StepType: wire.StepTypeVerifyVIPs, Args: []string{"[]", "[]"}}, "verify-vips cmd accepts 1 params"},
		{"bad JSON", wire.Step{StepType: wire.StepTypeDomainResolution, Args: []string{"{"}}, "domain-resolution args"},
		{"bad CIDR", wire.Step{StepType: wire.StepTypeFreeNetworkAddresses, Args: arg(t, []string{"nope"})}, `"nope" is not a CIDR`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := a.answer(&tt.step)
			if code != step.ExitNotRun || out != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("answer(%s %v) = %q, %q, %d; want no output, stderr with %q, exit %d",
					tt.step.StepType, tt.step.Args, out, stderr, code, tt.stderr, step.ExitNotRun)
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
