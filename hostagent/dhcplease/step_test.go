package dhcplease

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

const (
	testAPIMAC     = "00:1a:4a:b5:4d:cc"
	testIngressMAC = "00:1a:4a:83:b1:f7"
)

func TestDecodeArgs(t *testing.T) {
	good := `{"interface":"enp1s0","api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7","api_vip_lease":"lease {\n}"}`
	tests := []struct {
		name    string
		args    []string
		wantErr string // substring; "" means success
	}{
		{"good", []string{good}, ""},
		{"no args", nil, "accepts 1 params"},
		{"two args", []string{good, good}, "accepts 1 params"},
		{"not json", []string{"{"}, "decode embedded json"},
		{"trailing", []string{good + "{}"}, "trailing data"},
		{"no interface", []string{`{"api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`}, "interface: empty"},
		{"long interface", []string{`{"interface":"abcdefghijklmnop","api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`}, "longer than 15"},
		{"slash interface", []string{`{"interface":"a/b","api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`}, "character"},
		{"bad mac", []string{`{"interface":"eth0","api_vip_mac":"zz","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`}, "api_vip_mac: invalid MAC"},
		{"long mac", []string{`{"interface":"eth0","api_vip_mac":"00:1a:4a:b5:4d:cc:00:01","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`}, "not an Ethernet MAC"},
		{"multicast mac", []string{`{"interface":"eth0","api_vip_mac":"01:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`}, "multicast"},
		{"same macs", []string{`{"interface":"eth0","api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00-1A-4A-B5-4D-CC"}`}, "is also api_vip_mac"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeArgs(tt.args)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("DecodeArgs = %v, want success", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("DecodeArgs = %v, want an error containing %q", err, tt.wantErr)
			case tt.wantErr != "" && !errors.Is(err, ErrInvalidRequest):
				t.Fatalf("DecodeArgs = %v, want errors.Is ErrInvalidRequest", err)
			}
		})
	}
}

// Bad args never reach the network: the step answers step.ExitNotRun.
func TestStepBadArgs(t *testing.T) {
	run := Step(Options{})
	out, stderr, code := run(context.Background(), []string{`{"interface":""}`})
	if code != step.ExitNotRun || out != "" || !strings.Contains(stderr, "interface: empty") {
		t.Errorf("step(bad args) = %q, %q, %d; want \"\", the reason, %d", out, stderr, code, step.ExitNotRun)
	}
}

func TestHostname(t *testing.T) {
	mac, _ := net.ParseMAC(testAPIMAC)
	if got, want := Hostname(mac, "api"), "00-1a-4a-b5-4d-cc-api"; got != want {
		t.Errorf("Hostname = %q, want %q", got, want)
	}
}

// FuzzDHCPArgs: DecodeArgs never panics; what it accepts is a request that
// Validate accepts and that survives an encode/decode round trip.
func FuzzDHCPArgs(f *testing.F) {
	f.Add(`{"interface":"enp1s0","api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7"}`)
	f.Add(`{"interface":"eth0","api_vip_mac":"00:1a:4a:b5:4d:cc","ingress_vip_mac":"00:1a:4a:83:b1:f7","api_vip_lease":"lease {\n  fixed-address 10.0.0.1;\n}","ingress_vip_lease":""}`)
	f.Add(`{"interface":null}`)
	f.Add(`[]`)
	f.Add(`{"interface":"a","api_vip_mac":"0000.0000.0001","ingress_vip_mac":"00:00:00:00:00:02"}`)
	f.Fuzz(func(t *testing.T, arg string) {
		req, err := DecodeArgs([]string{arg})
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("DecodeArgs(%q) = %v, not ErrInvalidRequest", arg, err)
			}
			return
		}
		if err := Validate(req); err != nil {
			t.Fatalf("DecodeArgs(%q) accepted %+v, which Validate refuses: %v", arg, req, err)
		}
		again, err := DecodeArgs([]string{wire.MustEncodeEmbedded(req)})
		if err != nil || again != req {
			t.Fatalf("round trip of %+v = %+v, %v", req, again, err)
		}
		// Lease texts are free-form; parsing them must not panic either.
		_, _ = ParseLease(req.APIVIPLease)
		_, _ = ParseLease(req.IngressVIPLease)
	})
}
