package assisted

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/wire"
)

// failedInstall starts an installation of three masters and fails the
// given host through its installer's progress report, the way a host
// reaches error. It returns the ids and the bootstrap host.
func (e *env) failedInstall(failBootstrap bool) (clusterID, ie, failed, boot string, hosts []string) {
	e.t.Helper()
	clusterID, ie, hosts = e.installing()
	for _, id := range hosts {
		if e.host(ie, id).Bootstrap {
			boot = id
		} else if failed == "" {
			failed = id
		}
	}
	if boot == "" {
		e.t.Fatal("no bootstrap host")
	}
	if failBootstrap {
		failed = boot
	}
	if err := e.s.UpdateHostProgress(e.ctx, ie, failed, &wire.HostProgress{CurrentStage: wire.HostStageFailed, ProgressInfo: "test"}); err != nil {
		e.t.Fatalf("UpdateHostProgress Failed: %v", err)
	}
	if h := e.host(ie, failed); h.Status != wire.HostStatusError {
		e.t.Fatalf("failed host is %s, want error", h.Status)
	}
	return clusterID, ie, failed, boot, hosts
}

// logsGatherRequest returns the decoded arg of the logs-gather step in s,
// failing the test unless s holds exactly logs-gather and
// stop-installation (without args).
func logsGatherRequest(t *testing.T, s *wire.Steps) wire.LogsGatherCmdRequest {
	t.Helper()
	want := []wire.StepType{wire.StepTypeLogsGather, wire.StepTypeStopInstallation}
	if diff := cmp.Diff(want, stepTypes(s)); diff != "" {
		t.Fatalf("instructions of a failed host mismatch (-want +got):\n%s", diff)
	}
	if s.NextInstructionSeconds != 120 {
		t.Errorf("next_instruction_seconds = %d, want 120", s.NextInstructionSeconds)
	}
	if args := s.Instructions[1].Args; len(args) != 0 {
		t.Errorf("stop-installation args = %q, want none", args)
	}
	var req wire.LogsGatherCmdRequest
	if err := wire.DecodeStepArg(wire.StepTypeLogsGather, s.Instructions[0].Args, &req); err != nil {
		t.Fatalf("logs-gather args: %v", err)
	}
	return req
}

func TestLogsGatherHandedToFailedHost(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, failed, _, _ := e.failedInstall(false)

	got := logsGatherRequest(t, e.checkIn(ie, failed))
	want := wire.LogsGatherCmdRequest{ClusterID: clusterID, InfraEnvID: ie, HostID: failed, InstallerGather: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logs-gather request mismatch (-want +got):\n%s", diff)
	}
	// Once per entering the status: the next request has nothing.
	if s := e.checkIn(ie, failed); len(s.Instructions) != 0 || s.NextInstructionSeconds != 120 {
		t.Errorf("second request in error = %v every %d s, want no steps every 120 s", stepTypes(s), s.NextInstructionSeconds)
	}
}

// TestLogsGatherBootstrapMasterIPs: the bootstrap host's request carries
// the other masters' machine-network addresses, for the installer gather.
func TestLogsGatherBootstrapMasterIPs(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, boot, _, hosts := e.failedInstall(true)
	if c := e.getCluster(clusterID); len(c.MachineNetworks) == 0 || c.MachineNetworks[0].CIDR != testMachineNet {
		t.Fatalf("machine networks %v, want %s", c.MachineNetworks, testMachineNet)
	}
	got := logsGatherRequest(t, e.checkIn(ie, boot))
	var wantIPs []string
	for _, id := range hosts {
		if id == boot {
			continue
		}
		var inv wire.Inventory
		if err := json.Unmarshal([]byte(e.host(ie, id).Inventory), &inv); err != nil {
			t.Fatal(err)
		}
		ip, _, _ := strings.Cut(inv.Interfaces[0].IPv4Addresses[0], "/")
		wantIPs = append(wantIPs, ip)
	}
	sort.Strings(wantIPs)
	sort.Strings(got.MasterIps)
	if !got.Bootstrap || !got.InstallerGather || !cmp.Equal(wantIPs, got.MasterIps) {
		t.Errorf("bootstrap request = bootstrap %v, installer_gather %v, master_ips %q; want true, true, %q",
			got.Bootstrap, got.InstallerGather, got.MasterIps, wantIPs)
	}
}

func TestLogsProgress(t *testing.T) {
	e := newEnv(t)
	_, ie, failed, _, _ := e.failedInstall(false)
	logsGatherRequest(t, e.checkIn(ie, failed))

	report := func(st wire.LogsState) error {
		return e.s.UpdateHostLogsProgress(e.ctx, ie, failed, &wire.LogsProgressParams{LogsState: st})
	}
	check := func(what string, info wire.LogsState, started, collected time.Time) {
		t.Helper()
		h := e.host(ie, failed)
		if h.LogsInfo != info || !h.LogsStartedAt.Time().Equal(started) || !h.LogsCollectedAt.Time().Equal(collected) {
			t.Errorf("%s: logs_info %q started %v collected %v; want %q %v %v", what, h.LogsInfo,
				h.LogsStartedAt.Time(), h.LogsCollectedAt.Time(), info, started, collected)
		}
		if h.Status != wire.HostStatusError {
			t.Errorf("%s: host is %s, want error", what, h.Status)
		}
	}
	t0 := e.clock.Now()
	if err := report(wire.LogsStateRequested); err != nil {
		t.Fatalf("requested: %v", err)
	}
	check("requested", wire.LogsStateRequested, t0, time.Time{})
	t1 := e.clock.Advance(30 * time.Second)
	if err := report(wire.LogsStateCollecting); err != nil {
		t.Fatalf("collecting: %v", err)
	}
	check("collecting", wire.LogsStateCollecting, t0, t1)
	t2 := e.clock.Advance(30 * time.Second)
	if err := report(wire.LogsStateCompleted); err != nil {
		t.Fatalf("completed: %v", err)
	}
	check("completed", wire.LogsStateCompleted, t0, t2)

	// Completed is not timed out, however long it stays.
	e.clock.Advance(time.Hour)
	if err := e.s.Tick(e.ctx); err != nil {
		t.Fatal(err)
	}
	check("an hour later", wire.LogsStateCompleted, t0, t2)
	// Collected logs are not asked for again, even by a restarted service
	// that has forgotten what it handed out.
	e.restart()
	if s := e.checkIn(ie, failed); !cmp.Equal(stepTypes(s), []wire.StepType{wire.StepTypeStopInstallation}) {
		t.Errorf("after completed and a restart: instructions %v, want only stop-installation", stepTypes(s))
	}
}

func TestLogsProgressRefused(t *testing.T) {
	e := newEnv(t)
	_, ie, failed, _, _ := e.failedInstall(false)
	for _, st := range []wire.LogsState{wire.LogsStateTimeout, wire.LogsStateEmpty, "done"} {
		err := e.s.UpdateHostLogsProgress(e.ctx, ie, failed, &wire.LogsProgressParams{LogsState: st})
		wantKind(t, "logs_state "+string(st), err, KindBadRequest)
		if msg := Message(err); !strings.Contains(msg, "logs_state") || !strings.Contains(msg, "requested, collecting, completed") {
			t.Errorf("logs_state %q: message %q does not name the field and the allowed values", st, msg)
		}
	}
	wantKind(t, "no body", e.s.UpdateHostLogsProgress(e.ctx, ie, failed, nil), KindBadRequest)
	wantKind(t, "unknown host", e.s.UpdateHostLogsProgress(e.ctx, ie, uuid.NewString(), &wire.LogsProgressParams{LogsState: wire.LogsStateRequested}), KindNotFound)
	if h := e.host(ie, failed); h.LogsInfo != "" || !h.LogsStartedAt.IsZero() {
		t.Errorf("refused reports changed the host: logs_info %q started %v", h.LogsInfo, h.LogsStartedAt)
	}
}

// TestLogsTimeout: the machine's rule reads the host's logs facts, and the
// writer sets logs_info to timeout; a timed-out host is not asked again.
func TestLogsTimeout(t *testing.T) {
	tick := func(e *env) {
		t.Helper()
		if err := e.s.Tick(e.ctx); err != nil {
			t.Fatalf("Tick: %v", err)
		}
	}
	tests := []struct {
		name    string
		reports []wire.LogsState
		before  time.Duration // still collecting after this long
		after   time.Duration // timed out after this much more
	}{
		// Never reported: HOST_LOG_PENDING_TIMEOUT (2m) from entering error.
		{"never reported", nil, 2 * time.Minute, time.Second},
		// Requested, nothing since: HOST_LOG_COLLECTION_TIMEOUT (10m) from logs_started_at.
		{"requested", []wire.LogsState{wire.LogsStateRequested}, 10 * time.Minute, time.Second},
		// Collecting, nothing since: the pending limit from the last report.
		{"collecting", []wire.LogsState{wire.LogsStateRequested, wire.LogsStateCollecting}, 2 * time.Minute, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, ie, failed, _, _ := e.failedInstall(false)
			for _, st := range tc.reports {
				if err := e.s.UpdateHostLogsProgress(e.ctx, ie, failed, &wire.LogsProgressParams{LogsState: st}); err != nil {
					t.Fatalf("report %s: %v", st, err)
				}
			}
			want := wire.LogsStateEmpty
			if n := len(tc.reports); n > 0 {
				want = tc.reports[n-1]
			}
			e.clock.Advance(tc.before)
			tick(e)
			if h := e.host(ie, failed); h.LogsInfo != want {
				t.Fatalf("after %v: logs_info %q, want %q still", tc.before, h.LogsInfo, want)
			}
			e.clock.Advance(tc.after)
			tick(e)
			h := e.host(ie, failed)
			if h.LogsInfo != wire.LogsStateTimeout || h.Status != wire.HostStatusError {
				t.Fatalf("after %v: logs_info %q, status %s; want timeout, error", tc.before+tc.after, h.LogsInfo, h.Status)
			}
			// Stored, and not asked for again after a restart.
			e.reopen()
			if h := e.host(ie, failed); h.LogsInfo != wire.LogsStateTimeout {
				t.Errorf("after reopening the store: logs_info %q, want timeout", h.LogsInfo)
			}
			if s := e.checkIn(ie, failed); !cmp.Equal(stepTypes(s), []wire.StepType{wire.StepTypeStopInstallation}) {
				t.Errorf("after timeout: instructions %v, want only stop-installation", stepTypes(s))
			}
		})
	}
}

// TestLogsTimeoutRuleName pins the rule name the writer looks for.
func TestLogsTimeoutRuleName(t *testing.T) {
	for _, r := range machine.HostRules() {
		if r.Name == ruleLogsTimedOut {
			if r.Trigger != machine.TriggerRefreshHost || r.To != "" {
				t.Errorf("rule %q: trigger %s, to %q; want RefreshHost, staying", r.Name, r.Trigger, r.To)
			}
			return
		}
	}
	t.Fatalf("daemon/machine has no host rule named %q: applyLogsTimeout would never fire", ruleLogsTimedOut)
}

func TestCancelledHostGetsLogsGather(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, hosts := e.installing()
	if _, err := e.s.CancelInstallation(e.ctx, clusterID); err != nil {
		t.Fatalf("CancelInstallation: %v", err)
	}
	for _, id := range hosts {
		req := logsGatherRequest(t, e.checkIn(ie, id))
		if req.HostID != id || req.ClusterID != clusterID || req.InfraEnvID != ie {
			t.Errorf("host %s: request %+v names another host", id, req)
		}
	}
}

func TestHostLogsUploaded(t *testing.T) {
	e := newEnv(t)
	clusterID, ie, failed, _, hosts := e.failedInstall(false)
	otherCluster, otherIE := e.cluster(&wire.ClusterCreateParams{Name: "other", OpenshiftVersion: "4.18.0", PullSecret: testPullSecret})
	stranger := e.register(otherIE)

	if err := e.s.CheckHostLogs(clusterID, ie, failed); err != nil {
		t.Errorf("CheckHostLogs of a host of the cluster: %v", err)
	}
	wantKind(t, "host of another cluster", e.s.CheckHostLogs(clusterID, otherIE, stranger), KindNotFound)
	wantKind(t, "host id not a uuid", e.s.CheckHostLogs(clusterID, ie, "h1"), KindBadRequest)
	wantKind(t, "unknown cluster", e.s.CheckHostLogs(uuid.NewString(), ie, failed), KindNotFound)
	wantKind(t, "stamp a stranger", e.s.HostLogsUploaded(e.ctx, clusterID, otherIE, stranger), KindNotFound)

	at := e.clock.Advance(time.Minute)
	if err := e.s.HostLogsUploaded(e.ctx, clusterID, ie, failed); err != nil {
		t.Fatalf("HostLogsUploaded: %v", err)
	}
	h := e.host(ie, failed)
	if !h.LogsCollectedAt.Time().Equal(at) {
		t.Errorf("logs_collected_at = %v, want %v", h.LogsCollectedAt.Time(), at)
	}
	if evs := e.events(EventsQuery{HostIDs: []string{failed}}); !hasEvent(evs, evHostLogsUploaded, "Uploaded logs for host "+h.RequestedHostname+" cluster "+clusterID) {
		t.Errorf("no %s event; got %q", evHostLogsUploaded, eventLines(evs))
	}
	if err := e.s.ControllerLogsUploaded(e.ctx, clusterID); err != nil {
		t.Fatalf("ControllerLogsUploaded: %v", err)
	}
	if c := e.getCluster(clusterID); !c.ControllerLogsCollectedAt.Time().Equal(at) {
		t.Errorf("controller_logs_collected_at = %v, want %v", c.ControllerLogsCollectedAt.Time(), at)
	}

	cl, err := e.s.LogsOf(clusterID)
	if err != nil {
		t.Fatalf("LogsOf: %v", err)
	}
	if len(cl.Hosts) != len(hosts) || cl.Name != "ostest" {
		t.Fatalf("LogsOf = %+v, want cluster ostest with %d hosts", cl, len(hosts))
	}
	lh, ok := cl.Host(ie, failed)
	if !ok {
		t.Fatalf("LogsOf has no host %s", failed)
	}
	if want := h.RequestedHostname + "_master_" + failed + ".tar.gz"; lh.FileName() != want {
		t.Errorf("host file name %q, want %q", lh.FileName(), want)
	}
	if want := "ostest_" + clusterID + ".tar"; cl.FileName() != want {
		t.Errorf("cluster file name %q, want %q", cl.FileName(), want)
	}
	if _, ok := cl.Host(otherIE, failed); ok {
		t.Error("Host with another infra-env found the host")
	}
	_, err = e.s.LogsOf(otherCluster + "x")
	wantKind(t, "LogsOf of a bad id", err, KindBadRequest)
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"master-0.example.com": "master-0.example.com",
		"a/b c":                "a_b_c",
		"../x":                 ".._x",
		"naïve":                "na_ve",
	} {
		if got := sanitizeName(in); got != want {
			t.Errorf("sanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}
