package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MigrationError reports a migration file that could not be read or applied.
// The database is left at the version before that file.
type MigrationError struct {
	File string // e.g. "0002_add_column.sql"
	Err  error
}

func (e *MigrationError) Error() string { return "migration " + e.File + ": " + e.Err.Error() }
func (e *MigrationError) Unwrap() error { return e.Err }

type migration struct {
	version int
	file    string
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// migrations lists the NNNN_name.sql files at the root of fsys in version
// order. Any other .sql name is an error rather than a file silently skipped.
func migrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		m := migrationName.FindStringSubmatch(name)
		if m == nil {
			return nil, &MigrationError{File: name, Err: fmt.Errorf("name does not match NNNN_name.sql")}
		}
		v, _ := strconv.Atoi(m[1])
		if v == 0 {
			return nil, &MigrationError{File: name, Err: fmt.Errorf("version 0000 is reserved")}
		}
		if prev, ok := seen[v]; ok {
			return nil, &MigrationError{File: name, Err: fmt.Errorf("version %04d already used by %s", v, prev)}
		}
		seen[v] = name
		ms = append(ms, migration{version: v, file: name})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// migrate applies, in version order, every migration in fsys that
// schema_migrations does not record, each in its own transaction together
// with its schema_migrations row. A failing file is rolled back whole.
//
// Versions need not be contiguous; a file whose version is below the
// highest applied one but was never applied (a merge of two branches) is
// still applied. SQLite ignores PRAGMA foreign_keys inside a transaction, so
// a future migration that rebuilds a referenced table must keep the rows
// consistent itself.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, now func() time.Time) error {
	ms, err := migrations(fsys)
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}

	applied := map[int]bool{}
	highest := 0
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[v] = true
		highest = max(highest, v)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}

	known := 0
	if len(ms) > 0 {
		known = ms[len(ms)-1].version
	}
	if highest > known {
		return fmt.Errorf("%w: file at version %04d, binary knows up to %04d", ErrNewerSchema, highest, known)
	}

	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := apply(ctx, db, fsys, m, now); err != nil {
			return &MigrationError{File: m.file, Err: err}
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, fsys fs.FS, m migration, now func() time.Time) error {
	body, err := fs.ReadFile(fsys, m.file)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The driver runs every statement of a multi-statement string.
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.file, now().UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}
