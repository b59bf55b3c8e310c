package api_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/wire"
)

// badCase is one request a client gets wrong. Paths name the fixture's
// objects as {cluster_id}, {infra_env_id}, {host_id}, the installing SNO
// cluster as {sno_cluster_id}, {sno_infra_env_id}, {sno_host_id}, and a
// well-formed id of nothing as {unknown}.
type badCase struct {
	name         string
	method, path string
	body         string
	agent        bool // send the agent token, not the user token
	want         int  // 0: 404 or 405
	reason       []string
}

const b = api.Base

var validCluster = `{"name":"c1","openshift_version":"4.18","pull_secret":` + jsonString(pullSecret) + `}`

func clusterBody(extra string) string {
	return `{"name":"c1","openshift_version":"4.18","pull_secret":` + jsonString(pullSecret) + `,` + extra + `}`
}

var badCases = []badCase{
	// The body as JSON.
	{"malformed", "POST", b + "/clusters", `{"name": oops}`, false, 400, []string{"malformed JSON"}},
	{"truncated", "POST", b + "/clusters", `{"name":"c1","openshift_version":`, false, 400, []string{"truncated"}},
	{"empty body", "POST", b + "/clusters", ``, false, 400, []string{"empty"}},
	{"blank body", "POST", b + "/clusters", " \n\t", false, 400, []string{"empty"}},
	{"trailing garbage", "POST", b + "/clusters", validCluster + ` x`, false, 400, []string{"after the JSON document"}},
	{"two documents", "POST", b + "/clusters", validCluster + validCluster, false, 400, []string{"after the JSON document"}},
	{"array document", "POST", b + "/clusters", `[]`, false, 400, []string{"(document)"}},
	{"string document", "POST", b + "/clusters", `"c1"`, false, 400, []string{"(document)"}},
	{"null document", "POST", b + "/clusters", `null`, false, 400, []string{"name", "pull_secret"}},
	{"deep nesting", "POST", b + "/clusters", strings.Repeat("[", 20000), false, 400, []string{"request body"}},
	{"string for int", "POST", b + "/clusters", clusterBody(`"control_plane_count":"three"`), false, 400, []string{"control_plane_count"}},
	{"object for array", "POST", b + "/clusters", clusterBody(`"api_vips":{}`), false, 400, []string{"api_vips"}},
	{"number overflow", "POST", b + "/clusters", clusterBody(`"control_plane_count":1e400`), false, 400, []string{"control_plane_count"}},
	{"float for int", "POST", b + "/clusters", clusterBody(`"control_plane_count":3.5`), false, 400, []string{"control_plane_count"}},
	{"number for string", "PATCH", b + "/clusters/{cluster_id}", `{"name":5}`, false, 400, []string{"name"}},
	{"oversized", "POST", b + "/clusters", `{"name":"` + strings.Repeat("a", api.DefaultMaxBody+1) + `"}`, false, 413, []string{"larger than"}},
	{"oversized padding", "POST", b + "/clusters", validCluster + strings.Repeat(" ", api.DefaultMaxBody), false, 413, []string{"larger than"}},

	// Field values.
	{"bad name", "POST", b + "/clusters", `{"name":"Bad_Name","openshift_version":"4.18","pull_secret":` + jsonString(pullSecret) + `}`, false, 400, []string{"name:"}},
	{"no pull secret", "POST", b + "/clusters", `{"name":"c1","openshift_version":"4.18"}`, false, 400, []string{"pull_secret: required"}},
	{"pull secret not JSON", "POST", b + "/clusters", `{"name":"c1","openshift_version":"4.18","pull_secret":"hunter2"}`, false, 400, []string{"pull_secret"}},
	{"pull secret no auths", "POST", b + "/clusters", `{"name":"c1","openshift_version":"4.18","pull_secret":"{}"}`, false, 400, []string{"pull_secret"}},
	{"bad cidr", "POST", b + "/clusters", clusterBody(`"cluster_networks":[{"cidr":"10.128.0.0/33","host_prefix":23}]`), false, 400, []string{"cluster_networks[0].cidr"}},
	{"cidr host bits", "POST", b + "/clusters", clusterBody(`"service_networks":[{"cidr":"172.30.0.1/16"}]`), false, 400, []string{"service_networks[0].cidr"}},
	{"bad vip", "POST", b + "/clusters", clusterBody(`"api_vips":[{"ip":"999.1.1.1"}]`), false, 400, []string{"api_vips[0].ip"}},
	{"bad domain", "POST", b + "/clusters", clusterBody(`"base_dns_domain":"-bad-.com"`), false, 400, []string{"base_dns_domain"}},
	{"two masters", "POST", b + "/clusters", clusterBody(`"control_plane_count":2`), false, 400, []string{"control_plane_count"}},
	{"every problem", "POST", b + "/clusters", `{"name":"X","pull_secret":"x","cluster_networks":[{"cidr":"x","host_prefix":0}]}`, false, 400,
		[]string{"name:", "openshift_version", "pull_secret", "cluster_networks[0].cidr", "cluster_networks[0].host_prefix"}},
	{"update bad cidr", "PATCH", b + "/clusters/{cluster_id}", `{"service_networks":[{"cidr":"nope"}]}`, false, 400, []string{"service_networks[0].cidr"}},
	{"update empty name", "PATCH", b + "/clusters/{cluster_id}", `{"name":""}`, false, 400, []string{"name"}},
	{"update bad pull secret", "PATCH", b + "/clusters/{cluster_id}", `{"pull_secret":"[]"}`, false, 400, []string{"pull_secret"}},
	{"infra-env no pull secret", "POST", b + "/infra-envs", `{"name":"ie"}`, false, 400, []string{"pull_secret"}},
	{"infra-env no name", "POST", b + "/infra-envs", `{"pull_secret":` + jsonString(pullSecret) + `}`, false, 400, []string{"name"}},
	{"infra-env bad cluster id", "POST", b + "/infra-envs", `{"name":"ie","pull_secret":` + jsonString(pullSecret) + `,"cluster_id":"nope"}`, false, 400, []string{"cluster_id"}},
	{"infra-env update bad pull secret", "PATCH", b + "/infra-envs/{infra_env_id}", `{"pull_secret":"x"}`, false, 400, []string{"pull_secret"}},
	{"host id not a uuid", "POST", b + "/infra-envs/{infra_env_id}/hosts", `{"host_id":"xyz"}`, true, 400, []string{"host_id"}},
	{"host no id", "POST", b + "/infra-envs/{infra_env_id}/hosts", `{}`, true, 400, []string{"host_id"}},
	{"bad hostname", "PATCH", b + "/infra-envs/{infra_env_id}/hosts/{host_id}", `{"host_name":"Bad_Host!"}`, false, 400, []string{"host_name"}},
	{"bad role", "PATCH", b + "/infra-envs/{infra_env_id}/hosts/{host_id}", `{"host_role":"king"}`, false, 400, []string{"host_role"}},
	{"unknown disk", "PATCH", b + "/infra-envs/{infra_env_id}/hosts/{host_id}", `{"disks_selected_config":[{"id":"/dev/nope","role":"install"}]}`, false, 400, []string{"disks_selected_config[0].id"}},
	{"reply no type", "POST", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions", `{}`, true, 400, []string{"step_type"}},
	{"reply bad inventory", "POST", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions", `{"step_type":"inventory","output":"{"}`, true, 400, []string{"output"}},
	{"progress no stage", "PUT", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/progress", `{}`, true, 400, []string{"current_stage"}},
	{"logs progress state", "PUT", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/logs-progress", `{"logs_state":"done"}`, true, 400,
		[]string{"logs_state", "requested, collecting, completed"}},
	{"logs progress type", "PUT", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/logs-progress", `{"logs_state":5}`, true, 400, []string{"logs_state"}},
	{"logs upload no type", "POST", b + "/clusters/{cluster_id}/logs", `{}`, true, 400, []string{"logs_type"}},
	{"logs download type", "GET", b + "/clusters/{cluster_id}/logs?logs_type=x", ``, false, 400, []string{"logs_type"}},

	// Query strings.
	{"events limit", "GET", b + "/events?limit=abc", ``, false, 400, []string{"limit"}},
	{"events negative limit", "GET", b + "/events?limit=-1", ``, false, 400, []string{"limit"}},
	{"events order", "GET", b + "/events?order=sideways", ``, false, 400, []string{"order"}},
	{"events severity", "GET", b + "/events?severities=info,bogus", ``, false, 400, []string{"severities"}},
	{"events cluster_level", "GET", b + "/events?cluster_level=maybe", ``, false, 400, []string{"cluster_level"}},
	{"events cluster id", "GET", b + "/events?cluster_id=nope", ``, false, 400, []string{"cluster_id"}},
	{"events too many host ids", "GET", b + "/events?host_ids=" + strings.Repeat("a,", 33000), ``, false, 400, []string{"host_ids"}},
	{"events too many categories", "GET", b + "/events?categories=x&categories=" + strings.Repeat("a,", 33000), ``, false, 400, []string{"categories"}},
	{"events too many severities", "GET", b + "/events?severities=" + strings.Repeat("info,", 1001), ``, false, 400, []string{"severities"}},
	{"events unknown cluster", "GET", b + "/events?cluster_id={unknown}", ``, false, 404, []string{"not found"}},
	{"instructions timestamp", "GET", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions?timestamp=abc", ``, true, 400, []string{"timestamp"}},
	{"instructions negative wait", "GET", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions?wait=-1s", ``, true, 400, []string{"wait"}},
	{"instructions bad wait", "GET", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/instructions?wait=soon", ``, true, 400, []string{"wait"}},

	// Ids in the path.
	{"cluster id", "GET", b + "/clusters/not-a-uuid", ``, false, 400, []string{"cluster_id", "not-a-uuid"}},
	{"cluster id braces", "GET", b + "/clusters/%7B{unknown}%7D", ``, false, 400, []string{"cluster_id"}},
	{"cluster id on patch", "PATCH", b + "/clusters/123", `{}`, false, 400, []string{"cluster_id"}},
	{"cluster id on install", "POST", b + "/clusters/123/actions/install", ``, false, 400, []string{"cluster_id"}},
	{"infra-env id", "DELETE", b + "/infra-envs/zzz", ``, false, 400, []string{"infra_env_id"}},
	{"host id", "GET", b + "/infra-envs/{infra_env_id}/hosts/not-a-uuid", ``, false, 400, []string{"host_id"}},
	{"infra-env id of host", "GET", b + "/infra-envs/x/hosts/{host_id}", ``, false, 400, []string{"infra_env_id"}},
	{"ids of instructions", "GET", b + "/infra-envs/x/hosts/y/instructions", ``, true, 400, []string{"infra_env_id"}},

	// Unknown ids.
	{"unknown cluster", "GET", b + "/clusters/{unknown}", ``, false, 404, []string{"{unknown}"}},
	{"unknown cluster patch", "PATCH", b + "/clusters/{unknown}", `{}`, false, 404, nil},
	{"unknown cluster delete", "DELETE", b + "/clusters/{unknown}", ``, false, 404, nil},
	{"unknown cluster install", "POST", b + "/clusters/{unknown}/actions/install", ``, false, 404, nil},
	{"unknown cluster hosts", "GET", b + "/clusters/{unknown}/hosts", ``, false, 404, nil},
	{"unknown infra-env", "GET", b + "/infra-envs/{unknown}", ``, false, 404, nil},
	{"unknown infra-env hosts", "GET", b + "/infra-envs/{unknown}/hosts", ``, false, 404, nil},
	{"infra-env for unknown cluster", "POST", b + "/infra-envs", `{"name":"ie","pull_secret":` + jsonString(pullSecret) + `,"cluster_id":"{unknown}"}`, false, 404, nil},
	{"register in unknown infra-env", "POST", b + "/infra-envs/{unknown}/hosts", `{"host_id":"{unknown}"}`, true, 404, nil},
	{"unknown host", "GET", b + "/infra-envs/{infra_env_id}/hosts/{unknown}", ``, false, 404, nil},
	{"host in unknown infra-env", "GET", b + "/infra-envs/{unknown}/hosts/{host_id}", ``, false, 404, nil},
	{"host in another infra-env", "GET", b + "/infra-envs/{sno_infra_env_id}/hosts/{host_id}", ``, false, 404, nil},
	{"unknown host instructions", "GET", b + "/infra-envs/{infra_env_id}/hosts/{unknown}/instructions", ``, true, 404, nil},
	{"unknown host reply", "POST", b + "/infra-envs/{infra_env_id}/hosts/{unknown}/instructions", `{"step_type":"inventory","exit_code":1}`, true, 404, nil},
	{"unknown host progress", "PUT", b + "/infra-envs/{infra_env_id}/hosts/{unknown}/progress", `{"current_stage":"Installing"}`, true, 404, nil},
	{"unknown host delete", "DELETE", b + "/infra-envs/{infra_env_id}/hosts/{unknown}", ``, false, 404, nil},
	{"unknown host logs progress", "PUT", b + "/infra-envs/{infra_env_id}/hosts/{unknown}/logs-progress", `{"logs_state":"requested"}`, true, 404, nil},
	{"logs of unknown cluster", "GET", b + "/clusters/{unknown}/logs", ``, false, 404, []string{"{unknown}"}},

	// Transitions the state machines refuse.
	{"install not ready", "POST", b + "/clusters/{cluster_id}/actions/install", ``, false, 409, []string{"not ready"}},
	{"cancel not installing", "POST", b + "/clusters/{cluster_id}/actions/cancel", ``, false, 409, nil},
	{"reset not failed", "POST", b + "/clusters/{cluster_id}/actions/reset", ``, false, 409, nil},
	{"progress not installing", "PUT", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/progress", `{"current_stage":"Installing"}`, true, 409, []string{"discovering"}},
	{"deregister infra-env with hosts", "DELETE", b + "/infra-envs/{infra_env_id}", ``, false, 409, []string{"host"}},
	{"install twice", "POST", b + "/clusters/{sno_cluster_id}/actions/install", ``, false, 409, nil},
	{"update installing cluster", "PATCH", b + "/clusters/{sno_cluster_id}", `{"name":"late"}`, false, 409, nil},
	{"delete installing cluster", "DELETE", b + "/clusters/{sno_cluster_id}", ``, false, 409, []string{"cancel"}},
	{"host joins installing cluster", "POST", b + "/infra-envs/{sno_infra_env_id}/hosts", `{"host_id":"{unknown}"}`, true, 409, nil},
	{"update preparing host", "PATCH", b + "/infra-envs/{sno_infra_env_id}/hosts/{sno_host_id}", `{"host_name":"late"}`, false, 409, nil},
	{"progress of preparing host", "PUT", b + "/infra-envs/{sno_infra_env_id}/hosts/{sno_host_id}/progress", `{"current_stage":"Installing"}`, true, 409, nil},

	// Day 2: the import and the install of one host.
	{"import empty", "POST", b + "/clusters/import", `{}`, false, 400, []string{"name: required", "api_vip_dnsname: required", "openshift_cluster_id: required"}},
	{"import no body", "POST", b + "/clusters/import", ``, false, 400, []string{"empty"}},
	{"import number for name", "POST", b + "/clusters/import", `{"name":5,"api_vip_dnsname":"api.a.example.com","openshift_cluster_id":"` + importedOCPID + `"}`, false, 400, []string{"name"}},
	{"import object for api name", "POST", b + "/clusters/import", `{"name":"a","api_vip_dnsname":{},"openshift_cluster_id":"` + importedOCPID + `"}`, false, 400, []string{"api_vip_dnsname"}},
	{"import cluster id not a uuid", "POST", b + "/clusters/import", `{"name":"a","api_vip_dnsname":"api.a.example.com","openshift_cluster_id":"cluster-1"}`, false, 400,
		[]string{`openshift_cluster_id: "cluster-1" is not a UUID`}},
	{"import bad name", "POST", b + "/clusters/import", `{"name":"Bad_Name","api_vip_dnsname":"10.0.0.5","openshift_cluster_id":"` + importedOCPID + `"}`, false, 400,
		[]string{`name: cluster name format is not valid: "Bad_Name"`}},
	{"import bad api name", "POST", b + "/clusters/import", `{"name":"a","api_vip_dnsname":"api..example.com","openshift_cluster_id":"` + importedOCPID + `"}`, false, 400, []string{"api_vip_dnsname"}},
	{"ignition endpoint not http", "PATCH", b + "/clusters/{cluster_id}", `{"ignition_endpoint":{"url":"ftp://x:22623/config/worker"}}`, false, 400,
		[]string{"ignition_endpoint.url", "http or https"}},
	{"ignition endpoint ca not pem", "PATCH", b + "/clusters/{cluster_id}", `{"ignition_endpoint":{"ca_certificate":"aGVsbG8="}}`, false, 400,
		[]string{"ignition_endpoint.ca_certificate", "no PEM certificate"}},
	{"ignition endpoint wrong type", "PATCH", b + "/clusters/{cluster_id}", `{"ignition_endpoint":{"url":22623}}`, false, 400, []string{"ignition_endpoint.url"}},
	{"install unknown host", "POST", b + "/infra-envs/{infra_env_id}/hosts/{unknown}/actions/install", ``, false, 404, []string{"{unknown}"}},
	{"install host in unknown infra-env", "POST", b + "/infra-envs/{unknown}/hosts/{host_id}/actions/install", ``, false, 404, nil},
	{"install host id not a uuid", "POST", b + "/infra-envs/{infra_env_id}/hosts/xyz/actions/install", ``, false, 400, []string{"host_id"}},
	{"install day-1 host", "POST", b + "/infra-envs/{infra_env_id}/hosts/{host_id}/actions/install", ``, false, 409,
		[]string{"method only allowed when adding hosts to an existing cluster"}},

	// Install-config overrides: a JSON string holding a JSON object.
	{"install-config not a string", "PATCH", b + "/clusters/{cluster_id}/install-config", `{"fips":true}`, false, 400, []string{"(document)", "string"}},
	{"install-config null", "PATCH", b + "/clusters/{cluster_id}/install-config", `null`, false, 400, []string{"JSON string"}},
	{"install-config not JSON", "PATCH", b + "/clusters/{cluster_id}/install-config", `"{fips}"`, false, 400, []string{"install config overrides: not valid JSON"}},
	{"install-config array", "PATCH", b + "/clusters/{cluster_id}/install-config", `"[]"`, false, 400, []string{"must be a JSON object, not an array"}},
	{"install-config unknown cluster", "PATCH", b + "/clusters/{unknown}/install-config", `"{}"`, false, 404, []string{"{unknown}"}},
	{"install-config installing", "PATCH", b + "/clusters/{sno_cluster_id}/install-config", `"{}"`, false, 409,
		[]string{"cluster {sno_cluster_id} is not in pre-installation states, can't modify the install config overrides after installation has been started"}},

	// Custom manifests, with assisted-service's messages.
	{"manifest malformed", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":`, false, 400, []string{"truncated"}},
	{"manifest bad folder", "POST", b + "/clusters/{cluster_id}/manifests", `{"folder":"etc","file_name":"a.yaml","content":"YTogMQ=="}`, false, 400,
		[]string{"folder in body should be one of [manifests openshift]"}},
	{"manifest bad name", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":"a.sh","content":"YTogMQ=="}`, false, 400, []string{"file_name in body should match"}},
	{"manifest space", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":"a b.yaml","content":"YTogMQ=="}`, false, 400,
		[]string{"Cluster manifest a b.yaml for cluster {cluster_id} should not include a space in its name."}},
	{"manifest empty", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":"a.yaml"}`, false, 400,
		[]string{"Manifest content of file manifests/a.yaml for cluster ID {cluster_id} is empty"}},
	{"manifest not base64", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":"a.yaml","content":"a: 1"}`, false, 400,
		[]string{"failed to base64-decode cluster manifest content for cluster {cluster_id}"}},
	{"manifest bad yaml", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":"a.yaml","content":"YTogW2IK"}`, false, 400,
		[]string{"Manifest content of file manifests/a.yaml for cluster ID {cluster_id} has an invalid YAML format"}},
	{"manifest bad json", "POST", b + "/clusters/{cluster_id}/manifests", `{"file_name":"a.json","content":"YTogMQ=="}`, false, 400,
		[]string{"Manifest content of file manifests/a.json for cluster ID {cluster_id} has an illegal JSON format"}},
	{"manifest not distinct", "POST", b + "/clusters/{cluster_id}/manifests", `{"folder":"openshift","file_name":"fixture.yaml","content":"YTogMQ=="}`, false, 400,
		[]string{"not distinct between {manifest, openshift} folders"}},
	{"manifest unknown cluster", "POST", b + "/clusters/{unknown}/manifests", `{"file_name":"a.yaml","content":"YTogMQ=="}`, false, 404, []string{"{unknown}"}},
	{"manifest installing", "POST", b + "/clusters/{sno_cluster_id}/manifests", `{"file_name":"a.yaml","content":"YTogMQ=="}`, false, 409,
		[]string{"cluster {sno_cluster_id} is not in pre-installation states, can't modify manifests after installation has been started"}},
	{"manifests list flag", "GET", b + "/clusters/{cluster_id}/manifests?include_system_generated=maybe", ``, false, 400, []string{"include_system_generated"}},
	{"manifests list unknown cluster", "GET", b + "/clusters/{unknown}/manifests", ``, false, 404, nil},
	{"manifest update required", "PATCH", b + "/clusters/{cluster_id}/manifests", `{}`, false, 400, []string{"folder in body is required", "file_name in body is required"}},
	{"manifest update missing", "PATCH", b + "/clusters/{cluster_id}/manifests", `{"folder":"openshift","file_name":"fixture.yaml","updated_file_name":"b.yaml"}`, false, 404,
		[]string{"Cluster manifest openshift/fixture.yaml doesn't exist in cluster {cluster_id}"}},
	{"manifest update installing", "PATCH", b + "/clusters/{sno_cluster_id}/manifests", `{"folder":"manifests","file_name":"a.yaml","updated_file_name":"b.yaml"}`, false, 409, []string{"pre-installation"}},
	{"manifest delete no name", "DELETE", b + "/clusters/{cluster_id}/manifests?folder=openshift", ``, false, 400, []string{"file_name in query is required"}},
	{"manifest delete bad folder", "DELETE", b + "/clusters/{cluster_id}/manifests?folder=x&file_name=fixture.yaml", ``, false, 400, []string{"folder in query should be one of"}},
	{"manifest delete installing", "DELETE", b + "/clusters/{sno_cluster_id}/manifests?file_name=a.yaml", ``, false, 409, []string{"pre-installation"}},
	{"manifest download missing", "GET", b + "/clusters/{cluster_id}/manifests/files?folder=openshift&file_name=fixture.yaml", ``, false, 404,
		[]string{"Cluster manifest openshift/fixture.yaml doesn't exist in cluster {cluster_id}"}},
	{"manifest download directory", "GET", b + "/clusters/{cluster_id}/manifests/files?file_name=a%2Fb.yaml", ``, false, 400, []string{"should not include a directory"}},
	{"manifest download no name", "GET", b + "/clusters/{cluster_id}/manifests/files", ``, false, 400, []string{"file_name in query is required"}},
	{"manifest download unknown cluster", "GET", b + "/clusters/{unknown}/manifests/files?file_name=a.yaml", ``, false, 404, nil},

	// Routes that do not exist.
	{"unknown v2 path", "GET", b + "/nope", ``, false, 404, []string{"no route"}},
	{"unknown path", "GET", "/nope", ``, false, 404, []string{"no route"}},
	{"root", "GET", "/", ``, false, 404, nil},
	{"trailing slash", "GET", b + "/clusters/", ``, false, 404, nil},
	{"wrong method on collection", "DELETE", b + "/clusters", ``, false, 0, nil},
	{"wrong method on item", "PUT", b + "/clusters/{cluster_id}", `{}`, false, 0, nil},
	{"wrong method on health", "POST", "/health", `{}`, false, 0, nil},
}

// newInstallingSNO makes a single-node cluster whose host reported a
// sufficient inventory, and starts its installation: a cluster and host
// past the statuses that accept changes.
func (h *harness) newInstallingSNO(t *testing.T) fixture {
	t.Helper()
	f := h.newReadySNO(t)
	if r := h.user(t, "POST", f.path(clusterPat+"/actions/install"), ""); r.status != http.StatusAccepted {
		t.Fatalf("install SNO = %d %s, want 202", r.status, r.body)
	}
	return f
}

// newReadySNO makes a single-node cluster whose host reported a
// sufficient inventory: ready to install.
func (h *harness) newReadySNO(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	one := int64(1)
	c, err := h.client.RegisterCluster(ctx, wire.ClusterCreateParams{
		Name: "sno", OpenshiftVersion: "4.18", PullSecret: pullSecret, BaseDNSDomain: "example.com", ControlPlaneCount: &one,
	})
	if err != nil {
		t.Fatalf("RegisterCluster: %v", err)
	}
	cid := c.ID
	ie, err := h.client.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: "sno", PullSecret: pullSecret, ClusterID: &cid})
	if err != nil {
		t.Fatalf("RegisterInfraEnv: %v", err)
	}
	f := fixture{clusterID: cid, infraEnvID: ie.ID, hostID: uuid.NewString()}
	if _, err := h.client.RegisterHost(ctx, f.infraEnvID, wire.HostCreateParams{HostID: f.hostID}); err != nil {
		t.Fatalf("RegisterHost: %v", err)
	}
	if _, err := h.client.NextSteps(ctx, f.infraEnvID, f.hostID, time.Now().Unix(), 0); err != nil {
		t.Fatalf("NextSteps: %v", err)
	}
	if r := h.agent(t, "POST", f.path(hostPat+"/instructions"), inventoryReply()); r.status != http.StatusNoContent {
		t.Fatalf("post inventory = %d %s, want 204", r.status, r.body)
	}
	if r := h.agent(t, "POST", f.path(hostPat+"/instructions"), domainReply(c)); r.status != http.StatusNoContent {
		t.Fatalf("post domain resolution = %d %s, want 204", r.status, r.body)
	}
	return f
}

func TestBadInput(t *testing.T) {
	h := newHarness(t)
	f := h.newFixture(t)
	sno := h.newInstallingSNO(t)
	before, err := h.client.GetCluster(context.Background(), f.clusterID)
	if err != nil {
		t.Fatalf("GetCluster: %v", err)
	}
	unknown := uuid.NewString()
	fill := strings.NewReplacer("{cluster_id}", f.clusterID, "{infra_env_id}", f.infraEnvID, "{host_id}", f.hostID,
		"{sno_cluster_id}", sno.clusterID, "{sno_infra_env_id}", sno.infraEnvID, "{sno_host_id}", sno.hostID,
		"{unknown}", unknown)
	for _, c := range badCases {
		t.Run(c.name, func(t *testing.T) {
			var r response
			if c.agent {
				r = h.agent(t, c.method, fill.Replace(c.path), fill.Replace(c.body))
			} else {
				r = h.user(t, c.method, fill.Replace(c.path), fill.Replace(c.body))
			}
			switch {
			case c.want == 0 && (r.status == http.StatusNotFound || r.status == http.StatusMethodNotAllowed):
			case r.status != c.want:
				t.Fatalf("%s %s = %d %.300s, want %d", c.method, c.path, r.status, r.body, c.want)
			}
			reason := checkErrorBody(t, r.status, r.header, r.body)
			for _, w := range c.reason {
				if !strings.Contains(reason, fill.Replace(w)) {
					t.Errorf("reason %q does not mention %q", reason, w)
				}
			}
		})
	}

	// The service still serves, and nothing above left an object behind.
	h.checkHealthy(t)
	ctx := context.Background()
	clusters, err := h.client.ListClusters(ctx)
	if err != nil {
		t.Fatalf("ListClusters after the bad requests: %v", err)
	}
	var gotIDs []string
	for _, c := range clusters {
		gotIDs = append(gotIDs, c.ID)
	}
	wantIDs := []string{f.clusterID, sno.clusterID}
	sort.Strings(gotIDs)
	sort.Strings(wantIDs)
	if diff := cmp.Diff(wantIDs, gotIDs); diff != "" {
		t.Errorf("cluster ids after the bad requests (-want +got):\n%s", diff)
	}
	for _, fx := range []fixture{f, sno} {
		hosts, err := h.client.ListHosts(ctx, fx.infraEnvID)
		if err != nil {
			t.Fatalf("ListHosts(%s): %v", fx.infraEnvID, err)
		}
		if len(hosts) != 1 || hosts[0].ID != fx.hostID {
			t.Errorf("hosts of infra-env %s = %v, want only %s", fx.infraEnvID, hosts, fx.hostID)
		}
	}
	ies, err := h.client.ListInfraEnvs(ctx, "")
	if err != nil {
		t.Fatalf("ListInfraEnvs: %v", err)
	}
	if len(ies) != 2 {
		t.Errorf("got %d infra-envs after the bad requests, want 2", len(ies))
	}
	ms, err := h.client.ListClusterManifests(ctx, f.clusterID)
	if err != nil {
		t.Fatalf("ListClusterManifests: %v", err)
	}
	if len(ms) != 1 || ms[0].FileName != fixtureManifest || ms[0].Folder != wire.ManifestFolderManifests {
		t.Errorf("fixture manifests after the bad requests = %v, want only manifests/%s", ms, fixtureManifest)
	}
	got, err := h.client.GetCluster(ctx, f.clusterID)
	if err != nil {
		t.Fatalf("GetCluster: %v", err)
	}
	if got.Name != before.Name || got.Status != before.Status || !got.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("fixture cluster = %q %s updated %v, want %q %s updated %v: refused requests change nothing",
			got.Name, got.Status, got.UpdatedAt, before.Name, before.Status, before.UpdatedAt)
	}
}

// TestWellFormedBodiesAccepted is the control for TestBadInput: trailing
// whitespace is not trailing data, and unknown fields are ignored as
// go-openapi ignores them.
func TestWellFormedBodiesAccepted(t *testing.T) {
	h := newHarness(t)
	for name, body := range map[string]string{
		"trailing newline": validCluster + "\n",
		"padding":          " \r\n" + validCluster + " \t\r\n",
		"unknown field":    clusterBody(`"no_such_field":{"a":[1,2]}`),
	} {
		t.Run(name, func(t *testing.T) {
			if r := h.user(t, "POST", b+"/clusters", body); r.status != http.StatusCreated {
				t.Errorf("POST clusters = %d %s, want 201", r.status, r.body)
			}
		})
	}
}

// TestNullArrayElements sends a null where an array holds objects. The
// service must refuse it (or skip it) as it does for api_vips, and keep
// serving: a panic under the model lock would leave every later request
// waiting forever. Each case gets its own service, so one wedged service
// does not hide the next case.
func TestNullArrayElements(t *testing.T) {
	cases := []struct {
		name, method, pattern, body string
		agent                       bool
		field                       string // the reason names it on a 400
	}{
		{"register cluster_networks", "POST", b + "/clusters", clusterBody(`"cluster_networks":[null]`), false, "cluster_networks[0]"},
		{"register service_networks", "POST", b + "/clusters", clusterBody(`"service_networks":[null]`), false, "service_networks[0]"},
		{"register machine_networks", "POST", b + "/clusters", clusterBody(`"machine_networks":[null]`), false, "machine_networks[0]"},
		{"register api_vips", "POST", b + "/clusters", clusterBody(`"api_vips":[null]`), false, "api_vips[0]"},
		{"update cluster_networks", "PATCH", clusterPat, `{"cluster_networks":[null]}`, false, "cluster_networks[0]"},
		{"update service_networks", "PATCH", clusterPat, `{"service_networks":[null]}`, false, "service_networks[0]"},
		{"update machine_networks", "PATCH", clusterPat, `{"user_managed_networking":true,"machine_networks":[null]}`, false, "machine_networks[0]"},
		{"update ingress_vips", "PATCH", clusterPat, `{"ingress_vips":[null]}`, false, "ingress_vips[0]"},
		{"update disks_selected_config", "PATCH", hostPat, `{"disks_selected_config":[null]}`, false, "disks_selected_config[0]"},
		{"inventory disks", "POST", hostPat + "/instructions", `{"step_type":"inventory","output":"{\"disks\":[null]}"}`, true, "disks[0]"},
		{"inventory interfaces", "POST", hostPat + "/instructions", `{"step_type":"inventory","output":"{\"interfaces\":[null],\"routes\":[null],\"gpus\":[null]}"}`, true, "interfaces[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ft := &fuzzTarget{scheme: auth.User}
			if c.agent {
				ft.scheme = auth.Agent
			}
			t.Cleanup(func() {
				for i := len(ft.closers) - 1; i >= 0; i-- {
					ft.closers[i]()
				}
			})
			if err := ft.start(t.TempDir()); err != nil {
				t.Fatal(err)
			}
			rec, ok := ft.within(c.method, ft.fx.path(c.pattern), "", []byte(c.body), ft.hdr)
			if !ok {
				t.Fatalf("%s %s: no answer within %v", c.method, c.pattern, fuzzTimeout)
			}
			if rec.Code == http.StatusBadRequest {
				if reason := checkErrorBody(t, rec.Code, rec.Header(), rec.Body.Bytes()); !strings.Contains(reason, c.field) {
					t.Errorf("reason %q does not name %s", reason, c.field)
				}
			} else if rec.Code >= 300 {
				t.Errorf("%s %s = %d %s, want 400 naming %s (or the null skipped)", c.method, c.pattern, rec.Code, rec.Body, c.field)
			}
			hr, ok := ft.within("GET", ft.fx.path(clusterPat), "", nil, map[string]string{"Authorization": ft.h.tokens[auth.User]})
			if !ok {
				t.Fatalf("GET cluster after the null: no answer within %v: the service is wedged", fuzzTimeout)
			}
			if hr.Code != http.StatusOK {
				t.Errorf("GET cluster after the null = %d %s, want 200", hr.Code, hr.Body)
			}
		})
	}
}
