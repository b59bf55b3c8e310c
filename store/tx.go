package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Tx is one transaction, handed to the function given to Store.Update or
// Store.View. It is valid only during that call and must not be shared
// between goroutines.
type Tx struct {
	// ctx is the context of the Update or View call; like sql.Tx, a Tx lives
	// no longer than the call that created it.
	ctx   context.Context
	tx    *sql.Tx
	now   time.Time
	write bool
}

// Now is the store clock's reading taken when the transaction began, in UTC.
// Every timestamp the store sets in this transaction (CreatedAt, UpdatedAt,
// an event's or step's default time) is this instant, so a caller can copy
// it into its documents and both agree.
func (t *Tx) Now() time.Time { return t.now }

func (t *Tx) checkWrite(op string) error {
	if !t.write {
		return fmt.Errorf("%s: %w", op, ErrReadOnly)
	}
	return nil
}

func (t *Tx) exec(op, query string, args ...any) (sql.Result, error) {
	if err := t.checkWrite(op); err != nil {
		return nil, err
	}
	res, err := t.tx.ExecContext(t.ctx, query, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return res, nil
}

// execOne is exec for a statement that must touch exactly one row; none
// means the row is missing.
func (t *Tx) execOne(op, query string, args ...any) error {
	res, err := t.exec(op, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return wrapErr(op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	return nil
}

// Times are stored as INTEGER nanoseconds since the Unix epoch, UTC: exact,
// cheap to compare and index, and the same in every time zone. 0 stands for
// the zero time.Time ("never"), so the instant of the epoch itself cannot be
// stored; nothing in node zero's life happened in 1970. int64 nanoseconds
// cover the years 1678 to 2262; times outside that range are refused.
var (
	minTime = time.Unix(0, -1<<63).UTC()
	maxTime = time.Unix(0, 1<<63-1).UTC()
)

func toNanos(t time.Time) (int64, error) {
	if t.IsZero() {
		return 0, nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return 0, fmt.Errorf("time %s cannot be stored: outside the years 1678 to 2262", t.Format(time.RFC3339))
	}
	return t.UnixNano(), nil
}

// fromNanos is toNanos reversed; times come back in UTC.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// nanos converts several times for one statement.
func nanos(op string, ts ...time.Time) ([]int64, error) {
	out := make([]int64, len(ts))
	for i, t := range ts {
		n, err := toNanos(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out[i] = n
	}
	return out, nil
}

// nullString binds "" as NULL: an absent reference, which foreign keys
// accept and "IS NULL" finds.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonText binds caller JSON as TEXT, not BLOB: SQLite's JSON functions
// read a BLOB as its binary JSONB format, and the sqlite3 CLI shows TEXT.
// nil binds NULL.
func jsonText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// docText binds a row's document, which is NOT NULL: nil becomes "".
func docText(b []byte) string { return string(b) }

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }
