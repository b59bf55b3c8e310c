package store

import (
	"database/sql"
	"errors"
	"strings"
)

// HostConnectivity is a host's connectivity-check report: the caller's
// JSON text, kept apart from the host's doc (migration 0004).
type HostConnectivity struct {
	InfraEnvID string
	HostID     string
	Report     string
}

// PutHostConnectivity stores the host's report, replacing the one it had;
// "" deletes it. The host must exist (ErrConflict otherwise).
func (t *Tx) PutHostConnectivity(infraEnvID, hostID, report string) error {
	op := "put host connectivity " + infraEnvID + "/" + hostID
	if report == "" {
		_, err := t.exec(op, `DELETE FROM host_connectivity WHERE infra_env_id = ? AND host_id = ?`, infraEnvID, hostID)
		return err
	}
	_, err := t.exec(op, `INSERT INTO host_connectivity (infra_env_id, host_id, report) VALUES (?, ?, ?)
		ON CONFLICT (infra_env_id, host_id) DO UPDATE SET report = excluded.report`,
		infraEnvID, hostID, report)
	return err
}

// HostConnectivityReport returns the host's report, "" when it has none.
func (t *Tx) HostConnectivityReport(infraEnvID, hostID string) (string, error) {
	var out string
	err := t.tx.QueryRowContext(t.ctx, `SELECT report FROM host_connectivity WHERE infra_env_id = ? AND host_id = ?`,
		infraEnvID, hostID).Scan(&out)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", wrapErr("get host connectivity "+infraEnvID+"/"+hostID, err)
	}
	return out, nil
}

// HostsConnectivity returns the reports of the hosts that match f (hosts
// without one are left out), in no particular order.
func (t *Tx) HostsConnectivity(f HostFilter) ([]HostConnectivity, error) {
	const op = "list host connectivity"
	var where []string
	var args []any
	if f.InfraEnvID != "" {
		where, args = append(where, "h.infra_env_id = ?"), append(args, f.InfraEnvID)
	}
	if f.ClusterID != "" {
		where, args = append(where, "h.cluster_id = ?"), append(args, f.ClusterID)
	}
	q := `SELECT c.infra_env_id, c.host_id, c.report FROM host_connectivity c
		JOIN hosts h ON h.infra_env_id = c.infra_env_id AND h.id = c.host_id`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	rows, err := t.tx.QueryContext(t.ctx, q, args...)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, func(sc scanner) (HostConnectivity, error) {
		var c HostConnectivity
		err := sc.Scan(&c.InfraEnvID, &c.HostID, &c.Report)
		return c, err
	})
}
