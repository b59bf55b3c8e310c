package installer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// hostAt is the cluster's host list with this test's host at status and
// stage (and, for a worker, installed masters so its wait passes).
func hostAt(req v2.InstallCmdRequest, status v2.HostStatus, stage v2.HostStage) func(int) ([]*v2.Host, error) {
	return func(int) ([]*v2.Host, error) {
		h := &v2.Host{ID: req.HostID, Role: req.Role, Status: status}
		if stage != "" {
			h.Progress = &v2.HostProgressInfo{CurrentStage: stage}
		}
		m := &v2.Host{ID: "c0ffee00-0000-4000-8000-0000000000aa", Role: v2.HostRoleMaster, Status: v2.HostStatusInstalled,
			Progress: &v2.HostProgressInfo{CurrentStage: v2.HostStageDone}}
		return []*v2.Host{h, m}, nil
	}
}

func TestRunLeavesAJournalUntilItFails(t *testing.T) {
	req := testRequest(v2.HostRoleWorker, 3)
	svc := &fakeService{hosts: hostAt(req, v2.HostStatusInstallingInProgress, "")}
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
	req := testRequest(v2.HostRoleMaster, 3)
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
	req := testRequest(v2.HostRoleWorker, 3)
	cases := []struct {
		name       string
		stage      v2.HostStage
		written    bool
		wantWrites int
		wantStages []v2.HostStage // reported after the restart
	}{
		{"before any stage", "", false, 1,
			[]v2.HostStage{v2.HostStageStartingInstallation, v2.HostStageInstalling, v2.HostStageWritingImageToDisk, v2.HostStageWaitingForControlPlane, v2.HostStageRebooting}},
		{"after Installing", v2.HostStageInstalling, false, 1,
			[]v2.HostStage{v2.HostStageWritingImageToDisk, v2.HostStageWaitingForControlPlane, v2.HostStageRebooting}},
		{"mid-write", v2.HostStageWritingImageToDisk, false, 1,
			// The write is reported again as percentages of the same stage.
			[]v2.HostStage{v2.HostStageWritingImageToDisk, v2.HostStageWaitingForControlPlane, v2.HostStageRebooting}},
		{"written, not yet reported", v2.HostStageWritingImageToDisk, true, 0,
			[]v2.HostStage{v2.HostStageWaitingForControlPlane, v2.HostStageRebooting}},
		{"waiting for the control plane", v2.HostStageWaitingForControlPlane, true, 0,
			[]v2.HostStage{v2.HostStageRebooting}},
		{"rebooting", v2.HostStageRebooting, true, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{hosts: hostAt(req, v2.HostStatusInstallingInProgress, tc.stage)}
			w := &fakeWriter{progress: []int{30, 100}}
			rb := &fakeRebooter{}
			cfg := testConfig(t, v2.InstallCmdRequest{}, svc, w, rb) // the request comes from the journal
			j := &Journal{Request: req, Written: tc.written}
			if err := j.save(cfg.Root); err != nil {
				t.Fatal(err)
			}
			if err := Resume(context.Background(), cfg.Root, func(req v2.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil }); err != nil {
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
	req := testRequest(v2.HostRoleMaster, 3)
	for _, status := range []v2.HostStatus{v2.HostStatusError, v2.HostStatusCancelled, v2.HostStatusInstalled, v2.HostStatusKnown} {
		t.Run(string(status), func(t *testing.T) {
			svc := &fakeService{hosts: hostAt(req, status, v2.HostStageWritingImageToDisk)}
			w := &fakeWriter{}
			cfg := testConfig(t, v2.InstallCmdRequest{}, svc, w, &fakeRebooter{})
			if err := (&Journal{Request: req}).save(cfg.Root); err != nil {
				t.Fatal(err)
			}
			err := Resume(context.Background(), cfg.Root, func(req v2.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil })
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
		cfg := testConfig(t, v2.InstallCmdRequest{}, &fakeService{}, &fakeWriter{}, &fakeRebooter{})
		if err := Resume(context.Background(), cfg.Root, func(req v2.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil }); !errors.Is(err, ErrNothingToResume) {
			t.Fatalf("Resume without a journal = %v", err)
		}
	})
	t.Run("corrupt journal", func(t *testing.T) {
		cfg := testConfig(t, v2.InstallCmdRequest{}, &fakeService{}, &fakeWriter{}, &fakeRebooter{})
		path := filepath.Join(cfg.Root, JournalPath)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`{"request":`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Resume(context.Background(), cfg.Root, func(req v2.InstallCmdRequest) (Config, error) { cfg.Request = req; return cfg, nil }); !errors.Is(err, ErrNothingToResume) {
			t.Fatalf("Resume with a corrupt journal = %v", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("corrupt journal kept: %v", err)
		}
	})
}
