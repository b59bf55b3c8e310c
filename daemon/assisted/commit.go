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
}

// commitQueue is an unbounded FIFO of commits: requests append to it while
// holding the model lock, so it must never block.
type commitQueue struct {
	mu     sync.Mutex
	items  []*commit
	ready  chan struct{} // one token: there may be items
	closed bool
}

func (q *commitQueue) init() { q.ready = make(chan struct{}, 1) }

func (q *commitQueue) push(c *commit) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		c.done <- fmt.Errorf("service is shutting down")
		return
	}
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
