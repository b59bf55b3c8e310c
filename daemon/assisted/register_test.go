package assisted

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/wire"
)

func TestRegisterNewHost(t *testing.T) {
	e := newEnv(t)
	clusterID, ie := e.cluster(nil)
	id := uuid.NewString()
	// The agent puts its version in the body and in the header; a body
	// without it takes the header's.
	resp, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: id}, "agent:header")
	if err != nil {
		t.Fatalf("RegisterHost: %v", err)
	}
	h := resp.Host
	got := []string{string(h.Status), h.StatusInfo, string(h.Role), string(h.Kind), h.RequestedHostname, h.DiscoveryAgentVersion, deref(h.ClusterID)}
	want := []string{"discovering", "Waiting for host to send hardware details", "auto-assign", "Host", id, "agent:header", clusterID}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("registered host (status, status_info, role, kind, requested_hostname, agent version, cluster) mismatch (-want +got):\n%s", diff)
	}
	if h.Href != "/api/assisted-install/v2/infra-envs/"+ie+"/hosts/"+id {
		t.Errorf("href = %q", h.Href)
	}
	// A new host's progress_stages is [], as assisted writes it.
	if b, err := json.Marshal(resp); err != nil || !strings.Contains(string(b), `"progress_stages":[]`) {
		t.Errorf("registration answer %s (%v): want progress_stages []", b, err)
	}

	// next_step_runner_command.args is one JSON text (transcript §1.1).
	cmd := resp.NextStepRunnerCommand
	if cmd == nil || len(cmd.Args) != 1 {
		t.Fatalf("next_step_runner_command = %+v, want one arg", cmd)
	}
	var runner map[string]string
	if err := json.Unmarshal([]byte(cmd.Args[0]), &runner); err != nil {
		t.Fatalf("next_step_runner_command.args[0] %q is not JSON: %v", cmd.Args[0], err)
	}
	wantRunner := map[string]string{"agent_version": "agent:header", "host_id": id, "infra_env_id": ie}
	if diff := cmp.Diff(wantRunner, runner); diff != "" {
		t.Errorf("runner args mismatch (-want +got):\n%s", diff)
	}

	evs := e.events(EventsQuery{ClusterID: clusterID, HostIDs: []string{id}})
	if !hasEvent(evs, "host_registration_succeeded", fmt.Sprintf("Host %s: Successfully registered", id)) {
		t.Errorf("no host_registration_succeeded event; got %q", eventLines(evs))
	}
	// The first instructions are inventory only (transcript §7.8).
	steps := e.checkIn(ie, id)
	if len(steps.Instructions) != 1 || steps.Instructions[0].StepType != wire.StepTypeInventory {
		t.Errorf("first instructions = %+v, want inventory only", steps.Instructions)
	}
}

// TestReRegisterKnownHost: a host that registers again is treated as new
// hardware (assisted transition.go PostRegisterHost resets the inventory,
// progress and bootstrap flag): it is discovering until its next inventory,
// and its next instructions hold inventory only (transcript §1.1). The
// answer is shaped as assisted's: the host as a new registration builds it,
// status and status_info null, no stages of the role it had.
func TestReRegisterKnownHost(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.readyCluster()
	id := hosts[0]
	before := e.host(ie, id)
	if before.SuggestedRole != wire.HostRoleMaster || len(before.ProgressStages) == 0 {
		t.Fatalf("before: suggested role %s, stages %v; want a master's", before.SuggestedRole, before.ProgressStages)
	}

	resp, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: id, DiscoveryAgentVersion: "agent:v2"}, "")
	if err != nil {
		t.Fatalf("RegisterHost again: %v, want success (201 in assisted)", err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"status": "null", "status_info": "null", "role": `"auto-assign"`, "suggested_role": `"auto-assign"`,
		"progress_stages": "[]", "id": `"` + id + `"`, "kind": `"Host"`, "bootstrap": "",
		"inventory": "", "validations_info": "", "progress": "",
	} {
		if string(got[k]) != want {
			t.Errorf("re-registration answer: %s = %s, want %s", k, got[k], want)
		}
	}
	h := e.host(ie, id)
	if h.Status != wire.HostStatusDiscovering {
		t.Fatalf("host after re-registration: got %s (%s), want discovering", h.Status, h.StatusInfo)
	}
	if h.Inventory != "" {
		t.Errorf("re-registered host kept its inventory (%d bytes), want it cleared", len(h.Inventory))
	}
	if h.DiscoveryAgentVersion != "agent:v2" {
		t.Errorf("discovery_agent_version = %q, want agent:v2", h.DiscoveryAgentVersion)
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusInsufficient {
		t.Errorf("cluster with a rediscovering host: got %s, want insufficient", c.Status)
	}
	msg := fmt.Sprintf("Host %s: updated status from known to discovering (Waiting for host to send hardware details)", before.RequestedHostname)
	if evs := e.events(EventsQuery{HostIDs: []string{id}}); !hasEvent(evs, "host_status_updated", msg) {
		t.Errorf("no event %q; got %q", msg, eventLines(evs))
	}
	steps := e.checkIn(ie, id)
	if len(steps.Instructions) != 1 || steps.Instructions[0].StepType != wire.StepTypeInventory {
		t.Errorf("instructions after re-registration = %+v, want inventory only", steps.Instructions)
	}
	// The inventory brings it back.
	e.postInventory(ie, id, masterInv(t, "master-0", 10))
	if h := e.host(ie, id); h.Status != wire.HostStatusKnown {
		t.Errorf("after a new inventory: got %s (%s), want known", h.Status, h.StatusInfo)
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusReady {
		t.Errorf("cluster after the host is known again: got %s, want ready", c.Status)
	}
}

// TestRegisterHostClusterNotAccepting: a cluster past ready takes no new
// hosts: 409 and a host_registration_failed event (assisted
// v2RegisterHost; a warning here, not an error of the cluster), and no
// host is created.
func TestRegisterHostClusterNotAccepting(t *testing.T) {
	for _, st := range []wire.ClusterStatus{wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling} {
		t.Run(string(st), func(t *testing.T) {
			e := newEnv(t)
			clusterID, ie, _ := e.readyCluster()
			if _, err := e.s.InstallCluster(e.ctx, clusterID); err != nil {
				t.Fatalf("InstallCluster: %v", err)
			}
			if st == wire.ClusterStatusInstalling {
				e.rewrite(clusterID, func(c *wire.Cluster) { c.Status = st }, func(h *wire.Host) { h.Status = wire.HostStatusInstalling })
			}
			id := uuid.NewString()
			_, err := e.s.RegisterHost(e.ctx, ie, &wire.HostCreateParams{HostID: id}, "")
			wantKind(t, "RegisterHost", err, KindConflict)

			evs := e.events(EventsQuery{ClusterID: clusterID, HostIDs: []string{id}})
			// A warning of the refused host: the cluster has no error.
			if len(evs) != 1 || evs[0].Name != "host_registration_failed" || evs[0].Severity != wire.EventSeverityWarning || evs[0].HostID == nil {
				t.Fatalf("events of the refused host: got %q, want one host_registration_failed warning of the host", eventLines(evs))
			}
			if evs[0].Message != Message(err) {
				t.Errorf("event message %q, want the error the agent got: %q", evs[0].Message, Message(err))
			}
			if _, err := e.s.GetHost(ie, id); KindOf(err) != KindNotFound {
				t.Errorf("GetHost of the refused host: got %v, want not found", err)
			}
			if c := e.getCluster(clusterID); c.Status != st || c.TotalHostCount != 3 {
				t.Errorf("cluster: got %s with %d hosts, want %s with 3", c.Status, c.TotalHostCount, st)
			}
		})
	}
}

func TestRegisterHostBadInput(t *testing.T) {
	e := newEnv(t)
	_, ie := e.cluster(nil)
	cases := []struct {
		name       string
		infraEnvID string
		p          *wire.HostCreateParams
		want       Kind
	}{
		{"unknown infra-env", uuid.NewString(), &wire.HostCreateParams{HostID: uuid.NewString()}, KindNotFound},
		{"infra-env id not a uuid", "not-a-uuid", &wire.HostCreateParams{HostID: uuid.NewString()}, KindBadRequest},
		{"bad host id", ie, &wire.HostCreateParams{HostID: "host-1"}, KindBadRequest},
		{"empty host id", ie, &wire.HostCreateParams{}, KindBadRequest},
		{"host id without dashes", ie, &wire.HostCreateParams{HostID: "5f0c1a2e6b1d4f3a9c2e0a1b2c3d4e02"}, KindBadRequest},
		{"no body", ie, nil, KindBadRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.RegisterHost(e.ctx, tc.infraEnvID, tc.p, "")
			wantKind(t, "RegisterHost", err, tc.want)
		})
	}
	if hs, err := e.s.ListHosts(ie); err != nil || len(hs) != 0 {
		t.Errorf("ListHosts after refused registrations: got %d hosts, %v; want none", len(hs), err)
	}
}

// TestRegisterHostUnboundInfraEnv: a host of an infra-env bound to no
// cluster registers without a cluster.
func TestRegisterHostUnboundInfraEnv(t *testing.T) {
	e := newEnv(t)
	ie, err := e.s.RegisterInfraEnv(e.ctx, &wire.InfraEnvCreateParams{Name: "pool", PullSecret: testPullSecret})
	if err != nil {
		t.Fatalf("RegisterInfraEnv: %v", err)
	}
	id := e.register(ie.ID)
	h := e.host(ie.ID, id)
	if h.ClusterID != nil || h.Status != wire.HostStatusDiscovering {
		t.Errorf("unbound host: got cluster %v status %s, want no cluster, discovering", h.ClusterID, h.Status)
	}
}
