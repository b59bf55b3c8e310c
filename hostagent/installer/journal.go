package installer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/wire"
)

// An installation runs inside the host agent's process, so a crash of that
// process (SIGKILL, the OOM killer, a daemon restart) would otherwise take
// the installer with it. In ABI the installer is a container of its own
// and survives the agent; here the journal plays that part: Run records
// the install request under the host root before it reports anything, and
// whether the image is on the disk. The next start of the agent finds the
// journal and calls Resume instead of registering the host, which the
// service would treat as "restarted during installation" (an error).
//
// The journal lives in the live system (/var/lib/nodezero), which a reboot
// of a real host discards with the rest of the live image: only a process
// restart within one boot resumes. A resumed install writes the image again
// unless the journal says it was written and verified; it never reports
// a stage it has not reached.

// JournalPath is the journal's path under Config.Root.
const JournalPath = "var/lib/nodezero/install.json"

// Journal is what an installation in progress leaves on the host.
type Journal struct {
	Request   wire.InstallCmdRequest `json:"request"`
	StartedAt time.Time              `json:"started_at"`
	// Resumes counts the restarts that resumed this installation.
	Resumes int `json:"resumes,omitempty"`
	// Written: the image and ignition were written, the digest checked
	// and the disk synced. Until then a resume writes the disk again.
	Written   bool      `json:"written,omitempty"`
	WrittenAt time.Time `json:"written_at,omitzero"`
}

// ErrNothingToResume is Resume finding no installation to continue: no
// journal, or the service no longer has the host installing (it failed,
// was cancelled or reset). The journal is gone afterwards.
var ErrNothingToResume = errors.New("no installation to resume")

// ReadJournal returns the journal under root, nil when there is none.
func ReadJournal(root string) (*Journal, error) {
	path := filepath.Join(rootOr(root), JournalPath)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("install journal: %w", err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("install journal %s: %w", path, err)
	}
	if _, err := validateRequest(j.Request); err != nil {
		return nil, fmt.Errorf("install journal %s: %w", path, err)
	}
	return &j, nil
}

// RemoveJournal removes the journal under root; none is fine.
func RemoveJournal(root string) error {
	err := os.Remove(filepath.Join(rootOr(root), JournalPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (j *Journal) save(root string) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(rootOr(root), JournalPath), append(b, '\n'), 0o600)
}

func rootOr(root string) string {
	if root == "" {
		return "/"
	}
	return root
}

// resumable are the host statuses an installation can be resumed from.
var resumable = []wire.HostStatus{wire.HostStatusInstalling, wire.HostStatusInstallingInProgress}

// Resume continues the installation the journal under root records, with
// the configuration newConfig makes for its request (as Step does). It
// asks the service where the host stands (retrying for ReportRetry, as
// node zero may be starting too), skips the stages already reported,
// writes the disk again unless the journal says it was written, and goes
// on as Run does.
//
// It returns ErrNothingToResume, having removed the journal, when there is
// none to use or the service has the host in any other status than
// installing; other errors are Run's.
func Resume(ctx context.Context, root string, newConfig func(wire.InstallCmdRequest) (Config, error)) error {
	j, err := ReadJournal(root)
	if err != nil {
		_ = RemoveJournal(root) // unreadable: it cannot be resumed
		return fmt.Errorf("%w: %v", ErrNothingToResume, err)
	}
	if j == nil {
		return ErrNothingToResume
	}
	cfg, err := newConfig(j.Request)
	if err != nil {
		_ = RemoveJournal(root)
		return fmt.Errorf("%w: %v", ErrNothingToResume, err)
	}
	cfg.Root = root
	cfg = cfg.withDefaults()
	if cfg.Service == nil {
		return errors.New("resume install: config needs a Service")
	}
	cfg.Request = j.Request
	log := cfg.Logger.With(slog.String(keySubsystem, "installer"), slog.String(keyHost, j.Request.HostID))
	var host *wire.Host
	err = retry(ctx, cfg.ReportRetry, log, "read the host's install progress", func(ctx context.Context) error {
		hosts, err := cfg.Service.ClusterHosts(ctx, "")
		if err != nil {
			return err
		}
		host = nil
		for _, h := range hosts {
			if h.ID == j.Request.HostID {
				host = h
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if host == nil || !slices.Contains(resumable, host.Status) {
		status := "gone from the cluster"
		if host != nil {
			status = string(host.Status)
		}
		log.Info("install journal found but the host is not installing; dropping it", slog.String("status", status))
		if err := RemoveJournal(cfg.Root); err != nil {
			return err
		}
		return fmt.Errorf("%w: the service has the host %s", ErrNothingToResume, status)
	}
	var stage wire.HostStage
	if host.Progress != nil {
		stage = host.Progress.CurrentStage
	}
	j.Resumes++
	if err := j.save(cfg.Root); err != nil {
		return fmt.Errorf("install journal: %w", err)
	}
	log.Info("resuming the installation this process's restart cut short",
		slog.String(keyStage, string(stage)), slog.Bool("written", j.Written), slog.Int("resumes", j.Resumes))
	return run(ctx, cfg, j, stage)
}
