package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/nodezero/nodezero/daemon/auth"
	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// The fuzz targets drive the real handler of a running service (store,
// service, auth) in-process with httptest, one target per route that
// decodes a body or a query. The property: never a 5xx, always a JSON body
// (none for 204), an error body in assisted-service's shape, and afterwards
// both /health and a read that takes the model lock still answered. Seeds
// are valid requests; edge cases and regression inputs live in
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
	if err := ft.start(f.TempDir()); err != nil {
		f.Fatal(err)
	}
	return ft
}

// start replaces the target's service with a new one whose store is in dir.
func (ft *fuzzTarget) start(dir string) error {
	h, err := startHarness(dir)
	if err != nil {
		return err
	}
	ft.closers = append(ft.closers, h.close)
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

// run sends one fuzzed request and checks the property.
func (ft *fuzzTarget) run(t *testing.T, method, pattern, rawQuery string, body []byte) {
	t.Helper()
	if ft.broken {
		dir, err := os.MkdirTemp("", "nodezero-api-fuzz-")
		if err != nil {
			t.Fatal(err)
		}
		ft.closers = append(ft.closers, func() { os.RemoveAll(dir) })
		if err := ft.start(dir); err != nil {
			t.Fatalf("restart the service after a failed input: %v", err)
		}
	}
	rec, ok := ft.within(method, ft.fx.path(pattern), rawQuery, body, ft.hdr)
	if !ok {
		ft.broken = true
		t.Fatalf("no answer within %v", fuzzTimeout)
	}
	if rec.Code >= 500 {
		ft.broken = true // a panic may have left the model locked
	}
	checkFuzzResponse(t, rec, ft.emptyOK)
	// The daemon still answers: /health, and a read that takes the model lock.
	user := map[string]string{"Authorization": ft.h.tokens[auth.User]}
	for _, p := range []string{"/health", ft.fx.path(clusterPat)} {
		hr, ok := ft.within("GET", p, "", nil, user)
		if !ok {
			ft.broken = true
			t.Fatalf("GET %s after the input: no answer within %v: the input wedged the service", p, fuzzTimeout)
		}
		if hr.Code != http.StatusOK {
			ft.broken = true
			t.Fatalf("GET %s after the input = %d %s, want 200", p, hr.Code, hr.Body)
		}
	}
}

func checkFuzzResponse(t *testing.T, rec *httptest.ResponseRecorder, emptyOK bool) {
	t.Helper()
	body := rec.Body.Bytes()
	if rec.Code >= 500 {
		t.Fatalf("status %d, body %s: a client's input must not cause a 5xx", rec.Code, body)
	}
	if emptyOK && rec.Code < 300 && len(body) == 0 {
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
	)
	ft := newFuzzTarget(f, auth.User)
	f.Fuzz(func(t *testing.T, body []byte) {
		ft.run(t, "PATCH", clusterPat, "", body)
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
		body, err := json.Marshal(v2.StepReply{StepType: v2.StepTypeInventory, StepID: "inventory-f", Output: string(output)})
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
	types := []v2.StepType{v2.StepTypeConnectivityCheck, v2.StepTypeFreeNetworkAddresses, v2.StepTypeNTPSynchronizer,
		v2.StepTypeVerifyVIPs, v2.StepTypeDomainResolution, v2.StepTypeDHCPLeaseAllocate,
		v2.StepTypeInstallationDiskSpeedCheck, v2.StepTypeContainerImageAvailability}
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
		body, err := json.Marshal(v2.StepReply{StepType: typ, StepID: string(typ) + "-f", ExitCode: code, Output: output})
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

// FuzzManifestQuery fuzzes the query of a manifest's deletion, the same
// folder and file_name a download reads.
func FuzzManifestQuery(f *testing.F) {
	for _, q := range []string{"file_name=fixture.yaml", "folder=openshift&file_name=a.yaml", "folder=manifests&file_name=..%2Fx.yaml",
		"file_name=%20.yaml", "folder=&file_name=a.json"} {
		f.Add(q)
	}
	ft := newFuzzTarget(f, auth.User)
	ft.emptyOK = true
	f.Fuzz(func(t *testing.T, q string) {
		ft.run(t, "DELETE", clusterPat+"/manifests", q, nil)
	})
}
