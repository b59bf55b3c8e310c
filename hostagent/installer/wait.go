package installer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// errorLogEvery rate-limits the log of a failing host listing while waiting.
const errorLogEvery = time.Minute

// poll calls check at once and then every interval until it answers true or
// ctx ends. A failing check is logged (once a minute while the error stays
// the same) and tried again at the next tick.
func poll(ctx context.Context, every time.Duration, log *slog.Logger, check func(context.Context) (bool, error)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	var lastMsg string
	var lastAt time.Time
	for {
		done, err := check(ctx)
		switch {
		case done:
			return nil
		case err != nil && ctx.Err() == nil:
			if msg := err.Error(); msg != lastMsg || time.Since(lastAt) >= errorLogEvery {
				log.Warn("list cluster hosts failed; still waiting", slog.Any(keyErr, err))
				lastMsg, lastAt = msg, time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// isControlPlane reports whether h is a control-plane host for the waits:
// a master, the bootstrap host among them.
func isControlPlane(h *wire.Host) bool {
	return h.Role == wire.HostRoleMaster || h.Role == wire.HostRoleBootstrap || h.Bootstrap
}

func stageOf(h *wire.Host) wire.HostStage {
	if h.Progress == nil {
		return ""
	}
	return h.Progress.CurrentStage
}

// hostName names h in messages: its hostname, else its id.
func hostName(h *wire.Host) string {
	return cmp.Or(h.RequestedHostname, h.ID)
}

// mastersInstalled is the worker's condition (assisted-installer §5.3 step
// 9): two control-plane hosts report Done or are installed, or all of them
// when the control plane has fewer. A host added to an existing cluster
// (day 2) has no control plane of its cluster to wait for. A list without
// this host in it is not the cluster's: keep waiting.
func mastersInstalled(hosts []*wire.Host, self string) bool {
	total, done, listed := 0, 0, false
	for _, h := range hosts {
		if h.ID == self {
			if h.Kind == wire.HostKindAddToExistingClusterHost {
				return true
			}
			listed = true
		}
		if !isControlPlane(h) {
			continue
		}
		total++
		if stageOf(h) == wire.HostStageDone || h.Status == wire.HostStatusInstalled {
			done++
		}
	}
	return listed && done >= min(2, total)
}

// joinState is the bootstrap host's view of the other masters.
type joinState struct {
	need    int      // how many must join
	joined  int      // how many have
	missing []string // names of those that have not, sorted
	names   []string // names of those that have, sorted
}

func (s joinState) enough() bool { return s.joined >= s.need }

// mastersJoined is the bootstrap's condition (assisted-installer §5.4):
// min(controlPlaneCount-1, 2) masters other than itself report Joined or
// a later stage, or are installed.
func mastersJoined(hosts []*wire.Host, self string, controlPlaneCount int64) joinState {
	s := joinState{need: int(min(controlPlaneCount-1, 2))}
	for _, h := range hosts {
		if h.ID == self || h.Bootstrap || h.Role != wire.HostRoleMaster {
			continue
		}
		switch stageOf(h) {
		case wire.HostStageJoined, wire.HostStageDone:
			s.joined++
			s.names = append(s.names, hostName(h))
			continue
		}
		if h.Status == wire.HostStatusInstalled {
			s.joined++
			s.names = append(s.names, hostName(h))
			continue
		}
		s.missing = append(s.missing, hostName(h))
	}
	slices.Sort(s.missing)
	slices.Sort(s.names)
	return s
}

// waitMastersInstalled blocks the worker until mastersInstalled holds.
// There is no deadline here: the service times the stage out (60 min) and
// stops the installation.
func (in *install) waitMastersInstalled(ctx context.Context) error {
	err := poll(ctx, in.cfg.Poll, in.log, func(ctx context.Context) (bool, error) {
		hosts, err := in.cfg.Service.ClusterHosts(ctx, "") // mastersInstalled looks for this host too
		if err != nil {
			return false, err
		}
		return mastersInstalled(hosts, in.req.HostID), nil
	})
	if err != nil {
		return fmt.Errorf("wait for the control plane: %w", err)
	}
	return nil
}

// ErrNotJoined is the bootstrap host's wait for the other control-plane
// hosts that ran out of time (Config.ControlPlaneTimeout).
var ErrNotJoined = errors.New("control plane hosts did not join in time")

// notJoinedError is ErrNotJoined with the message the Failed report shows.
type notJoinedError struct{ msg string }

func (e *notJoinedError) Error() string        { return e.msg }
func (e *notJoinedError) Is(target error) bool { return target == ErrNotJoined }

// waitMastersJoined blocks the bootstrap host until mastersJoined holds or
// ControlPlaneTimeout passes. On timeout the bootstrap host must not
// reboot: it is the only control plane so far, and rebooting it would lose
// the cluster (assisted-installer#910).
func (in *install) waitMastersJoined(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, in.cfg.ControlPlaneTimeout)
	defer cancel()
	var state joinState
	var listed bool
	var lastErr error
	err := poll(wctx, in.cfg.Poll, in.log, func(ctx context.Context) (bool, error) {
		hosts, err := in.cfg.Service.ClusterHosts(ctx, wire.HostRoleMaster) // mastersJoined reads masters only
		if err != nil {
			lastErr = err
			return false, err
		}
		state, listed = mastersJoined(hosts, in.req.HostID, in.req.ControlPlaneCount), true
		return state.enough(), nil
	})
	switch {
	case err == nil:
		if in.cfg.Console != nil {
			in.cfg.Console("install: the control plane joined: " + strings.Join(state.names, ", ") + "; the bootstrap host reboots next")
		}
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("wait for the control plane: %w", ctx.Err())
	}
	timeout := in.cfg.ControlPlaneTimeout
	const tail = "; not rebooting the bootstrap host"
	switch {
	case !listed:
		return &notJoinedError{fmt.Sprintf("could not list the cluster's hosts within %s (%v)%s", timeout, lastErr, tail)}
	case len(state.missing) > 0:
		return &notJoinedError{fmt.Sprintf("control plane hosts %s did not join within %s%s", strings.Join(state.missing, ", "), timeout, tail)}
	default:
		return &notJoinedError{fmt.Sprintf("only %d of %d control plane hosts joined within %s%s", state.joined, state.need, timeout, tail)}
	}
}

// workersWritten is the bootstrap host's last wait on an agent-based
// install: every worker is past Starting installation, Installing, Writing
// image to disk and Waiting for control plane (or has failed or is
// installed), so none of them needs node zero's API to finish its disk.
func workersWritten(hosts []*wire.Host) bool {
	for _, h := range hosts {
		if h.Role != wire.HostRoleWorker {
			continue
		}
		switch h.Status {
		case wire.HostStatusError, wire.HostStatusCancelled, wire.HostStatusInstalled:
			continue
		}
		switch stageOf(h) {
		case "", wire.HostStageStartingInstallation, wire.HostStageInstalling,
			wire.HostStageWritingImageToDisk, wire.HostStageWaitingForControlPlane:
			return false
		}
	}
	return true
}

// waitWorkersWritten blocks the bootstrap host until workersWritten holds.
func (in *install) waitWorkersWritten(ctx context.Context) error {
	err := poll(ctx, in.cfg.Poll, in.log, func(ctx context.Context) (bool, error) {
		hosts, err := in.cfg.Service.ClusterHosts(ctx, wire.HostRoleWorker) // workersWritten reads workers only
		if err != nil {
			return false, err
		}
		return workersWritten(hosts), nil
	})
	if err != nil {
		return fmt.Errorf("wait for the workers: %w", err)
	}
	return nil
}
