package wire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAPIErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   APIError
	}{
		{"assisted error", 409, `{"code":"409","href":"","id":409,"kind":"Error","reason":"Cluster is not accepting hosts"}`,
			APIError{StatusCode: 409, Code: "409", Reason: "Cluster is not accepting hosts"}},
		{"infra error", 401, `{"code":401,"message":"Unauthenticated"}`,
			APIError{StatusCode: 401, Code: "401", Reason: "Unauthenticated"}},
		{"html page", 503, "<html>\n<body>Service\n Unavailable</body></html>",
			APIError{StatusCode: 503, Reason: "<html> <body>Service Unavailable</body></html>"}},
		{"empty body", 404, "", APIError{StatusCode: 404}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newServer(t, tc.status, tc.body)
			c := newTestClient(t, srv.URL)
			_, err := c.GetCluster(context.Background(), testCluster)
			var got *APIError
			if !errors.As(err, &got) {
				t.Fatalf("GetCluster() error = %v, want an *APIError", err)
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("APIError mismatch (-want +got):\n%s", diff)
			}
			if !IsStatus(err, tc.status) || IsStatus(err, 200) || StatusCode(err) != tc.status {
				t.Errorf("IsStatus/StatusCode(%v) disagree with %d", err, tc.status)
			}
			if !strings.HasPrefix(err.Error(), "get cluster: service answered "+fmt.Sprint(tc.status)) {
				t.Errorf("error = %q, want it to name the operation and status", err)
			}
		})
	}
	if got := StatusCode(errors.New("dial tcp: connection refused")); got != 0 {
		t.Errorf("StatusCode(non-API error) = %d, want 0", got)
	}
}
