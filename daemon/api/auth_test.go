package api_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
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

	"POST " + api.Base + "/clusters":        {constBody(`{"name":"other","openshift_version":"4.18","pull_secret":` + jsonString(pullSecret) + `}`), "", http.StatusCreated},
	"GET " + api.Base + "/clusters":         {noBody, "", http.StatusOK},
	"POST " + api.Base + "/clusters/import": {constBody(`{"name":"ostest","api_vip_dnsname":"api.ostest.example.com","openshift_cluster_id":"` + importedOCPID + `"}`), "", http.StatusCreated},
	"GET " + clusterPat:                     {noBody, "", http.StatusOK},
	"PATCH " + clusterPat:                   {constBody(`{"name":"renamed"}`), "", http.StatusCreated},
	"DELETE " + clusterPat:                  {noBody, "", http.StatusNoContent},
	"GET " + clusterPat + "/hosts":          {noBody, "", http.StatusOK},
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

	"POST " + infraEnvPat + "/hosts": {func(fixture) string { return `{"host_id":"` + uuid.NewString() + `"}` }, "", http.StatusCreated},
	"GET " + infraEnvPat + "/hosts":  {noBody, "", http.StatusOK},
	"GET " + hostPat:                 {noBody, "", http.StatusOK},
	"PATCH " + hostPat:               {constBody(`{"host_name":"node-1"}`), "", http.StatusCreated},
	"DELETE " + hostPat:              {noBody, "", http.StatusNoContent},
	// The pattern's {validation_id} is sent as it is: no validation of
	// that name can be reset, refused after authentication.
	"PATCH " + hostPat + "/actions/reset-validation/{validation_id}": {noBody, "", http.StatusBadRequest},
	"GET " + hostPat + "/instructions":                               {noBody, "timestamp=1700000000", http.StatusOK},
	// The fixture's host is a day-1 host: installing it alone is refused
	// after authentication.
	"POST " + hostPat + "/actions/install": {noBody, "", http.StatusConflict},
	"POST " + hostPat + "/instructions":    {func(fixture) string { return inventoryReply() }, "", http.StatusNoContent},
	"PUT " + hostPat + "/progress":         {constBody(`{"current_stage":"Installing"}`), "", http.StatusConflict}, // host is discovering
	"PUT " + hostPat + "/logs-progress":    {constBody(`{"logs_state":"requested"}`), "", http.StatusNoContent},
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
	// importedOCPID is the OpenShift cluster id the tests import.
	importedOCPID = "1b5ba46b-7e56-47b1-a326-a9eebddfb38c"
	clusterPat    = api.Base + "/clusters/{cluster_id}"
	infraEnvPat   = api.Base + "/infra-envs/{infra_env_id}"
	hostPat       = infraEnvPat + "/hosts/{host_id}"
)

func jsonString(s string) string { return fmt.Sprintf("%q", s) }

// credential is one header of a request and what the model knows of its
// token: whether it verifies, and its auth_scheme claim.
type credential struct {
	header, value string
	valid         bool
	claim         auth.Scheme
}

// authCase is one column of the matrix: the headers sent and, when not
// empty, a query string carrying a token (swagger's urlAuth, api_key).
type authCase struct {
	name  string
	creds []credential
	query string
}

// tokenSet holds every token the matrix sends. bad are tokens that must
// not verify, by name, each made for every scheme (its claim is that
// scheme): the model expects 401 for each wherever it is looked at.
type tokenSet struct {
	valid, expired, futureValid map[auth.Scheme]string
	bad                         map[string]map[auth.Scheme]string
	noClaim, unknownClaim       string
}

// badTokenKinds are the names of tokenSet.bad, in the order the matrix
// sends them.
var badTokenKinds = []string{
	"other-key", "expired", "not-yet-valid", "issued-in-future",
	"alg-none", "alg-none-with-signature", "hs256-public-key-pem", "hs256-public-key-base64",
	"rs256-header-es256-signature", "es384-header-es256-signature",
	"tampered-claims", "no-signature", "exp-not-a-number",
	"bearer-prefix", "basic-scheme", "garbage", "old-infra-env-token",
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
	es256 := func(claims jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(h.key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	now := time.Now()
	ts := tokenSet{valid: h.tokens, expired: map[auth.Scheme]string{}, futureValid: map[auth.Scheme]string{},
		bad: map[string]map[auth.Scheme]string{}}
	for _, k := range badTokenKinds {
		ts.bad[k] = map[auth.Scheme]string{}
	}
	for _, s := range auth.Schemes {
		claims := jwt.MapClaims{auth.ClaimAuthScheme: string(s)}
		ts.expired[s] = signToken(t, h.key, s, now.Add(-time.Hour))
		ts.futureValid[s] = signToken(t, h.key, s, now.Add(time.Hour))
		b := func(kind, tok string) { ts.bad[kind][s] = tok }
		b("other-key", signToken(t, other, s, time.Time{}))
		b("expired", ts.expired[s])
		b("not-yet-valid", es256(jwt.MapClaims{auth.ClaimAuthScheme: string(s), "nbf": now.Add(time.Hour).Unix()}))
		b("issued-in-future", es256(jwt.MapClaims{auth.ClaimAuthScheme: string(s), "iat": now.Add(time.Hour).Unix()}))
		none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		b("alg-none", none)
		// alg none, but with the signature of a real token kept.
		b("alg-none-with-signature", none+segment(ts.valid[s], 2))
		// The classic key-confusion attack: HMAC keyed with the public
		// key, as PEM and as the base64 of PEM that EC_PUBLIC_KEY_PEM
		// carries on the hosts.
		for kind, secret := range map[string][]byte{
			"hs256-public-key-pem":    pub,
			"hs256-public-key-base64": []byte(base64.StdEncoding.EncodeToString(pub)),
		} {
			tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
			if err != nil {
				t.Fatal(err)
			}
			b(kind, tok)
		}
		// A good ES256 signature under a header naming another algorithm.
		b("rs256-header-es256-signature", withHeader(ts.valid[s], `{"alg":"RS256","typ":"JWT"}`))
		b("es384-header-es256-signature", withHeader(ts.valid[s], `{"alg":"ES384","typ":"JWT"}`))
		// The claims of this scheme under the signature of another
		// scheme's token.
		donor := auth.Watcher
		if s == auth.Watcher {
			donor = auth.Agent
		}
		b("tampered-claims", segment(ts.valid[s], 0)+"."+segment(ts.valid[s], 1)+"."+segment(ts.valid[donor], 2))
		b("no-signature", segment(ts.valid[s], 0)+"."+segment(ts.valid[s], 1)+".")
		b("exp-not-a-number", es256(jwt.MapClaims{auth.ClaimAuthScheme: string(s), "exp": "never"}))
		// assisted-service takes raw API keys: an HTTP auth scheme in
		// front makes the value no token.
		b("bearer-prefix", "Bearer "+ts.valid[s])
		b("basic-scheme", "Basic "+base64.StdEncoding.EncodeToString([]byte("kubeadmin:"+ts.valid[s])))
		b("garbage", "not.a.jwt")
		// The single token of older installers: claim infra_env_id, no
		// auth_scheme.
		b("old-infra-env-token", es256(jwt.MapClaims{"infra_env_id": uuid.NewString()}))
	}
	ts.noClaim = es256(jwt.MapClaims{"sub": "x"})
	ts.unknownClaim = es256(jwt.MapClaims{auth.ClaimAuthScheme: "adminAuth"})
	return ts
}

// segment is the i-th dot-separated part of a JWT ("" past the end).
func segment(tok string, i int) string {
	if parts := strings.Split(tok, "."); i < len(parts) {
		return parts[i]
	}
	return ""
}

// withHeader replaces a JWT's header with hdr (JSON), keeping the claims
// and the signature.
func withHeader(tok, hdr string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(hdr)) + "." + segment(tok, 1) + "." + segment(tok, 2)
}

// casesFor generates the matrix row of a route from its schemes: each
// valid token in its own header, every bad token in the first scheme's
// header, every other token in each header the route accepts, a token in
// the query or in a header no scheme reads, and two-header combinations.
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
	for _, k := range badTokenKinds {
		cs = append(cs, authCase{name: k, creds: []credential{{h, ts.bad[k][first], false, first}}})
	}
	cs = append(cs,
		authCase{name: "no-claim", creds: []credential{{h, ts.noClaim, false, ""}}},
		authCase{name: "unknown-claim", creds: []credential{{h, ts.unknownClaim, true, "adminAuth"}}},
		authCase{name: "unexpired-" + string(first), creds: []credential{{h, ts.futureValid[first], true, first}}},
		// urlAuth (api_key) is always refused by agent-local auth; a
		// token there is not looked at.
		authCase{name: "token-in-query", query: "api_key=" + ts.valid[first]},
		// Headers no scheme reads.
		authCase{name: "token-in-other-headers", creds: []credential{
			{"X-Auth-Token", ts.valid[first], true, first},
			{"Cookie", "token=" + ts.valid[first], true, first},
			{"Image-Token", ts.valid[first], true, first},
			{"Proxy-Authorization", ts.valid[first], true, first},
		}},
	)
	for _, s := range rt.Schemes {
		for _, o := range auth.Schemes {
			if o != s {
				cs = append(cs, authCase{name: fmt.Sprintf("%s-in-%s", o, s.Header()), creds: []credential{{s.Header(), ts.valid[o], true, o}}})
			}
		}
	}
	// Two headers. The route's schemes are tried in order: a token that
	// does not verify is passed over, the first that verifies decides, so
	// a verified token with the wrong claim is not rescued by a later one.
	if len(rt.Schemes) > 1 {
		s0, s1 := rt.Schemes[0], rt.Schemes[1]
		cs = append(cs,
			authCase{name: "wrong-first-right-second", creds: []credential{{s0.Header(), ts.valid[s1], true, s1}, {s1.Header(), ts.valid[s1], true, s1}}},
			authCase{name: "expired-first-right-second", creds: []credential{{s0.Header(), ts.expired[s0], false, s0}, {s1.Header(), ts.valid[s1], true, s1}}},
			authCase{name: "right-first-expired-second", creds: []credential{{s0.Header(), ts.valid[s0], true, s0}, {s1.Header(), ts.expired[s1], false, s1}}},
			authCase{name: "forged-first-wrong-second", creds: []credential{{s0.Header(), ts.bad["hs256-public-key-pem"][s0], false, s0}, {s1.Header(), ts.valid[s0], true, s0}}},
		)
	}
	return cs
}

// allowed is 0; otherwise the status auth must refuse with.
const allowed = 0

// expect models assisted-service's decision: go-openapi's
// RouteAuthenticators try the route's schemes in order, skip a scheme
// whose header is absent, remember a token that does not verify and go on;
// the first token that verifies decides, and agent-local's authorizer
// wants its auth_scheme claim to name that scheme (403 otherwise). Nothing
// verified is 401, but when none of the route's headers was sent, a valid
// token of another scheme in that scheme's own header is 403: the caller
// is authenticated, not authorized (issue #18). The query is never read
// (urlAuth is refused).
func expect(rt api.Route, c authCase) int {
	if rt.Schemes == nil {
		return allowed
	}
	sent := false
	for _, s := range rt.Schemes {
		for _, cr := range c.creds {
			if !strings.EqualFold(cr.header, s.Header()) {
				continue
			}
			sent = true
			switch {
			case !cr.valid:
				continue
			case cr.claim != s:
				return http.StatusForbidden
			}
			return allowed
		}
	}
	if !sent {
		for _, s := range auth.Schemes {
			for _, cr := range c.creds {
				if strings.EqualFold(cr.header, s.Header()) && cr.valid && cr.claim == s {
					return http.StatusForbidden
				}
			}
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
			want := expect(rt, c)
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
				if q := strings.Trim(spec.query+"&"+c.query, "&"); q != "" {
					path += "?" + q
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
// assisted-service's swagger (openshift/assisted-service swagger.yaml; see TestSwaggerConformance for where it is read), so
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
		{"POST", api.Base + "/clusters", [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		{"GET", api.Base + "/clusters", [10]int{u, fb, ok, ok, u, fb, fb, fb, u, u}},
		{"GET", clusterPat, [10]int{u, ok, ok, ok, fb, fb, fb, fb, u, u}},
		{"GET", clusterPat + "/hosts", [10]int{u, ok, ok, fb, fb, fb, fb, u, u, u}},
		{"GET", infraEnvPat, [10]int{u, ok, ok, fb, fb, fb, fb, u, u, u}},
		{"POST", infraEnvPat + "/hosts", [10]int{u, ok, fb, fb, fb, u, u, u, u, u}},
		{"GET", hostPat, [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		// Auth runs before the handler: once "user" has deleted the host,
		// the columns after it are still refused with 401/403, not 404.
		{"DELETE", hostPat, [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		{"POST", hostPat + "/instructions", [10]int{u, ok, fb, fb, fb, u, u, u, u, u}},
		{"PUT", hostPat + "/progress", [10]int{u, ok, fb, fb, fb, u, u, u, u, u}},
		// Log uploads are the agent's alone, downloads the user's.
		{"PUT", hostPat + "/logs-progress", [10]int{u, ok, fb, fb, fb, u, u, u, u, u}},
		{"POST", clusterPat + "/logs", [10]int{u, ok, fb, fb, fb, u, u, u, u, u}},
		{"GET", clusterPat + "/logs", [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		{"GET", api.Base + "/events", [10]int{u, fb, ok, ok, u, fb, fb, fb, u, u}},
		// The install-config and manifests routes are userAuth only: not
		// even the watcher reads them.
		{"PATCH", clusterPat + "/install-config", [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		{"GET", clusterPat + "/manifests", [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		{"GET", clusterPat + "/manifests/files", [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
		{"DELETE", clusterPat + "/manifests", [10]int{u, fb, ok, fb, u, fb, fb, u, u, u}},
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
					hdr[col.hdr] = ts.bad["other-key"][col.tokScheme]
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

// swaggerSecurity is the security list assisted-service's swagger gives each
// operation this build serves, in the swagger's order (which decides when a
// request sends several headers), copied from
// assisted-service's swagger.yaml (paths under basePath
// /api/assisted-install; an operation without its own list has the
// document's default, userAuth).
var swaggerSecurity = map[string]string{
	"POST /v2/clusters":        "userAuth",
	"POST /v2/clusters/import": "userAuth",
	"POST /v2/infra-envs/{infra_env_id}/hosts/{host_id}/actions/install": "userAuth",
	"GET /v2/clusters":                                                                             "userAuth watcherAuth",
	"GET /v2/clusters/{cluster_id}":                                                                "userAuth agentAuth watcherAuth",
	"PATCH /v2/clusters/{cluster_id}":                                                              "userAuth",
	"DELETE /v2/clusters/{cluster_id}":                                                             "userAuth",
	"GET /v2/clusters/{cluster_id}/hosts":                                                          "userAuth agentAuth",
	"POST /v2/clusters/{cluster_id}/actions/install":                                               "userAuth",
	"POST /v2/clusters/{cluster_id}/actions/cancel":                                                "userAuth",
	"POST /v2/clusters/{cluster_id}/actions/reset":                                                 "userAuth",
	"PATCH /v2/clusters/{cluster_id}/install-config":                                               "userAuth",
	"POST /v2/clusters/{cluster_id}/manifests":                                                     "userAuth",
	"GET /v2/clusters/{cluster_id}/manifests":                                                      "userAuth",
	"PATCH /v2/clusters/{cluster_id}/manifests":                                                    "userAuth",
	"DELETE /v2/clusters/{cluster_id}/manifests":                                                   "userAuth",
	"GET /v2/clusters/{cluster_id}/manifests/files":                                                "userAuth",
	"GET /v2/clusters/{cluster_id}/downloads/files":                                                "userAuth agentAuth urlAuth",
	"GET /v2/clusters/{cluster_id}/downloads/credentials":                                          "userAuth agentAuth",
	"GET /v2/clusters/{cluster_id}/credentials":                                                    "userAuth",
	"POST /v2/clusters/{cluster_id}/actions/complete-installation":                                 "agentAuth",
	"GET /v2/infra-env/{infra_env_id}/hosts/{host_id}/downloads/ignition":                          "userAuth agentAuth",
	"POST /v2/infra-envs":                                                                          "userAuth",
	"GET /v2/infra-envs":                                                                           "userAuth watcherAuth",
	"GET /v2/infra-envs/{infra_env_id}":                                                            "userAuth agentAuth urlAuth imageAuth imageURLAuth",
	"PATCH /v2/infra-envs/{infra_env_id}":                                                          "userAuth",
	"DELETE /v2/infra-envs/{infra_env_id}":                                                         "userAuth",
	"POST /v2/infra-envs/{infra_env_id}/hosts":                                                     "agentAuth",
	"GET /v2/infra-envs/{infra_env_id}/hosts":                                                      "userAuth agentAuth",
	"GET /v2/infra-envs/{infra_env_id}/hosts/{host_id}":                                            "userAuth",
	"PATCH /v2/infra-envs/{infra_env_id}/hosts/{host_id}":                                          "userAuth",
	"DELETE /v2/infra-envs/{infra_env_id}/hosts/{host_id}":                                         "userAuth",
	"PATCH /v2/infra-envs/{infra_env_id}/hosts/{host_id}/actions/reset-validation/{validation_id}": "userAuth",
	"GET /v2/infra-envs/{infra_env_id}/hosts/{host_id}/instructions":                               "agentAuth",
	"POST /v2/infra-envs/{infra_env_id}/hosts/{host_id}/instructions":                              "agentAuth",
	"PUT /v2/infra-envs/{infra_env_id}/hosts/{host_id}/progress":                                   "agentAuth",
	"PUT /v2/infra-envs/{infra_env_id}/hosts/{host_id}/logs-progress":                              "agentAuth",
	"POST /v2/clusters/{cluster_id}/logs":                                                          "agentAuth",
	"GET /v2/clusters/{cluster_id}/logs":                                                           "userAuth urlAuth",
	"GET /v2/events":                                                                               "userAuth urlAuth watcherAuth",
}

// TestRouteSchemesFromSwagger checks every route's schemes against the
// swagger: the same schemes in the same order, less urlAuth, imageAuth and
// imageURLAuth, which agent-installer-local always refuses. The only routes
// without authentication are the health checks, which the swagger does not
// list.
func TestRouteSchemesFromSwagger(t *testing.T) {
	refused := map[string]bool{"urlAuth": true, "imageAuth": true, "imageURLAuth": true}
	seen := map[string]bool{}
	for _, rt := range api.Routes() {
		key := rt.Method + " " + strings.TrimPrefix(rt.Pattern, "/api/assisted-install")
		sec, ok := swaggerSecurity[key]
		if !ok {
			if rt.Schemes != nil || rt.Operation != "health" {
				t.Errorf("route %s (%s, schemes %v) is not in the swagger table; only health routes may be", key, rt.Operation, rt.Schemes)
			}
			continue
		}
		seen[key] = true
		var want []auth.Scheme
		for _, s := range strings.Fields(sec) {
			if !refused[s] {
				want = append(want, auth.Scheme(s))
			}
		}
		if !slices.Equal(rt.Schemes, want) {
			t.Errorf("%s (%s) schemes = %v, want %v (swagger: %s)", key, rt.Operation, rt.Schemes, want, sec)
		}
		if len(rt.Schemes) == 0 {
			t.Errorf("%s (%s) has no scheme: every swagger operation is authenticated", key, rt.Operation)
		}
	}
	for key := range swaggerSecurity {
		if !seen[key] {
			t.Errorf("swagger table names %s, which api.Routes() does not serve", key)
		}
	}
}
