package hostagent

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// maxNextInstructionSeconds bounds the pause the service may ask for.
const maxNextInstructionSeconds = 3600

// instructionLoop asks for instructions and starts them until the service
// says "exit", the host is gone, GETs fail for giveUpAfter, or ctx is done
// (the real agent's next_step_runner, docs/reference/agent-and-installer.md §1.6).
func (a *Agent) instructionLoop(ctx context.Context, s session) endReason {
	log := a.log.With(slog.String(keyHost, s.hostID), slog.String(keyInfraEnv, s.infraEnvID))
	// A fresh cache per registration, as each real runner process has: the
	// service resets a re-registered host and needs its inventory again.
	cache := newReplyCache(a.cacheTTL, a.now)
	retry := a.getBackoff()
	var failingSince, lastGet time.Time
	for {
		if gap := a.minPollGap - a.now().Sub(lastGet); gap > 0 && !backoff.Sleep(ctx, gap) {
			return endCancelled
		}
		lastGet = a.now()
		// One request id per session: the GET and the replies it causes. A
		// retry is a new session (transcript §1, §5).
		sctx := wire.WithRequestID(ctx, wire.NewRequestID())
		steps, err := a.client.NextSteps(sctx, s.infraEnvID, s.hostID, a.now().Unix(), a.cfg.Wait)
		if err != nil {
			if ctx.Err() != nil {
				return endCancelled
			}
			cache.clear()
			if wire.IsStatus(err, http.StatusNotFound) {
				// The real agent freezes forever here; registering again
				// recreates a deregistered host, and registration itself
				// backs off while the infra-env is missing.
				log.Error("host or infra-env not found, registering again", slog.Any(keyErr, err))
				return endNotFound
			}
			if failingSince.IsZero() {
				failingSince = a.now()
			}
			if a.now().Sub(failingSince) >= a.giveUpAfter {
				log.Error("instructions unreachable, registering again",
					slog.Any(keyErr, err), slog.Duration(keyDuration, a.now().Sub(failingSince)))
				return endGaveUp
			}
			delay := retry.Next()
			a.logError(log, "next-steps", "get next steps failed", err, delay)
			if !backoff.Sleep(ctx, delay) {
				return endCancelled
			}
			continue
		}
		if !failingSince.IsZero() {
			log.Info("instructions reachable again", slog.Duration(keyDuration, a.now().Sub(failingSince)))
			a.errLog.forget("next-steps")
		}
		retry.Reset()
		failingSince = time.Time{}

		for _, st := range steps.Instructions {
			if st != nil {
				a.startStep(ctx, wire.RequestID(sctx), s, st, cache, log)
			}
		}
		if steps.PostStepAction == wire.StepsPostStepActionExit {
			log.Info("service asked the agent to exit")
			return endExit
		}
		// Clamped so that a nonsensical value cannot overflow or park the
		// agent for days; assisted-service sends 0, 60 or 120.
		next := time.Duration(min(max(steps.NextInstructionSeconds, 0), maxNextInstructionSeconds)) * time.Second
		if !backoff.Sleep(ctx, next) {
			return endCancelled
		}
	}
}

// startStep runs st in its own goroutine and posts its reply when it ends.
// Steps of one GET run concurrently (transcript §4). A step type that is
// still running from an earlier GET is not started twice: the real agent
// does the same for free-network-addresses and the disk speed check, and a
// slow step (domain-resolution took 60 s in the capture) would otherwise
// pile up once ?wait= makes polls frequent. Its running instance replies
// with its older step id, which the service accepts (transcript §7.7).
func (a *Agent) startStep(ctx context.Context, requestID string, s session, st *wire.Step, cache *replyCache, log *slog.Logger) {
	log = log.With(slog.String(keyStepType, string(st.StepType)), slog.String(keyStepID, st.StepID))
	a.mu.Lock()
	if a.running[st.StepType] {
		a.mu.Unlock()
		log.Debug("step of this type still running, not started again")
		return
	}
	a.running[st.StepType] = true
	a.mu.Unlock()

	a.wg.Go(func() {
		defer func() {
			a.mu.Lock()
			delete(a.running, st.StepType)
			a.mu.Unlock()
		}()
		start := a.now()
		log.Debug("step started", slog.Int("args", len(st.Args)))
		output, stderr, code := a.steps.Run(ctx, st.StepType, st.Args)
		took := a.now().Sub(start)
		if ctx.Err() != nil {
			log.Info("step stopped: agent stopping", slog.Duration(keyDuration, took))
			return
		}
		if code != 0 {
			log.Warn("step failed", slog.Int(keyExitCode, code), slog.String("stderr", stderr), slog.Duration(keyDuration, took))
		} else {
			log.Info("step finished", slog.Duration(keyDuration, took))
		}
		reply := wire.StepReply{StepType: st.StepType, StepID: st.StepID, ExitCode: int64(code), Output: output, Error: stderr}
		a.postReply(wire.WithRequestID(ctx, requestID), s, reply, cache, log)
	})
}

// postReply posts reply unless it repeats the last successful output of its
// step type. A failed post is logged, not retried, and leaves the cache
// alone, so the next round sends the output again (as the real agent).
func (a *Agent) postReply(ctx context.Context, s session, reply wire.StepReply, cache *replyCache, log *slog.Logger) {
	if reply.ExitCode == 0 && cache.has(reply.StepType, reply.Output) {
		log.Debug("step output unchanged, reply not sent")
		return
	}
	if err := a.client.PostStepReply(ctx, s.infraEnvID, s.hostID, reply); err != nil {
		if ctx.Err() == nil {
			a.logError(log, "reply:"+string(reply.StepType), "posting step reply failed", err, 0,
				slog.Int(keyStatus, wire.StatusCode(err)))
		}
		return
	}
	if reply.ExitCode == 0 {
		cache.store(reply.StepType, reply.Output)
	}
}
