package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/auth"
)

// routeSpec is how the matrix calls a route once a token is accepted: the
// body to send and the status the handler gives on a fresh fixture (a
// cluster that is not ready, a host that is discovering).
type routeSpec struct {
	body  func(f fixture) string
	query string
	ok    int
}

func noBody(fixture) string { return "" }

func constBody(s string) func(fixture) string { return func(fixture) string { return s } }

// specs covers every route of api.Routes(), keyed "METHOD pattern";
// TestAuthMatrix fails on a route that has none.
var specs = map[string]routeSpec{
	"GET /health":                 {noBody, "", http.StatusOK},
	"GET " + api.Base + "/health": {noBody, "", http.StatusOK},

	"POST " + api.Base + "/clusters": {constBody(`{"name":"other","openshift_version":"4.18","pull_secret":` + jsonString(pullSecret) + `}`), "", http.StatusCreated},
	"GET " + api.Base + "/clusters":  {noBody, "", http.StatusOK},
	"GET " + clusterPat:              {noBody, "", http.StatusOK},
	"PATCH " + clusterPat:            {constBody(`{"name":"renamed"}`), "", http.StatusCreated},
	"DELETE " + clusterPat:           {noBody, "", http.StatusNoContent},
	"GET " + clusterPat + "/hosts":   {noBody, "", http.StatusOK},
	// The fixture's cluster is insufficient: the actions are refused by the
	// state machine, after authentication.
	"POST " + clusterPat + "/actions/install": {noBody, "", http.StatusConflict},
	"POST " + clusterPat + "/actions/cancel":  {noBody, "", http.StatusConflict},
	"POST " + clusterPat + "/actions/reset":   {noBody, "", http.StatusConflict},
	"PATCH " + clusterPat + "/install-config": {constBody(`"{\"fips\":true}"`), "", http.StatusCreated},

	"POST " + clusterPat + "/manifests":      {constBody(`{"folder":"openshift","file_name":"extra.yaml","content":"` + fixtureManifestB64 + `"}`), "", http.StatusCreated},
	"GET " + clusterPat + "/manifests":       {noBody, "include_system_generated=true", http.StatusOK},
	"PATCH " + clusterPat + "/manifests":     {constBody(`{"folder":"manifests","file_name":"fixture.yaml","updated_content":"YjogMgo="}`), "", http.StatusOK},
	"DELETE " + clusterPat + "/manifests":    {noBody, "folder=manifests&file_name=fixture.yaml", http.StatusOK},
	"GET " + clusterPat + "/manifests/files": {noBody, "folder=manifests&file_name=fixture.yaml", http.StatusOK},

	"POST " + api.Base + "/infra-envs": {constBody(`{"name":"other","pull_secret":` + jsonString(pullSecret) + `}`), "", http.StatusCreated},
	"GET " + api.Base + "/infra-envs":  {noBody, "", http.StatusOK},
	"GET " + infraEnvPat:               {noBody, "", http.StatusOK},
	"PATCH " + infraEnvPat:             {constBody(`{"ssh_authorized_key":"ssh-ed25519 AAAA test"}`), "", http.StatusCreated},
	"DELETE " + infraEnvPat:            {noBody, "", http.StatusConflict}, // it has a host

	"POST " + infraEnvPat + "/hosts":    {func(fixture) string { return `{"host_id":"` + uuid.NewString() + `"}` }, "", http.StatusCreated},
	"GET " + infraEnvPat + "/hosts":     {noBody, "", http.StatusOK},
	"GET " + hostPat:                    {noBody, "", http.StatusOK},
	"PATCH " + hostPat:                  {constBody(`{"host_name":"node-1"}`), "", http.StatusCreated},
	"DELETE " + hostPat:                 {noBody, "", http.StatusNoContent},
	"GET " + hostPat + "/instructions":  {noBody, "timestamp=1700000000", http.StatusOK},
	"POST " + hostPat + "/instructions": {func(fixture) string { return inventoryReply() }, "", http.StatusNoContent},
	"PUT " + hostPat + "/progress":      {constBody(`{"current_stage":"Installing"}`), "", http.StatusConflict}, // host is discovering
	"PUT " + hostPat + "/logs-progress": {constBody(`{"logs_state":"requested"}`), "", http.StatusNoContent},
	// The matrix sends JSON: the upload is refused after authentication,
	// for not being multipart. Nothing is uploaded, so nothing downloads.
	"POST " + clusterPat + "/logs": {constBody(`{}`), "logs_type=controller", http.StatusBadRequest},
	"GET " + clusterPat + "/logs":  {noBody, "", http.StatusNotFound},

	"GET " + api.Base + "/events": {noBody, "order=descending", http.StatusOK},

	// Nothing is prepared on the fixture: the downloads have no file yet, the
	// credentials are not there yet and completion is refused by the
	// state machine, each after authentication.
	"GET " + clusterPat + "/downloads/files":                {noBody, "file_name=install-config.yaml", http.StatusConflict},
	"GET " + clusterPat + "/downloads/credentials":          {noBody, "file_name=kubeconfig", http.StatusConflict},
	"GET " + clusterPat + "/credentials":                    {noBody, "", http.StatusConflict},
	"POST " + clusterPat + "/actions/complete-installation": {constBody(`{"is_success":true}`), "", http.StatusConflict},
	// The swagger spells this one infra-env, singular.
	"GET " + api.Base + "/infra-env/{infra_env_id}/hosts/{host_id}/downloads/ignition": {noBody, "", http.StatusConflict},
}

const (
	clusterPat  = api.Base + "/clusters/{cluster_id}"
	infraEnvPat = api.Base + "/infra-envs/{infra_env_id}"
	hostPat     = infraEnvPat + "/hosts/{host_id}"
)

func jsonString(s string) string { return fmt.Sprintf("%q", s) }

// credential is one header of a request and what the model knows of its
// token: whether it verifies, and its auth_scheme claim.
type credential struct {
	header, value string
	valid         bool
	claim         auth.Scheme
}

type authCase struct {
	name  string
	creds []credential
}

// tokenSet holds every token the matrix sends.
type tokenSet struct {
	valid                     map[auth.Scheme]string
	otherKey, expired         map[auth.Scheme]string
	algNone, hs256, noClaim   map[auth.Scheme]string
	unknownClaim, futureValid map[auth.Scheme]string
}

func newTokenSet(t *testing.T, h *harness) tokenSet {
	t.Helper()
	other, err := auth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := auth.MarshalPublicKey(&h.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	ts := tokenSet{valid: h.tokens, otherKey: map[auth.Scheme]string{}, expired: map[auth.Scheme]string{},
		algNone: map[auth.Scheme]string{}, hs256: map[auth.Scheme]string{}, noClaim: map[auth.Scheme]string{},
		unknownClaim: map[auth.Scheme]string{}, futureValid: map[auth.Scheme]string{}}
	for _, s := range auth.Schemes {
		ts.otherKey[s] = signToken(t, other, s, time.Time{})
		ts.expired[s] = signToken(t, h.key, s, time.Now().Add(-time.Hour))
		ts.futureValid[s] = signToken(t, h.key, s, time.Now().Add(time.Hour))
		claims := jwt.MapClaims{auth.ClaimAuthScheme: string(s)}
		if ts.algNone[s], err = jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType); err != nil {
			t.Fatal(err)
		}
		// The classic key-confusion attack: HMAC keyed with the public key.
		if ts.hs256[s], err = jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(pub); err != nil {
			t.Fatal(err)
		}
	}
	if ts.noClaim[auth.User], err = jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"sub": "x"}).SignedString(h.key); err != nil {
		t.Fatal(err)
	}
	if ts.unknownClaim[auth.User], err = jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{auth.ClaimAuthScheme: "adminAuth"}).SignedString(h.key); err != nil {
		t.Fatal(err)
	}
	return ts
}

// casesFor generates the matrix row of a route from its schemes: each
// valid token in its own header, bad tokens in the first scheme's header,
// every other token in each header the route accepts, "Bearer " tokens.
func casesFor(rt api.Route, ts tokenSet) []authCase {
	first := auth.User // a route without schemes gets bad tokens here: none is looked at
	if len(rt.Schemes) > 0 {
		first = rt.Schemes[0]
	}
	h := first.Header()
	cs := []authCase{{name: "none"}}
	for _, s := range auth.Schemes {
		cs = append(cs, authCase{name: string(s), creds: []credential{{s.Header(), ts.valid[s], true, s}}})
	}
	cs = append(cs,
		authCase{"bad-signature", []credential{{h, ts.otherKey[first], false, first}}},
		authCase{"expired", []credential{{h, ts.expired[first], false, first}}},
		authCase{"alg-none", []credential{{h, ts.algNone[first], false, first}}},
		authCase{"hs256-public-key", []credential{{h, ts.hs256[first], false, first}}},
		authCase{"no-claim", []credential{{h, ts.noClaim[auth.User], false, ""}}},
		authCase{"garbage", []credential{{h, "not.a.jwt", false, ""}}},
		authCase{"unknown-claim", []credential{{h, ts.unknownClaim[auth.User], true, "adminAuth"}}},
		authCase{"unexpired-" + string(first), []credential{{h, ts.futureValid[first], true, first}}},
	)
	for _, s := range rt.Schemes {
		cs = append(cs, authCase{"bearer-" + string(s), []credential{{s.Header(), "Bearer " + ts.valid[s], true, s}}})
		for _, o := range auth.Schemes {
			if o != s {
				cs = append(cs, authCase{fmt.Sprintf("%s-in-%s", o, s.Header()), []credential{{s.Header(), ts.valid[o], true, o}}})
			}
		}
	}
	// Two headers: the route's schemes are tried in order and the first
	// present header decides, so a wrong token there is not rescued.
	if len(rt.Schemes) > 1 {
		s0, s1 := rt.Schemes[0], rt.Schemes[1]
		cs = append(cs,
			authCase{"wrong-first-right-second", []credential{{s0.Header(), ts.valid[s1], true, s1}, {s1.Header(), ts.valid[s1], true, s1}}},
			authCase{"expired-first-right-second", []credential{{s0.Header(), ts.expired[s0], false, s0}, {s1.Header(), ts.valid[s1], true, s1}}},
		)
	}
	return cs
}

// allowed is 0; otherwise the status auth must refuse with.
const allowed = 0

// expect models assisted-service's decision (auth.Authorize's doc,
// reference/assisted-service.md §11): the route's schemes in order, the
// first whose header is present decides; unverifiable is 401, a claim for
// another scheme 403; no header of the route's is 401.
func expect(rt api.Route, creds []credential) int {
	if rt.Schemes == nil {
		return allowed
	}
	for _, s := range rt.Schemes {
		for _, c := range creds {
			if !strings.EqualFold(c.header, s.Header()) {
				continue
			}
			switch {
			case !c.valid:
				return http.StatusUnauthorized
			case c.claim != s:
				return http.StatusForbidden
			}
			return allowed
		}
	}
	return http.StatusUnauthorized
}

func TestAuthMatrix(t *testing.T) {
	h := newHarness(t)
	ts := newTokenSet(t, h)
	shared := h.newFixture(t)
	routes := api.Routes()
	seen := map[string]bool{}
	cells, refused, passed := 0, 0, 0
	for _, rt := range routes {
		key := rt.Method + " " + rt.Pattern
		seen[key] = true
		spec, ok := specs[key]
		if !ok {
			t.Errorf("route %s (%s) has no spec in the matrix", key, rt.Operation)
			continue
		}
		for _, c := range casesFor(rt, ts) {
			cells++
			want := expect(rt, c.creds)
			if want == allowed {
				passed++
			} else {
				refused++
			}
			t.Run(rt.Operation+"/"+rt.Method+"/"+c.name, func(t *testing.T) {
				f := shared
				// An accepted call reaches the handler: give a state-changing
				// one its own objects, so cells do not depend on each other.
				if want == allowed && rt.Method != "GET" {
					f = h.newFixture(t)
				}
				path := f.path(rt.Pattern)
				if spec.query != "" {
					path += "?" + spec.query
				}
				hdr := map[string]string{}
				for _, cr := range c.creds {
					hdr[cr.header] = cr.value
				}
				r := h.do(t, rt.Method, path, spec.body(f), hdr)
				switch want {
				case allowed:
					if r.status != spec.ok {
						t.Errorf("%s %s with %s = %d %s, want %d", rt.Method, rt.Pattern, c.name, r.status, r.body, spec.ok)
					}
				default:
					if r.status != want {
						t.Fatalf("%s %s with %s = %d %s, want %d", rt.Method, rt.Pattern, c.name, r.status, r.body, want)
					}
					checkInfraErrorBody(t, r.status, r.header, r.body)
				}
			})
		}
	}
	for key := range specs {
		if !seen[key] {
			t.Errorf("spec %s names no route of api.Routes()", key)
		}
	}
	t.Logf("auth matrix: %d routes, %d cells (%d refused, %d accepted)", len(routes), cells, refused, passed)
}

// TestAuthPinned pins the schemes of representative routes by hand, from
// assisted-service's swagger (reference/assisted-service-swagger.yaml), so
// a wrong Schemes entry in routes.go fails here even though TestAuthMatrix
// derives its expectations from it.
func TestAuthPinned(t *testing.T) {
	h := newHarness(t)
	ts := newTokenSet(t, h)
	f := h.newFixture(t)
	const ok, u, fb = allowed, http.StatusUnauthorized, http.StatusForbidden
	// The columns, each a fixed request whatever the route.
	cols := []struct {
		name      string
		hdr, tok  string
		tokScheme auth.Scheme
	}{
		{"none", "", "", ""},
		{"agent", "X-Secret-Key", "valid", auth.Agent},
		{"user", "Authorization", "valid", auth.User},
		{"watcher", "Watcher-Authorization", "valid", auth.Watcher},
		{"user-in-X-Secret-Key", "X-Secret-Key", "valid", auth.User},
		{"watcher-in-Authorization", "Authorization", "valid", auth.Watcher},
		{"agent-in-Authorization", "Authorization", "valid", auth.Agent},
		{"agent-in-Watcher-Authorization", "Watcher-Authorization", "valid", auth.Agent},
		{"expired-user-in-Authorization", "Authorization", "expired", auth.User},
		{"other-key-agent-in-X-Secret-Key", "X-Secret-Key", "other", auth.Agent},
	}
	rows := []struct {
		method, pattern string
		want            [10]int
	}{
		{"GET", "/health", [10]int{ok, ok, ok, ok, ok, ok, ok, ok, ok, ok}},
		{"POST", api.Base + "/clusters", [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		{"GET", api.Base + "/clusters", [10]int{u, u, ok, ok, u, fb, fb, fb, u, u}},
		{"GET", clusterPat, [10]int{u, ok, ok, ok, fb, fb, fb, fb, u, u}},
		{"GET", clusterPat + "/hosts", [10]int{u, ok, ok, u, fb, fb, fb, u, u, u}},
		{"GET", infraEnvPat, [10]int{u, ok, ok, u, fb, fb, fb, u, u, u}},
		{"POST", infraEnvPat + "/hosts", [10]int{u, ok, u, u, fb, u, u, u, u, u}},
		{"GET", hostPat, [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		// Auth runs before the handler: once "user" has deleted the host,
		// the columns after it are still refused with 401/403, not 404.
		{"DELETE", hostPat, [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		{"POST", hostPat + "/instructions", [10]int{u, ok, u, u, fb, u, u, u, u, u}},
		{"PUT", hostPat + "/progress", [10]int{u, ok, u, u, fb, u, u, u, u, u}},
		// Log uploads are the agent's alone, downloads the user's.
		{"PUT", hostPat + "/logs-progress", [10]int{u, ok, u, u, fb, u, u, u, u, u}},
		{"POST", clusterPat + "/logs", [10]int{u, ok, u, u, fb, u, u, u, u, u}},
		{"GET", clusterPat + "/logs", [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		{"GET", api.Base + "/events", [10]int{u, u, ok, ok, u, fb, fb, fb, u, u}},
		// The install-config and manifests routes are userAuth only: not
		// even the watcher reads them.
		{"PATCH", clusterPat + "/install-config", [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		{"GET", clusterPat + "/manifests", [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		{"GET", clusterPat + "/manifests/files", [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
		{"DELETE", clusterPat + "/manifests", [10]int{u, u, ok, u, u, fb, fb, u, u, u}},
	}
	for _, row := range rows {
		key := row.method + " " + row.pattern
		spec, found := specs[key]
		if !found {
			t.Fatalf("no spec for %s", key)
		}
		inRoutes := false
		for _, rt := range api.Routes() {
			inRoutes = inRoutes || rt.Method == row.method && rt.Pattern == row.pattern
		}
		if !inRoutes {
			t.Errorf("api.Routes() lacks %s", key)
			continue
		}
		for i, col := range cols {
			t.Run(key+"/"+col.name, func(t *testing.T) {
				hdr := map[string]string{}
				switch col.tok {
				case "valid":
					hdr[col.hdr] = ts.valid[col.tokScheme]
				case "expired":
					hdr[col.hdr] = ts.expired[col.tokScheme]
				case "other":
					hdr[col.hdr] = ts.otherKey[col.tokScheme]
				}
				path := f.path(row.pattern)
				if spec.query != "" {
					path += "?" + spec.query
				}
				r := h.do(t, row.method, path, spec.body(f), hdr)
				want := row.want[i]
				switch {
				case want == allowed && (r.status == u || r.status == fb):
					t.Errorf("%s with %s = %d %s, want it accepted", key, col.name, r.status, r.body)
				case want != allowed && r.status != want:
					t.Errorf("%s with %s = %d %s, want %d", key, col.name, r.status, r.body, want)
				}
			})
		}
	}
	if r := h.user(t, "GET", f.path(hostPat), ""); r.status != http.StatusNotFound {
		t.Errorf("GET host after the user deleted it = %d %s, want 404", r.status, r.body)
	}
}
