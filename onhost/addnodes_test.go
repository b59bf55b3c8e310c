package onhost

import (
	"strings"
	"testing"
	"time"
)

func TestAddNodesEnvRoundTrip(t *testing.T) {
	in := AddNodesEnv{ClusterID: "5c3b4a52-2f4c-4b0e-9d5e-3a1f1e9f0b11", ClusterName: "sandbox",
		APIVIPDNSName: "api.sandbox.nodezero.test", TokenExpiry: time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)}
	b := in.Marshal()
	if !strings.Contains(string(b), "AUTH_TOKEN_EXPIRY=2026-11-30T14:00:00Z\n") {
		t.Fatalf("expiry not RFC 3339 UTC:\n%s", b)
	}
	out, err := ParseAddNodesEnv("add-nodes.env", b)
	if err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	if in.Expired(in.TokenExpiry.Add(-time.Second)) || !in.Expired(in.TokenExpiry) {
		t.Fatal("Expired: wrong side of the expiry")
	}
}

func TestParseAddNodesEnvErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"CLUSTER_ID=a\nCLUSTER_NAME=b\nCLUSTER_API_VIP_DNS_NAME=c\n", "AUTH_TOKEN_EXPIRY is missing"},
		{"CLUSTER_ID=a\nCLUSTER_NAME=b\nCLUSTER_API_VIP_DNS_NAME=c\nAUTH_TOKEN_EXPIRY=tomorrow\n", `want RFC 3339`},
		{"CLUSTER_NAME=b\n", "CLUSTER_ID is missing"},
	} {
		_, err := ParseAddNodesEnv("add-nodes.env", []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseJSONFile(t *testing.T) {
	var e WorkerIgnitionEndpoint
	if err := ParseJSONFile("w.json", []byte(`{"url":"https://api-int.a.b:22623/config/worker","ca_certificate":"TFMw"}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.URL != "https://api-int.a.b:22623/config/worker" || e.CACertificate != "TFMw" {
		t.Fatalf("got %+v", e)
	}
	for _, bad := range []string{`{"url":"x","extra":1}`, `{"url":"x"}]`, `{"url":`} {
		if err := ParseJSONFile("w.json", []byte(bad), &e); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
