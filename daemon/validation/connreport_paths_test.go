package validation

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/daemon/agentjson"
	"github.com/nodezero/nodezero/wire"
)

// TestDecodeConnReportPaths: a report read by the fast reader compacts to
// what encoding/json's decoding compacts to, with the same stored
// document; one the fast reader leaves alone (an escaped character) is
// still read, by encoding/json; text that is no report is an error.
func TestDecodeConnReportPaths(t *testing.T) {
	r := wire.ConnectivityReport{RemoteHosts: []*wire.ConnectivityRemoteHost{
		{
			HostID: "peer-a",
			L2Connectivity: []*wire.L2Connectivity{
				{OutgoingNic: "eth0", RemoteIPAddress: "10.1.0.2", RemoteMAC: "52:54:00:00:00:02", Successful: true},
				{OutgoingNic: "eth0", RemoteIPAddress: "10.1.0.2", RemoteMAC: "52:54:00:00:00:99", Successful: true}, // a collision
			},
			L3Connectivity: []*wire.L3Connectivity{
				{OutgoingNic: "eth0", RemoteIPAddress: "10.1.0.2", Successful: true, AverageRTTMs: 250, PacketLossPercentage: 20},
				{OutgoingNic: "eth0", RemoteIPAddress: "fd00::2", Successful: true, AverageRTTMs: 0.2},
			},
			MTUReport: []*wire.MTUReport{{OutgoingNic: "eth0", RemoteIPAddress: "10.1.0.2"}},
		},
		{HostID: "peer-b", L3Connectivity: []*wire.L3Connectivity{{RemoteIPAddress: "10.1.0.3"}}},
	}}
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if _, ok := agentjson.ScanConnectivity(text, func(*wire.ConnectivityRemoteHost) {}); !ok {
		t.Fatal("the fast reader refused an agent's report; this test proves nothing")
	}
	for _, floor := range []timingFloor{keepAll, {latency: 100, loss: 0}} {
		fast, doc, err := decodeConnReport(testInterner, text, floor)
		if err != nil {
			t.Fatal(err)
		}
		slow := compactConnectivity(testInterner, &r, floor)
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("floor %v: fast %+v, encoding/json %+v", floor, fast, slow)
		}
		if doc != text {
			t.Errorf("stored document %s, want %s", doc, text)
		}
		if len(fast.collisions) != 1 || len(fast.mtuBroken) != 1 || len(fast.slow) == 0 {
			t.Errorf("floor %v: the report's collision, MTU failure and slow probe were not all kept: %+v", floor, fast)
		}
	}

	escaped := strings.Replace(text, `"peer-b"`, `"peer-\u0062"`, 1)
	if _, ok := agentjson.ScanConnectivity(escaped, func(*wire.ConnectivityRemoteHost) {}); ok {
		t.Fatal("the fast reader took an escaped host id")
	}
	got, doc, err := decodeConnReport(testInterner, escaped, keepAll)
	if err != nil || !reflect.DeepEqual(got, compactConnectivity(testInterner, &r, keepAll)) || doc != text {
		t.Errorf("escaped report: %+v %q %v, want what the plain one gives", got, doc, err)
	}

	if _, _, err := decodeConnReport(testInterner, `{"remote_hosts":"nope"}`, keepAll); err == nil {
		t.Error("a report that is not one decoded without error")
	}
	if !parseConnReport(testInterner, `{`, keepAll).Broken() {
		t.Error("a broken stored report is not marked broken")
	}
}
