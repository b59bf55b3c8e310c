package store

import (
	"strings"
	"time"
)

// Event is an events row. The ids are plain text, not references: events
// outlive the clusters, hosts and infra-envs they mention. "" means none.
// Props is the caller's JSON, kept as given (nil stays nil).
type Event struct {
	Seq        int64     // assigned by AddEvent, strictly increasing
	Time       time.Time // zero: AddEvent sets Now()
	Name       string
	Severity   string
	Category   string
	Message    string
	ClusterID  string
	HostID     string
	InfraEnvID string
	RequestID  string
	Props      []byte
}

// EventFilter selects events. Empty fields do not filter; the set ones
// combine with AND, except HostIDs and ClusterLevel, which combine with OR
// as in assisted-service's GET /v2/events (internal/events/event.go,
// buildDisjunctiveQuery): HostIDs {a} with ClusterLevel gives host a's
// events and the events of no host.
type EventFilter struct {
	ClusterID    string
	InfraEnvID   string
	HostIDs      []string // events of any of these hosts
	Severities   []string // events of any of these severities
	Categories   []string // events of any of these categories
	ClusterLevel bool     // events without a host
	// Message keeps events whose message contains it, ignoring ASCII case
	// (SQLite's lower(); non-ASCII letters must match exactly).
	Message string
	// Limit caps the number of events returned; 0 or less means no cap
	// (the API's default limit is the caller's business). Offset skips that
	// many first.
	Limit, Offset int
	// Descending returns the newest first. Events are ordered by (Time, Seq).
	Descending bool
}

const eventColumns = `seq, time, name, severity, category, message, cluster_id, host_id, infra_env_id, request_id, props`

// AddEvent stores the event and returns its sequence number. Seq in e is
// ignored; a zero Time becomes Now().
func (t *Tx) AddEvent(e Event) (int64, error) {
	const op = "add event"
	if e.Time.IsZero() {
		e.Time = t.now
	}
	ns, err := nanos(op, e.Time)
	if err != nil {
		return 0, err
	}
	res, err := t.exec(op, `INSERT INTO events (time, name, severity, category, message,
			cluster_id, host_id, infra_env_id, request_id, props)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ns[0], e.Name, e.Severity, e.Category, e.Message,
		nullString(e.ClusterID), nullString(e.HostID), nullString(e.InfraEnvID), e.RequestID, jsonText(e.Props))
	if err != nil {
		return 0, err
	}
	seq, err := res.LastInsertId()
	if err != nil {
		return 0, wrapErr(op, err)
	}
	return seq, nil
}

func scanEvent(sc scanner) (Event, error) {
	var e Event
	var at int64
	var cluster, host, infraEnv *string
	if err := sc.Scan(&e.Seq, &at, &e.Name, &e.Severity, &e.Category, &e.Message,
		&cluster, &host, &infraEnv, &e.RequestID, &e.Props); err != nil {
		return Event{}, err
	}
	e.Time = fromNanos(at)
	e.ClusterID, e.HostID, e.InfraEnvID = deref(cluster), deref(host), deref(infraEnv)
	return e, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Events returns the events that match f, ordered by (Time, Seq).
func (t *Tx) Events(f EventFilter) ([]Event, error) {
	const op = "list events"
	where, args := f.where(true)
	q := `SELECT ` + eventColumns + ` FROM events` + where
	if f.Descending {
		q += ` ORDER BY time DESC, seq DESC`
	} else {
		q += ` ORDER BY time, seq`
	}
	if f.Limit > 0 || f.Offset > 0 {
		limit := -1 // SQLite: no limit; OFFSET needs a LIMIT before it
		if f.Limit > 0 {
			limit = f.Limit
		}
		q += ` LIMIT ? OFFSET ?`
		args = append(args, limit, max(f.Offset, 0))
	}
	rows, err := t.tx.QueryContext(t.ctx, q, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, scanEvent)
}

// EventCounts counts the events that match f, ignoring Limit and Offset,
// for the Severity-Count-* and Event-Count headers of GET /v2/events.
// total honours every other field of f. bySeverity also ignores
// f.Severities, as assisted-service counts severities before it filters on
// them (internal/events/event.go, queryEvents), so a client showing only
// errors still learns how many warnings there are. Severities with no
// events are absent from the map.
func (t *Tx) EventCounts(f EventFilter) (bySeverity map[string]int, total int, err error) {
	const op = "count events"
	where, args := f.where(false)
	rows, err := t.tx.QueryContext(t.ctx, `SELECT severity, count(*) FROM events`+where+` GROUP BY severity`, args...)
	if err != nil {
		return nil, 0, wrapErr(op, err)
	}
	defer rows.Close()
	bySeverity = map[string]int{}
	for rows.Next() {
		var sev string
		var n int
		if err := rows.Scan(&sev, &n); err != nil {
			return nil, 0, wrapErr(op, err)
		}
		bySeverity[sev] = n
	}
	if err := rows.Err(); err != nil {
		return nil, 0, wrapErr(op, err)
	}
	if len(f.Severities) == 0 {
		for _, n := range bySeverity {
			total += n
		}
		return bySeverity, total, nil
	}
	seen := map[string]bool{}
	for _, s := range f.Severities {
		if !seen[s] {
			seen[s] = true
			total += bySeverity[s]
		}
	}
	return bySeverity, total, nil
}

// where builds the WHERE clause for f, with or without its severities.
func (f EventFilter) where(severities bool) (string, []any) {
	var conds []string
	var args []any
	if f.ClusterID != "" {
		conds, args = append(conds, "cluster_id = ?"), append(args, f.ClusterID)
	}
	if f.InfraEnvID != "" {
		conds, args = append(conds, "infra_env_id = ?"), append(args, f.InfraEnvID)
	}
	switch {
	case len(f.HostIDs) > 0 && f.ClusterLevel:
		conds = append(conds, "(host_id IN ("+placeholders(len(f.HostIDs))+") OR host_id IS NULL)")
		args = appendStrings(args, f.HostIDs)
	case len(f.HostIDs) > 0:
		conds = append(conds, "host_id IN ("+placeholders(len(f.HostIDs))+")")
		args = appendStrings(args, f.HostIDs)
	case f.ClusterLevel:
		conds = append(conds, "host_id IS NULL")
	}
	if severities && len(f.Severities) > 0 {
		conds = append(conds, "severity IN ("+placeholders(len(f.Severities))+")")
		args = appendStrings(args, f.Severities)
	}
	if len(f.Categories) > 0 {
		conds = append(conds, "category IN ("+placeholders(len(f.Categories))+")")
		args = appendStrings(args, f.Categories)
	}
	if f.Message != "" {
		// instr, not LIKE: no wildcard characters to escape in the pattern.
		conds, args = append(conds, "instr(lower(message), lower(?)) > 0"), append(args, f.Message)
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func appendStrings(args []any, ss []string) []any {
	for _, s := range ss {
		args = append(args, s)
	}
	return args
}
