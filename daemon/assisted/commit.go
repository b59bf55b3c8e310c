package assisted

import (
	"context"
	"fmt"
	"sync"

	"github.com/nodezero/nodezero/store"
)

// A commit is the rows and events one request changed, already marshalled,
// waiting for the writer.
type commit struct {
	ops  []func(*store.Tx) error
	done chan error
	seq  uint64 // its place in the queue, from 1
}

// commitQueue is an unbounded FIFO of commits: requests append to it while
// holding the model lock, so it must never block.
type commitQueue struct {
	mu     sync.Mutex
	items  []*commit
	ready  chan struct{} // one token: there may be items
	closed bool
	pushed uint64 // the last seq handed out

	// What the writer has finished: every commit up to durable is on
	// disk or failed; failures counts the failed groups. Readers wait on
	// it (view), so that nothing is shown before it is durable.
	durMu    sync.Mutex
	durCond  *sync.Cond
	durable  uint64
	failures uint64
}

func (q *commitQueue) init() {
	q.ready = make(chan struct{}, 1)
	q.durCond = sync.NewCond(&q.durMu)
}

// last returns the seq of the last commit pushed.
func (q *commitQueue) last() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushed
}

// finished records that the writer is done with every commit up to seq,
// failed or not.
func (q *commitQueue) finished(seq uint64, failed bool) {
	q.durMu.Lock()
	q.durable = max(q.durable, seq)
	if failed {
		q.failures++
	}
	q.durMu.Unlock()
	q.durCond.Broadcast()
}

// failed returns how many groups have failed so far.
func (q *commitQueue) failed() uint64 {
	q.durMu.Lock()
	defer q.durMu.Unlock()
	return q.failures
}

// wait blocks until every commit up to seq is finished and returns the
// failure count then.
func (q *commitQueue) wait(seq uint64) uint64 {
	q.durMu.Lock()
	defer q.durMu.Unlock()
	for q.durable < seq {
		q.durCond.Wait()
	}
	return q.failures
}

func (q *commitQueue) push(c *commit) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		c.done <- fmt.Errorf("service is shutting down")
		return
	}
	q.pushed++
	c.seq = q.pushed
	q.items = append(q.items, c)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns every queued commit, or nil and false once closed and empty.
func (q *commitQueue) take() ([]*commit, bool) {
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		closed := q.closed
		q.mu.Unlock()
		if len(items) > 0 {
			return items, true
		}
		if closed {
			return nil, false
		}
		<-q.ready
	}
}

func (q *commitQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// writer commits queued work in groups: everything queued while the previous
// transaction was being written goes into the next one (group commit), so a
// burst of agents shares fsyncs. Each request learns whether its own rows are
// durable. A failed transaction fails the whole group and reloads the model,
// so memory never keeps what the store lost.
func (s *Service) writer() {
	defer s.wg.Done()
	for {
		group, ok := s.queue.take()
		if !ok {
			// Nothing will be written any more: release every reader.
			s.queue.finished(^uint64(0), false)
			return
		}
		err := s.store.Update(context.Background(), func(tx *store.Tx) error {
			for _, c := range group {
				for _, op := range c.ops {
					if err := op(tx); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			err = internal(err, "store write failed")
			s.log.Error("commit failed; reloading state from the store", "err", err, "requests", len(group))
			s.mu.Lock()
			// Later commits were built on the state that just failed: fail them too.
			rest, _ := s.queue.drain()
			group = append(group, rest...)
			s.reloadLocked()
			s.mu.Unlock()
		} else if s.reload.Load() {
			// A panic left the model suspect: reload it once what was
			// queued before it is written.
			s.mu.Lock()
			if _, more := s.queue.peek(); !more {
				s.reloadLocked()
			}
			s.mu.Unlock()
		}
		var last uint64
		for _, c := range group {
			last = max(last, c.seq)
		}
		s.queue.finished(last, err != nil)
		for _, c := range group {
			c.done <- err
		}
	}
}

func (q *commitQueue) drain() ([]*commit, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items, len(items) > 0
}

func (q *commitQueue) peek() (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items), len(q.items) > 0
}

// reloadLocked replaces the model with the store's; a store that cannot be
// read leaves the service broken until a later reload works (apply retries
// it before every change). Callers hold s.mu.
func (s *Service) reloadLocked() {
	s.reload.Store(false)
	if err := s.load(context.Background()); err != nil {
		s.log.Error("reload from the store", "err", err)
		s.broken = err
		return
	}
	s.broken = nil
}
