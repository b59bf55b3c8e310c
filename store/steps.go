package store

import "time"

// Step is an instruction issued to a host and not yet answered. Args is the
// caller's JSON, kept as given (nil stays nil).
type Step struct {
	InfraEnvID string
	HostID     string
	StepID     string
	StepType   string
	Args       []byte
	IssuedAt   time.Time // zero: the store sets Now()
}

const stepColumns = `infra_env_id, host_id, step_id, step_type, args, issued_at`

func scanStep(sc scanner) (Step, error) {
	var s Step
	var at int64
	if err := sc.Scan(&s.InfraEnvID, &s.HostID, &s.StepID, &s.StepType, &s.Args, &at); err != nil {
		return Step{}, err
	}
	s.IssuedAt = fromNanos(at)
	return s, nil
}

// PutStep records a pending step, replacing one with the same StepID for
// the same host. The host must exist (ErrConflict otherwise).
func (t *Tx) PutStep(s Step) error {
	op := "put step " + s.InfraEnvID + "/" + s.HostID + "/" + s.StepID
	if s.IssuedAt.IsZero() {
		s.IssuedAt = t.now
	}
	ns, err := nanos(op, s.IssuedAt)
	if err != nil {
		return err
	}
	_, err = t.exec(op, `INSERT INTO steps (`+stepColumns+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (infra_env_id, host_id, step_id) DO UPDATE SET
			step_type = excluded.step_type,
			args = excluded.args,
			issued_at = excluded.issued_at`,
		s.InfraEnvID, s.HostID, s.StepID, s.StepType, jsonText(s.Args), ns[0])
	return err
}

// Steps returns the host's pending steps in the order they were issued
// (IssuedAt, then insertion order).
func (t *Tx) Steps(infraEnvID, hostID string) ([]Step, error) {
	op := "list steps " + infraEnvID + "/" + hostID
	rows, err := t.tx.QueryContext(t.ctx, `SELECT `+stepColumns+` FROM steps
		WHERE infra_env_id = ? AND host_id = ? ORDER BY issued_at, rowid`, infraEnvID, hostID)
	if err != nil {
		return nil, wrapErr(op, err)
	}
	return collect(op, rows, scanStep)
}

// DeleteStep deletes one pending step (the host answered it), or returns
// ErrNotFound.
func (t *Tx) DeleteStep(infraEnvID, hostID, stepID string) error {
	return t.execOne("delete step "+infraEnvID+"/"+hostID+"/"+stepID,
		`DELETE FROM steps WHERE infra_env_id = ? AND host_id = ? AND step_id = ?`, infraEnvID, hostID, stepID)
}

// DeleteSteps deletes all of the host's pending steps; none is not an error.
func (t *Tx) DeleteSteps(infraEnvID, hostID string) error {
	_, err := t.exec("delete steps "+infraEnvID+"/"+hostID,
		`DELETE FROM steps WHERE infra_env_id = ? AND host_id = ?`, infraEnvID, hostID)
	return err
}
