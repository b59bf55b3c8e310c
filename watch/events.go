package watch

import (
	"context"

	"github.com/nodezero/nodezero/wire"
)

// EventTail reads the events that arrived since its last read. The
// service lists events oldest first, in an order that only grows for one
// filter (event time, then insertion), so the tail keeps an offset: the
// number of events it has read.
type EventTail struct {
	// Query filters the events; its Offset and Limit are the tail's own.
	Query wire.EventsQuery
	// Page is how many events one request reads; 0 reads them in one
	// request of the service's own length.
	Page int

	offset int
}

// Next returns the events after those read so far. On an error the
// offset stays: the next call reads them again.
func (t *EventTail) Next(ctx context.Context, c *wire.Client) ([]*wire.Event, error) {
	var out []*wire.Event
	for {
		q := t.Query
		q.Offset, q.Limit = t.offset, t.Page
		page, err := c.ListEvents(ctx, q)
		if err != nil {
			return out, err
		}
		t.offset += len(page)
		out = append(out, page...)
		if t.Page <= 0 || len(page) < t.Page {
			return out, nil
		}
	}
}

// Read is how many events the tail has read.
func (t *EventTail) Read() int { return t.offset }
