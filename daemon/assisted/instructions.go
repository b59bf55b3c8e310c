package assisted

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// backedOff are the statuses in which assisted-service tells agents to poll
// half as often.
func backedOff(st wire.HostStatus) bool {
	switch st {
	case wire.HostStatusDisconnected, wire.HostStatusError, wire.HostStatusCancelled, wire.HostStatusResettingPendingUserAction:
		return true
	}
	return false
}

// The cadence of agents that do not long-poll. assisted-installer-agent
// sleeps next_instruction_seconds between two requests, and a forming
// cluster needs a request per host for each thing that happens: the
// inventory, then the checks, then the checks again once every peer has
// one, then preparation, then install. At assisted's 60 s each of these is
// a minute; node zero asks for less while the cluster forms, as many
// requests a second as it can answer beside everything else, and 60 s
// again once nothing is pending.
const (
	// formingPollRate is how many instructions requests a second a forming
	// cluster's agents make together: the interval grows with the hosts
	// so that their sum stays at this rate. A hundred hosts poll every
	// 2 s, a thousand every 20 s, 3,000 or more every 60 s (assisted's own
	// load). A request hands out the steps that are due (takeSteps), and
	// their cost grows with the hosts: at a thousand, the connectivity
	// check lists 999 peers (150 KB of args) and its report is 300 KB.
	// Measured, when every request still handed out every step, with `nodezero loadtest --cadence upstream` on
	// 2 cores that the simulated agents share: 50 a second cost the
	// service 7-8 % of a core at 100 hosts and 20 % at 1,000, whose hosts
	// were known in 38-44 s with a p99 instructions answer of about 1 s
	// and no error; at 100 a second the thousand took 175 s, requests
	// waited up to a minute and 404 reports were cut off.
	formingPollRate = 50
	// formingMinSeconds is the shortest interval: the upstream agent runs
	// every step of its status on each request (a scan of the machine
	// network, NTP, DNS), and the slower of them take a second or two.
	formingMinSeconds = 2
	// formingQuiet ends the short interval for a cluster in which no
	// status has changed for this long: it is not forming but waiting,
	// for a person (to start the install, to fix a host), or for a host
	// that does not come. Hosts powered on one after another arrive
	// minutes apart; when one arrives later still, its peers hear of it
	// within assisted's 60 s, as they would from assisted-service.
	formingQuiet = 10 * time.Minute
)

// pollFacts are what decides how long an agent that does not long-poll
// waits before its next request.
type pollFacts struct {
	Host    wire.HostStatus
	Cluster wire.ClusterStatus // "": the host is bound to no cluster
	Hosts   int                // the hosts of the cluster, each with an agent that polls
	// Quiet is how long ago the cluster or one of its hosts last changed
	// status (a host registering is one).
	Quiet time.Duration
	// Slot is the host's own second of each period (pollSlot), Now the
	// service's clock in Unix seconds.
	Slot uint32
	Now  int64
}

// pollSeconds is next_instruction_seconds for an agent that does not
// long-poll; base is assisted's (Config.NextInstructionSeconds, 60).
// Backed-off statuses get twice base, as assisted's. A host of a forming
// cluster polls every Hosts/formingPollRate seconds, at least
// formingMinSeconds and at most base, each host in its own second of that
// period (Slot), so that hosts that came up together do not poll
// together: the first wait lands the host on its second (between
// formingMinSeconds and a period plus that), the next ones are a period.
// Forming: the host is discovering, insufficient, pending-for-input,
// known, preparing for the installation or prepared; its cluster is before
// the install (pending-for-input, insufficient, ready,
// preparing-for-installation) or adding hosts (day 2); and a status in it
// changed less than formingQuiet ago. Everything else gets base:
// installing hosts (the install step is handed out once, the installer
// reports on its own), installed, a cluster in error or cancelled, one
// that waits on someone.
func pollSeconds(f pollFacts, base int64) int64 {
	if backedOff(f.Host) {
		return 2 * base
	}
	if !formingHost(f.Host) || !formingCluster(f.Cluster) || f.Quiet >= formingQuiet {
		return base
	}
	n := int64(max(f.Hosts, 1))
	period := min(max((n+formingPollRate-1)/formingPollRate, formingMinSeconds), base)
	if period < formingMinSeconds {
		return period // a base shorter than the minimum: no slots to spread over
	}
	// Seconds until the host's slot comes round again.
	next := ((int64(f.Slot)%period-f.Now)%period + period) % period
	if next < formingMinSeconds {
		next += period
	}
	return next
}

// pollSlot is the host's slot among the seconds of a polling period: its
// id hashed, so that it stays the same across requests and restarts.
func pollSlot(hostID string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(hostID)) // a hash.Hash never fails to write
	return h.Sum32()
}

func formingHost(st wire.HostStatus) bool {
	switch st {
	case wire.HostStatusDiscovering, wire.HostStatusInsufficient, wire.HostStatusPendingForInput, wire.HostStatusKnown,
		wire.HostStatusPreparingForInstallation, wire.HostStatusPreparingSuccessful:
		return true
	}
	return false
}

func formingCluster(st wire.ClusterStatus) bool {
	switch st {
	case wire.ClusterStatusPendingForInput, wire.ClusterStatusInsufficient, wire.ClusterStatusReady,
		wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusAddingHosts:
		return true
	}
	return false
}

// pollFactsOf gathers h's pollFacts. Callers hold the model lock. It walks
// the cluster's hosts for the latest status change: a request of an agent
// that does not long-poll already costs as much (its connectivity check
// lists every host), and the interval keeps those requests to
// formingPollRate a second.
func (s *Service) pollFactsOf(h *hostRec, now time.Time) pollFacts {
	f := pollFacts{Host: h.h.Status, Slot: pollSlot(h.h.ID), Now: now.Unix()}
	c := s.clusters[h.clusterID()]
	if c == nil {
		return f
	}
	f.Cluster, f.Hosts = c.c.Status, len(c.hosts)
	last := c.c.StatusUpdatedAt.Time()
	for _, o := range c.hosts {
		if t := o.h.StatusUpdatedAt.Time(); t.After(last) {
			last = t
		}
	}
	f.Quiet = now.Sub(last)
	return f
}

// NextSteps answers an agent's instructions request (v2GetNextSteps). It
// records the check-in and the host's clock. With wait == 0 it behaves as
// assisted-service: every step of the host's status, and a poll interval,
// shorter than assisted's while the host's cluster forms (pollSeconds).
// With wait > 0 (our extension, ?wait=) it returns only the steps that are
// due, holding the request until one is or the wait ends; the agent is then
// told to ask again at once.
func (s *Service) NextSteps(ctx context.Context, infraEnvID, hostID string, timestamp int64, wait time.Duration, agentVersion string) (*wire.Steps, error) {
	if wait > s.cfg.MaxWait {
		wait = s.cfg.MaxWait
	}
	// A held request is no check-in: one is recorded when a request
	// arrives or a held one wakes, never while it is held, since a host
	// whose cable was pulled mid-request looks no different from one still
	// waiting. So the wait is at most a third of the disconnection timeout
	// (assisted's 60 s poll is a third of its 3 m): an agent that is there
	// checks in often enough never to look disconnected, also in statuses
	// with no repeating step (installing-in-progress).
	if limit := s.cfg.DisconnectionTimeout / 3; limit > 0 && wait > limit {
		wait = limit
	}
	// The wait is real time whatever the service's clock says (a test
	// clock, a clock stepped by NTP): it holds a real request.
	deadline := time.Now().Add(wait)
	for {
		steps, wake, next, err := s.takeSteps(ctx, infraEnvID, hostID, timestamp, wait > 0, agentVersion)
		if err != nil || len(steps.Instructions) > 0 || wait <= 0 {
			return steps, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return steps, nil
		}
		if next > 0 && next < left {
			left = next
		}
		timer := time.NewTimer(left)
		if s.heldHook != nil {
			s.heldHook()
		}
		select {
		case <-ctx.Done():
			timer.Stop()
			return steps, nil
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// takeSteps checks the host in and hands out what is due. For a long-poll
// agent it also returns the channel that is closed when something becomes
// due and how long until a repeating step is due again.
func (s *Service) takeSteps(ctx context.Context, infraEnvID, hostID string, timestamp int64, longPoll bool, agentVersion string) (*wire.Steps, <-chan struct{}, time.Duration, error) {
	out := &wire.Steps{PostStepAction: wire.StepsPostStepActionContinue}
	var wake <-chan struct{}
	var next time.Duration
	err := s.updateAgent(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		now := s.cfg.Now().UTC()
		wasDisconnected := h.h.Status == wire.HostStatusDisconnected
		h.h.CheckedInAt = wire.DateTime(now)
		if timestamp > 0 {
			h.h.Timestamp = timestamp
		}
		if agentVersion != "" {
			h.h.DiscoveryAgentVersion = agentVersion
		}
		if wasDisconnected {
			t.touchHost(h) // the check-in itself may reconnect it
		}
		plan := planFor(h.h.Status)
		if h.agent.issued == nil || h.agent.issuedFor != h.h.Status {
			h.agent.issued = map[wire.StepType]time.Time{}
			h.agent.issuedFor = h.h.Status
		}
		// An agent that polls is handed the steps that are due by the
		// middle of its next period: as assisted's, every step of the
		// status at its 60 s; while its cluster forms and it comes back
		// every few seconds (pollSeconds), each check still repeats at
		// StepInterval (an upstream agent runs every step it is handed:
		// a scan of the machine network every 2 s would be 30 times
		// assisted's), and what changed (a status, the hosts to probe)
		// is acted on at its next request.
		var pollNext int64
		var slack time.Duration
		if !longPoll {
			pollNext = pollSeconds(s.pollFactsOf(h, now), s.cfg.NextInstructionSeconds)
			slack = time.Duration(pollNext) * time.Second / 2
		}
		for _, row := range plan {
			st := row.typ
			if s.disabledSteps[st] {
				continue
			}
			last, given := h.agent.issued[st]
			interval := s.cfg.StepInterval
			if row.hold != nil {
				wait, stale := row.hold(s, h)
				if wait > 0 {
					if longPoll && (next == 0 || wait < next) {
						next = wait
					}
					continue
				}
				if stale && !row.once {
					interval = 0
				}
			}
			due := !given || (!row.once && now.Sub(last) >= interval-slack)
			if !due {
				if wait := interval - now.Sub(last); longPoll && (next == 0 || wait < next) {
					next = wait
				}
				continue
			}
			args, ok := row.args(s, h)
			if !ok {
				continue
			}
			step := &wire.Step{StepType: st, StepID: fmt.Sprintf("%s-%s", st, randomHex(4)), Args: args}
			out.Instructions = append(out.Instructions, step)
			h.agent.issued[st] = now
			// An agent does not answer a step whose output it already sent:
			// the older pending step of this type is answered by silence.
			for id, typ := range h.agent.pending {
				if typ == st {
					delete(h.agent.pending, id)
					t.deleteStep(infraEnvID, hostID, id)
				}
			}
			if h.agent.pending == nil {
				h.agent.pending = map[string]wire.StepType{}
			}
			h.agent.pending[step.StepID] = st
			if row.issued != nil {
				row.issued(s, h)
			}
			var stored []byte
			if !row.bigArgs {
				stored, _ = json.Marshal(step.Args)
			}
			t.addStep(store.Step{InfraEnvID: infraEnvID, HostID: hostID, StepID: step.StepID, StepType: string(st), Args: stored, IssuedAt: now})
		}
		out.NextInstructionSeconds = pollNext // a long-polling agent asks again at once (0)
		wake = h.agentWake()
		return nil
	})
	return out, wake, next, err
}

// agentWake returns the channel that closes when this host's agent has new
// work. Callers hold the model lock.
func (h *hostRec) agentWake() <-chan struct{} {
	if h.agent.wake == nil {
		h.agent.wake = make(chan struct{})
	}
	return h.agent.wake
}

// wakeAgent releases a waiting instructions request. Callers hold the model
// lock.
func (h *hostRec) wakeAgent() {
	if h.agent.wake != nil {
		close(h.agent.wake)
		h.agent.wake = nil
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux (Go ≥ 1.24 panics instead)
	return hex.EncodeToString(b)
}

// PostStepReply stores a step's result and re-evaluates the host
// (v2PostStepReply). Replies to steps that were not handed out, or whose id
// is stale, are accepted as assisted-service accepts them.
func (s *Service) PostStepReply(ctx context.Context, infraEnvID, hostID string, r *wire.StepReply) error {
	if r == nil {
		return badRequest("missing request body")
	}
	if r.StepType == "" {
		return badRequest("step_type: required")
	}
	// Decoded before the lock is taken: replies are the largest requests
	// (an inventory, a connectivity report).
	var keep func(*txn, *hostRec) error
	if row := stepRowOf(r.StepType); row != nil && row.reply != nil {
		var err error
		if keep, err = row.reply(s, hostKey{infraEnvID, hostID}, r); err != nil {
			return err
		}
	}
	return s.updateAgent(ctx, func(t *txn) error {
		h, err := s.hostByID(infraEnvID, hostID)
		if err != nil {
			return err
		}
		if _, ok := h.agent.pending[r.StepID]; ok {
			delete(h.agent.pending, r.StepID)
			t.deleteStep(infraEnvID, hostID, r.StepID)
		}
		if r.ExitCode != 0 {
			s.log.Warn("step failed", "host", h.name(), "step", r.StepType, "step_id", r.StepID, "exit_code", r.ExitCode, "stderr", truncate(r.Error, 512))
		}
		if keep == nil {
			return nil
		}
		return keep(t, h)
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
