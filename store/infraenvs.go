package store

import (
	"database/sql"
	"time"
)

// InfraEnv is an infra_envs row. ClusterID "" means not bound to a cluster
// (late binding); Doc is the caller's JSON document.
type InfraEnv struct {
	ID        string
	ClusterID string
	CreatedAt time.Time // set by the store at the first PutInfraEnv
	UpdatedAt time.Time // set by the store at every PutInfraEnv
	Doc       []byte
}

const infraEnvColumns = `id, cluster_id, created_at, updated_at, doc`

func scanInfraEnv(sc scanner) (InfraEnv, error) {
	var e InfraEnv
	var cluster sql.NullString
	var ca, ua int64
	if err := sc.Scan(&e.ID, &cluster, &ca, &ua, &e.Doc); err != nil {
		return InfraEnv{}, err
	}
	e.ClusterID, e.CreatedAt, e.UpdatedAt = cluster.String, fromNanos(ca), fromNanos(ua)
	return e, nil
}

// InfraEnv returns the infra-env with this id, or ErrNotFound.
func (t *Tx) InfraEnv(id string) (InfraEnv, error) {
	row := t.tx.QueryRowContext(t.ctx, `SELECT `+infraEnvColumns+` FROM infra_envs WHERE id = ?`, id)
	e, err := scanInfraEnv(row)
	if err != nil {
		return InfraEnv{}, wrapErr("get infra-env "+id, err)
	}
	return e, nil
}

// InfraEnvs returns every infra-env, oldest first.
func (t *Tx) InfraEnvs() ([]InfraEnv, error) {
	const op = "list infra-envs"
	rows, err := t.tx.QueryContext(t.ctx, `SELECT `+infraEnvColumns+` FROM infra_envs ORDER BY created_at, id`)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, scanInfraEnv)
}

// PutInfraEnv inserts the infra-env or replaces the stored one with the same
// id; timestamps as in PutCluster. A ClusterID naming no cluster is
// ErrConflict.
func (t *Tx) PutInfraEnv(e InfraEnv) error {
	op := "put infra-env " + e.ID
	ns, err := nanos(op, t.now)
	if err != nil {
		return err
	}
	_, err = t.exec(op, `INSERT INTO infra_envs (id, cluster_id, created_at, updated_at, doc)
		VALUES (?1, ?2, ?3, ?3, ?4)
		ON CONFLICT (id) DO UPDATE SET
			cluster_id = excluded.cluster_id,
			updated_at = excluded.updated_at,
			doc = excluded.doc`,
		e.ID, nullString(e.ClusterID), ns[0], docText(e.Doc))
	return err
}

// DeleteInfraEnv deletes the infra-env and, with it, its hosts and their
// steps; ErrNotFound if there is no such infra-env.
func (t *Tx) DeleteInfraEnv(id string) error {
	return t.execOne("delete infra-env "+id, `DELETE FROM infra_envs WHERE id = ?`, id)
}
