package store

import (
	"database/sql"
	"strings"
	"time"
)

// Host is a hosts row, keyed by (InfraEnvID, ID) as in assisted-service.
// ClusterID "" means not bound to a cluster. CheckedInAt is the caller's
// (the last time the agent asked for instructions); Doc is the caller's
// JSON document.
type Host struct {
	ID              string
	InfraEnvID      string
	ClusterID       string
	Status          string
	StatusInfo      string
	StatusUpdatedAt time.Time // set by the store when Status changes
	CheckedInAt     time.Time
	CreatedAt       time.Time // set by the store at the first PutHost
	UpdatedAt       time.Time // set by the store at every PutHost
	Doc             []byte
}

// HostFilter selects hosts for Tx.Hosts. Empty fields do not filter; set
// fields must all match.
type HostFilter struct {
	InfraEnvID string
	ClusterID  string
}

const hostColumns = `infra_env_id, id, cluster_id, status, status_info, status_updated_at, checked_in_at, created_at, updated_at, doc`

func scanHost(sc scanner) (Host, error) {
	var h Host
	var cluster sql.NullString
	var su, ci, ca, ua int64
	if err := sc.Scan(&h.InfraEnvID, &h.ID, &cluster, &h.Status, &h.StatusInfo, &su, &ci, &ca, &ua, &h.Doc); err != nil {
		return Host{}, err
	}
	h.ClusterID = cluster.String
	h.StatusUpdatedAt, h.CheckedInAt = fromNanos(su), fromNanos(ci)
	h.CreatedAt, h.UpdatedAt = fromNanos(ca), fromNanos(ua)
	return h, nil
}

// Host returns the host, or ErrNotFound.
func (t *Tx) Host(infraEnvID, id string) (Host, error) {
	row := t.tx.QueryRowContext(t.ctx, `SELECT `+hostColumns+` FROM hosts WHERE infra_env_id = ? AND id = ?`, infraEnvID, id)
	h, err := scanHost(row)
	if err != nil {
		return Host{}, wrapErr("get host "+infraEnvID+"/"+id, err)
	}
	return h, nil
}

// Hosts returns the hosts that match f, oldest first (registration order).
func (t *Tx) Hosts(f HostFilter) ([]Host, error) {
	const op = "list hosts"
	var where []string
	var args []any
	if f.InfraEnvID != "" {
		where, args = append(where, "infra_env_id = ?"), append(args, f.InfraEnvID)
	}
	if f.ClusterID != "" {
		where, args = append(where, "cluster_id = ?"), append(args, f.ClusterID)
	}
	q := `SELECT ` + hostColumns + ` FROM hosts`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	rows, err := t.tx.QueryContext(t.ctx, q+` ORDER BY created_at, infra_env_id, id`, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, scanHost)
}

// PutHost inserts the host or replaces the stored one with the same
// (InfraEnvID, ID). CreatedAt, UpdatedAt and StatusUpdatedAt are set by the
// store as in PutCluster; CheckedInAt is stored as given. An InfraEnvID or
// ClusterID naming no row is ErrConflict. Replacing a host keeps its pending
// steps.
func (t *Tx) PutHost(h Host) error {
	op := "put host " + h.InfraEnvID + "/" + h.ID
	ns, err := nanos(op, h.CheckedInAt, t.now)
	if err != nil {
		return err
	}
	checkedIn, now := ns[0], ns[1]
	_, err = t.exec(op, `INSERT INTO hosts (infra_env_id, id, cluster_id, status, status_info,
			status_updated_at, checked_in_at, created_at, updated_at, doc)
		VALUES (?1, ?2, ?3, ?4, ?5, ?7, ?6, ?7, ?7, ?8)
		ON CONFLICT (infra_env_id, id) DO UPDATE SET
			cluster_id = excluded.cluster_id,
			status = excluded.status,
			status_info = excluded.status_info,
			status_updated_at = CASE WHEN hosts.status <> excluded.status
				THEN excluded.status_updated_at ELSE hosts.status_updated_at END,
			checked_in_at = excluded.checked_in_at,
			updated_at = excluded.updated_at,
			doc = excluded.doc`,
		h.InfraEnvID, h.ID, nullString(h.ClusterID), h.Status, h.StatusInfo,
		checkedIn, now, docText(h.Doc))
	return err
}

// DeleteHost deletes the host and its pending steps, or returns ErrNotFound.
// Its events stay.
func (t *Tx) DeleteHost(infraEnvID, id string) error {
	return t.execOne("delete host "+infraEnvID+"/"+id, `DELETE FROM hosts WHERE infra_env_id = ? AND id = ?`, infraEnvID, id)
}
