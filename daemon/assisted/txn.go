package assisted

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/nodezero/nodezero/store"
)

// txn collects what one request changes in the model: rows to write or
// delete, events, pending steps, and the hosts and clusters whose facts
// changed and must be re-evaluated before the request is acknowledged.
type txn struct {
	s *Service

	putC  []*clusterRec
	putIE []*infraEnvRec
	putH  []*hostRec
	seen  map[any]bool
	dels  []func(*store.Tx) error
	steps []func(*store.Tx) error
	evs   []store.Event

	manifests []func(*store.Tx) error // manifest rows, see manifestOp
	reports   []func(*store.Tx) error // connectivity report rows (connectivity.go)

	coalesce bool                   // an agent's request: cluster-wide work goes to the evaluator
	staleC   map[string]*clusterRec // aggregates to recompute
	dirtyH   map[hostKey]*hostRec
	dirtyC   map[string]*clusterRec
	wake     map[hostKey]*hostRec
}

// update runs fn on the model under the write lock, re-evaluates what fn
// touched, queues the result for the writer and waits until it is durable.
// fn must check its input before it changes anything: when it returns an
// error, the model must be as it found it; the events it recorded are
// stored all the same.
func (s *Service) update(ctx context.Context, fn func(t *txn) error) error {
	return s.change(false, fn)
}

// updateAgent is update for the requests agents make in bulk (register,
// instructions, step replies): see settle for what it defers.
func (s *Service) updateAgent(ctx context.Context, fn func(t *txn) error) error {
	return s.change(s.cfg.EvaluationDelay > 0, fn)
}

func (s *Service) change(coalesce bool, fn func(t *txn) error) error {
	c, err := s.apply(coalesce, fn)
	if c != nil {
		if cerr := <-c.done; cerr != nil {
			if err != nil {
				s.log.Warn("events of a failed request not stored", "err", cerr)
				return err
			}
			return cerr
		}
	}
	return err
}

// apply is update's part under the lock. A panic in fn or in the
// evaluation (a bug) is turned into an internal error: the lock is
// released, and the model, which fn may have half changed, is reloaded
// from the store once the writer has written what was queued before.
func (s *Service) apply(coalesce bool, fn func(t *txn) error) (c *commit, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic while changing the model; it is reloaded from the store", "panic", v, "stack", string(debug.Stack()))
			s.reload.Store(true)
			s.queue.push(&commit{done: make(chan error, 1)}) // wakes the writer to reload
			c, err = nil, internal(fmt.Errorf("panic: %v", v), "internal error")
		}
	}()
	if s.broken != nil {
		// The last failed commit could not reload the model either: try
		// again before accepting a change on top of a model disk lacks.
		if lerr := s.load(context.Background()); lerr != nil {
			return nil, internal(lerr, "the store is unreadable")
		}
		s.broken = nil
	}
	t := &txn{s: s, coalesce: coalesce, seen: map[any]bool{}, staleC: map[string]*clusterRec{}, dirtyH: map[hostKey]*hostRec{}, dirtyC: map[string]*clusterRec{}, wake: map[hostKey]*hostRec{}}
	if err := fn(t); err != nil {
		// The request changed nothing, but what it reported is news all
		// the same (host_registration_failed goes with a 409).
		if len(t.evs) > 0 {
			c = (&txn{s: s, evs: t.evs}).commit()
			s.queue.push(c)
		}
		return c, err
	}
	t.settle()
	c = t.commit()
	for _, h := range t.wake {
		h.wakeAgent()
	}
	if c != nil {
		s.queue.push(c)
	}
	return c, nil
}

// view runs fn under the read lock.
//
// A reader sees only what is durable: the model may hold changes whose
// commit the writer has not finished, so view waits for them (one group
// commit at most) before it returns. Were the process killed meanwhile,
// nobody would have seen what the store then lacks; were the commit to
// fail, the model is reloaded and fn runs again on it.
func (s *Service) view(fn func()) {
	for attempt := 0; ; attempt++ {
		s.mu.RLock()
		seq, fails := s.queue.last(), s.queue.failed()
		fn()
		s.mu.RUnlock()
		if s.queue.wait(seq) == fails || attempt == 2 {
			return
		}
	}
}

func (t *txn) putCluster(c *clusterRec) {
	c.c.UpdatedAt = t.s.cfg.Now().UTC()
	if !t.seen[c] {
		t.seen[c] = true
		t.putC = append(t.putC, c)
	}
}

func (t *txn) putInfraEnv(ie *infraEnvRec) {
	ie.ie.UpdatedAt = t.s.cfg.Now().UTC()
	if !t.seen[ie] {
		t.seen[ie] = true
		t.putIE = append(t.putIE, ie)
	}
}

func (t *txn) putHost(h *hostRec) {
	h.h.UpdatedAt = t.s.cfg.Now().UTC()
	if !t.seen[h] {
		t.seen[h] = true
		t.putH = append(t.putH, h)
	}
}

// touchHost marks h for re-evaluation after its facts changed, and its
// cluster's aggregates as stale; touchCluster the same for c.
func (t *txn) touchHost(h *hostRec) {
	t.dirtyH[h.key()] = h
	if c := t.s.clusters[h.clusterID()]; c != nil {
		t.touchCluster(c)
	}
}

func (t *txn) touchCluster(c *clusterRec) {
	t.staleC[c.c.ID] = c
	t.dirtyC[c.c.ID] = c
}

// wakeHost hands h's agent its next steps now, if it is waiting.
func (t *txn) wakeHost(h *hostRec) { t.wake[h.key()] = h }

func (t *txn) deleteHost(h *hostRec) {
	t.seen[h] = false
	t.putH = without(t.putH, h)
	delete(t.dirtyH, h.key())
	k := h.key()
	t.dels = append(t.dels, func(tx *store.Tx) error { return tx.DeleteHost(k.infraEnvID, k.id) })
}

func (t *txn) deleteInfraEnv(ie *infraEnvRec) {
	t.putIE = without(t.putIE, ie)
	id := ie.ie.ID
	t.dels = append(t.dels, func(tx *store.Tx) error { return tx.DeleteInfraEnv(id) })
}

func (t *txn) deleteCluster(c *clusterRec) {
	t.putC = without(t.putC, c)
	delete(t.dirtyC, c.c.ID)
	delete(t.staleC, c.c.ID)
	id := c.c.ID
	t.dels = append(t.dels, func(tx *store.Tx) error { return tx.DeleteCluster(id) })
}

func without[T comparable](s []T, v T) []T {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func (t *txn) addStep(st store.Step) {
	t.steps = append(t.steps, func(tx *store.Tx) error { return tx.PutStep(st) })
}

// deleteStep forgets a pending step. A step that is not pending (answered
// twice, or from before a restart that reissued it) is not an error.
func (t *txn) deleteStep(infraEnvID, hostID, stepID string) {
	t.steps = append(t.steps, func(tx *store.Tx) error {
		if err := tx.DeleteStep(infraEnvID, hostID, stepID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
}

// commit marshals what changed into the writer's operations, parents before
// children (manifests after their cluster), deletes after puts, events last. It returns nil when nothing
// changed.
func (t *txn) commit() *commit {
	var ops []func(*store.Tx) error
	for _, c := range t.putC {
		row, err := c.row()
		ops = append(ops, func(tx *store.Tx) error {
			if err != nil {
				return err
			}
			return tx.PutCluster(row)
		})
	}
	for _, ie := range t.putIE {
		row, err := ie.row()
		ops = append(ops, func(tx *store.Tx) error {
			if err != nil {
				return err
			}
			return tx.PutInfraEnv(row)
		})
	}
	for _, h := range t.putH {
		// A copy now, the JSON in the writer: marshalling a host with its
		// inventory is the largest cost a request would otherwise pay
		// under the model lock.
		snap := h.view()
		ops = append(ops, func(tx *store.Tx) error {
			row, err := hostRow(snap)
			if err != nil {
				return err
			}
			return tx.PutHost(row)
		})
	}
	ops = append(ops, t.reports...)
	ops = append(ops, t.manifests...)
	ops = append(ops, t.dels...)
	ops = append(ops, t.steps...)
	for _, e := range t.evs {
		ops = append(ops, func(tx *store.Tx) error {
			_, err := tx.AddEvent(e)
			return err
		})
	}
	if len(ops) == 0 {
		return nil
	}
	return &commit{ops: ops, done: make(chan error, 1)}
}
