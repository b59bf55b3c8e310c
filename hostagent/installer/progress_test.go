package installer

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestRunProgressConflictIsNotFatal(t *testing.T) {
	svc := &fakeService{progressErr: func(r report, _ int) error {
		if r.Stage == wire.HostStageInstalling {
			return &wire.APIError{StatusCode: http.StatusConflict, Reason: "stage already past"}
		}
		return nil
	}}
	rb := &fakeRebooter{}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, &fakeWriter{}, rb)
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if len(rb.Calls()) != 1 {
		t.Errorf("Reboot calls = %v, want one", rb.Calls())
	}
}

func TestRunRetriesFailingReports(t *testing.T) {
	unavailable := &wire.APIError{StatusCode: http.StatusServiceUnavailable}
	svc := &fakeService{progressErr: func(r report, n int) error {
		if r.Stage == wire.HostStageStartingInstallation && n < 2 {
			return unavailable // the service restarts
		}
		return nil
	}}
	rb := &fakeRebooter{}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, &fakeWriter{}, rb)
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	var starts int
	for _, r := range svc.Reports() {
		if r.Stage == wire.HostStageStartingInstallation {
			starts++
		}
	}
	if starts != 3 {
		t.Errorf("Starting installation sent %d times, want 3 (two failures, then success)", starts)
	}
}

func TestRunGivesUpOnAGoneService(t *testing.T) {
	svc := &fakeService{progressErr: func(report, int) error {
		return &wire.APIError{StatusCode: http.StatusBadGateway}
	}}
	rb := &fakeRebooter{}
	w := &fakeWriter{}
	cfg := testConfig(t, testRequest(wire.HostRoleMaster, 3), svc, w, rb)
	cfg.ReportRetry = 30 * time.Millisecond
	err := Run(context.Background(), cfg)
	if wire.StatusCode(err) != http.StatusBadGateway {
		t.Fatalf("Run = %v, want the service's 502", err)
	}
	reports := svc.Reports()
	if got := reports[len(reports)-1]; got.Stage != wire.HostStageFailed {
		t.Errorf("last report = %v, want one Failed attempt", got)
	}
	var failed int
	for _, r := range reports {
		if r.Stage == wire.HostStageFailed {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("Failed sent %d times, want 1 (the service is gone)", failed)
	}
	if w.Calls() != 0 || len(rb.Calls()) != 0 {
		t.Errorf("writer called %d times, reboots %v; want neither", w.Calls(), rb.Calls())
	}
}

func TestReporterRefusesToGoBack(t *testing.T) {
	svc := &fakeService{}
	r := newReporter(svc, discardLogger(), 0, stagesOf(flowMaster))
	ctx := context.Background()
	for _, s := range []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageWritingImageToDisk} {
		if err := r.stage(ctx, s, ""); err != nil {
			t.Fatalf("stage(%q) = %v", s, err)
		}
	}
	for _, s := range []wire.HostStage{wire.HostStageInstalling, wire.HostStageWritingImageToDisk, wire.HostStageWaitingForBootkube} {
		if err := r.stage(ctx, s, ""); err == nil {
			t.Errorf("stage(%q) after Writing image to disk = nil, want an error", s)
		}
	}
	if n := len(svc.Reports()); n != 2 {
		t.Errorf("%d reports sent, want 2", n)
	}
}

func TestPercentSteps(t *testing.T) {
	tests := []struct {
		name string
		in   []int
		want []string
	}{
		{"5 point steps", []int{1, 4, 5, 9, 10, 14, 15}, []string{"5%", "10%", "15%"}},
		{"jumps", []int{37, 38, 41, 42, 90}, []string{"37%", "42%", "90%"}},
		{"100 always, once", []int{97, 98, 100, 100}, []string{"97%", "100%"}},
		{"out of range clamped", []int{-3, 250}, []string{"100%"}},
		{"going back ignored", []int{50, 20, 54, 55}, []string{"50%", "55%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{}
			r := newReporter(svc, discardLogger(), 0, stagesOf(flowMaster))
			ctx := context.Background()
			if err := r.stage(ctx, wire.HostStageWritingImageToDisk, ""); err != nil {
				t.Fatal(err)
			}
			progress := r.percent(ctx)
			for _, p := range tt.in {
				progress(p)
			}
			var got []string
			for _, rep := range svc.Reports()[1:] {
				got = append(got, rep.Info)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("infos for %v (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
