package wire

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The args below are verbatim from docs/reference/agent-protocol-transcript.md §2.
func TestEncodeEmbeddedMatchesTranscript(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"verify-vips", VerifyVIPsRequest{{VIP: "192.168.111.5", VIPType: VIPTypeAPI}, {VIP: "192.168.111.4", VIPType: VIPTypeIngress}},
			`[{"vip":"192.168.111.5","vip_type":"api"},{"vip":"192.168.111.4","vip_type":"ingress"}]`},
		{"ntp-synchronizer", NTPSynchronizationRequest{}, `{"ntp_source":""}`},
		{"free-network-addresses", FreeAddressesRequest{"192.168.111.0/24"}, `["192.168.111.0/24"]`},
		{"connectivity-check", ConnectivityCheckParams{{HostID: "5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e01",
			Nics: []*ConnectivityCheckNic{{Name: "eth0", MAC: "52:54:00:aa:bb:01", IPAddresses: []string{"192.168.111.10"}}}}},
			`[{"host_id":"5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e01","nics":[{"ip_addresses":["192.168.111.10"],"mac":"52:54:00:aa:bb:01","name":"eth0"}]}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EncodeEmbedded(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			// connectivity-check field order differs between Go's struct
			// order and the service's (alphabetical) map order, so compare
			// documents, not bytes, there.
			if tc.name == "connectivity-check" {
				var a, b any
				if err := DecodeEmbedded(got, &a); err != nil {
					t.Fatal(err)
				}
				if err := DecodeEmbedded(tc.want, &b); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(b, a); diff != "" {
					t.Errorf("EncodeEmbedded mismatch (-want +got):\n%s", diff)
				}
				return
			}
			if got != tc.want {
				t.Errorf("EncodeEmbedded() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDecodeStepArg(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    VerifyVIPsRequest
		wantErr string
	}{
		{"one json arg", []string{`[{"vip":"192.168.111.5","vip_type":"api"}]`},
			VerifyVIPsRequest{{VIP: "192.168.111.5", VIPType: VIPTypeAPI}}, ""},
		{"no args", nil, nil, "verify-vips cmd accepts 1 params in args, given args []"},
		{"two args", []string{"[]", "[]"}, nil, "verify-vips cmd accepts 1 params in args, given args [[] []]"},
		{"not json", []string{"{"}, nil, "verify-vips args: decode embedded json: unexpected EOF"},
		{"trailing data", []string{"[] []"}, nil, "verify-vips args: decode embedded json: trailing data after the document"},
		{"stray bracket", []string{"[] ]"}, nil, "verify-vips args: decode embedded json: trailing data after the document"},
		{"unfinished trailing string", []string{`[] "ab`}, nil, "verify-vips args: decode embedded json: trailing data after the document"},
		{"trailing white space", []string{"[] \n\t"}, VerifyVIPsRequest{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got VerifyVIPsRequest
			err := DecodeStepArg(StepTypeVerifyVIPs, tc.args, &got)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("DecodeStepArg(%q) error = %v, want %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeStepArg mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The bodies are the shapes recorded in transcript §1.3 and §3.
func TestParseStepReply(t *testing.T) {
	tests := []struct {
		name string
		body string
		want StepReply
	}{
		{"success omits exit_code and error",
			`{"output":"[]","step_id":"verify-vips-a6084f12","step_type":"verify-vips"}`,
			StepReply{StepType: StepTypeVerifyVIPs, StepID: "verify-vips-a6084f12", Output: "[]"}},
		{"failure omits output",
			`{"step_type":"ntp-synchronizer","step_id":"ntp-synchronizer-7f46163a","exit_code":-1,"error":"chronyc exited with non-zero exit code 127"}`,
			StepReply{StepType: StepTypeNTPSynchronizer, StepID: "ntp-synchronizer-7f46163a", ExitCode: -1, Error: "chronyc exited with non-zero exit code 127"}},
		{"explicit nulls", `{"step_type":"inventory","step_id":"i","exit_code":null,"output":null,"error":null}`,
			StepReply{StepType: StepTypeInventory, StepID: "i"}},
		{"unknown field ignored", `{"step_type":"inventory","step_id":"i","exit_code":0,"output":"{}","extra":1}`,
			StepReply{StepType: StepTypeInventory, StepID: "i", Output: "{}"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStepReply([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseStepReply mismatch (-want +got):\n%s", diff)
			}
			if got.Succeeded() != (tc.want.ExitCode == 0) {
				t.Errorf("Succeeded() = %v for exit code %d", got.Succeeded(), got.ExitCode)
			}
		})
	}
	if _, err := ParseStepReply([]byte(`{"exit_code":"0"}`)); err == nil {
		t.Error(`ParseStepReply({"exit_code":"0"}) succeeded, want an error`)
	}
}

func TestDecodeStepOutput(t *testing.T) {
	var out VerifyVIPsResponse
	err := DecodeStepOutput(StepReply{StepType: StepTypeVerifyVIPs, StepID: "v", ExitCode: 0}, &out)
	if !errors.Is(err, ErrNoOutput) {
		t.Errorf("DecodeStepOutput(empty output) = %v, want ErrNoOutput", err)
	}
	reply := StepReply{StepType: StepTypeVerifyVIPs, StepID: "v",
		Output: `[{"verification":"succeeded","vip":"192.168.111.5","vip_type":"api"}]`}
	if err := DecodeStepOutput(reply, &out); err != nil {
		t.Fatal(err)
	}
	want := VerifyVIPsResponse{{VIP: "192.168.111.5", VIPType: VIPTypeAPI, Verification: "succeeded"}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("DecodeStepOutput mismatch (-want +got):\n%s", diff)
	}
}
