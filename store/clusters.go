package store

import (
	"database/sql"
	"fmt"
	"time"
)

// Cluster is a clusters row. Status and StatusInfo are the columns the
// service filters and shows; Doc is the caller's full JSON document, kept as
// given.
type Cluster struct {
	ID              string
	Status          string
	StatusInfo      string
	StatusUpdatedAt time.Time // set by the store when Status changes
	CreatedAt       time.Time // set by the store at the first PutCluster
	UpdatedAt       time.Time // set by the store at every PutCluster
	Doc             []byte
}

const clusterColumns = `id, status, status_info, status_updated_at, created_at, updated_at, doc`

func scanCluster(sc scanner) (Cluster, error) {
	var c Cluster
	var su, ca, ua int64
	if err := sc.Scan(&c.ID, &c.Status, &c.StatusInfo, &su, &ca, &ua, &c.Doc); err != nil {
		return Cluster{}, err
	}
	c.StatusUpdatedAt, c.CreatedAt, c.UpdatedAt = fromNanos(su), fromNanos(ca), fromNanos(ua)
	return c, nil
}

// Cluster returns the cluster with this id, or ErrNotFound.
func (t *Tx) Cluster(id string) (Cluster, error) {
	row := t.tx.QueryRowContext(t.ctx, `SELECT `+clusterColumns+` FROM clusters WHERE id = ?`, id)
	c, err := scanCluster(row)
	if err != nil {
		return Cluster{}, wrapErr("get cluster "+id, err)
	}
	return c, nil
}

// Clusters returns every cluster, oldest first.
func (t *Tx) Clusters() ([]Cluster, error) {
	const op = "list clusters"
	rows, err := t.tx.QueryContext(t.ctx, `SELECT `+clusterColumns+` FROM clusters ORDER BY created_at, id`)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, scanCluster)
}

// PutCluster inserts the cluster or replaces the stored one with the same
// id. The timestamps are the store's, and the ones in c are ignored:
// CreatedAt is Now() at the first insert and kept after, UpdatedAt is Now()
// at every put, and StatusUpdatedAt is Now() when the row is new or its
// status differs from the stored one, as assisted-service sets
// status_updated_at in the same UPDATE that changes the status
// (internal/host/hostutil/update_host.go).
func (t *Tx) PutCluster(c Cluster) error {
	op := "put cluster " + c.ID
	now, err := toNanos(t.now)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, err = t.exec(op, `INSERT INTO clusters (id, status, status_info, status_updated_at, created_at, updated_at, doc)
		VALUES (?1, ?2, ?3, ?4, ?4, ?4, ?5)
		ON CONFLICT (id) DO UPDATE SET
			status = excluded.status,
			status_info = excluded.status_info,
			status_updated_at = CASE WHEN clusters.status <> excluded.status
				THEN excluded.status_updated_at ELSE clusters.status_updated_at END,
			updated_at = excluded.updated_at,
			doc = excluded.doc`,
		c.ID, c.Status, c.StatusInfo, now, docText(c.Doc))
	return err
}

// DeleteCluster deletes the cluster, or returns ErrNotFound. Its hosts are
// deleted with it; its infra-envs stay, unbound (see migrations/0001_init.sql
// for why).
func (t *Tx) DeleteCluster(id string) error {
	return t.execOne("delete cluster "+id, `DELETE FROM clusters WHERE id = ?`, id)
}

// collect scans every row with scan and closes rows.
func collect[T any](op string, rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, wrapErr(op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr(op, err)
	}
	return out, nil
}
