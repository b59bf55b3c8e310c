package store

import (
	"fmt"
	"time"
)

// ManifestInfo is a manifests row without its content: what a listing and
// the service's model need.
type ManifestInfo struct {
	ClusterID string
	Folder    string // "manifests" or "openshift"; the store does not check
	FileName  string
	Source    string // "user" or "system"; the store does not check
	Size      int64  // bytes of content
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Manifest is a manifests row: a custom manifest of a cluster, its content
// the decoded file, kept byte for byte.
type Manifest struct {
	ManifestInfo
	Content []byte
}

const manifestInfoColumns = `cluster_id, folder, file_name, source, length(content), created_at, updated_at`

func scanManifestInfo(sc scanner) (ManifestInfo, error) {
	var m ManifestInfo
	var ca, ua int64
	if err := sc.Scan(&m.ClusterID, &m.Folder, &m.FileName, &m.Source, &m.Size, &ca, &ua); err != nil {
		return ManifestInfo{}, err
	}
	m.CreatedAt, m.UpdatedAt = fromNanos(ca), fromNanos(ua)
	return m, nil
}

func manifestOp(verb, clusterID, folder, fileName string) string {
	return fmt.Sprintf("%s manifest %s/%s of cluster %s", verb, folder, fileName, clusterID)
}

// Manifest returns one manifest with its content, or ErrNotFound.
func (t *Tx) Manifest(clusterID, folder, fileName string) (Manifest, error) {
	var m Manifest
	var ca, ua int64
	row := t.tx.QueryRowContext(t.ctx, `SELECT `+manifestInfoColumns+`, content FROM manifests
		WHERE cluster_id = ? AND folder = ? AND file_name = ?`, clusterID, folder, fileName)
	if err := row.Scan(&m.ClusterID, &m.Folder, &m.FileName, &m.Source, &m.Size, &ca, &ua, &m.Content); err != nil {
		return Manifest{}, wrapErr(manifestOp("get", clusterID, folder, fileName), err)
	}
	m.CreatedAt, m.UpdatedAt = fromNanos(ca), fromNanos(ua)
	if m.Content == nil {
		m.Content = []byte{} // an empty BLOB scans as nil; the row has content
	}
	return m, nil
}

// Manifests lists the manifests of a cluster, or of every cluster when
// clusterID is "", without their content, ordered by cluster, folder and
// file name.
func (t *Tx) Manifests(clusterID string) ([]ManifestInfo, error) {
	op := "list manifests of cluster " + clusterID
	q := `SELECT ` + manifestInfoColumns + ` FROM manifests WHERE cluster_id = ?1 OR ?1 IS NULL
		ORDER BY cluster_id, folder, file_name`
	if clusterID == "" {
		op = "list manifests"
	}
	rows, err := t.tx.QueryContext(t.ctx, q, nullString(clusterID))
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, scanManifestInfo)
}

// PutManifest inserts the manifest or replaces the content and source of
// the stored one with the same key. Size and the timestamps in m are
// ignored: CreatedAt is Now() at the first insert, UpdatedAt is Now() when
// the row is new or its content or source changed, so putting the same file
// again leaves the row as it was. A ClusterID naming no cluster is
// ErrConflict.
func (t *Tx) PutManifest(m Manifest) error {
	op := manifestOp("put", m.ClusterID, m.Folder, m.FileName)
	ns, err := nanos(op, t.now)
	if err != nil {
		return err
	}
	_, err = t.exec(op, `INSERT INTO manifests (cluster_id, folder, file_name, content, source, created_at, updated_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
		ON CONFLICT (cluster_id, folder, file_name) DO UPDATE SET
			updated_at = CASE WHEN manifests.content = excluded.content AND manifests.source = excluded.source
				THEN manifests.updated_at ELSE excluded.updated_at END,
			content = excluded.content,
			source = excluded.source`,
		m.ClusterID, m.Folder, m.FileName, blob(m.Content), m.Source, ns[0])
	return err
}

// MoveManifest renames a manifest within its cluster, replacing any
// manifest stored under the new name, and keeps its content, source and
// creation time. The move happens inside the transaction, so it sees what
// earlier statements of the same transaction wrote. A missing manifest is
// ErrNotFound; moving one onto itself changes nothing.
func (t *Tx) MoveManifest(clusterID, folder, fileName, toFolder, toFileName string) error {
	op := manifestOp("move", clusterID, folder, fileName) + " to " + toFolder + "/" + toFileName
	if folder == toFolder && fileName == toFileName {
		var one int
		err := t.tx.QueryRowContext(t.ctx, `SELECT 1 FROM manifests WHERE cluster_id = ? AND folder = ? AND file_name = ?`,
			clusterID, folder, fileName).Scan(&one)
		if err != nil {
			return wrapErr(op, err)
		}
		return t.checkWrite(op)
	}
	ns, err := nanos(op, t.now)
	if err != nil {
		return err
	}
	// "WHERE" after the SELECT is what lets SQLite parse the upsert clause
	// of an INSERT ... SELECT.
	res, err := t.exec(op, `INSERT INTO manifests (cluster_id, folder, file_name, content, source, created_at, updated_at)
		SELECT cluster_id, ?4, ?5, content, source, created_at, ?6 FROM manifests
			WHERE cluster_id = ?1 AND folder = ?2 AND file_name = ?3
		ON CONFLICT (cluster_id, folder, file_name) DO UPDATE SET
			content = excluded.content,
			source = excluded.source,
			updated_at = excluded.updated_at`,
		clusterID, folder, fileName, toFolder, toFileName, ns[0])
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
	return t.execOne(op, `DELETE FROM manifests WHERE cluster_id = ? AND folder = ? AND file_name = ?`, clusterID, folder, fileName)
}

// DeleteManifest deletes one manifest, or returns ErrNotFound.
func (t *Tx) DeleteManifest(clusterID, folder, fileName string) error {
	return t.execOne(manifestOp("delete", clusterID, folder, fileName),
		`DELETE FROM manifests WHERE cluster_id = ? AND folder = ? AND file_name = ?`, clusterID, folder, fileName)
}

// blob binds b as a BLOB that is never NULL: the content column is NOT
// NULL, and an empty file is still a file.
func blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
