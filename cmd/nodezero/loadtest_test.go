package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/loadtest"
	"github.com/nodezero/nodezero/sim/simagent"
	"github.com/nodezero/nodezero/store"
)

// TestLoadtestSim runs the load program against a freshly built binary
// through a whole install: it tests the program (every host known, the
// cluster installed in the installer's order, every figure filled in, no
// error answer), not the service's speed.
func TestLoadtestSim(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a service")
	}
	bin := filepath.Join(t.TempDir(), "nodezero")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	// A short ?wait= keeps the agents asking during the one-second idle
	// window, so it has requests and CPU to measure. The install is
	// quick: short writes, reboots and installer polls.
	dir := t.TempDir()
	const hosts = 8 // three masters, five workers
	args := []string{"--agents", "sim", "--hosts", fmt.Sprint(hosts), "--idle", "1s", "--wait", "100ms", "--startups", "2",
		"--write", "200ms", "--reboot", "50ms", "--install-poll", "100ms", "--install-timeout", "2m",
		"--bin", bin, "--dir", dir, "--json"}
	if err := runLoadtest(ctx, args, &stdout, &stderr); err != nil {
		t.Fatalf("loadtest %v: %v\n%s", args, err, stderr.String())
	}
	var rep loadtest.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, stdout.String())
	}
	if rep.Mode != "sim" || rep.Hosts != hosts || len(rep.Runs) != 1 || len(rep.StartupSamplesMs) != 3 || rep.StartupMedianMs <= 0 {
		t.Fatalf("report = mode %q, %d hosts, %d runs, startup samples %v (median %v); want sim, %d, 1, 3 samples",
			rep.Mode, rep.Hosts, len(rep.Runs), rep.StartupSamplesMs, rep.StartupMedianMs, hosts)
	}
	run := rep.Runs[0]
	// Every figure but OtherCores, which is 0 on a quiet machine.
	v := reflect.ValueOf(run)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Name == "OtherCores" || f.Name == "Requests" || f.Name == "Errors" {
			continue
		}
		if v.Field(i).IsZero() {
			t.Errorf("run figure %s is zero in %+v", f.Name, run)
		}
	}
	if run.ClusterReadyS < run.AllKnownS {
		t.Errorf("cluster ready at %v s, before every host was known at %v s", run.ClusterReadyS, run.AllKnownS)
	}
	if run.Errors != 0 {
		t.Errorf("%d error answers: %+v", run.Errors, run.Requests)
	}
	if i := run.Install; i == nil || i.RolesS <= 0 || i.PreparedS <= 0 || i.InstalledS <= i.PreparedS || i.CPUS <= 0 || i.SQLiteMiB <= 0 {
		t.Errorf("install figures %+v: want all filled in, installed after installing", i)
	}
	var kinds []string
	for _, q := range run.Requests {
		kinds = append(kinds, q.Kind)
		if q.Count == 0 || q.Errors != 0 || q.P50Ms <= 0 || q.P99Ms < q.P50Ms || q.MaxMs < q.P99Ms {
			t.Errorf("requests %+v: want some, no errors, 0 < p50 <= p99 <= max", q)
		}
	}
	want := []string{simagent.KindRegister, simagent.KindNextSteps, simagent.KindNextStepsHeld, simagent.KindStepReply,
		simagent.KindStepReplyConnectivity, simagent.KindIgnition, simagent.KindProgress, simagent.KindClusterHosts, simagent.KindGetCluster, simagent.KindComplete,
		loadtest.KindInstall, loadtest.KindPoll, loadtest.KindListHosts, loadtest.KindRole}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("request kinds (-want +got):\n%s", diff)
	}
	counts := map[string]int{}
	for _, q := range run.Requests {
		counts[q.Kind] = q.Count
	}
	if counts[simagent.KindRegister] < hosts || counts[simagent.KindIgnition] != hosts || counts[loadtest.KindRole] != hosts || counts[simagent.KindComplete] != 1 {
		t.Errorf("requests %v: want a registration, an ignition and a role per host (%d), one completion", counts, hosts)
	}
	checkInstallOrder(t, filepath.Join(dir, "run-1", "nodezero.db"), hosts)
}

// checkInstallOrder reads a run's events: every host reached Done, and the
// bootstrap host (node zero) rebooted after every worker had, as the
// installer makes it wait for them.
func checkInstallOrder(t *testing.T, db string, hosts int) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var evs []store.Event
	if err := st.View(ctx, func(tx *store.Tx) error {
		evs, err = tx.Events(store.EventFilter{Message: "reached installation stage"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var bootstrap string
	if err := st.View(ctx, func(tx *store.Tx) error {
		bs, err := tx.Events(store.EventFilter{Message: "set as bootstrap"})
		if len(bs) == 1 {
			bootstrap = strings.TrimSuffix(strings.Fields(bs[0].Message)[1], ":")
		}
		return err
	}); err != nil || bootstrap == "" {
		t.Fatalf("no bootstrap host in the events (%v)", err)
	}
	rebooted := map[string]int64{}
	done := 0
	for _, e := range evs {
		// "Host: sim-worker-0005, reached installation stage Rebooting: rebooting in 50ms"
		host, stage, ok := strings.Cut(strings.TrimPrefix(e.Message, "Host: "), ", reached installation stage ")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(stage, "Rebooting"):
			rebooted[host] = e.Seq
		case strings.HasPrefix(stage, "Done"):
			done++
		}
	}
	if done != hosts || len(rebooted) != hosts {
		t.Fatalf("%d hosts reached Done and %d rebooted, want %d", done, len(rebooted), hosts)
	}
	for host, seq := range rebooted {
		if strings.HasPrefix(host, "sim-worker-") && seq > rebooted[bootstrap] {
			t.Errorf("worker %s rebooted after the bootstrap host %s", host, bootstrap)
		}
	}
}

func TestLoadtestFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"unknown agents", []string{"--agents", "vm"}},
		{"too many real hosts", []string{"--agents", "real", "--hosts", "6"}},
		{"no hardware trees", []string{"--agents", "real", "--hosts", "2", "--hw", "/nonexistent"}},
		{"no hosts", []string{"--hosts", "0"}},
		{"no runs", []string{"--runs", "0"}},
		{"pprof off loopback", []string{"--service-pprof", "0.0.0.0:6060"}},
		{"unknown cadence", []string{"--cadence", "push"}},
		{"upstream agents told to long-poll", []string{"--cadence", "upstream", "--wait", "30s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := runLoadtest(context.Background(), tt.args, &out, &out); err == nil {
				t.Errorf("loadtest %v succeeded, want a flag error", tt.args)
			}
		})
	}
}
