package agentjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// agentReport is a report as an agent writes it: json.Marshal of the model,
// with the numbers and strings the canonical form must reproduce exactly.
func agentReport(t testing.TB) string {
	t.Helper()
	r := wire.ConnectivityReport{RemoteHosts: []*wire.ConnectivityRemoteHost{
		{
			HostID: "0b1d2f39-7c6e-4a2b-9d41-1d2a3b4c5d6e",
			L2Connectivity: []*wire.L2Connectivity{
				{OutgoingNic: "eth0", OutgoingIPAddress: "10.0.0.5", RemoteIPAddress: "10.0.0.6", RemoteMAC: "52:54:00:aa:bb:cc", Successful: true},
				{OutgoingNic: "eth1", RemoteIPAddress: "fe80::1", RemoteMAC: "52:54:00:aa:bb:cd"},
			},
			L3Connectivity: []*wire.L3Connectivity{
				{OutgoingNic: "eth0", RemoteIPAddress: "10.0.0.6", Successful: true, AverageRTTMs: 0.372},
				{OutgoingNic: "eth1", RemoteIPAddress: "2001:db8::6", AverageRTTMs: 1e-7, PacketLossPercentage: 100},
				{OutgoingNic: "odd\x7f", RemoteIPAddress: "10.0.0.7", AverageRTTMs: 3e21, PacketLossPercentage: 12.5},
				{OutgoingNic: "eth0", RemoteIPAddress: "10.0.0.8", AverageRTTMs: 123456789.125, PacketLossPercentage: 0.000001},
			},
			MTUReport: []*wire.MTUReport{{OutgoingNic: "eth0", RemoteIPAddress: "10.0.0.6", MTUSuccessful: true}, {OutgoingNic: "eth0", RemoteIPAddress: "10.0.0.9"}},
		},
		{HostID: "second"},
		{L3Connectivity: []*wire.L3Connectivity{{RemoteIPAddress: "10.0.0.10", Successful: true}}},
	}}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// scanned runs ScanConnectivity and copies what it visits.
func scanned(text string) (*wire.ConnectivityReport, string, bool) {
	var got wire.ConnectivityReport
	canonical, ok := ScanConnectivity(text, func(rh *wire.ConnectivityRemoteHost) {
		c := &wire.ConnectivityRemoteHost{HostID: rh.HostID}
		for _, e := range rh.L2Connectivity {
			x := *e
			c.L2Connectivity = append(c.L2Connectivity, &x)
		}
		for _, e := range rh.L3Connectivity {
			x := *e
			c.L3Connectivity = append(c.L3Connectivity, &x)
		}
		for _, e := range rh.MTUReport {
			x := *e
			c.MTUReport = append(c.MTUReport, &x)
		}
		got.RemoteHosts = append(got.RemoteHosts, c)
	})
	return &got, canonical, ok
}

// emptyToNil makes empty slices nil, as scanned leaves them, for comparing
// with what encoding/json decodes ("[]" is an empty slice there).
func emptyToNil(r *wire.ConnectivityReport) {
	if len(r.RemoteHosts) == 0 {
		r.RemoteHosts = nil
	}
	for _, rh := range r.RemoteHosts {
		if rh == nil {
			continue
		}
		if len(rh.L2Connectivity) == 0 {
			rh.L2Connectivity = nil
		}
		if len(rh.L3Connectivity) == 0 {
			rh.L3Connectivity = nil
		}
		if len(rh.MTUReport) == 0 {
			rh.MTUReport = nil
		}
	}
}

// checkScanAgrees: when the fast reader takes text, encoding/json takes it
// too, to the same hosts, and the canonical text is json.Marshal's.
func checkScanAgrees(t *testing.T, text string) bool {
	t.Helper()
	got, canonical, ok := scanned(text)
	if !ok {
		return false
	}
	var want wire.ConnectivityReport
	if err := wire.DecodeEmbedded(text, &want); err != nil {
		t.Fatalf("fast reader took %q, encoding/json refuses it: %v", text, err)
	}
	b, err := json.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	emptyToNil(&want)
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("%q: fast reader visited\n%s\nencoding/json decoded\n%s", text, wire.MustEncodeEmbedded(got), wire.MustEncodeEmbedded(&want))
	}
	if canonical != string(b) {
		t.Fatalf("%q: canonical text\n%s\njson.Marshal\n%s", text, canonical, b)
	}
	return true
}

// decodeLikeAPI decodes a body as daemon/api does: one document, nothing
// after it.
func decodeLikeAPI(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the document")
	}
	return nil
}

func checkReplyAgrees(t *testing.T, body string) bool {
	t.Helper()
	var got wire.StepReply
	if !DecodeStepReply([]byte(body), &got) {
		return false
	}
	var want wire.StepReply
	if err := decodeLikeAPI([]byte(body), &want); err != nil {
		t.Fatalf("fast reader took %q, encoding/json refuses it: %v", body, err)
	}
	if got != want {
		t.Fatalf("%q: fast reader %+v, encoding/json %+v", body, got, want)
	}
	return true
}

// TestScanConnectivity: an agent's report is taken, to the hosts
// encoding/json decodes and the text json.Marshal writes again (floats in
// both notations, HTML characters, omitted zero fields).
func TestScanConnectivity(t *testing.T) {
	text := agentReport(t)
	if !checkScanAgrees(t, text) {
		t.Fatal("the fast reader refused an agent's report")
	}
	// The same with white space and an unknown field, which the canonical
	// text drops.
	spaced := strings.ReplaceAll(text, ",", " ,\n\t") + " \r\n"
	spaced = strings.Replace(spaced, `{"host_id"`, `{ "future" : {"a":[1,-2.5e+3,true,null,"\u00e9\"x"]}, "host_id"`, 1)
	if !checkScanAgrees(t, spaced) {
		t.Fatal("the fast reader refused a spaced report with an unknown field")
	}
	// HTML characters as they come from an agent that does not escape
	// them; json.Marshal does.
	if html := `{"remote_hosts":[{"host_id":"a<b>&c"}]}`; !checkScanAgrees(t, html) {
		t.Errorf("%q refused", html)
	}
	for _, empty := range []string{`{}`, `{"remote_hosts":[]}`, ` { "remote_hosts" : [ ] } `} {
		if !checkScanAgrees(t, empty) {
			t.Errorf("%q refused", empty)
		}
	}
}

// TestFastPathsDecline: texts encoding/json might read otherwise, or
// refuse, are left to it.
func TestFastPathsDecline(t *testing.T) {
	for _, text := range []string{
		``, `null`, `[]`, `{}{}`, `{} x`, `{"remote_hosts":null}`, `{"remote_hosts":[null]}`,
		`{"remote_hosts":[{"host_id":"a\"b"}]}`,            // escape
		`{"remote_hosts":[{"host_id":"\u0061"}]}`,          // \u escape
		`{"remote_hosts":[{"host_id":"é"}]}`,               // not ASCII
		`{"remote_hosts":[{"host_id":"a","host_id":"b"}]}`, // duplicate
		`{"remote_hosts":[{"Host_ID":"a"}]}`,               // case
		`{"REMOTE_HOSTS":[]}`,                              // case
		`{"remote_hosts":[{"host_id":5}]}`,                 // type
		`{"remote_hosts":[{"l3_connectivity":[{"average_rtt_ms":"1"}]}]}`,
		`{"remote_hosts":[{"l3_connectivity":[{"average_rtt_ms":1e400}]}]}`,
		`{"remote_hosts":[{"l3_connectivity":[{"average_rtt_ms":01}]}]}`,
		`{"remote_hosts":[{"l3_connectivity":[{"average_rtt_ms":1.}]}]}`,
		`{"remote_hosts":[{"l2_connectivity":[{"successful":null}]}]}`,
		`{"remote_hosts":[{"l2_connectivity":[{"successful":tru}]}]}`,
		`{"remote_hosts":[{"host_id":"a"},]}`,
		`{"x":"\q","remote_hosts":[]}`,
		`{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
	} {
		if _, _, ok := scanned(text); ok {
			t.Errorf("ScanConnectivity took %q", text)
		}
	}
	for _, body := range []string{
		``, `null`, `{"step_id":"a\u0041"}`, `{"exit_code":1.0}`, `{"exit_code":99999999999999999999}`,
		`{"step_id":"a","step_id":"b"}`, `{"Output":"x"}`, `{"output":"x"} {}`, `{"output":"\ud800"}`,
		"{\"output\":\"\xff\"}", `{"output":null}`, `{"output":"a` + "\n" + `"}`,
	} {
		var r wire.StepReply
		if DecodeStepReply([]byte(body), &r) {
			t.Errorf("DecodeStepReply took %q", body)
		}
	}
}

// TestDecodeStepReply: a reply as the agent posts it, its output a
// report escaped once more, is taken and decodes as encoding/json decodes it.
func TestDecodeStepReply(t *testing.T) {
	b, err := json.Marshal(&wire.StepReply{StepType: wire.StepTypeConnectivityCheck, StepID: "connectivity-check-1a2b", ExitCode: -3,
		Output: agentReport(t) + "\n\t\\/\b\f\r é", Error: "it's <fine>"})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.ReplaceAll(string(b), `\u003c`, `<`) // as an agent without HTML escaping writes it
	body = strings.ReplaceAll(body, `\u003e`, `>`)
	body = strings.ReplaceAll(body, `\u0026`, `&`)
	body = strings.Replace(body, `"step_id"`, `"unknown":[{}], "step_id"`, 1)
	for _, text := range []string{body, `{}`, `{"output":""}`, `{"output":"\/"}`} {
		if !checkReplyAgrees(t, text) {
			t.Errorf("DecodeStepReply refused %q", text)
		}
	}
}

// FuzzFastJSON: whatever the fast readers take, encoding/json takes too, to
// the same values; the canonical report text is json.Marshal's.
func FuzzFastJSON(f *testing.F) {
	f.Add(agentReport(f))
	f.Add(`{"remote_hosts":[{"host_id":"a","l3_connectivity":[{"average_rtt_ms":1e-7,"packet_loss_percentage":-0}]}]}`)
	f.Add(`{"step_type":"connectivity-check","step_id":"s","exit_code":0,"output":"{\"remote_hosts\":[]}","error":""}`)
	f.Add(`{"x":{"y":["\u00e9",1.5e3,null,false]},"remote_hosts":[{"mtu_report":[{"mtu_successful":true}]}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		checkScanAgrees(t, text)
		checkReplyAgrees(t, text)
	})
}

// bigReport is a report over n peers as a thousand-host cluster's agents
// write it: one NIC, L2 and L3 answered, one MTU probe each.
func bigReport(b testing.TB, n int) string {
	var r wire.ConnectivityReport
	for i := range n {
		ip := fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		r.RemoteHosts = append(r.RemoteHosts, &wire.ConnectivityRemoteHost{
			HostID:         fmt.Sprintf("5b0f6a2c-1d3e-4f5a-8b9c-%012d", i),
			L2Connectivity: []*wire.L2Connectivity{{OutgoingNic: "ens3", OutgoingIPAddress: "10.1.9.9", RemoteIPAddress: ip, RemoteMAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256), Successful: true}},
			L3Connectivity: []*wire.L3Connectivity{{OutgoingNic: "ens3", RemoteIPAddress: ip, Successful: true, AverageRTTMs: 0.25 + float64(i%7)/100}},
			MTUReport:      []*wire.MTUReport{{OutgoingNic: "ens3", RemoteIPAddress: ip, MTUSuccessful: true}},
		})
	}
	s, err := wire.EncodeEmbedded(&r)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkScanConnectivity: one 999-peer report, read and written again
// canonically (the visitor does nothing).
func BenchmarkScanConnectivity(b *testing.B) {
	text := bigReport(b, 999)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ScanConnectivity(text, func(*wire.ConnectivityRemoteHost) {}); !ok {
			b.Fatal("refused")
		}
	}
}

// BenchmarkDecodeEmbeddedConnectivity: the same report through
// encoding/json, for comparison.
func BenchmarkDecodeEmbeddedConnectivity(b *testing.B) {
	text := bigReport(b, 999)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		var r wire.ConnectivityReport
		if err := wire.DecodeEmbedded(text, &r); err != nil {
			b.Fatal(err)
		}
	}
}
