package kube

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/onhost"
)

// The worker pool's pointer Ignition, as worker-user-data-managed holds
// it; kube/localapi's tests read the seeded secret from a real API.
func TestParsePointerIgnition(t *testing.T) {
	const url = "https://api-int.ocp.example.com:22623/config/worker"
	for _, tc := range []struct {
		name, userData string
		want           *onhost.WorkerIgnitionEndpoint
		wantErr        string
	}{
		{"url and CA", `{"ignition":{"config":{"merge":[{"source":"` + url + `"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,TFMwdA=="}]}},"version":"3.2.0"}}`,
			&onhost.WorkerIgnitionEndpoint{URL: url, CACertificate: "TFMwdA=="}, ""},
		{"no CA: no endpoint", `{"ignition":{"config":{"merge":[{"source":"` + url + `"}]},"version":"3.2.0"}}`, nil, ""},
		{"empty", ``, nil, "missing"},
		{"not JSON", `#cloud-config`, nil, "not an Ignition config"},
		{"CA without a merge", `{"ignition":{"security":{"tls":{"certificateAuthorities":[{"source":"data:,x"}]}}}}`, nil, "ignition.config.merge[0].source is missing"},
		{"CA not a data URL", `{"ignition":{"config":{"merge":[{"source":"` + url + `"}]},"security":{"tls":{"certificateAuthorities":[{"source":"https://ca"}]}}}}`, nil, `certificateAuthorities[0].source "https://ca" is not a data URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePointerIgnition([]byte(tc.userData))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
