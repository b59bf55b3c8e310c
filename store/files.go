package store

import "fmt"

// A cluster file is one output of a cluster's installation preparation:
// install-config.yaml, bootstrap.ign, master.ign, worker.ign,
// metadata.json, the credentials, and each host's Ignition under
// "hosts/<host id>.ign". The store keeps names and bytes; what they mean is
// the service's.

func fileOp(verb, clusterID, name string) string {
	return fmt.Sprintf("%s file %s of cluster %s", verb, name, clusterID)
}

// ReplaceClusterFiles makes files the whole set of the cluster's files:
// those of an earlier preparation go.
func (t *Tx) ReplaceClusterFiles(clusterID string, files map[string][]byte) error {
	if err := t.DeleteClusterFiles(clusterID); err != nil {
		return err
	}
	ns, err := nanos(fileOp("put", clusterID, "*"), t.now)
	if err != nil {
		return err
	}
	for name, content := range files {
		if err := t.execOne(fileOp("put", clusterID, name),
			`INSERT INTO cluster_files (cluster_id, name, content, created_at) VALUES (?, ?, ?, ?)`,
			clusterID, name, blob(content), ns[0]); err != nil {
			return err
		}
	}
	return nil
}

// PutClusterFile adds or replaces one file of the cluster.
func (t *Tx) PutClusterFile(clusterID, name string, content []byte) error {
	op := fileOp("put", clusterID, name)
	ns, err := nanos(op, t.now)
	if err != nil {
		return err
	}
	_, err = t.exec(op, `INSERT INTO cluster_files (cluster_id, name, content, created_at) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (cluster_id, name) DO UPDATE SET content = excluded.content, created_at = excluded.created_at`,
		clusterID, name, blob(content), ns[0])
	return err
}

// ClusterFile returns one file's content, or ErrNotFound.
func (t *Tx) ClusterFile(clusterID, name string) ([]byte, error) {
	var b []byte
	row := t.tx.QueryRowContext(t.ctx, `SELECT content FROM cluster_files WHERE cluster_id = ? AND name = ?`, clusterID, name)
	if err := row.Scan(&b); err != nil {
		return nil, wrapErr(fileOp("get", clusterID, name), err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// ClusterFileNames lists the names of the cluster's files, sorted.
func (t *Tx) ClusterFileNames(clusterID string) ([]string, error) {
	op := fileOp("list", clusterID, "*")
	rows, err := t.tx.QueryContext(t.ctx, `SELECT name FROM cluster_files WHERE cluster_id = ? ORDER BY name`, clusterID)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, wrapErr(op, err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapErr(op, err)
	}
	return names, nil
}

// DeleteClusterFiles removes every file of the cluster.
func (t *Tx) DeleteClusterFiles(clusterID string) error {
	_, err := t.exec(fileOp("delete", clusterID, "*"), `DELETE FROM cluster_files WHERE cluster_id = ?`, clusterID)
	return err
}
