package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/wire"
)

// The fuzz targets drive the real handler of a running service (store,
// service, auth) in-process with httptest, one target per route that
// decodes a body or a query, plus FuzzPathParams for the path and headers
// of every route. The properties:
//
//   - never a 5xx, always a JSON body (none for 204; a download's bytes
//     for the file routes), an error body in assisted-service's shape whose
//     reason says something and leaks nothing of the database;
//   - afterwards both /health and a read that takes the model lock still
//     answered;
//   - a refused request (4xx) changes nothing a client can read;
//   - an accepted one reached the store: a service started again on the
//     same store shows the same cluster, infra-env, hosts and manifests.
//
// Seeds are valid requests; edge cases and regression inputs live in
// testdata/fuzz/FuzzXxx.

// fuzzTarget is one route under fuzz, on a service with a fixture whose
// host has sent its inventory. After an input that failed, the next input
// gets a new service: a panic under the service's lock leaves it wedged,
// and the minimizer must judge each candidate on a live service.
type fuzzTarget struct {
	scheme  auth.Scheme
	h       *harness
	fx      fixture
	hdr     map[string]string
	broken  bool
	closers []func()
	// emptyOK: the route's success has no body (the swagger gives its 2xx
	// no schema), so an empty 2xx is right.
	emptyOK bool
	// fileOK: the route's success is a download, not JSON.
	fileOK bool
	// fresh: after an accepted input the next one gets a new service (a
	// route whose success uses the fixture up, such as a deletion).
	fresh bool
}

// fuzzTimeout is how long one request may take before the service counts
// as wedged. Requests here take milliseconds.
const fuzzTimeout = 5 * time.Second

func newFuzzTarget(f *testing.F, scheme auth.Scheme) *fuzzTarget {
	f.Helper()
	ft := &fuzzTarget{scheme: scheme}
	f.Cleanup(func() {
		for i := len(ft.closers) - 1; i >= 0; i-- {
			ft.closers[i]()
		}
	})
	if err := ft.start(ft.tempDir(f)); err != nil {
		f.Fatal(err)
	}
	return ft
}

// tempDir makes a directory for a service's store, in memory (/dev/shm)
// when the machine has one: the store fsyncs every commit, and on a busy
// disk that costs the campaign most of its inputs.
func (ft *fuzzTarget) tempDir(tb testing.TB) string {
	tb.Helper()
	parent := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		parent = "/dev/shm"
	}
	dir, err := os.MkdirTemp(parent, "nodezero-api-fuzz-")
	if err != nil {
		tb.Fatal(err)
	}
	ft.closers = append(ft.closers, func() { os.RemoveAll(dir) })
	return dir
}

// fuzzNow is the fuzzed service's clock, which stands still: what a
// restart evaluates again comes out the same (some validation messages
// carry the service's time), and the fixture's host never times out
// however long a campaign runs.
func fuzzNow() time.Time { return time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC) }

// start replaces the target's service with a new one whose store is in dir.
func (ft *fuzzTarget) start(dir string) error {
	h, err := startHarness(dir)
	if err != nil {
		return err
	}
	ft.closers = append(ft.closers, h.close)
	ft.h = h
	if err := ft.restart(); err != nil { // on fuzzNow
		return err
	}
	// The fixture is made in-process too: h.srv serves the first service.
	h.client, err = wire.NewClient("http://fuzz.invalid", wire.WithAgentToken(h.tokens[auth.Agent]),
		wire.WithUserToken(h.tokens[auth.User]), wire.WithHTTPClient(&http.Client{Transport: inProcess{h}}))
	if err != nil {
		return err
	}
	fx, err := h.makeFixture()
	if err != nil {
		return err
	}
	r := h.serve("POST", fx.path(hostPat+"/instructions"), "", []byte(inventoryReply()), map[string]string{"X-Secret-Key": h.tokens[auth.Agent]})
	if r.Code != http.StatusNoContent {
		return fmt.Errorf("post inventory = %d %s, want 204", r.Code, r.Body)
	}
	ft.h, ft.fx, ft.hdr, ft.broken = h, fx, map[string]string{ft.scheme.Header(): h.tokens[ft.scheme]}, false
	return nil
}

// restart closes the service and starts another on the same store, as a
// daemon restart does: the new one knows only what was committed.
func (ft *fuzzTarget) restart() error {
	h := ft.h
	if err := h.svc.Close(); err != nil {
		return err
	}
	svc, err := assisted.New(assisted.Config{Store: h.store, Now: fuzzNow, MonitorInterval: -1, MaxWait: time.Millisecond})
	if err != nil {
		return fmt.Errorf("assisted.New on the same store: %w", err)
	}
	ft.closers = append(ft.closers, func() { svc.Close() })
	h.svc = svc
	// Only serve() uses the new handler; h.srv keeps the old one, which
	// nothing reaches during fuzzing.
	h.handler = api.New(api.Config{Service: svc, Verifier: auth.NewVerifier(&h.key.PublicKey, nil), LogsDir: h.logsDir, MaxLogsSize: testMaxLogsSize})
	return nil
}

// inProcess is a RoundTripper that serves each request with the
// harness's current handler.
type inProcess struct{ h *harness }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	p.h.handler.ServeHTTP(rec, req)
	return rec.Result(), nil
}

// within serves one request, or reports that none came within fuzzTimeout.
// A request that never returns leaves its goroutine blocked: the service
// it is stuck in is replaced.
func (ft *fuzzTarget) within(method, path, rawQuery string, body []byte, hdr map[string]string) (*httptest.ResponseRecorder, bool) {
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- ft.h.serve(method, path, rawQuery, body, hdr) }()
	select {
	case rec := <-done:
		return rec, true
	case <-time.After(fuzzTimeout):
		return nil, false
	}
}

// snapshot is what a user reads of the fixture: its cluster, infra-env,
// hosts and manifests, as the API serves them. With checkIn false, the
// facts an agent's check-in changes and the service keeps in memory only
// are left out (takeSteps: checked_in_at, the agent's timestamp and
// version; a restart counts every host as checked in at its start).
func (ft *fuzzTarget) snapshot(t *testing.T, checkIn bool) string {
	t.Helper()
	user := map[string]string{"Authorization": ft.h.tokens[auth.User]}
	var b strings.Builder
	for _, p := range []string{clusterPat, infraEnvPat, infraEnvPat + "/hosts", clusterPat + "/manifests"} {
		rec, ok := ft.within("GET", ft.fx.path(p), "", nil, user)
		if !ok {
			ft.broken = true
			t.Fatalf("GET %s: no answer within %v: the input wedged the service", p, fuzzTimeout)
		}
		if rec.Code != http.StatusOK {
			ft.broken = true
			t.Fatalf("GET %s = %d %s, want 200", p, rec.Code, rec.Body)
		}
		body := rec.Body.Bytes()
		if !checkIn {
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatalf("GET %s: %v", p, err)
			}
			dropKeys(v, "checked_in_at", "timestamp", "discovery_agent_version")
			body, _ = json.MarshalIndent(v, "", " ")
		}
		fmt.Fprintf(&b, "%s\n%s\n", p, body)
	}
	return b.String()
}

// dropKeys deletes keys from every object in the JSON value v.
func dropKeys(v any, keys ...string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range keys {
			delete(x, k)
		}
		for _, e := range x {
			dropKeys(e, keys...)
		}
	case []any:
		for _, e := range x {
			dropKeys(e, keys...)
		}
	}
}

// run sends one fuzzed request with the target's token and checks the
// properties.
func (ft *fuzzTarget) run(t *testing.T, method, pattern, rawQuery string, body []byte) {
	t.Helper()
	ft.runWith(t, method, pattern, rawQuery, body, nil)
}

// runWith is run with extra headers (the body's Content-Type, an agent
// version) and a pattern whose parameters not filled from the fixture are
// already in it.
func (ft *fuzzTarget) runWith(t *testing.T, method, pattern, rawQuery string, body []byte, extra map[string]string) {
	t.Helper()
	if ft.broken {
		if err := ft.start(ft.tempDir(t)); err != nil {
			t.Fatalf("restart the service after a failed input: %v", err)
		}
	}
	hdr := maps.Clone(ft.hdr)
	maps.Copy(hdr, extra)
	before := ft.snapshot(t, true)
	rec, ok := ft.within(method, ft.fx.path(pattern), rawQuery, body, hdr)
	if !ok {
		ft.broken = true
		t.Fatalf("no answer within %v", fuzzTimeout)
	}
	if rec.Code >= 500 {
		ft.broken = true // a panic may have left the model locked
	}
	checkFuzzResponse(t, rec, ft.emptyOK, ft.fileOK)
	checkNoLeak(t, rec, pattern, rawQuery, string(body), fmt.Sprint(extra))
	// The daemon still answers: /health, and reads that take the model lock.
	if hr, ok := ft.within("GET", "/health", "", nil, nil); !ok || hr.Code != http.StatusOK {
		ft.broken = true
		t.Fatalf("GET /health after the input: answered %v, want 200", ok)
	}
	if rec.Code >= 400 {
		// update's contract (txn.go): fn checks its input before it
		// changes anything.
		if after := ft.snapshot(t, true); after != before {
			ft.broken = true
			t.Fatalf("refused with %d %s, yet what a user reads changed:\n%s", rec.Code, rec.Body, cmp.Diff(before, after))
		}
		return
	}
	if ft.fresh {
		ft.broken = true // the fixture may be used up; the checks below still run
	}
	// The evaluation an accepted change leads to may wait for the monitor;
	// a restart runs it at once (New). Run it here too, then restart.
	if err := ft.h.svc.Tick(context.Background()); err != nil {
		ft.broken = true
		t.Fatalf("Tick after an accepted input: %v", err)
	}
	after := ft.snapshot(t, false)
	if err := ft.restart(); err != nil {
		ft.broken = true
		t.Fatalf("restart after an accepted input: %v", err)
	}
	if again := ft.snapshot(t, false); again != after {
		ft.broken = true
		t.Fatalf("accepted with %d, but a restart on the same store reads otherwise (-before restart +after):\n%s", rec.Code, cmp.Diff(after, again))
	}
}

func checkFuzzResponse(t *testing.T, rec *httptest.ResponseRecorder, emptyOK, fileOK bool) {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code >= 500 {
		t.Fatalf("status %d, body %s: a client's input must not cause a 5xx", rec.Code, body)
	}
	if emptyOK && rec.Code < 300 && len(body) == 0 {
		return
	}
	if rec.Code >= 300 && rec.Code < 400 {
		// http.ServeMux redirects a path with . or .. segments to its
		// clean form, which is then routed (and authorized) as usual.
		if loc := rec.Header().Get("Location"); loc == "" || path.Clean(strings.SplitN(loc, "?", 2)[0]) != strings.SplitN(loc, "?", 2)[0] {
			t.Fatalf("redirect %d to %q: only the mux's redirect to a clean path is expected", rec.Code, loc)
		}
		return
	}
	if fileOK && rec.Code < 300 {
		if ct := rec.Header().Get("Content-Type"); ct != "application/octet-stream" || !strings.HasPrefix(rec.Header().Get("Content-Disposition"), "attachment; filename=") {
			t.Fatalf("download %d: Content-Type %q, Content-Disposition %q", rec.Code, ct, rec.Header().Get("Content-Disposition"))
		}
		return
	}
	if rec.Code == http.StatusNoContent {
		if len(body) != 0 {
			t.Fatalf("204 with a body %q", body)
		}
		return
	}
	if !json.Valid(body) {
		t.Fatalf("status %d: body %q is not JSON", rec.Code, body)
	}
	if rec.Code >= 400 {
		checkErrorBody(t, rec.Code, rec.Header(), body)
	}
}

// checkNoLeak fails when the reason of an error answer holds a fragment of
// a database error (leaks, as TestInternalErrorHidden) that the request
// itself did not carry.
func checkNoLeak(t *testing.T, rec *httptest.ResponseRecorder, sent ...string) {
	t.Helper()
	if rec.Code < 400 {
		return
	}
	var e wire.Error
	if json.Unmarshal(rec.Body.Bytes(), &e) != nil {
		return // checkFuzzResponse has failed already
	}
	reason, in := strings.ToLower(e.Reason), strings.ToLower(strings.Join(sent, "\n"))
	for _, l := range leaks {
		if strings.Contains(reason, l) && !strings.Contains(in, l) {
			t.Fatalf("status %d: reason %q names the database (%q)", rec.Code, e.Reason, l)
		}
	}
}

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

func FuzzRegisterCluster(f *testing.F) {
	addSeeds(f, validCluster,
		clusterBody(`"control_plane_count":1,"base_dns_domain":"example.com"`),
		clusterBody(`"cluster_networks":[{"cidr":"10.128.0.0/14","host_prefix":23}],"service_networks":[{"cidr":"172.30.0.0/16"}],"machine_networks":[{"cidr":"192.168.111.0/24"}]`),
		clusterBody(`"api_vips":[{"ip":"192.168.111.5"}],"ingress_vips":[{"ip":"192.168.111.4"}],"platform":{"type":"baremetal"}`),
		clusterBody(`"high_availability_mode":"None","user_managed_networking":true,"network_type":"OVNKubernetes","cpu_architecture":"aarch64"`),
		clusterBody(`"http_proxy":"http://p:3128","no_proxy":"example.com","tags":"a,b","schedulable_masters":true`),
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", b+"/clusters", "", body)
	})
}

func FuzzUpdateCluster(f *testing.F) {
	addSeeds(f, `{}`, `{"name":"renamed","base_dns_domain":"example.org"}`,
		`{"api_vips":[{"ip":"192.168.111.5"}],"ingress_vips":[{"ip":"192.168.111.4"}]}`,
		`{"cluster_networks":[{"cidr":"10.128.0.0/14","host_prefix":23}],"service_networks":[{"cidr":"172.30.0.0/16"}]}`,
		`{"user_managed_networking":true,"machine_networks":[{"cidr":"192.168.111.0/24"}]}`,
		`{"control_plane_count":1,"platform":{"type":"none"},"pull_secret":`+jsonString(pullSecret)+`}`,
		`{"vip_dhcp_allocation":true,"load_balancer":{"type":"user-managed"},"ntp_sources":"pool.ntp.org"}`,
		`{"user_managed_networking":false,"ignition_endpoint":{"url":"https://api-int.c.example.com:22623/config/worker","ca_certificate":"`+fuzzCA+`"}}`,
		`{"ignition_endpoint":{"url":"http://10.0.0.5:22624/config"}}`,
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PATCH", clusterPat, "", body)
	})
}

// fuzzCA is a CA certificate as worker-ignition-endpoint.json carries it
// (base64 of its PEM).
const fuzzCA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJlRENDQVIyZ0F3SUJBZ0lVRjB5YmM3dXJ1aW5wakczS1NuRWJRTm5FelhBd0NnWUlLb1pJemowRUF3SXcKRVRFUE1BMEdBMVVFQXd3R2JXTnpMV05oTUI0WERUSTJNVEV5T0RFMU1UY3lOMW9YRFRNMk1URXlOVEUxTVRjeQpOMW93RVRFUE1BMEdBMVVFQXd3R2JXTnpMV05oTUZrd0V3WUhLb1pJemowQ0FRWUlLb1pJemowREFRY0RRZ0FFCkhTWnR2cDNCU2laMHhiSDlPcTExenVJMVlxZkNnbmE5c0FPSWxIT1QwZ05QU1FmVnR3cUdQWG1NQ2JheUgwRWIKYWl6bnNUQnlYRU1RbkthTHFDMHVDYU5UTUZFd0hRWURWUjBPQkJZRUZBZ1hrVldmV0xTSG11VEhpNUdFQ3N4Wgp4L1FqTUI4R0ExVWRJd1FZTUJhQUZBZ1hrVldmV0xTSG11VEhpNUdFQ3N4WngvUWpNQThHQTFVZEV3RUIvd1FGCk1BTUJBZjh3Q2dZSUtvWkl6ajBFQXdJRFNRQXdSZ0loQUxXYjQwYzZrMllkSkRaOGI0WWhTbmUyY2Rlb0VVcUoKQ25SdHZqclJ1ZGpaQWlFQXFlRWkxWEVuOCs2NHg5ZGVDR3IybzF4UzNiQThSUEN1clBQYWxRMDdaVzQ9Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"

// FuzzImportCluster fuzzes v2ImportCluster's body (ABI's
// agent-import-cluster): a 201 or a 400, never a 5xx.
func FuzzImportCluster(f *testing.F) {
	addSeeds(f, `{"name":"ostest","api_vip_dnsname":"api.ostest.example.com","openshift_cluster_id":"`+importedOCPID+`"}`,
		`{"name":"edge","api_vip_dnsname":"192.168.111.5","openshift_version":"4.18.0","openshift_cluster_id":"`+importedOCPID+`"}`,
		`{"name":"","api_vip_dnsname":"api.a.b.c.example.com","openshift_cluster_id":"00000000-0000-0000-0000-000000000000"}`,
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", b+"/clusters/import", "", body)
	})
}

func FuzzRegisterInfraEnv(f *testing.F) {
	addSeeds(f, `{"name":"ie","pull_secret":`+jsonString(pullSecret)+`}`,
		`{"name":"ie","pull_secret":`+jsonString(pullSecret)+`,"image_type":"minimal-iso","cpu_architecture":"x86_64","ssh_authorized_key":"ssh-ed25519 AAAA"}`,
		`{"name":"ie","pull_secret":`+jsonString(pullSecret)+`,"proxy":{"http_proxy":"http://p"},"kernel_arguments":[{"operation":"append","value":"x"}]}`,
		`{"name":"ie","pull_secret":`+jsonString(pullSecret)+`,"static_network_config":[{"network_yaml":"interfaces: []","mac_interface_map":[{"logical_nic_name":"eth0","mac_address":"52:54:00:aa:bb:01"}]}]}`,
		`{"name":"ie","pull_secret":`+jsonString(pullSecret)+`,"cluster_id":"00000000-0000-0000-0000-000000000000"}`,
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", b+"/infra-envs", "", body)
	})
}

func FuzzUpdateInfraEnv(f *testing.F) {
	addSeeds(f, `{}`, `{"ssh_authorized_key":"ssh-ed25519 AAAA","image_type":"full-iso"}`,
		`{"pull_secret":`+jsonString(pullSecret)+`,"proxy":{"https_proxy":"http://p","no_proxy":"x"}}`,
		`{"static_network_config":[{"network_yaml":"interfaces: []"}],"ignition_config_override":"{\"ignition\":{\"version\":\"3.2.0\"}}"}`,
		`{"additional_ntp_sources":"pool.ntp.org"}`,
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PATCH", infraEnvPat, "", body)
	})
}

func FuzzRegisterHost(f *testing.F) {
	addSeeds(f, `{"host_id":"0b5d4f3e-2c1a-4e8b-9f7d-6a5b4c3d2e1f"}`,
		`{"host_id":"5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e03","discovery_agent_version":"quay.io/agent:latest"}`)
	ft := newFuzzTarget(f, auth.Agent)
	addSeeds(f, `{"host_id":"`+ft.fx.hostID+`"}`) // a re-registration
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", infraEnvPat+"/hosts", "", body)
	})
}

func FuzzUpdateHost(f *testing.F) {
	addSeeds(f, `{}`, `{"host_name":"node-1","host_role":"master"}`,
		`{"disks_selected_config":[{"id":"/dev/vda","role":"install"}]}`,
		`{"host_role":"worker","machine_config_pool_name":"worker","node_labels":[{"key":"a","value":"b"}]}`,
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PATCH", hostPat, "", body)
	})
}

func FuzzStepReply(f *testing.F) {
	addSeeds(f, inventoryReply(),
		`{"step_type":"inventory","step_id":"inventory-1","exit_code":1,"error":"boom"}`,
		`{"step_type":"free-network-addresses","step_id":"free-1","output":"[]"}`,
		`{"step_type":"connectivity-check","step_id":"c-1","output":"{\"remote_hosts\":[]}"}`,
	)
	ft := newFuzzTarget(f, auth.Agent)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", hostPat+"/instructions", "", body)
	})
}

// FuzzInventory fuzzes the inventory inside a well-formed step reply: the
// largest and most parsed input an agent sends.
func FuzzInventory(f *testing.F) {
	addSeeds(f, inventoryJSON, `{}`, `{"disks":[{}],"interfaces":[{}],"cpu":{},"memory":{}}`,
		`{"interfaces":[{"ipv4_addresses":["10.0.0.1/33"],"ipv6_addresses":["fe80::1/64"]}],"routes":[{"destination":"::","family":10}]}`)
	ft := newFuzzTarget(f, auth.Agent)
	f.Fuzz(func(t *testing.T, output []byte) {
		body, err := json.Marshal(wire.StepReply{StepType: wire.StepTypeInventory, StepID: "inventory-f", Output: string(output)})
		if err != nil {
			t.Fatal(err)
		}
		ft.run(t, "POST", hostPat+"/instructions", "", body)
	})
}

// FuzzCheckOutput fuzzes the output and exit code of every host check an
// agent answers, inside a well-formed step reply: a 2xx or a 400, never a
// 5xx or a wedged service, whatever a hostile agent sends.
func FuzzCheckOutput(f *testing.F) {
	types := []wire.StepType{wire.StepTypeConnectivityCheck, wire.StepTypeFreeNetworkAddresses, wire.StepTypeNTPSynchronizer,
		wire.StepTypeVerifyVIPs, wire.StepTypeDomainResolution, wire.StepTypeDHCPLeaseAllocate,
		wire.StepTypeInstallationDiskSpeedCheck, wire.StepTypeContainerImageAvailability}
	f.Add(uint8(0), int64(0), `{"remote_hosts":[{"host_id":"x","l3_connectivity":[{"remote_ip_address":"10.0.0.2","successful":true,"average_rtt_ms":0.2}]}]}`)
	f.Add(uint8(1), int64(0), `[{"network":"10.0.0.0/24","free_addresses":["10.0.0.9"]}]`)
	f.Add(uint8(2), int64(0), `{"ntp_sources":[{"source_name":"a","source_state":"synced"}]}`)
	f.Add(uint8(3), int64(0), `[{"vip":"10.0.0.5","vip_type":"api","verification":"failed"}]`)
	f.Add(uint8(4), int64(0), `{"resolutions":[{"domain_name":"api.c.test","ipv4_addresses":["10.0.0.5"]}]}`)
	f.Add(uint8(5), int64(0), `{"api_vip_address":"10.0.0.50","ingress_vip_address":"10.0.0.51"}`)
	f.Add(uint8(6), int64(0), `{"path":"/dev/disk/by-id/wwn-0x5000c500","io_sync_duration":4}`)
	f.Add(uint8(6), int64(-1), ``)
	f.Add(uint8(7), int64(2), `{"images":[{"name":"quay.io/a/b:1","result":"failure"}]}`)
	f.Add(uint8(7), int64(0), `{"images":[{"name":"quay.io/a/b:1","result":"success","size_bytes":1e300,"time":1e-300,"download_rate":1e308}]}`)
	ft := newFuzzTarget(f, auth.Agent)
	f.Fuzz(func(t *testing.T, which uint8, code int64, output string) {
		typ := types[int(which)%len(types)]
		body, err := json.Marshal(wire.StepReply{StepType: typ, StepID: string(typ) + "-f", ExitCode: code, Output: output})
		if err != nil {
			t.Fatal(err)
		}
		ft.run(t, "POST", hostPat+"/instructions", "", body)
	})
}

func FuzzProgress(f *testing.F) {
	addSeeds(f, `{"current_stage":"Starting installation"}`,
		`{"current_stage":"Writing image to disk","progress_info":"42%"}`,
		`{"current_stage":"Failed","progress_info":"disk gone"}`, `{"current_stage":"Done"}`)
	ft := newFuzzTarget(f, auth.Agent)
	ft.emptyOK = true // the swagger gives the 200 no body
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PUT", hostPat+"/progress", "", body)
	})
}

func FuzzLogsProgress(f *testing.F) {
	addSeeds(f, `{"logs_state":"requested"}`, `{"logs_state":"collecting"}`, `{"logs_state":"completed"}`,
		`{"logs_state":"timeout"}`, `{}`)
	ft := newFuzzTarget(f, auth.Agent)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PUT", hostPat+"/logs-progress", "", body)
	})
}

func FuzzEventsQuery(f *testing.F) {
	for _, q := range []string{"", "order=descending&limit=10&offset=1",
		"severities=info,warning&categories=user&cluster_level=true",
		"host_ids=a,b&host_id=c&message=registered", "cluster_id=00000000-0000-0000-0000-000000000000",
		"infra_env_id=x&limit=&offset=&order=ascending"} {
		f.Add(q)
	}
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, q string) {
		ft.run(t, "GET", "/api/assisted-install/v2/events", q, nil)
	})
}

func FuzzInstructionsQuery(f *testing.F) {
	for _, q := range []string{"", "timestamp=1700000000", "wait=30s", "wait=1&timestamp=-5", "wait=0"} {
		f.Add(q)
	}
	ft := newFuzzTarget(f, auth.Agent)
	f.Fuzz(func(t *testing.T, q string) {
		ft.run(t, "GET", hostPat+"/instructions", q, nil)
	})
}

func FuzzInstallConfig(f *testing.F) {
	addSeeds(f, `"{}"`, `"{\"fips\":true}"`, `""`,
		`"{\"capabilities\":{\"baselineCapabilitySet\":\"None\"},\"networking\":{\"networkType\":\"OVNKubernetes\"}}"`)
	ft := newFuzzTarget(f, auth.User)
	ft.emptyOK = true
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PATCH", clusterPat+"/install-config", "", body)
	})
}

func FuzzCreateManifest(f *testing.F) {
	addSeeds(f, `{"file_name":"a.yaml","content":"YTogMQo="}`,
		`{"folder":"openshift","file_name":"b.json","content":"e30="}`,
		`{"folder":"manifests","file_name":"c.yml.patch_1","content":"LSBvcDogYWRkCiAgcGF0aDogL2EKICB2YWx1ZTogMQo="}`,
		`{"file_name":"d.yaml","content":"YTogMQotLS0KYjogMgo="}`)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", clusterPat+"/manifests", "", body)
	})
}

func FuzzUpdateManifest(f *testing.F) {
	addSeeds(f, `{"folder":"manifests","file_name":"fixture.yaml","updated_content":"YTogMgo="}`,
		`{"folder":"manifests","file_name":"fixture.yaml","updated_folder":"openshift","updated_file_name":"moved.yaml"}`,
		`{"folder":"manifests","file_name":"fixture.yaml","updated_file_name":"x.json","updated_content":"e30="}`)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PATCH", clusterPat+"/manifests", "", body)
	})
}

// FuzzManifestQuery fuzzes the query of a manifest's download and
// deletion: the same folder and file_name, sent to both.
func FuzzManifestQuery(f *testing.F) {
	for _, q := range []string{"file_name=fixture.yaml", "folder=openshift&file_name=a.yaml", "folder=manifests&file_name=..%2Fx.yaml",
		"file_name=%20.yaml", "folder=&file_name=a.json"} {
		f.Add(q)
	}
	ft := newFuzzTarget(f, auth.User)
	ft.emptyOK, ft.fresh = true, true
	f.Fuzz(func(t *testing.T, q string) {
		ft.fileOK = true
		ft.run(t, "GET", clusterPat+"/manifests/files", q, nil)
		ft.fileOK = false
		ft.run(t, "DELETE", clusterPat+"/manifests", q, nil)
	})
}

func FuzzCompleteInstallation(f *testing.F) {
	addSeeds(f, `{"is_success":true}`, `{"is_success":false,"error_info":"operator console failed"}`,
		`{"is_success":true,"data":{"a":[1,{"b":null}]}}`, `{}`, `{"is_success":null}`)
	ft := newFuzzTarget(f, auth.Agent)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "POST", clusterPat+"/actions/complete-installation", "", body)
	})
}

// fixtureIDs fills {cluster_id}, {infra_env_id} and {host_id} in a fuzzed
// query with the fixture's ids, so that seeds can name the fixture's host.
func (ft *fuzzTarget) fixtureIDs(q string) string { return ft.fx.path(q) }

// FuzzUploadLogs fuzzes a log upload's query, Content-Type and multipart
// body.
func FuzzUploadLogs(f *testing.F) {
	form := func(field, content string) (string, []byte) {
		const boundary = "fuzzboundary"
		return "multipart/form-data; boundary=" + boundary, []byte("--" + boundary + "\r\n" +
			`Content-Disposition: form-data; name="` + field + `"; filename="logs.tar.gz"` + "\r\n" +
			"Content-Type: application/octet-stream\r\n\r\n" + content + "\r\n--" + boundary + "--\r\n")
	}
	hostQ := "logs_type=host&infra_env_id={infra_env_id}&host_id={host_id}"
	ct, body := form("upfile", "bundle")
	f.Add(hostQ, ct, body)
	f.Add("logs_type=controller", ct, body)
	ct, body = form("note", "no file")
	f.Add(hostQ, ct, body)
	ct, body = form("upfile", "")
	f.Add("logs_type=controller", ct, body)
	f.Add("logs_type=host&host_id={host_id}", "application/json", []byte(`{}`))
	f.Add("logs_type=all", ct, body)
	ft := newFuzzTarget(f, auth.Agent)
	ft.emptyOK = true
	f.Fuzz(func(t *testing.T, q, contentType string, body []byte) {
		ft.runWith(t, "POST", clusterPat+"/logs", ft.fixtureIDs(q), body, map[string]string{"Content-Type": contentType})
	})
}

// queryRoutes are the GET routes that read a query, not counting events
// and instructions (their own targets) or the manifest download
// (FuzzManifestQuery). file: the route's success is a download.
var queryRoutes = []struct {
	pattern string
	file    bool
}{
	{b + "/infra-envs", false},                    // cluster_id
	{clusterPat + "/manifests", false},            // include_system_generated
	{clusterPat + "/downloads/files", true},       // file_name
	{clusterPat + "/downloads/credentials", true}, // file_name
	{clusterPat + "/logs", true},                  // logs_type, host_id
}

// FuzzDownloadQuery fuzzes the query of every GET route that reads one and
// has no target of its own.
func FuzzDownloadQuery(f *testing.F) {
	for _, s := range []struct {
		route uint8
		q     string
	}{
		{0, "cluster_id={cluster_id}"}, {0, "cluster_id=x%00y"}, {1, "include_system_generated=true"},
		{1, "include_system_generated=maybe"}, {2, "file_name=install-config.yaml"}, {2, "file_name=../nodezero.db"},
		{3, "file_name=kubeadmin-password"}, {3, "file_name=kubeconfig"}, {4, "logs_type=host&host_id={host_id}"},
		{4, "logs_type=all"}, {4, "logs_type=controller"}, {4, "host_id=nobody"},
	} {
		f.Add(s.route, s.q)
	}
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, route uint8, q string) {
		r := queryRoutes[int(route)%len(queryRoutes)]
		ft.fileOK = r.file
		ft.run(t, "GET", r.pattern, ft.fixtureIDs(q), nil)
	})
}

// FuzzPathParams fuzzes the path of every route that has parameters, and
// the agent-version header the registration and instructions routes keep:
// the route's last parameter is the fuzzed id (escaped, as a client sends
// it), the others the fixture's. Bodies are {}: the bodies have their own
// targets.
func FuzzPathParams(f *testing.F) {
	var routes []api.Route
	for _, r := range api.Routes() {
		if strings.Contains(r.Pattern, "{") {
			routes = append(routes, r)
		}
	}
	ft := newFuzzTarget(f, auth.User)
	for i := range routes {
		f.Add(uint8(i), "00000000-0000-0000-0000-000000000000", "")
	}
	f.Add(uint8(0), ft.fx.clusterID, "quay.io/agent:v1")
	f.Add(uint8(0), "../../health", "")
	f.Add(uint8(1), "..", "")
	f.Add(uint8(2), ".", "")
	f.Add(uint8(0), "a/b", "\x00")
	f.Add(uint8(0), strings.Repeat("9", 300), strings.Repeat("v", 300))
	f.Fuzz(func(t *testing.T, which uint8, id, agentVersion string) {
		r := routes[int(which)%len(routes)]
		i := strings.LastIndex(r.Pattern, "{")
		j := i + strings.Index(r.Pattern[i:], "}")
		pattern := r.Pattern[:i] + url.PathEscape(id) + r.Pattern[j+1:]
		var body []byte
		if r.Method != "GET" && r.Method != "DELETE" {
			body = []byte(`{}`)
		}
		extra := map[string]string{"discovery_agent_version": agentVersion}
		for _, s := range r.Schemes {
			extra[s.Header()] = ft.h.tokens[s]
		}
		ft.fileOK = r.Method == "GET" && strings.Contains(r.Pattern, "/downloads/") || strings.HasSuffix(r.Pattern, "/manifests/files") || r.Method == "GET" && strings.HasSuffix(r.Pattern, "/logs")
		ft.emptyOK = r.Success == http.StatusNoContent || r.Method == "DELETE" || r.Method == "PUT" || strings.HasSuffix(r.Pattern, "/install-config")
		ft.runWith(t, r.Method, pattern, "", body, extra)
	})
}
