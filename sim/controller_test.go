package sim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/hostagent/installer"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

const (
	apiPrefix   = "/api/assisted-install/v2"
	testHost    = "5f1b7a2c-1111-4222-8333-444455556666"
	testIE      = "16618ffc-1111-4222-8333-444455556666"
	testCluster = "2a7f0e64-1111-4222-8333-444455556666"
)

// fakeNodeZero is node zero's API as a booted host meets it: it logs the
// stages reported, answers a stage it already has with 409 (a restarted
// host) and lists the host with the status it gives, and moves the
// cluster from installing to finalizing on the second read.
type fakeNodeZero struct {
	mu        sync.Mutex
	stages    []string // "<stage>[: info]"
	status    wire.HostStatus
	have      map[wire.HostStage]bool // stages node zero answers with 409
	cluster   wire.ClusterStatus
	gets      int
	completes []bool
}

func (f *fakeNodeZero) serve(t *testing.T) *wire.Client {
	t.Helper()
	write := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT "+apiPrefix+"/infra-envs/{ie}/hosts/{host}/progress", func(w http.ResponseWriter, r *http.Request) {
		var p wire.HostProgress
		_ = json.NewDecoder(r.Body).Decode(&p)
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.have[p.CurrentStage] {
			write(w, http.StatusConflict, map[string]string{"reason": "the host is already at " + string(p.CurrentStage)})
			return
		}
		line := string(p.CurrentStage)
		if p.ProgressInfo != "" {
			line += ": " + p.ProgressInfo
		}
		f.stages = append(f.stages, line)
		write(w, http.StatusOK, wire.Host{ID: r.PathValue("host")})
	})
	mux.HandleFunc("GET "+apiPrefix+"/infra-envs/{ie}/hosts", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		write(w, http.StatusOK, []*wire.Host{{ID: testHost, Status: f.status, StatusInfo: "the host was reset"}})
	})
	mux.HandleFunc("GET "+apiPrefix+"/clusters/{id}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.gets++
		if f.gets == 2 {
			f.cluster = wire.ClusterStatusFinalizing
		}
		write(w, http.StatusOK, wire.Cluster{ID: r.PathValue("id"), Status: f.cluster})
	})
	mux.HandleFunc("POST "+apiPrefix+"/clusters/{id}/actions/complete-installation", func(w http.ResponseWriter, r *http.Request) {
		var p wire.CompletionParams
		_ = json.NewDecoder(r.Body).Decode(&p)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.completes = append(f.completes, p.IsSuccess != nil && *p.IsSuccess)
		f.cluster = wire.ClusterStatusInstalled
		write(w, http.StatusAccepted, wire.Cluster{ID: r.PathValue("id"), Status: f.cluster})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := wire.NewClient(srv.URL, wire.WithAgentToken("agent-jwt"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// counter is an Observer counting requests by kind.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) Observe(kind string, _ time.Duration, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[kind]++
}

func stagesOf(steps ...installer.BootedStep) []string {
	var out []string
	for _, s := range steps {
		out = append(out, string(s.Stage)+": "+s.Info)
	}
	return out
}

func TestControllerRun(t *testing.T) {
	worker := stagesOf(installer.BootedSteps(wire.HostRoleWorker, 0)...)
	master := stagesOf(installer.BootedSteps(wire.HostRoleMaster, 3)...)
	bootstrap := stagesOf(installer.BootedSteps(wire.HostRoleBootstrap, 3)...)
	for _, tc := range []struct {
		name       string
		role       wire.HostRole
		verify     error
		status     wire.HostStatus  // the host's status at node zero
		have       []wire.HostStage // stages node zero already has (409)
		neverJoin  bool
		wantStages []string
		wantHeld   bool
		wantStatus string // the last status line
		wantKinds  map[string]int
		wantDone   []bool // complete-installation calls
	}{
		{name: "worker", role: wire.HostRoleWorker, status: wire.HostStatusInstallingInProgress,
			wantStages: worker, wantStatus: "Host installed (simulated OpenShift)", wantKinds: map[string]int{KindProgress: len(worker)}},
		{name: "bootstrap completes once finalizing", role: wire.HostRoleBootstrap, status: wire.HostStatusInstallingInProgress,
			wantStages: bootstrap, wantStatus: "Host installed (simulated OpenShift)",
			wantKinds: map[string]int{KindProgress: len(bootstrap), KindGetCluster: 2, KindComplete: 1}, wantDone: []bool{true}},
		{name: "disk not as written", role: wire.HostRoleMaster, verify: errors.New("digest mismatch"), status: wire.HostStatusInstallingInProgress,
			wantStages: []string{"Failed: digest mismatch"}, wantHeld: true, wantKinds: map[string]int{KindProgress: 1}},
		{name: "restarted: a stage node zero has", role: wire.HostRoleMaster, status: wire.HostStatusInstallingInProgress,
			have: []wire.HostStage{wire.HostStageConfiguring}, wantStages: master[1:], wantStatus: "Host installed (simulated OpenShift)",
			wantKinds: map[string]int{KindProgress: len(master), KindListHosts: 1}},
		{name: "refused: node zero has the host in error", role: wire.HostRoleMaster, status: wire.HostStatusError,
			have: []wire.HostStage{wire.HostStageConfiguring}, wantHeld: true,
			wantStatus: "Installed disk booted, but node zero refused this host: report Configuring: node zero refused the stage: node zero has the host error (the host was reset)",
			wantKinds:  map[string]int{KindProgress: 1, KindListHosts: 1}},
		{name: "never joins", role: wire.HostRoleMaster, status: wire.HostStatusInstallingInProgress, neverJoin: true,
			wantStages: master[:1], wantHeld: true, wantKinds: map[string]int{KindProgress: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNodeZero{status: tc.status, have: map[wire.HostStage]bool{}, cluster: wire.ClusterStatusInstalling}
			for _, s := range tc.have {
				f.have[s] = true
			}
			client := f.serve(t)
			obs := &counter{n: map[string]int{}}
			var status []string
			c := &Controller{Agent: client, NeverJoin: tc.neverJoin, Observer: obs, Status: func(s string) { status = append(status, s) }}
			if tc.role == wire.HostRoleBootstrap {
				c.Cluster = client
			}
			d := &onhost.BootDisk{Disk: "/dev/null", ClusterID: testCluster, InfraEnvID: testIE, HostID: testHost, Role: string(tc.role), ControlPlaneCount: 3}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := c.Run(ctx, d, func() error { return tc.verify })
			if got := errors.Is(err, ErrHeld); got != tc.wantHeld || (err != nil && !tc.wantHeld) {
				t.Errorf("Run = %v, want held %v", err, tc.wantHeld)
			}
			if tc.verify != nil && !errors.Is(err, tc.verify) {
				t.Errorf("Run = %v, want it to wrap the verify error %v", err, tc.verify)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if d := cmp.Diff(tc.wantStages, f.stages); d != "" {
				t.Errorf("stages node zero took (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantDone, f.completes); d != "" {
				t.Errorf("complete-installation calls (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantKinds, obs.n); d != "" {
				t.Errorf("requests observed (-want +got):\n%s", d)
			}
			last := ""
			if len(status) > 0 {
				last = status[len(status)-1]
			}
			if last != tc.wantStatus {
				t.Errorf("last status line %q, want %q", last, tc.wantStatus)
			}
		})
	}
}

// A report node zero refuses for good (a 4xx other than a conflict, a
// timeout or a throttle) ends Run with that error, not held.
func TestControllerReportRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"reason":"wrong token scheme"}`))
	}))
	defer srv.Close()
	client, err := wire.NewClient(srv.URL, wire.WithAgentToken("agent-jwt"))
	if err != nil {
		t.Fatal(err)
	}
	c := &Controller{Agent: client}
	err = c.Run(context.Background(), &onhost.BootDisk{InfraEnvID: testIE, HostID: testHost, Role: string(wire.HostRoleMaster), ControlPlaneCount: 3}, func() error { return nil })
	if wire.StatusCode(err) != http.StatusForbidden || errors.Is(err, ErrHeld) || !strings.HasPrefix(err.Error(), "report Configuring: ") {
		t.Errorf("Run = %v, want the 403 of the first report, not held", err)
	}
}
