package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/daemon/api"
)

// The API without traps (issue #18): what a person trying the API by hand
// met first.

// TestEmptyListsAreArrays: every list route answers [] when it has nothing
// to list, never null.
func TestEmptyListsAreArrays(t *testing.T) {
	h := newHarness(t)
	b := api.Base
	for _, path := range []string{b + "/clusters", b + "/infra-envs", b + "/events"} {
		t.Run(path, func(t *testing.T) {
			r := h.user(t, "GET", path, "")
			if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != "[]" {
				t.Errorf("GET %s with nothing registered = %d %q, want 200 []", path, r.status, r.body)
			}
		})
	}
	// A cluster and infra-env with no host and no manifest.
	r := h.user(t, "POST", b+"/clusters", `{"name":"empty","openshift_version":"4.18","pull_secret":`+jsonString(pullSecret)+`,"base_dns_domain":"example.com"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("register cluster = %d %s", r.status, r.body)
	}
	var c struct{ ID string }
	if err := json.Unmarshal(r.body, &c); err != nil {
		t.Fatal(err)
	}
	r = h.user(t, "POST", b+"/infra-envs", `{"name":"empty","pull_secret":`+jsonString(pullSecret)+`,"cluster_id":"`+c.ID+`"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("register infra-env = %d %s", r.status, r.body)
	}
	var ie struct{ ID string }
	if err := json.Unmarshal(r.body, &ie); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		b + "/clusters/" + c.ID + "/hosts",
		b + "/infra-envs/" + ie.ID + "/hosts",
		b + "/clusters/" + c.ID + "/manifests",
		b + "/events?cluster_id=" + c.ID + "&severities=critical",
	} {
		t.Run(path, func(t *testing.T) {
			r := h.user(t, "GET", path, "")
			if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != "[]" {
				t.Errorf("GET %s = %d %q, want 200 []", path, r.status, r.body)
			}
		})
	}
}

// TestWrongMethodIs405: a path the API serves, asked with a method it does
// not take, is 405 with Allow naming the methods it does and assisted's
// error body; a path it does not serve stays 404.
func TestWrongMethodIs405(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	for _, c := range []struct {
		method, path string
		allow        []string
	}{
		{"PUT", api.Base + "/clusters", []string{"GET", "POST"}},
		{"DELETE", api.Base + "/events", []string{"GET"}},
		{"GET", clusterPat + "/actions/install", []string{"POST"}},
		{"POST", clusterPat, []string{"GET", "PATCH", "DELETE"}},
		{"POST", "/health", []string{"GET"}},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := h.user(t, c.method, f.path(c.path), "")
			if r.status != http.StatusMethodNotAllowed {
				t.Fatalf("%s %s = %d %s, want 405", c.method, c.path, r.status, r.body)
			}
			got := r.header.Get("Allow")
			for _, m := range c.allow {
				if !strings.Contains(got, m) {
					t.Errorf("Allow = %q, want it to name %s", got, m)
				}
			}
			if reason := checkErrorBody(t, r.status, r.header, r.body); !strings.Contains(reason, "method not allowed") {
				t.Errorf("reason %q, want it to say the method is not allowed", reason)
			}
		})
	}
	if r := h.user(t, "GET", api.Base+"/nope", ""); r.status != http.StatusNotFound {
		t.Errorf("GET an unknown path = %d, want 404", r.status)
	}
}

// TestNoZeroTimes: no answer carries a time that was never set
// ("0001-01-01T00:00:00.000Z"): an infra-env's expires_at, a cluster's
// install times, a host's logs times are left out until they happen.
func TestNoZeroTimes(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	for _, path := range []string{clusterPat, clusterPat + "/hosts", infraEnvPat, hostPat, api.Base + "/clusters", api.Base + "/infra-envs", infraEnvPat + "/hosts"} {
		t.Run(path, func(t *testing.T) {
			r := h.user(t, "GET", f.path(path), "")
			if r.status == http.StatusForbidden || r.status == http.StatusUnauthorized {
				r = h.agent(t, "GET", f.path(path), "")
			}
			if r.status != http.StatusOK {
				t.Fatalf("GET %s = %d %s", path, r.status, r.body)
			}
			if strings.Contains(string(r.body), `"0001-01-01`) {
				t.Errorf("GET %s carries a zero time: %s", path, r.body)
			}
		})
	}
}

// TestDeleteInstallingClusterRefused: a cluster being installed cannot be
// deleted (assisted: "can not be removed while being installed"), 409 with
// the reason and what to do; the cluster is still there.
func TestDeleteInstallingClusterRefused(t *testing.T) {
	h := newHarness(t)
	f := h.newInstallingSNO(t)
	r := h.user(t, "DELETE", f.path(clusterPat), "")
	if r.status != http.StatusConflict {
		t.Fatalf("DELETE an installing cluster = %d %s, want 409", r.status, r.body)
	}
	if reason := checkErrorBody(t, r.status, r.header, r.body); !strings.Contains(reason, "cancel the installation") {
		t.Errorf("reason %q, want it to say to cancel the installation first", reason)
	}
	if _, err := h.client.GetCluster(context.Background(), f.clusterID); err != nil {
		t.Errorf("cluster gone after a refused DELETE: %v", err)
	}
}

// TestResetValidationRoute: the swagger's
// PATCH .../hosts/{host_id}/actions/reset-validation/{validation_id}
// answers the host (it was 404); a validation without a stored result is a
// 400 naming it.
func TestResetValidationRoute(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	r := h.user(t, "PATCH", f.path(hostPat+"/actions/reset-validation/sufficient-installation-disk-speed"), "")
	if r.status != http.StatusOK {
		t.Fatalf("reset the disk speed validation = %d %s, want 200", r.status, r.body)
	}
	var host struct{ ID string }
	if err := json.Unmarshal(r.body, &host); err != nil || host.ID != f.hostID {
		t.Errorf("answer %s: want the host %s (%v)", r.body, f.hostID, err)
	}
	r = h.user(t, "PATCH", f.path(hostPat+"/actions/reset-validation/has-min-cpu-cores"), "")
	if r.status != http.StatusBadRequest {
		t.Fatalf("reset has-min-cpu-cores = %d %s, want 400", r.status, r.body)
	}
	if reason := checkErrorBody(t, r.status, r.header, r.body); !strings.Contains(reason, `"has-min-cpu-cores" cannot be reset`) {
		t.Errorf("reason %q, want it to name the validation", reason)
	}
}
