package installer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// hostAt is the cluster's host list with this test's host at status and
// stage (and, for a worker, installed masters so its wait passes).
func hostAt(req wire.InstallCmdRequest, status wire.HostStatus, stage wire.HostStage) func(int) ([]*wire.Host, error) {
	return func(int) ([]*wire.Host, error) {
		h := &wire.Host{ID: req.HostID, Role: req.Role, Status: status}
		if stage != "" {
			h.Progress = &wire.HostProgressInfo{CurrentStage: stage}
		}
		m := &wire.Host{ID: "c0ffee00-0000-4000-8000-0000000000aa", Role: wire.HostRoleMaster, Status: wire.HostStatusInstalled,
			Progress: &wire.HostProgressInfo{CurrentStage: wire.HostStageDone}}
		return []*wire.Host{h, m}, nil
	}
}

func TestRunLeavesAJournalUntilItFails(t *testing.T) {
	req := testRequest(wire.HostRoleWorker, 3)
	svc := &fakeService{hosts: hostAt(req, wire.HostStatusInstallingInProgress, "")}
	w := &fakeWriter{progress: []int{50, 100}}
	cfg := testConfig(t, req, svc, w, &fakeRebooter{})
	if err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	j, err := ReadJournal(cfg.Root)
	if err != nil || j == nil {
		t.Fatalf("journal after a successful install (reboot pending): %v, %v", j, err)
	}
	if !j.Written || j.Request.HostID != req.HostID || j.StartedAt.IsZero() {
		t.Errorf("journal = %+v, want written, with the request and a start time", j)
	}
	if fi, err := os.Stat(filepath.Join(cfg.Root, JournalPath)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("journal mode: %v, %v; want 0600", fi, err)
	}

	// A failing install reports Failed and leaves nothing to resume.
	w2 := &fakeWriter{err: errors.New("disk on fire")}
	cfg2 := testConfig(t, req, &fakeService{}, w2, &fakeRebooter{})
	if err := Run(context.Background(), cfg2); err == nil {
		t.Fatal("install with a failing writer succeeded")
	}
	if j, err := ReadJournal(cfg2.Root); err != nil || j != nil {
		t.Errorf("journal after a failed install = %+v, %v; want none", j, err)
	}
}

func TestRunStoppedKeepsTheJournalUnwritten(t *testing.T) {
	req := testRequest(wire.HostRoleMaster, 3)
	ctx, cancel := context.WithCancel(context.Background())
	w := &fakeWriter{progress: []int{10}}
	svc := &fakeService{progressErr: func(r report, n int) error {
		if r.Info == "10%" {
			cancel() // the process dies mid-write
		}
		return nil
	}}
	cfg := testConfig(t, req, svc, w, &fakeRebooter{})
	w.err = context.Canceled
	if err := Run(ctx, cfg); err == nil {
		t.Fatal("stopped install returned nil")
	}
	j, err := ReadJournal(cfg.Root)
	if err != nil || j == nil || j.Written {
		t.Fatalf("journal after a stop mid-write = %+v, %v; want one, not written", j, err)
	}
}

// TestResume covers a restart at each point of a worker's installation:
// stages already reported are not sent again, the disk is written again
// unless the journal says it was written, and the reboot follows.
func TestResume(t *testing.T) {
	req := testRequest(wire.HostRoleWorker, 3)
	cases := []struct {
		name       string
		stage      wire.HostStage
		written    bool
		wantWrites int
		wantStages []wire.HostStage // reported after the restart
	}{
		{"before any stage", "", false, 1,
			[]wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting}},
		{"after Installing", wire.HostStageInstalling, false, 1,
			[]wire.HostStage{wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting}},
		{"mid-write", wire.HostStageWritingImageToDisk, false, 1,
			// The write is reported again as percentages of the same stage.
			[]wire.HostStage{wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane, wire.HostStageRebooting}},
		{"written, not yet reported", wire.HostStageWritingImageToDisk, true, 0,
			[]wire.HostStage{wire.HostStageWaitingForControlPlane, wire.HostStageRebooting}},
		{"waiting for the control plane", wire.HostStageWaitingForControlPlane, true, 0,
			[]wire.HostStage{wire.HostStageRebooting}},
		{"rebooting", wire.HostStageRebooting, true, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{hosts: hostAt(req, wire.HostStatusInstallingInProgress, tc.stage)}
			w := &fakeWriter{progress: []int{30, 100}}
			rb := &fakeRebooter{}
			cfg := testConfig(t, wire.InstallCmdRequest{}, svc, w, rb) // the request comes from the journal
			j := &Journal{Request: req, Written: tc.written}
			if err := j.save(cfg.Root); err != nil {
				t.Fatal(err)
			}
			if err := Resume(context.Background(), cfg.Root, func(req wire.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil }); err != nil {
				t.Fatal(err)
			}
			if w.Calls() != tc.wantWrites {
				t.Errorf("writes = %d, want %d", w.Calls(), tc.wantWrites)
			}
			if got := svc.Stages(); !slices.Equal(got, tc.wantStages) {
				t.Errorf("stages reported after the restart = %q, want %q", got, tc.wantStages)
			}
			if len(rb.Calls()) != 1 {
				t.Errorf("reboots = %d, want 1", len(rb.Calls()))
			}
			j2, err := ReadJournal(cfg.Root)
			if err != nil || j2 == nil || !j2.Written || j2.Resumes != 1 {
				t.Errorf("journal after the resume = %+v, %v; want written, 1 resume", j2, err)
			}
		})
	}
}

func TestResumeNothingToResume(t *testing.T) {
	req := testRequest(wire.HostRoleMaster, 3)
	for _, status := range []wire.HostStatus{wire.HostStatusError, wire.HostStatusCancelled, wire.HostStatusInstalled, wire.HostStatusKnown} {
		t.Run(string(status), func(t *testing.T) {
			svc := &fakeService{hosts: hostAt(req, status, wire.HostStageWritingImageToDisk)}
			w := &fakeWriter{}
			cfg := testConfig(t, wire.InstallCmdRequest{}, svc, w, &fakeRebooter{})
			if err := (&Journal{Request: req}).save(cfg.Root); err != nil {
				t.Fatal(err)
			}
			err := Resume(context.Background(), cfg.Root, func(req wire.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil })
			if !errors.Is(err, ErrNothingToResume) {
				t.Fatalf("Resume with the host %s = %v, want ErrNothingToResume", status, err)
			}
			if w.Calls() != 0 || len(svc.Reports()) != 0 {
				t.Errorf("writes %d, reports %v: want none", w.Calls(), svc.Reports())
			}
			if j, _ := ReadJournal(cfg.Root); j != nil {
				t.Error("journal kept")
			}
		})
	}
	t.Run("no journal", func(t *testing.T) {
		cfg := testConfig(t, wire.InstallCmdRequest{}, &fakeService{}, &fakeWriter{}, &fakeRebooter{})
		if err := Resume(context.Background(), cfg.Root, func(req wire.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil }); !errors.Is(err, ErrNothingToResume) {
			t.Fatalf("Resume without a journal = %v", err)
		}
	})
	t.Run("corrupt journal", func(t *testing.T) {
		cfg := testConfig(t, wire.InstallCmdRequest{}, &fakeService{}, &fakeWriter{}, &fakeRebooter{})
		path := filepath.Join(cfg.Root, JournalPath)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`{"request":`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Resume(context.Background(), cfg.Root, func(req wire.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil }); !errors.Is(err, ErrNothingToResume) {
			t.Fatalf("Resume with a corrupt journal = %v", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("corrupt journal kept: %v", err)
		}
	})
}
